"""Verification of the 3D incompressible Navier-Stokes solver (solvers/fv/incompressible3d/,
raw_kernels/fv/incompressible3d.cu) against references independent of its kernels: the exact
Arnold-Beltrami-Childress flow and the 2D Taylor-Green vortex extruded along z (second-order
convergence), the closed-form discrete Poiseuille profile, a SciPy spsolve of the projection's
pressure system assembled here, the discrete divergence and kinetic energy computed here in
float64, and the graph replay against eager launches. Measured values quoted beside
tolerances are from the host backend."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import solvers
from solvers.backend.stepper import Stepper
from solvers.cases import CaseError
from solvers.fv.incompressible3d import IncompressibleSolver3D
from solvers.fv.sides import SIDES_3D
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation
from solvers.verification.abc_flow import abc

PERIODIC = dict.fromkeys(SIDES_3D, "periodic")


def eps(solver):
    return float(np.finfo(solver.dtype).eps)


def divergence(u, v, w, spacing):
    """Cell divergence of face fields [i, j, k], float64."""
    return sum(np.diff(q, axis=a) / h for a, (q, h) in enumerate(zip((u, v, w), spacing)))


def cube(n, size, shape=None):
    nx, ny, nz = shape or (n, n, n)
    return StructuredGrid(nx, x=(0, size), ny=ny, y=(0, size * ny / nx), nz=nz,
                          z=(0, size * nz / nx))


def star(solver):
    """u*, v*, w* of the last step (the predictor's output, left in device memory), [i, j, k]."""
    return tuple(solver.backend.to_host(q).astype(float)[2:-2, 2:-2, 2:-2].T
                 for q in solver.q_star)


# -- exact solutions: second order in space (dt follows dx through the CFL number) ---------------

def abc_error(n, backend, nu=0.05, end=0.5):
    """Max error of the face velocity at t = end on the periodic cube [0, 2 pi]^3, n^3 cells
    (the assembled pressure matrix and algebraic multigrid)."""
    solver = IncompressibleSolver3D(cube(n, 2 * np.pi), PERIODIC, nu=nu, backend=backend,
                                    reference_velocity=1.0)
    faces = solver.face_coordinates()
    solver.set_state(*(abc(*xyz, axis) for axis, xyz in enumerate(faces)))
    result = Simulation(solver, end, steps_per_graph=10).run()
    decay = np.exp(-nu * result.t)
    return max(np.abs(q - abc(*xyz, axis) * decay).max()
               for axis, (q, xyz) in enumerate(zip(solver.face_velocities(), faces)))


def extruded_taylor_green_error(n, backend, nu=0.05, end=0.5):
    """Max error of the face velocity at t = end of the 2D Taylor-Green vortex on [0, pi]^2
    extruded along z over 8 cells (geometric multigrid's least): free-slip walls on all six
    sides (the vortex's symmetry planes; w = 0 and nothing depends on z), the matrix-free
    stencil and geometric multigrid."""
    grid = cube(n, np.pi, (n, n, 8))
    solver = IncompressibleSolver3D(grid, dict.fromkeys(SIDES_3D, "slip"), nu=nu,
                                    backend=backend, reference_velocity=1.0)
    (ux, uy, _), (vx, vy, _), (wx, _, _) = solver.face_coordinates()
    solver.set_state(np.sin(ux) * np.cos(uy), -np.cos(vx) * np.sin(vy), np.zeros_like(wx))
    result = Simulation(solver, end, steps_per_graph=10).run()
    decay = np.exp(-2 * nu * result.t)
    u, v, w = solver.face_velocities()
    return max(np.abs(u - np.sin(ux) * np.cos(uy) * decay).max(),
               np.abs(v + np.cos(vx) * np.sin(vy) * decay).max(), np.abs(w).max())


@pytest.mark.parametrize("flow", ["abc", "extruded_taylor_green"])
def test_exact_flows_converge_at_second_order(backend_name, flow):
    error = {"abc": abc_error, "extruded_taylor_green": extruded_taylor_green_error}[flow]
    sizes = (8, 16, 32) if backend_name == "host" else (32, 64, 128)
    errors = [error(n, backend_name) for n in sizes]
    for coarse, fine in zip(errors, errors[1:]):
        # Central fluxes and AB2 with dt ~ dx are second order: measured rates (host, fp32)
        # ABC 1.89 (8 -> 16) and 1.97 (16 -> 32), extruded Taylor-Green 1.95 and 1.98. 1.8
        # leaves room for the coarsest grid and the fp32 floor at 128^3 on the GPU.
        assert np.log2(coarse / fine) >= 1.8, errors


def test_kinetic_energy_history_is_the_energy_of_the_faces():
    """The device's per-step kinetic energy (history column) equals 1/V sum q^2 / 2 dV over
    the faces, computed here, with boundary faces weighted 1/2 and a periodic axis' copy face
    left out."""
    grid = cube(8, 1.0, (8, 6, 4))
    solver = IncompressibleSolver3D(grid, {**PERIODIC, "y_lo": "wall", "y_hi": {"wall": [1, 0]}},
                                    nu=0.01, backend="host")
    Simulation(solver, 1e9).step(4)
    u, v, w = solver.face_velocities()
    energy = 0.5 * ((u[1:]**2).sum() + (w[:, :, 1:]**2).sum()
                    + (v[:, 1:-1]**2).sum() + 0.5 * (v[:, [0, -1]]**2).sum()) / grid.ncells
    # fp32 partial sums over a block, then double: rounding of a few eps of the total.
    assert solver.series["kinetic_energy"][-1] == pytest.approx(energy, rel=1e-6)
    assert len(solver.series["kinetic_energy"]) == 4 and energy > 0


# -- Poiseuille flow in a periodic duct between walls ----------------------------------------------

@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_poiseuille_profile_is_a_fixed_point_to_rounding(backend_name, precision):
    """Periodic along x and z, walls at y = 0, 1, force f along x: the discrete steady profile
    is the parabola f / (2 nu) y (1 - y) + f dy^2 / (8 nu) (the second difference of a quadratic
    is exact; the wall rule u_ghost = -u_0 fixes the constant), the same as in 2D."""
    nu, force, n = 0.1, 0.8, 8
    grid = cube(n, 1.0, (n, n, 4))
    boundary = {**PERIODIC, "y_lo": "wall", "y_hi": "wall"}
    solver = IncompressibleSolver3D(grid, boundary, nu=nu, force=(force, 0, 0),
                                    backend=backend_name, precision=precision)
    (_, y, _), (vx, _, _), (wx, _, _) = solver.face_coordinates()
    exact = force / (2 * nu) * y * (1 - y) + force * grid.dy**2 / (8 * nu)
    solver.set_state(exact, np.zeros_like(vx), np.zeros_like(wx))
    Simulation(solver, 1e9).step(50)
    u, v, w = solver.face_velocities()
    # One step rounds u + dt N to a few ulp of u, which diffusion damps (2D: 0 ulp measured).
    assert np.abs(u - exact).max() <= 8 * eps(solver) * exact.max()
    assert max(np.abs(v).max(), np.abs(w).max()) <= 8 * eps(solver) * exact.max()


# -- the projection ------------------------------------------------------------------------------

def open_box(backend, precision, shape=(16, 8, 8)):
    """Inflow at x = 0 (a profile), outflow at x = 2, walls at y = 0 and 1 (the top one sliding
    at (0.3, 0.1) along x and z), free slip at z = 0 and z = 1."""
    grid = cube(shape[0], 2.0, shape)
    y, z = np.meshgrid(grid.y_centres(), grid.z_centres(), indexing="ij")
    boundary = {"x_lo": {"inflow": 4 * y * (1 - y) * (1 + 0.2 * z)}, "x_hi": "outflow",
                "y_lo": "wall", "y_hi": {"wall": [0.3, 0.1]}, "z_lo": "slip", "z_hi": "slip"}
    return IncompressibleSolver3D(grid, boundary, nu=0.05, backend=backend,
                                  precision=precision,
                                  pressure_rtol=1e-10 if precision == "fp64" else 1e-6,
                                  pressure_divergence=1e-14 if precision == "fp64" else 1e-6)


def pressure_matrix(shape, spacing):
    """-lap of cell values, assembled here by Kronecker products: Neumann everywhere but the
    x_hi side, Dirichlet (zero on the face) there; cells numbered x fastest."""
    def second_difference(n, h, dirichlet_hi):
        main = np.full(n, 2.0)
        main[0] = 1.0
        main[-1] = 3.0 if dirichlet_hi else 1.0
        return sp.diags([main, -np.ones(n - 1), -np.ones(n - 1)], [0, -1, 1]) / h**2
    nx, ny, nz = shape
    ix, iy, iz = (sp.identity(m) for m in shape)
    dx, dy, dz = spacing
    return (sp.kron(iz, sp.kron(iy, second_difference(nx, dx, True)))
            + sp.kron(iz, sp.kron(second_difference(ny, dy, False), ix))
            + sp.kron(second_difference(nz, dz, False), sp.kron(iy, ix))).tocsc()


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
def test_projection_step_equals_scipy_spsolve(backend_name, precision):
    solver = open_box(backend_name, precision)
    grid, spacing = solver.grid, solver.spacing
    rng = np.random.default_rng(3)
    faces = solver.face_coordinates()
    solver.set_state(*(0.1 * rng.standard_normal(xyz[0].shape) for xyz in faces),
                     rng.standard_normal(grid.shape))
    Simulation(solver, 1e9).step(3)
    p_old = solver.pressure_field()
    Simulation(solver, 1e9).step(1)
    u_star, v_star, w_star = star(solver)
    dt = solver.clock.read().dt
    # The same system solved independently: A x = -div u*, u = u* - grad x (x = 0 beyond the
    # outflow face, no gradient at the other sides), p = x / dt.
    A = pressure_matrix(grid.shape, spacing)
    b = -divergence(u_star, v_star, w_star, spacing).T.ravel()
    x = spla.spsolve(A, b).reshape(grid.shape[::-1]).T
    u, v, w = u_star.copy(), v_star.copy(), w_star.copy()
    u[1:-1] -= np.diff(x, axis=0) / grid.dx
    u[-1] -= -2 * x[-1] / grid.dx
    v[:, 1:-1] -= np.diff(x, axis=1) / grid.dy
    w[:, :, 1:-1] -= np.diff(x, axis=2) / grid.dz
    scale = np.abs(u).max()
    # The solve stops at a relative residual rtol (1e-6 fp32, 1e-10 fp64): as in 2D, the error
    # of x is near rtol |x| with multigrid. Bounds as the 2D test's.
    velocity_tol, pressure_tol = (1e-10, 1e-9) if precision == "fp64" else (1e-6, 1e-5)
    for mine, theirs in zip(solver.face_velocities(), (u, v, w)):
        assert np.abs(mine - theirs).max() <= velocity_tol * scale
    p = solver.pressure_field()
    assert np.abs(p - x / dt).max() <= pressure_tol * np.abs(x / dt).max()
    assert not np.allclose(p, p_old)  # the step did move the pressure


def test_velocity_is_divergence_free_after_every_step(backend_name):
    """Closed cubic cavity (singular pressure system) and the inflow/outflow box."""
    cavity = IncompressibleSolver3D(
        cube(8, 1.0), {**dict.fromkeys(SIDES_3D, "wall"), "y_hi": {"wall": [1.0, 0.0]}},
        nu=0.01, backend=backend_name)
    for solver in (cavity, open_box(backend_name, "fp32")):
        simulation = Simulation(solver, 1e9)
        h = min(solver.spacing)
        for _ in range(10):
            simulation.step(1)
            before = np.linalg.norm(divergence(*star(solver), solver.spacing))
            after = divergence(*solver.face_velocities(), solver.spacing)
            # CG stops at |r| <= max(rtol |div u*|, atol) (the true residual may drift 10x
            # from the recursive one), plus the rounding of the correction (as in 2D: six
            # faces a cell).
            x = np.abs(solver.backend.to_host(solver.pressure.x)).max()
            rounding = 6 * eps(solver) * (max(np.abs(q).max() for q in star(solver)) / h
                                          + 6 * x / h**2) * np.sqrt(solver.grid.ncells)
            assert np.linalg.norm(after) <= 10 * max(solver.pressure.rtol * before,
                                                     solver.pressure_atol) + rounding
            assert solver.series["max_divergence"][-1] == pytest.approx(
                np.abs(after).max(), abs=rounding)
        assert solver.pressure_report()["unconverged_solves"] == 0


def test_velocity_is_also_one_cell_centred_vector_field():
    solver = open_box("host", "fp32")
    Simulation(solver, 1e9).step(3)
    fields = solver.fields()
    assert fields["velocity"].shape == (*solver.grid.shape, 3)
    np.testing.assert_array_equal(fields["velocity"],
                                  np.stack([fields["u"], fields["v"], fields["w"]], axis=-1))
    u, v, w = solver.face_velocities()
    np.testing.assert_allclose(fields["w"], (w[:, :, :-1] + w[:, :, 1:]) / 2)


# -- graphs ---------------------------------------------------------------------------------------

def test_graph_replay_equals_eager_to_the_bit(backend_name):
    def run(graph):
        solver = open_box(backend_name, "fp32")
        solver.clock.set(t_stop=1e9)
        stepper = Stepper(solver.backend, solver.step, steps_per_graph=3, graph=graph)
        for _ in range(3):
            stepper.advance()
        solver.observe()
        return (*solver.face_velocities(), solver.pressure_field(),
                np.array(solver.series["kinetic_energy"]))

    for eager, replayed in zip(run(False), run(True)):
        assert np.array_equal(eager, replayed)


# -- case files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("override, words", [
    ({"boundary.y_hi": {"wall": 1.0}}, "boundary.y_hi: wall speed must be two numbers"),
    ({"boundary.x_lo": "periodic"}, "periodic must be set on both x_lo and x_hi"),
    ({"boundary.z_lo": {"inflow": "1 + x + w"}}, "unknown name 'w'"),
    ({"initial.u": "sin(q)"}, "unknown name 'q'"),
    ({"physics.solver": "incompressible", "boundary.y_hi": "wall"}, "unknown key"),
])
def test_bad_input_is_a_one_line_case_error(override, words):
    case = Path(__file__).resolve().parent.parent / "cases" / "cavity3d_re1000.toml"
    with pytest.raises(CaseError) as error:
        solvers.load_case(case, **{"mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8,
                                   "run.backend": "host", **override})
    assert words in str(error.value) and "\n" not in str(error.value)
