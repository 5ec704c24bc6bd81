"""The fused unstructured Euler solver (solvers/fv/euler_unstructured.py,
raw_kernels/fv/euler_unstructured.cu) against its whole-array reference written from
docs/euler_unstructured.md (solvers/verification/euler_unstructured_unfused.py): face-based
array operations in the mesh's order, against one thread a cell gathering its face slots in
reverse Cuthill-McKee order. Every limiter, both Riemann solvers, SSP-RK2 and SSP-RK3 and every
boundary kind, on jittered triangles, mixed triangles and quads, quads, tetrahedra and
hexahedra: the same numbers to rounding in fp64 on the host backend (the sums run in other
orders, and the C++ compiler contracts a * b + c into FMAs).

Each (cells' most faces, limiter, Riemann solver) is a kernel variant the host compiles once
(about a second): the cases cover every limiter and boundary kind with 11 of them."""

import numpy as np
import pytest

from solvers.fv.euler_unstructured import UnstructuredEulerSolver
from solvers.mesh.cell_generators import hex_grid, quad_grid
from solvers.mesh.faces import face_geometry
from solvers.verification.euler_unfused import UnfusedEuler
from solvers.verification.euler_unstructured_unfused import UnfusedUnstructuredEuler

GAMMA = 1.4
STEPS = 20
FARFIELD = {"farfield": {"rho": 1.0, "vx": 0.3, "vy": -0.1, "vz": 0.05, "p": 1.0}}
INFLOW = {"inflow": {"rho": 1.2, "vx": 0.4, "vy": 0.1, "vz": -0.05, "p": 1.1}}
PRESSURE = {"outflow": {"p": 0.9}}
# Every boundary kind on each mesh: x_lo, x_hi, y_lo, y_hi (, z_lo, z_hi).
SUBSONIC = (INFLOW, PRESSURE, "wall", FARFIELD, "outflow", "symmetry")
TURNED = (FARFIELD, "outflow", "slip", INFLOW, PRESSURE, "wall")
SIDES = ("x_lo", "x_hi", "y_lo", "y_hi", "z_lo", "z_hi")


def boundary_table(sides, dim):
    """{side: spec} of a mesh's sides (2D states without vz)."""
    table = {}
    for side, spec in zip(SIDES[:2 * dim], sides):
        if isinstance(spec, dict) and dim == 2:
            spec = {kind: {k: v for k, v in state.items() if k != "vz"}
                    for kind, state in spec.items()}
        table[side] = spec
    return table


def mesh_of(cells):
    """Small meshes of a few hundred cells, their nodes jittered."""
    if cells in ("triangle", "mixed", "quad"):
        return quad_grid(16, 12, x=(0.0, 1.0), y=(0.0, 0.75), cells=cells, jitter=0.25)
    shape = (5, 4, 4) if cells == "tetra" else (8, 6, 5)
    return hex_grid(*shape, cells=cells, jitter=0.2)


def blob(centroids, mean_vx):
    """Primitive (rho, v, p): density and pressure blobs in a shear, steep enough (a few cells
    wide) that every limiter clips at their extrema."""
    x, y = centroids[:, 0], centroids[:, 1]
    z = centroids[:, 2] if centroids.shape[1] == 3 else 0.5
    rho = 1.0 + 0.4 * np.exp(-((x - 0.45) ** 2 + (y - 0.4) ** 2 + (z - 0.5) ** 2) / 0.01)
    p = 1.0 + 0.6 * np.exp(-((x - 0.55) ** 2 + (y - 0.35) ** 2 + (z - 0.45) ** 2) / 0.01)
    velocity = [mean_vx + 0.2 * np.sin(2 * np.pi * y), 0.15 * np.cos(2 * np.pi * x)]
    velocity += [0.1 * np.sin(2 * np.pi * (x + y))] * (centroids.shape[1] == 3)
    return rho, np.stack(velocity), p


