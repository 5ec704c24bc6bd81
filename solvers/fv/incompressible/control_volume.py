"""The force on an immersed body from a momentum balance on a box around it, independent of the
forcing that records the force every step (raw_kernels/fv/immersed.cu): for a steady flow of
unit density the force of the fluid on everything inside the box is the box faces' integral

    F = sum over the faces of (-u (u.n) - p n + nu (grad u + grad u^T) n) dS,

n the outward normal. It is evaluated here from the MAC fields alone, with second-order
central differences and means on the box's four sides, which lie on face lines: the x sides on
u-face lines, the y sides on v-face lines. It does not see the body, so it checks the recorded
force (the forcing's momentum sum) on a steady flow; an unsteady one adds the rate of change of
the box's momentum, which this leaves out.

`weighted_force` is the volume form of the same balance (John & Matthies 2001, Int. J. Numer.
Meth. Fluids 37, 885-903, with the convection in divergence form): with a weight phi equal to 1
on the body and 0 on the domain's sides, the force of a steady flow on the body is

    F_k = integral of (u_k (u . grad phi) + p d(phi)/dx_k - nu grad u_k . grad phi) dx.

Here phi is 1 within r1 of a centre, 0 beyond r2 and a smoothstep between, so only the annulus
r1 < r < r2 counts: no surface, no box corner, no field near the body.
"""

import numpy as np


def box_lines(grid, box):
    """The face lines (i0, i1, j0, j1) nearest the box (x0, x1, y0, y1); ValueError unless the
    box keeps a cell clear of the domain's sides (the differences reach one face beyond)."""
    i0, i1 = (int(round((x - grid.x[0]) / grid.dx)) for x in box[:2])
    j0, j1 = (int(round((y - grid.y[0]) / grid.dy)) for y in box[2:])
    if not (1 <= i0 < i1 <= grid.nx - 1 and 1 <= j0 < j1 <= grid.ny - 1):
        raise ValueError(f"the box {box} must lie a cell inside the domain")
    return i0, i1, j0, j1


def _x_side(u, v, p, i, j, dx, dy, nu):
    """Per cell j of the u-face line i: the flux of x and y momentum out of +x (times -1:
    the stress the outside exerts), (sxx, sxy) per unit length."""
    uf = u[i, j]
    vf = 0.25 * (v[i - 1, j] + v[i, j] + v[i - 1, j + 1] + v[i, j + 1])
    pf = 0.5 * (p[i - 1, j] + p[i, j])
    dudx = (u[i + 1, j] - u[i - 1, j]) / (2 * dx)
    dudy = (u[i, j + 1] - u[i, j - 1]) / (2 * dy)
    dvdx = (v[i, j] + v[i, j + 1] - v[i - 1, j] - v[i - 1, j + 1]) / (2 * dx)
    return -pf + 2 * nu * dudx - uf * uf, nu * (dudy + dvdx) - uf * vf


def _y_side(u, v, p, i, j, dx, dy, nu):
    """Per cell i of the v-face line j: (syx, syy) per unit length, as _x_side across y."""
    vf = v[i, j]
    uf = 0.25 * (u[i, j - 1] + u[i + 1, j - 1] + u[i, j] + u[i + 1, j])
    pf = 0.5 * (p[i, j - 1] + p[i, j])
    dvdy = (v[i, j + 1] - v[i, j - 1]) / (2 * dy)
    dvdx = (v[i + 1, j] - v[i - 1, j]) / (2 * dx)
    dudy = (u[i, j] + u[i + 1, j] - u[i, j - 1] - u[i + 1, j - 1]) / (2 * dy)
    return nu * (dudy + dvdx) - uf * vf, -pf + 2 * nu * dvdy - vf * vf


def box_force(grid, u, v, p, nu, box):
    """(Fx, Fy) per unit depth on what the box (x0, x1, y0, y1) holds, of a steady flow: face
    velocities u (nx + 1, ny), v (nx, ny + 1) and cell pressure p (nx, ny), [i, j]."""
    i0, i1, j0, j1 = box_lines(grid, box)
    dx, dy = grid.dx, grid.dy
    force = np.zeros(2)
    # The x sides: the outward normal -x at i0, +x at i1.
    rows = np.arange(j0, j1)
    for i, sign in ((i0, -1.0), (i1, 1.0)):
        force += sign * dy * np.array([s.sum() for s in _x_side(u, v, p, i, rows, dx, dy, nu)])
    # The y sides: -y at j0, +y at j1.
    columns = np.arange(i0, i1)
    for j, sign in ((j0, -1.0), (j1, 1.0)):
        force += sign * dx * np.array([s.sum() for s in _y_side(u, v, p, columns, j, dx, dy,
                                                                  nu)])
    return force


def solver_box_force(solver, box):
    """box_force of an IncompressibleSolver's current fields (its pressure as it holds it)."""
    u, v = solver.face_velocities()
    return box_force(solver.grid, u, v, solver.pressure_field(), solver.nu, box)


def weighted_force(grid, u, v, p, nu, centre, r1, r2):
    """(Fx, Fy) per unit depth of a steady flow on what lies within r1 of centre (x, y), by the
    weighted integral over the annulus r1 < r < r2 (module docstring): velocities averaged to the
    cells, their gradients by central differences (compact along the face normal)."""
    dx, dy = grid.dx, grid.dy
    uc, vc = 0.5 * (u[:-1] + u[1:]), 0.5 * (v[:, :-1] + v[:, 1:])
    gu = ((u[1:] - u[:-1]) / dx, np.gradient(uc, dy, axis=1))
    gv = (np.gradient(vc, dx, axis=0), (v[:, 1:] - v[:, :-1]) / dy)
    x, y = (c - c0 for c, c0 in zip(grid.centres(), centre))
    r = np.hypot(x, y)
    s = np.clip((r - r1) / (r2 - r1), 0.0, 1.0)
    # grad phi of the smoothstep phi = 1 - 3 s^2 + 2 s^3, nonzero in the annulus only.
    dphi = 6 * s * (s - 1) / ((r2 - r1) * np.where(r > 0, r, 1.0))
    phi_x, phi_y = dphi * x, dphi * y
    flux = uc * phi_x + vc * phi_y
    return dx * dy * np.array([
        np.sum(w * flux + p * phi_k - nu * (g[0] * phi_x + g[1] * phi_y))
        for w, phi_k, g in ((uc, phi_x, gu), (vc, phi_y, gv))])
