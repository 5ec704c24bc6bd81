"""The implicit viscous stage of the incompressible solver (solvers/fv/incompressible/viscous.py,
raw_kernels/fv/viscous.cu) against references built here: the system (I - s L) d = b assembled
from 1D difference matrices and solved by SciPy's spsolve, a Crank-Nicolson step of a shear
flow computed by hand, second-order convergence of Taylor-Green vortices, the discrete
Poiseuille profile, and graph replay against eager launches. Measured values quoted beside
tolerances are from the host backend."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.backend.stepper import Stepper
from solvers.fv.incompressible.solver import IncompressibleSolver
from solvers.fv.incompressible3d.solver import IncompressibleSolver3D
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation
from solvers.verification.abc_flow import abc

CHANNEL = {"x_lo": "periodic", "x_hi": "periodic", "y_lo": "wall", "y_hi": "wall"}
MIXED = {"x_lo": {"inflow": 1.0}, "x_hi": "outflow", "y_lo": "slip", "y_hi": {"wall": 0.5}}
PERIODIC_SLIP = {"x_lo": "periodic", "x_hi": "periodic", "y_lo": "slip", "y_hi": "outflow"}


def along(n, h, lo, hi):
    """d^2/dx^2 of a component along its own axis on faces 0..n, with the identity rows (the
    boundary faces, the periodic copy n) left empty: the second difference over the unknown
    faces, a fixed face counting 0 and an outflow face the value of the face inside it."""
    rows, cols, vals = [], [], []
    periodic = lo == "periodic"
    unknown = range(0, n) if periodic else range(1, n)
    for k in unknown:
        rows.append(k), cols.append(k), vals.append(-2.0)
        for side, neighbour in (("lo", k - 1), ("hi", k + 1)):
            kind = lo if side == "lo" else hi
            if periodic:
                rows.append(k), cols.append(neighbour % n), vals.append(1.0)
            elif 0 < neighbour < n:
                rows.append(k), cols.append(neighbour), vals.append(1.0)
            elif kind == "outflow":
                rows.append(k), cols.append(k), vals.append(1.0)
    return sp.coo_matrix((vals, (rows, cols)), shape=(n + 1, n + 1)).tocsr() / h**2


def across(n, h, lo, hi):
    """d^2/dy^2 of a component across the sides, on cell centres 0..n-1: ghosts odd about a
    wall or inflow (-u), even about slip or outflow (u), or the periodic partner."""
    m = sp.diags([np.full(n, -2.0), np.ones(n - 1), np.ones(n - 1)], [0, -1, 1]).tolil()
    for end, kind in ((0, lo), (n - 1, hi)):
        if kind == "periodic":
            m[end, n - 1 - end] += 1.0
        else:
            m[end, end] += -1.0 if kind in ("wall", "inflow") else 1.0
    return m.tocsr() / h**2


def kind(spec):
    return next(iter(spec)) if isinstance(spec, dict) else spec


def helmholtz_matrix(shape, spacing, boundary, s):
    """I - s L over the packed face vector of a 2D or 3D grid (each component x fastest with
    n_d + 1 faces along its own axis, the components one after another), from the 1D matrices
    above; the rows of boundary faces and periodic copies are the identity."""
    sides = ("x", "y", "z")[:len(shape)]
    k = {side: kind(spec) for side, spec in boundary.items()}
    blocks, fixed = [], []
    for a in range(len(shape)):
        counts = [n + (d == a) for d, n in enumerate(shape)]
        lap = 0
        for d, (n, h) in enumerate(zip(shape, spacing)):
            lo, hi = k[f"{sides[d]}_lo"], k[f"{sides[d]}_hi"]
            factors = [along(n, h, lo, hi) if d == a and e == d else across(n, h, lo, hi)
                       if e == d else sp.identity(counts[e]) for e in range(len(shape))]
            term = factors[-1]
            for factor in factors[-2::-1]:  # kron(z, y, x): x fastest
                term = sp.kron(term, factor)
            lap = lap + term
        blocks.append(lap)
        face = np.zeros(counts[::-1], bool)  # [.., j, i]
        ends = [0, counts[a] - 1] if k[f"{sides[a]}_lo"] != "periodic" else [counts[a] - 1]
        index = [slice(None)] * len(shape)
        index[len(shape) - 1 - a] = ends
        face[tuple(index)] = True
        fixed.append(face.ravel())
    fixed = np.concatenate(fixed)
    keep = sp.diags((~fixed).astype(float))
    return (sp.identity(fixed.size) - s * (keep @ sp.block_diag(blocks) @ keep)).tocsc()


@pytest.mark.parametrize("boundary", [MIXED, PERIODIC_SLIP, CHANNEL],
                         ids=["inflow-outflow-slip-wall", "periodic-slip-outflow", "channel"])
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_viscous_stage_equals_scipy_spsolve(backend_name, boundary, precision):
    """A random state, a few steps, then the last step's right-hand side b (left on the
    device) solved here: d = (I - s L)^-1 b, s = nu dt / 2, must be the increment the stage
    found, and u* = u^n + d on the predicted faces."""
    grid = StructuredGrid(12, x=(0, 1.2), ny=10, y=(0, 1))
    solver = IncompressibleSolver(grid, boundary, nu=1.0, viscous="implicit", cfl=0.9,
                                  backend=backend_name, precision=precision)
    if precision == "fp64":
        solver.viscous.solver.set_limits(1e-13, 500)
    rng = np.random.default_rng(7)
    (ux, _), (vx, _) = solver.face_coordinates()
    solver.set_state(rng.standard_normal(ux.shape), rng.standard_normal(vx.shape))
    Simulation(solver, 1e9).step(3)
    host = solver.backend.to_host
    u_old, v_old = solver.face_velocities()
    Simulation(solver, 1e9).step(1)
    dt = solver.clock.read().dt
    b = host(solver.viscous.b).astype(float)
    s = 0.5 * 1.0 * dt
    assert 4 * s * (1 / grid.dx**2 + 1 / grid.dy**2) > 5  # far past the explicit limit (1)
    d = spla.spsolve(helmholtz_matrix(grid.shape, (grid.dx, grid.dy), boundary, s), b)
    found = host(solver.viscous.x).astype(float)
    # CG stops at |r| <= 1e-13 |b| (fp64) or 1e-5 |b| (fp32); the error of d is at most
    # cond(I - s L) <= 1 + 4 s (1/dx^2 + 1/dy^2) < 20 times that. Measured relative to max |d|:
    # fp64 4e-14 to 2e-13, fp32 8e-6 to 2.8e-5.
    tol = 1e-11 if precision == "fp64" else 2e-4
    assert np.abs(found - d).max() <= tol * np.abs(d).max()
    # u* = u^n + d on the faces the predictor moved (the rows that are not the identity).
    nx, ny = grid.nx, grid.ny
    us = host(solver.us).astype(float)[2:2 + ny, 2:3 + nx].T
    inner = slice(0, nx) if boundary["x_lo"] == "periodic" else slice(1, nx)
    d_u = d[:(nx + 1) * ny].reshape(ny, nx + 1).T
    eps = np.finfo(solver.dtype).eps
    assert np.abs(us[inner] - u_old[inner] - d_u[inner]).max() \
        <= tol * np.abs(d).max() + 4 * eps * np.abs(u_old).max()


def test_shear_flow_step_is_crank_nicolson():
    """A channel (periodic in x, walls at y = 0 and a lid at y = 1 sliding at 1) with u = u(y)
    and v = 0 has no advection and no pressure: one step is Crank-Nicolson for u_t = nu u_yy,
    (I - s D) u^{n+1} = (I + s D) u^n + 2 s g, s = nu dt / 2, D the second difference with the
    odd wall ghosts and g the lid's ghost term 2 U / dy^2, computed here in float64."""
    boundary = {**CHANNEL, "y_hi": {"wall": 1.0}}
    grid = StructuredGrid(4, x=(0, 1), ny=24, y=(0, 1))
    solver = IncompressibleSolver(grid, boundary, nu=5.0, viscous="implicit", cfl=0.5,
                                  backend="host", precision="fp64")
    solver.viscous.solver.set_limits(1e-13, 500)
    rng = np.random.default_rng(1)
    profile = rng.standard_normal(grid.ny)
    solver.set_state(np.tile(profile, (grid.nx + 1, 1)), np.zeros((grid.nx, grid.ny + 1)))
    Simulation(solver, 1e9).step(1)
    dt = solver.clock.read().dt
    s = 0.5 * 5.0 * dt
    D = across(grid.ny, grid.dy, "wall", "wall")
    g = np.zeros(grid.ny)
    g[-1] = 2 * 1.0 / grid.dy**2
    identity = sp.identity(grid.ny)
    expected = spla.spsolve((identity - s * D).tocsc(), (identity + s * D) @ profile + 2 * s * g)
    assert s / grid.dy**2 > 10  # the explicit scheme would need 40x smaller steps
    u, v = solver.face_velocities()
    assert np.abs(u - expected).max() <= 1e-11 * np.abs(expected).max()
    assert np.abs(v).max() <= 1e-12