def conserved(rho, velocity, p):
    energy = p / (GAMMA - 1) + 0.5 * rho * (velocity**2).sum(axis=0)
    return np.concatenate([rho[None], rho * velocity, energy[None]])


def run_pair(cells, limiter, riemann, integrator, sides, mean_vx=0.0, precision="fp64",
             backend="host", xp=np):
    """The fused solver and the reference from the same state: their conserved variables
    after STEPS steps (host, float64), and the initial state."""
    mesh = mesh_of(cells)
    geometry = face_geometry(mesh)
    table = boundary_table(sides, mesh.dim)
    scheme = dict(limiter=limiter, riemann=riemann, time_integrator=integrator, cfl=0.5)
    if limiter == "first_order":
        scheme.update(reconstruction="first_order", limiter="minmod")
    fused = UnstructuredEulerSolver(mesh, table, gamma=GAMMA, backend=backend,
                                    precision=precision, geometry=geometry, **scheme)
    dtype = "float64" if precision == "fp64" else "float32"
    reference = UnfusedUnstructuredEuler.from_table(xp, geometry, table, gamma=GAMMA,
                                                    dtype=dtype, **scheme)
    u = conserved(*blob(geometry.centroids, mean_vx))
    fused.set_conserved(u)
    reference.set_conserved(u)
    for _ in range(STEPS):
        fused.step()
        reference.step()
    clock = fused.clock.read()
    assert clock.steps == STEPS and not clock.diverged
    assert clock.t == pytest.approx(float(reference.t), rel=1e-12 if dtype == "float64" else 1e-5)
    return fused.conserved(), reference.conserved(), u


# (cells, limiter, riemann, time integrator, boundary sides, mean vx): 11 kernel variants. A
# mean vx of +-1.6 is supersonic: HLLC's one-sided fluxes, and the farfield (inflow at +1.6,
# outflow at -1.6 on x_lo) and pressure outflow (x_hi) ghosts' supersonic branches.
CASES = [
    ("triangle", "barth_jespersen", "hllc", "ssp_rk2", SUBSONIC, 0.0),
    ("triangle", "venkatakrishnan", "hllc", "ssp_rk3", TURNED, 0.0),
    ("triangle", "minmod", "rusanov", "ssp_rk2", TURNED, 1.6),
    ("triangle", "first_order", "hllc", "ssp_rk3", SUBSONIC, 0.0),
    ("mixed", "van_leer", "hllc", "ssp_rk3", SUBSONIC, 0.0),
    ("mixed", "mc", "hllc", "ssp_rk2", TURNED, 0.0),
    ("quad", "mc", "hllc", "ssp_rk3", TURNED, -1.6),
    ("quad", "barth_jespersen", "rusanov", "ssp_rk3", TURNED, 0.0),
    ("tetra", "barth_jespersen", "hllc", "ssp_rk3", SUBSONIC, 0.0),
    ("tetra", "van_leer", "rusanov", "ssp_rk2", TURNED, 0.0),
    ("hexahedron", "venkatakrishnan", "hllc", "ssp_rk2", TURNED, 0.0),
    ("hexahedron", "mc", "hllc", "ssp_rk3", SUBSONIC, 1.6),
]


@pytest.mark.parametrize("cells, limiter, riemann, integrator, sides, mean_vx", CASES)
def test_fused_matches_the_reference_fp64(cells, limiter, riemann, integrator, sides, mean_vx):
    """Every conserved variable to 1e-12 of its largest magnitude after 20 steps (measured:
    1e-14 at most)."""
    fused, reference, start = run_pair(cells, limiter, riemann, integrator, sides, mean_vx)
    assert np.abs(fused - start).max() > 1e-2  # the state did move
    # Per conserved variable, relative to its largest magnitude.
    errors = np.abs(fused - reference).max(axis=1) / np.abs(fused).max(axis=1)
    print(cells, limiter, riemann, integrator, errors.tolist())
    assert errors.max() < 1e-12, errors


@pytest.mark.parametrize("boundary", [("transmissive", "reflective"),
                                      ("reflective", "transmissive")])
