"""The structured Euler solver's state on the host: primitive fields and figures of conserved
variables, and the two layouts of a grid's conserved variables: cells (nvar, *grid.shape),
indexed [v, i(, j(, k))], and the device buffer's (nvar, (nz,) ny, nx), x fastest."""

VELOCITIES = ("vx", "vy", "vz")


def primitive(u, gamma, names):
    """{name: field} of the primitive variables (rho, velocity components, p) of conserved
    variables u (nvar, ...)."""
    rho = u[0]
    velocity = [u[k] / rho for k in range(1, len(u) - 1)]
    p = (gamma - 1) * (u[-1] - 0.5 * rho * sum(v**2 for v in velocity))
    return dict(zip(names, [rho, *velocity, p]))


def state_figures(u, volumes, fields):
    """Totals of the conserved variables u (nvar, ...) over cells of `volumes` (one number or
    one a cell) and the minima of the primitive fields' density and pressure."""
    names = ["mass", *(f"momentum_{v[1]}" for v in VELOCITIES[:len(u) - 2]), "energy"]
    out = {f"total_{n}": float((u[k] * volumes).sum()) for k, n in enumerate(names)}
    out["min_rho"] = float(fields["rho"].min())
    out["min_p"] = float(fields["p"].min())
    return out


def to_buffer(cells, grid):
    """Conserved variables of `grid`'s cells, (nvar, *grid.shape) -> the buffer layout."""
    nvar = len(cells)
    buffer = cells.reshape(nvar, grid.nx, grid.ny, grid.nz).transpose(0, 3, 2, 1)
    return buffer.reshape(nvar, *([grid.nz] if grid.ndim == 3 else []), grid.ny, grid.nx)


def to_cells(buffer, grid):
    """The buffer layout of `grid`'s conserved variables -> (nvar, *grid.shape)."""
    nvar = len(buffer)
    cells = buffer.reshape(nvar, grid.nz, grid.ny, grid.nx).transpose(0, 3, 2, 1)
    return cells.reshape(nvar, *grid.shape)