@pytest.mark.parametrize("viscous", ["implicit", "backward_euler"])
def test_poiseuille_is_a_fixed_point_and_is_reached_from_rest(viscous):
    """The discrete Poiseuille profile f/(2 nu) y (1 - y) + f dy^2 / (8 nu) (see
    test_fv_incompressible.discrete_poiseuille) stays put to rounding, and a run from rest
    reaches it, with steps 12x beyond the explicit diffusion limit."""
    def channel(steady_tolerance=0.0):
        grid = StructuredGrid(16, x=(0, 2), ny=16, y=(0, 1))
        return IncompressibleSolver(grid, CHANNEL, nu=1.0, force=(8.0, 0), viscous=viscous,
                                    backend="host", precision="fp64", cfl=0.5,
                                    steady_tolerance=steady_tolerance)
    solver = channel()
    (_, y), _ = solver.face_coordinates()
    exact = 4 * y * (1 - y) + solver.grid.dy**2
    solver.set_state(exact, np.zeros((16, 17)))
    Simulation(solver, 1e9).step(50)
    u, v = solver.face_velocities()
    # The right-hand side nu L u + f vanishes to rounding (a few ulp of f dt), so d does.
    assert np.abs(u - exact).max() <= 1e-13 and np.abs(v).max() <= 1e-13
    tolerance = 1e-4
    solver = channel(tolerance)
    result = Simulation(solver, 50.0, steps_per_graph=20).run()
    assert result.t < 50.0
    u, _ = solver.face_velocities()
    # Slowest mode sin(pi y), decay rate nu pi^2: the deviation left when the run stops is
    # below tolerance / (nu pi^2) of max |u| (margin 2).
    assert np.abs(u - exact).max() <= 2 * tolerance / np.pi**2 * exact.max()
    dt = np.median(solver.series["dt"])
    grid = solver.grid
    assert 1.0 * dt * 4 * (1 / grid.dx**2 + 1 / grid.dy**2) > 12  # nu dt 4 (1/dx^2 + 1/dy^2)