def test_reference_equals_the_structured_reference_on_a_uniform_grid(boundary):
    """An independent check of the reference itself: on a uniform Cartesian grid its scheme is
    the structured one (docs/euler_unstructured.md), so with MC, HLLC and SSP-RK3 it matches
    the structured whole-array solver (solvers/verification/euler_unfused.py) to rounding, from
    a random state."""
    nx, ny = 24, 17
    geometry = face_geometry(quad_grid(nx, ny, x=(0.0, 1.0), y=(0.0, 0.7)))
    # Each cell's (j, i) on the grid, from its centroid.
    i = np.floor(geometry.centroids[:, 0] * nx).astype(int)
    j = np.floor(geometry.centroids[:, 1] / 0.7 * ny).astype(int)
    rng = np.random.default_rng(7)
    velocity = rng.uniform(-0.5, 0.5, (2, ny, nx)) + np.array([0.3, -0.2])[:, None, None]
    grid_state = conserved(rng.uniform(0.5, 1.5, (ny, nx)), velocity,
                           rng.uniform(0.5, 1.5, (ny, nx)))
    structured = UnfusedEuler(np, nx, ny, 1.0 / nx, 0.7 / ny, gamma=GAMMA, dtype="float64",
                              boundary=boundary)
    structured.set_conserved(grid_state)
    table = boundary_table([boundary[0]] * 2 + [boundary[1]] * 2, 2)
    reference = UnfusedUnstructuredEuler.from_table(np, geometry, table, gamma=GAMMA,
                                                    limiter="mc", time_integrator="ssp_rk3")
    reference.set_conserved(grid_state[:, j, i])
    for _ in range(5):
        structured.step()
        reference.step()
    assert float(reference.t) == pytest.approx(float(structured.t), rel=1e-13)
    expected = structured.u[:, j, i]
    assert np.abs(expected - grid_state[:, j, i]).max() > 1e-2
    assert np.abs(reference.conserved() - expected).max() < 1e-13 * np.abs(expected).max()


def test_reference_conserves_in_a_closed_box():
    """Walls all round: the reference's totals of mass and energy stay put to rounding (each
    interior face's flux leaves one cell and enters the other; a wall passes no mass or
    energy)."""
    geometry = face_geometry(mesh_of("triangle"))
    reference = UnfusedUnstructuredEuler.from_table(
        np, geometry, dict.fromkeys(SIDES[:4], "wall"), gamma=GAMMA,
        limiter="venkatakrishnan", riemann="rusanov")
    start = conserved(*blob(geometry.centroids, 0.0))
    reference.set_conserved(start)
    for _ in range(STEPS):
        reference.step()
    after = reference.conserved()
    assert np.abs(after - start).max() > 1e-2
    for k in (0, 3):  # mass, energy
        total = start[k] @ geometry.volumes
        assert abs(after[k] @ geometry.volumes - total) < 1e-13 * total


def test_fused_matches_the_reference_fp32():
    """The benchmark's pair in fp32 (the reference's arrays all float32): agreement to fp32
    rounding grown over 20 steps."""
    fused, reference, _ = run_pair("mixed", "mc", "hllc", "ssp_rk3", SUBSONIC, precision="fp32")
    error = np.linalg.norm(fused - reference) / np.linalg.norm(fused)
    assert error < 1e-5, error


@pytest.mark.gpu
def test_cupy_reference_matches_the_fused_cuda_solver():
    """The benchmark's pair on the GPU: the reference on CuPy against the fused CUDA kernels
    (NVRTC contracts a * b + c into FMAs: rounding differs, ~1e-15)."""
    import cupy

    fused, reference, _ = run_pair("mixed", "barth_jespersen", "hllc", "ssp_rk2", TURNED,
                                   backend="cuda", xp=cupy)
    errors = np.abs(fused - reference).max(axis=1) / np.abs(fused).max(axis=1)
    assert errors.max() < 1e-11, errors
