"""Verification of the incompressible Navier-Stokes solver (solvers/fv/incompressible.py,
raw_kernels/fv/incompressible.cu) against references independent of its kernels: the exact
Taylor-Green solution (second-order convergence), the closed-form discrete Poiseuille profile,
a SciPy spsolve of the projection's pressure system assembled here, the discrete divergence
computed here in float64, and the graph replay against eager launches. Measured values quoted
beside tolerances are from the host backend."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.backend.stepper import Stepper
from solvers.fv.incompressible.solver import IncompressibleSolver
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation

PERIODIC = dict.fromkeys(("x_lo", "x_hi", "y_lo", "y_hi"), "periodic")
CHANNEL = {"x_lo": "periodic", "x_hi": "periodic", "y_lo": "wall", "y_hi": "wall"}


def eps(solver):
    return float(np.finfo(solver.dtype).eps)


def divergence(u, v, dx, dy):
    """Cell divergence of face fields u (nx + 1, ny), v (nx, ny + 1), float64."""
    return np.diff(u, axis=0) / dx + np.diff(v, axis=1) / dy


# -- Taylor-Green vortices: second order in space (dt follows dx through the CFL number) --------

def taylor_green_errors(n, backend, sides, nu=0.05, end=1.0):
    """Max errors of (face velocity, pressure) at t = end on n x n cells: periodic on
    [0, 2 pi]^2, or free-slip walls on [0, pi]^2 (the vortex's symmetry lines: no normal
    velocity and no shear there, so the exact solution is the same)."""
    size = 2 * np.pi if sides == "periodic" else np.pi
    grid = StructuredGrid(n, x=(0, size), ny=n, y=(0, size))
    solver = IncompressibleSolver(grid, dict.fromkeys(PERIODIC, sides), nu=nu,
                                  backend=backend, reference_velocity=1.0)
    (ux, uy), (vx, vy) = solver.face_coordinates()
    xc, yc = grid.centres()
    solver.set_state(np.sin(ux) * np.cos(uy), -np.cos(vx) * np.sin(vy),
                     (np.cos(2 * xc) + np.cos(2 * yc)) / 4)
    result = Simulation(solver, end, steps_per_graph=10).run()
    decay = np.exp(-2 * nu * result.t)
    u, v = solver.face_velocities()
    error = max(np.abs(u - np.sin(ux) * np.cos(uy) * decay).max(),
                np.abs(v + np.cos(vx) * np.sin(vy) * decay).max())
    p_exact = (np.cos(2 * xc) + np.cos(2 * yc)) / 4 * decay**2
    return error, np.abs(solver.pressure_field() - p_exact).max()


@pytest.mark.parametrize("sides", ["periodic", "slip"])
def test_taylor_green_converges_at_second_order(backend_name, sides):
    sizes = (16, 32, 64) if backend_name == "host" else (32, 64, 128)
    errors = [taylor_green_errors(n, backend_name, sides) for n in sizes]
    for (coarse, coarse_p), (fine, fine_p) in zip(errors, errors[1:]):
        # Central fluxes and AB2 with dt ~ dx are second order: measured velocity rates 1.96
        # (16 -> 32) and 1.98 (32 -> 64); 1.8 leaves room for the fp32 floor at 128^2
        # (error 5e-6 against rounding 1e-7). The incremental pressure is measured at 2.5 and
        # 1.6: its splitting error is first order in dt near nothing here (periodic), but the
        # first (Euler) step leaves an O(dt) pressure lag; 1.5 bounds it.
        assert np.log2(coarse / fine) >= 1.8, errors
        assert np.log2(coarse_p / fine_p) >= 1.5, errors


def test_pressure_solve_stops_at_its_absolute_floor():
    """Slip-walled Taylor-Green at 64^2: the smooth pressure makes |b| = |div u*| small
    against the rounding of A x (relative floor about eps / (k h)^2 = 1e-5 in fp32); with only
    the relative tolerance 1e-6, CG iterated in rounding noise until it broke down (measured:
    breakdown in the first step, max |div u| 34 after it). The absolute floor ends every
    solve converged."""
    grid = StructuredGrid(64, x=(0, np.pi), ny=64, y=(0, np.pi))
    solver = IncompressibleSolver(grid, dict.fromkeys(PERIODIC, "slip"), nu=0.05,
                                  backend="host", reference_velocity=1.0)
    (ux, uy), (vx, vy) = solver.face_coordinates()
    solver.set_state(np.sin(ux) * np.cos(uy), -np.cos(vx) * np.sin(vy))
    Simulation(solver, 1e9).step(10)
    assert solver.pressure_report()["unconverged_solves"] == 0
    assert max(solver.series["max_divergence"]) < 1e-3


# -- Poiseuille flow ------------------------------------------------------------------------------

def channel(backend, precision="fp32", n=16, steady_tolerance=0.0, nu=0.1, force=0.8):
    grid = StructuredGrid(n, x=(0, 2), ny=n, y=(0, 1))
    return IncompressibleSolver(grid, CHANNEL, nu=nu, force=(force, 0), backend=backend,
                                precision=precision, steady_tolerance=steady_tolerance)


def discrete_poiseuille(solver, force=0.8, nu=0.1):
    """The steady state of the MAC scheme at the u faces: the parabola f/(2 nu) y (1 - y) plus
    f dy^2 / (8 nu). Derivation: the second difference of a quadratic is exact, so the discrete
    steady profile is a parabola with nu u'' = -f; the wall rule u_ghost = -u_0 makes it odd
    about the wall: q(-dy/2) + q(dy/2) = 0, which fixes the constant c = f dy^2 / (8 nu)."""
    (_, y), _ = solver.face_coordinates()
    return force / (2 * nu) * y * (1 - y) + force * solver.grid.dy**2 / (8 * nu)


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_poiseuille_profile_is_a_fixed_point_to_rounding(backend_name, precision):
    solver = channel(backend_name, precision)
    exact = discrete_poiseuille(solver)
    solver.set_state(exact, np.zeros((16, 17)))
    Simulation(solver, 1e9).step(100)
    u, v = solver.face_velocities()
    # One step rounds u + dt N with N = nu lap u + f evaluated to a few ulp of its terms
    # (nu u / dy^2 ~ f), times dt < dy^2 / (4 nu): a few ulp of u per step at most, and the
    # diffusion operator damps what it leaves. Measured: 0 ulp after 100 steps (fp32, fp64).
    assert np.abs(u - exact).max() <= 8 * eps(solver) * exact.max()
    assert np.abs(v).max() <= 8 * eps(solver) * exact.max()
    # ... which is the exact parabola f / (2 nu) y (1 - y) = 4 y (1 - y) shifted by the
    # constant f dy^2 / (8 nu) = dy^2.
    (_, y), _ = solver.face_coordinates()
    assert np.abs(u - 4 * y * (1 - y) - solver.grid.dy**2).max() <= 8 * eps(solver)


def test_poiseuille_from_rest_reaches_the_discrete_profile_and_stops(backend_name):
    tolerance = 1e-3
    solver = channel(backend_name, n=8, steady_tolerance=tolerance)
    simulation = Simulation(solver, 100.0, steps_per_graph=20)
    result = simulation.run()
    assert simulation.stopped == "steady state reached" and result.t < 100.0
    exact = discrete_poiseuille(solver)
    u, _ = solver.face_velocities()
    # Near the steady state the slowest mode sin(pi y) decays at rate nu pi^2; the run stops
    # once max|du/dt| / max|u| < tolerance, so the remaining deviation is below
    # tolerance / (nu pi^2) of max|u| (times a margin of 2 for the other modes).
    assert np.abs(u - exact).max() <= 2 * tolerance / (0.1 * np.pi**2) * exact.max()
    # It stopped within a window (0.1 here, ~20 steps) and a replay (20 steps) of the first
    # time the rate, measured over a window, fell below the tolerance.
    rates = np.array(solver.series["change_rate"])
    first = np.flatnonzero(rates < tolerance)[0]
    window_steps = 0.1 / solver.series["dt"][-1]
    assert rates[0] > tolerance and len(rates) - first <= window_steps + 2 + 20


# -- the projection -------------------------------------------------------------------------------

def inflow_outflow_solver(backend, precision, n=16, obstacle=None, ramp=0.0):
    """Walls at y = 0 and 1 (the top one sliding at 0.3), a parabolic inflow at x = 0,
    outflow at x = 2."""
    grid = StructuredGrid(2 * n, x=(0, 2), ny=n, y=(0, 1))
    y = grid.y_centres()
    boundary = {"x_lo": {"inflow": 4 * y * (1 - y)}, "x_hi": "outflow", "y_lo": "wall",
                "y_hi": {"wall": 0.3}}
    return IncompressibleSolver(grid, boundary, nu=0.02, backend=backend, precision=precision,
                                obstacle=obstacle, inflow_ramp=ramp,
                                pressure_rtol=1e-10 if precision == "fp64" else 1e-6,
                                pressure_divergence=1e-14 if precision == "fp64" else 1e-6)


def test_inflow_ramps_up_and_moving_wall_shears(backend_name):
    solver = inflow_outflow_solver(backend_name, "fp32", ramp=0.5)
    simulation = Simulation(solver, 1e9)
    simulation.step(5)
    t = solver.clock.read().t
    u, _ = solver.face_velocities()
    y = solver.grid.y_centres()
    ramp = 0.5 * (1 - np.cos(np.pi * t / 0.5))
    # The inflow faces carry the profile times the ramp at the step's time (fp32 rounding).
    assert np.allclose(u[0], 4 * y * (1 - y) * ramp, rtol=1e-6, atol=1e-7)
    # The lid at y = 1 slides at 0.3: its ghost row makes the wall value 0.3 exactly.
    solver.fields()  # refreshes the ghosts of the current field
    host = solver.backend.to_host(solver.u).astype(float)
    top, ghost = host[2 + solver.grid.ny - 1, 3:-3], host[2 + solver.grid.ny, 3:-3]
    assert np.allclose((top + ghost) / 2, 0.3, atol=1e-6)


def pressure_matrix(nx, ny, dx, dy):
    """-lap of cell values, assembled here: Neumann at x = 0 and y = 0, 1, Dirichlet (zero
    on the face) at x = x1; unknown (i, j) at i + nx j."""
    def second_difference(n, h, dirichlet_hi):
        main = np.full(n, 2.0)
        main[0] = 1.0
        main[-1] = 3.0 if dirichlet_hi else 1.0
        return sp.diags([main, -np.ones(n - 1), -np.ones(n - 1)], [0, -1, 1]) / h**2
    return (sp.kron(sp.identity(ny), second_difference(nx, dx, True))
            + sp.kron(second_difference(ny, dy, False), sp.identity(nx))).tocsc()


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_projection_step_equals_scipy_spsolve(backend_name, precision):
    solver = inflow_outflow_solver(backend_name, precision)
    grid = solver.grid
    rng = np.random.default_rng(3)
    (ux, uy), (vx, vy) = solver.face_coordinates()
    solver.set_state(np.sin(3 * uy) + 0.1 * rng.standard_normal(ux.shape),
                     0.1 * rng.standard_normal(vx.shape), rng.standard_normal(grid.shape))
    Simulation(solver, 1e9).step(3)
    p_old = solver.pressure_field()
    Simulation(solver, 1e9).step(1)
    # u* of the last step (the predictor's output, left in device memory) and its dt.
    nx, ny = grid.nx, grid.ny
    host = solver.backend.to_host
    u_star = host(solver.us).astype(float)[2:2 + ny, 2:3 + nx].T
    v_star = host(solver.vs).astype(float)[2:3 + ny, 2:2 + nx].T
    dt = solver.clock.read().dt
    # Solve the same system independently: A x = -div u*, u = u* - grad x (x = 0 beyond the
    # outflow face, zero gradient elsewhere), p = x / dt.
    A = pressure_matrix(nx, ny, grid.dx, grid.dy)
    x = spla.spsolve(A, -divergence(u_star, v_star, grid.dx, grid.dy).T.ravel())
    x = x.reshape(ny, nx).T
    u = u_star.copy()
    u[1:-1] -= np.diff(x, axis=0) / grid.dx
    u[-1] -= (-x[-1] - x[-1]) / grid.dx
    v = v_star.copy()
    v[:, 1:-1] -= np.diff(x, axis=1) / grid.dy
    u_solver, v_solver = solver.face_velocities()
    scale = np.abs(u).max()
    # The solve stops at a relative residual rtol (1e-6 fp32, 1e-10 fp64); the error of x is
    # at most cond(A) rtol |x| (cond ~ 400 here) and in practice near rtol |x| since multigrid
    # leaves no smooth error. Measured relative differences, velocity / pressure: fp32 1e-7 /
    # 2.3e-6, fp64 3e-13 / 1.4e-11; bounds 4x to 10x (fp32) and 70x to 300x (fp64) above.
    velocity_tol, pressure_tol = (1e-10, 1e-9) if precision == "fp64" else (1e-6, 1e-5)
    assert np.abs(u_solver - u).max() <= velocity_tol * scale
    assert np.abs(v_solver - v).max() <= velocity_tol * scale
    p = solver.pressure_field()
    assert np.abs(p - x / dt).max() <= pressure_tol * np.abs(x / dt).max()
    assert not np.allclose(p, p_old)  # the step did move the pressure


def test_velocity_is_divergence_free_after_every_step(backend_name):
    """Closed cavity (singular pressure system) and inflow/outflow around an obstacle."""
    cavity = IncompressibleSolver(
        StructuredGrid(16, x=(0, 1), ny=16, y=(0, 1)),
        {"x_lo": "wall", "x_hi": "wall", "y_lo": "wall", "y_hi": {"wall": 1.0}}, nu=0.01,
        backend=backend_name)
    body = inflow_outflow_solver(backend_name, "fp32",
                                 obstacle=lambda x, y: (x - 0.5)**2 + (y - 0.5)**2 < 0.2**2)
    for solver in (cavity, body):
        grid = solver.grid
        simulation = Simulation(solver, 1e9)
        rtol = solver.pressure.rtol
        nx, ny = grid.nx, grid.ny
        for _ in range(15):
            simulation.step(1)
            host = solver.backend.to_host
            u_star = host(solver.us).astype(float)[2:2 + ny, 2:3 + nx].T
            v_star = host(solver.vs).astype(float)[2:3 + ny, 2:2 + nx].T
            before = np.linalg.norm(divergence(u_star, v_star, grid.dx,
                                               grid.dy)[solver.fluid_cells])
            # (continuity holds outside the body: its cells' divergence is not solved for)
            after = divergence(*solver.face_velocities(), grid.dx, grid.dy)[solver.fluid_cells]
            # CG stops at |r| <= max(rtol |div u*|, atol) (recursive residual; the true one
            # may drift by up to 10x, DRIFT of krylov.py), plus the rounding of the correction:
            # u* and
            # the differences of x are rounded to eps |u*| and eps |x| per face, and the
            # divergence divides by h once and twice (4 faces a cell), over sqrt(n) cells.
            # Measured: 1.1e-3 at the impulsive first step with the body (x up to 1.4), then
            # 1e-5 (15 steps), in fp32.
            x = np.abs(host(solver.pressure.x)).max()
            rounding = 4 * eps(solver) * (np.abs(u_star).max() / grid.dx
                                          + 4 * x / grid.dx**2) * np.sqrt(grid.ncells)
            assert np.linalg.norm(after) <= 10 * max(rtol * before, solver.pressure_atol) \
                + rounding
            # The device's own max |div u| agrees with this one to rounding.
            assert solver.series["max_divergence"][-1] == pytest.approx(
                np.abs(after).max(), abs=rounding)
        assert solver.pressure_report()["unconverged_solves"] == 0


def test_velocity_is_also_one_cell_centred_vector_field():
    """fields() gives the cell-centred velocity as (u, v, 0) besides u and v, the vector
    ParaView draws as glyphs and streamlines (XDMF "Vector"): the means of the face values."""
    solver = IncompressibleSolver(
        StructuredGrid(12, x=(0, 1), ny=10, y=(0, 1)),
        {"x_lo": "wall", "x_hi": "wall", "y_lo": "wall", "y_hi": {"wall": 1.0}}, nu=0.01,
        backend="host")
    Simulation(solver, 1e9).step(5)
    fields = solver.fields()
    u_faces, v_faces = solver.face_velocities()
    assert fields["velocity"].shape == (12, 10, 3)
    np.testing.assert_allclose(fields["velocity"][..., 0], (u_faces[:-1] + u_faces[1:]) / 2)
    np.testing.assert_allclose(fields["velocity"][..., 1], (v_faces[:, :-1] + v_faces[:, 1:]) / 2)
    np.testing.assert_array_equal(fields["velocity"][..., :2],
                                  np.stack([fields["u"], fields["v"]], axis=-1))
    assert not fields["velocity"][..., 2].any() and np.abs(fields["u"]).max() > 0


# -- graphs ---------------------------------------------------------------------------------------

def test_graph_replay_equals_eager_to_the_bit(backend_name):
    def run(graph):
        solver = inflow_outflow_solver(backend_name, "fp32",
                                       obstacle=lambda x, y: np.abs(x - 0.5) + np.abs(y - 0.5)
                                       < 0.15)
        solver.clock.set(t_stop=1e9)
        stepper = Stepper(solver.backend, solver.step, steps_per_graph=5, graph=graph)
        for _ in range(4):
            stepper.advance()
        solver.observe()
        return (*solver.face_velocities(), solver.pressure_field(),
                np.array(solver.series["force_x"]))

    for eager, replayed in zip(run(False), run(True)):
        assert np.array_equal(eager, replayed)