def test_taylor_green_with_crank_nicolson_converges_at_second_order():
    """Periodic Taylor-Green vortices, nu = 0.5 (dt far past the diffusion limit on every
    grid): velocity errors against the exact decay fall at second order in h (dt ~ h)."""
    def error(n):
        grid = StructuredGrid(n, x=(0, 2 * np.pi), ny=n, y=(0, 2 * np.pi))
        sides = dict.fromkeys(("x_lo", "x_hi", "y_lo", "y_hi"), "periodic")
        solver = IncompressibleSolver(grid, sides, nu=0.5, viscous="implicit", cfl=0.5,
                                      backend="host", precision="fp64",
                                      reference_velocity=1.0, pressure_rtol=1e-10,
                                      pressure_divergence=1e-12)
        solver.viscous.solver.set_limits(1e-12, 500)
        (ux, uy), (vx, vy) = solver.face_coordinates()
        xc, yc = grid.centres()
        solver.set_state(np.sin(ux) * np.cos(uy), -np.cos(vx) * np.sin(vy),
                         (np.cos(2 * xc) + np.cos(2 * yc)) / 4)
        result = Simulation(solver, 1.0, steps_per_graph=10).run()
        decay = np.exp(-2 * 0.5 * result.t)
        u, _ = solver.face_velocities()
        return np.abs(u - np.sin(ux) * np.cos(uy) * decay).max()

    errors = [error(n) for n in (16, 32, 64)]
    rates = np.log2(np.array(errors[:-1]) / errors[1:])
    # Measured rates: 1.99, 2.00 (CN and AB2 are second order in dt, central differences in h).
    assert np.all(rates >= 1.9), (errors, rates)


@pytest.mark.parametrize("obstacle", [False, True])
def test_graph_replay_equals_eager_to_the_bit(backend_name, obstacle):
    def run(graph):
        grid = StructuredGrid(32, x=(0, 2), ny=16, y=(0, 1))
        body = (lambda x, y: np.abs(x - 0.5) + np.abs(y - 0.5) < 0.15) if obstacle else None
        solver = IncompressibleSolver(grid, MIXED, nu=0.02, viscous="implicit",
                                      backend=backend_name, obstacle=body)
        solver.clock.set(t_stop=1e9)
        stepper = Stepper(solver.backend, solver.step, steps_per_graph=5, graph=graph)
        for _ in range(4):
            stepper.advance()
        solver.observe()
        assert max(solver.series["viscous_iterations"]) > 0
        return (*solver.face_velocities(), solver.pressure_field(),
                np.array(solver.series["force_x"]))

    for eager, replayed in zip(run(False), run(True)):
        assert np.array_equal(eager, replayed)


# -- 3D ------------------------------------------------------------------------------------------

BOX_3D = {"x_lo": {"inflow": 1.0}, "x_hi": "outflow", "y_lo": "wall",
          "y_hi": {"wall": [0.3, 0.1]}, "z_lo": "periodic", "z_hi": "periodic"}
DUCT_3D = {"x_lo": "periodic", "x_hi": "periodic", "y_lo": "slip", "y_hi": "wall",
           "z_lo": "wall", "z_hi": "outflow"}


@pytest.mark.parametrize("boundary", [BOX_3D, DUCT_3D], ids=["inflow-outflow-wall", "duct"])
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_viscous_stage_in_3d_equals_scipy_spsolve(backend_name, boundary, precision):
    """As in 2D: the last step's right-hand side solved here with the 3D matrix, and u* =
    u^n + d on the predicted faces of u."""
    grid = StructuredGrid(6, x=(0, 1.2), ny=5, y=(0, 1), nz=4, z=(0, 0.8))
    solver = IncompressibleSolver3D(grid, boundary, nu=1.0, viscous="implicit", cfl=0.9,
                                    backend=backend_name, precision=precision)
    if precision == "fp64":
        solver.viscous.solver.set_limits(1e-13, 500)
    rng = np.random.default_rng(5)
    solver.set_state(*(rng.standard_normal(x.shape) for x, _, _ in solver.face_coordinates()))
    Simulation(solver, 1e9).step(3)
    u_old = solver.face_velocities()[0]
    Simulation(solver, 1e9).step(1)
    host = solver.backend.to_host
    s = 0.5 * 1.0 * solver.clock.read().dt
    spacing = (grid.dx, grid.dy, grid.dz)
    assert 4 * s * sum(1 / h**2 for h in spacing) > 5  # far past the explicit limit (1)
    d = spla.spsolve(helmholtz_matrix(grid.shape, spacing, boundary, s),
                     host(solver.viscous.b).astype(float))
    found = host(solver.viscous.x).astype(float)
    # Bounds as in 2D (condition number <= 1 + 4 s sum 1/h^2 = 10 here). Measured relative to
    # max |d|: fp64 1e-13, fp32 1e-5.
    tol = 1e-11 if precision == "fp64" else 2e-4
    assert np.abs(found - d).max() <= tol * np.abs(d).max()
    nx, ny, nz = grid.shape
    d_u = d[:(nx + 1) * ny * nz].reshape(nz, ny, nx + 1).T
    us = host(solver.q_star[0]).astype(float)[2:-2, 2:-2, 2:-2].T
    inner = slice(0, nx) if boundary["x_lo"] == "periodic" else slice(1, nx)
    eps = np.finfo(solver.dtype).eps
    assert np.abs(us[inner] - u_old[inner] - d_u[inner]).max() \
        <= tol * np.abs(d).max() + 4 * eps * np.abs(u_old).max()


def test_abc_flow_with_crank_nicolson_converges_at_second_order():
    """The exact Arnold-Beltrami-Childress flow (solvers/verification/abc_flow.py), nu = 0.5 so
    that dt is far past the diffusion limit: second order in h (dt ~ h)."""
    def error(n):
        grid = StructuredGrid(n, x=(0, 2 * np.pi), ny=n, y=(0, 2 * np.pi), nz=n,
                              z=(0, 2 * np.pi))
        solver = IncompressibleSolver3D(
            grid, dict.fromkeys(BOX_3D, "periodic"), nu=0.5, viscous="implicit", cfl=0.5,
            backend="host", precision="fp64", reference_velocity=1.0, pressure_rtol=1e-10,
            pressure_divergence=1e-12)
        solver.viscous.solver.set_limits(1e-12, 500)
        faces = solver.face_coordinates()
        solver.set_state(*(abc(*xyz, axis) for axis, xyz in enumerate(faces)))
        result = Simulation(solver, 0.5, steps_per_graph=10).run()
        decay = np.exp(-0.5 * result.t)
        return max(np.abs(q - abc(*xyz, axis) * decay).max()
                   for axis, (q, xyz) in enumerate(zip(solver.face_velocities(), faces)))

    errors = [error(n) for n in (8, 16, 32)]
    rates = np.log2(np.array(errors[:-1]) / errors[1:])
    # Measured rates: 1.90, 1.98 (the coarsest grid, 8^3, is not yet asymptotic).
    assert np.all(rates >= 1.8), (errors, rates)


def test_graph_replay_equals_eager_to_the_bit_in_3d(backend_name):
    def run(graph):
        grid = StructuredGrid(12, x=(0, 2), ny=6, y=(0, 1), nz=4, z=(0, 0.8))
        solver = IncompressibleSolver3D(grid, BOX_3D, nu=0.05, viscous="implicit",
                                        backend=backend_name)
        solver.clock.set(t_stop=1e9)
        stepper = Stepper(solver.backend, solver.step, steps_per_graph=3, graph=graph)
        for _ in range(3):
            stepper.advance()
        solver.observe()
        assert max(solver.series["viscous_iterations"]) > 0
        return (*solver.face_velocities(), solver.pressure_field())

    for eager, replayed in zip(run(False), run(True)):
        assert np.array_equal(eager, replayed)
