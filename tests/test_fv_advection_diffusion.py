"""Verification of the advection-diffusion solver (solvers/fv/advection_diffusion.py and its
kernel, raw_kernels/fv/advection_diffusion.cu), a solver written only through the solver
contract.

Every check compares with something independent of the kernel: the exact translating and
spreading Gaussian and the exact decay of a sine mode (as cell averages), a semi-discrete
operator assembled here with scipy.sparse and integrated by expm_multiply, conservation, the
other precision and the other backend. Each tolerance says where it comes from; the measured
values quoted beside them are from the host backend (g++ -O3, x86-64). The case file and the
command line: test_cases_advection_diffusion.py.
"""

import numpy as np
import pytest
import scipy.sparse as sparse
from scipy.sparse.linalg import expm_multiply
from scipy.special import ndtr

from solvers.backend.stepper import Stepper
from solvers.fv.advection_diffusion import AdvectionDiffusionSolver, face_velocities
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation

SIDES = ("x_lo", "x_hi", "y_lo", "y_hi")
PERIODIC_1D = dict.fromkeys(SIDES[:2], "periodic")
PERIODIC_2D = dict.fromkeys(SIDES, "periodic")


def machine_eps(precision):
    return float(np.finfo(np.float32 if precision == "fp32" else np.float64).eps)


def unit_grid(n, ndim):
    return StructuredGrid(n) if ndim == 1 else StructuredGrid(n, ny=n, y=(0.0, 1.0))


# -- the exact translating, spreading Gaussian -----------------------------------------------

def gaussian_cell_averages(nodes, centre, s0, variance, period=1.0):
    """Cell averages over cells with the given nodes of the 1D factor
    (s0 / s) exp(-(x - centre)^2 / (2 s^2)), s^2 = variance, summed over periodic images:
    s0 sqrt(2 pi) (Phi((b - m) / s) - Phi((a - m) / s)) / (b - a) per cell [a, b]."""
    s = np.sqrt(variance)
    total = 0.0
    for image in range(-2, 3):
        m = centre + image * period
        total = total + (ndtr((nodes[1:] - m) / s) - ndtr((nodes[:-1] - m) / s))
    return s0 * np.sqrt(2.0 * np.pi) * total / np.diff(nodes)


def exact_gaussian(grid, t, velocity, diffusivity, s0=0.1, x0=(0.5, 0.5)):
    """Cell averages of c = (s0^2 / (s0^2 + 2 D t))^(d/2) exp(-|x - x0 - a t|^2 /
    (2 (s0^2 + 2 D t))) summed over periodic images on the unit box (the initial Gaussian is
    separable, and so is the solution: a product of 1D factors)."""
    variance = s0 ** 2 + 2.0 * diffusivity * t
    factors = [gaussian_cell_averages(nodes, (x0[axis] + velocity[axis] * t) % 1.0, s0,
                                      variance)
               for axis, nodes in enumerate([grid.x_nodes()] + ([grid.y_nodes()]
                                                                 if grid.ndim == 2 else []))]
    return factors[0] if grid.ndim == 1 else np.outer(*factors)


def gaussian_l1_error(n, ndim, t, backend_name="host", precision="fp64", **scheme):
    """Mean |c - exact| (the L1 error over the unit box) of a Gaussian (s0 = 0.1) carried by
    a = (1, 0.5) with D = 1e-3 on a periodic n (x n) grid, started from the exact cell
    averages."""
    velocity, diffusivity = (1.0, 0.5)[:ndim], 1e-3
    grid = unit_grid(n, ndim)
    solver = AdvectionDiffusionSolver(grid, PERIODIC_2D if ndim == 2 else PERIODIC_1D,
                                      velocity, diffusivity, backend=backend_name,
                                      precision=precision, **scheme)
    solver.set_state(exact_gaussian(grid, 0.0, velocity, diffusivity))
    Simulation(solver, t).run()
    return float(np.abs(solver.state() - exact_gaussian(grid, t, velocity, diffusivity)).mean())


def fitted_rate(resolutions, errors):
    """The order p of a least-squares fit error ~ C n^-p."""
    return -np.polyfit(np.log(resolutions), np.log(errors), 1)[0]


# MUSCL is second order where the solution is smooth. Its limiters flatten the slopes at the
# pulse's peak, which costs accuracy only in the few cells there: the L1 error (mean over the
# box) keeps order 2. The pulse (s0 = 0.1) is resolved by 6 to 26 cells per s0 on these grids;
# the coarsest are not quite asymptotic (per-doubling rates below 2 there), so the fitted rate
# must be >= 1.8. A scheme that lost an order anywhere (a first-order face state, a wrong
# diffusion stencil, a first-order stage) fits 1.0 to 1.3. Measured in fp64: 1D (64, 128,
# 256 cells, t = 1) minmod 1.96 (L1 errors 1.48e-2, 3.96e-3, 9.84e-4), van Leer 2.10 (8.33e-3,
# 1.99e-3, 4.55e-4), MC 2.04; 2D (32^2, 64^2, 128^2, t = 0.25) van Leer 2.06 (3.14e-3, 8.16e-4,
# 1.81e-4), MC 2.10. (2D minmod, which clips the most, fits 1.77 on these grids at t = 0.5,
# still pre-asymptotic, so it is checked in 1D.)
@pytest.mark.parametrize("ndim, resolutions, t, limiter", [
    (1, (64, 128, 256), 1.0, "minmod"),
    (1, (64, 128, 256), 1.0, "van_leer"),
    (1, (64, 128, 256), 1.0, "mc"),
    (2, (32, 64, 128), 0.25, "van_leer"),
], ids=["1d-minmod", "1d-van_leer", "1d-mc", "2d-van_leer"])
def test_muscl_converges_at_second_order_to_the_exact_gaussian(ndim, resolutions, t, limiter):
    errors = [gaussian_l1_error(n, ndim, t, limiter=limiter) for n in resolutions]
    rate = fitted_rate(resolutions, errors)
    assert rate >= 1.8, f"L1 errors {errors}: fitted rate {rate:.3f}"


def test_upwind_converges_at_first_order_to_the_exact_gaussian():
    """First-order upwind smears the pulse with a numerical diffusivity a dx (1 - cfl) / 2, so
    its L1 error falls as dx; on coarse grids that smearing is comparable to the pulse's width
    and the error saturates (rate < 1). Measured (fp64, 256 to 1024 cells, t = 1): 0.0341,
    0.0183, 0.00949, rate 0.92 (0.82 and 0.90 per doubling, growing towards 1). A rate in
    [0.8, 1.2] is first order; MUSCL would fit 2."""
    resolutions = (256, 512, 1024)
    errors = [gaussian_l1_error(n, 1, 1.0, reconstruction="first_order") for n in resolutions]
    rate = fitted_rate(resolutions, errors)
    assert 0.8 <= rate <= 1.2, f"L1 errors {errors}: fitted rate {rate:.3f}"


# -- an independent reference: the semi-discrete upwind operator, integrated by SciPy ---------

def axis_neighbours(n, periodic):
    """(left, right) cell indices of the n + 1 faces of an axis of n cells: face k lies between
    cells k - 1 and k. A periodic axis wraps around (face n is face 0 again: left out here);
    elsewhere the ghost cell beyond a side is the edge cell (zero gradient)."""
    faces = np.arange(n + 1)
    if periodic:
        faces = faces[:n]
        return (faces - 1) % n, faces % n
    return np.clip(faces - 1, 0, n - 1), np.clip(faces, 0, n - 1)


def upwind_operator(grid, velocity_functions, diffusivity, boundary):
    """L with dc/dt = L c for first-order upwind advection and central diffusion, assembled
    face by face as a scipy.sparse matrix over the cells in the grid's [i, j] order. Through a
    face between cells l and r with normal velocity a (the function at the face centre):
    F = max(a, 0) c_l + min(a, 0) c_r - D (c_r - c_l) / h, taken from l and given to r (over
    the cell width h). A wall side's face velocity is 0."""
    shape, n_cells = grid.shape, grid.ncells
    index = np.arange(n_cells).reshape(shape)
    rows, cols, values = [], [], []
    spacings = (grid.dx, grid.dy)
    for axis in range(grid.ndim):
        n, h = shape[axis], spacings[axis]
        kinds = (boundary[SIDES[2 * axis]], boundary[SIDES[2 * axis + 1]])
        left, right = axis_neighbours(n, kinds[0] == "periodic")
        nodes = (grid.x_nodes() if axis == 0 else grid.y_nodes())[:len(left)]
        if grid.ndim == 1:
            a = velocity_functions[0](nodes, 0.0)
        elif axis == 0:
            a = velocity_functions[0](*np.meshgrid(nodes, grid.y_centres(), indexing="ij"))
        else:
            a = velocity_functions[1](*np.meshgrid(grid.x_centres(), nodes, indexing="ij"))
        a = np.moveaxis(np.broadcast_to(a, np.shape(a)).copy(), axis, 0)
        if kinds[0] == "wall":
            a[0] = 0.0
        if kinds[1] == "wall":
            a[-1] = 0.0
        # Diffusion through a boundary face of a non-periodic side vanishes (c_r = c_l).
        d = np.full(a.shape, diffusivity / h)
        moved = np.moveaxis(index, axis, 0)
        cell_l, cell_r = moved[left], moved[right]
        # F = w_l c_l + w_r c_r, taken from l and given to r; a ghost cell (l of the first
        # face, r of the last, on a non-periodic axis) takes and gives nothing.
        w_l, w_r = np.maximum(a, 0.0) + d, np.minimum(a, 0.0) - d
        give_l, give_r = np.ones(len(left)), np.ones(len(left))
        if kinds[0] != "periodic":
            give_l[0] = give_r[-1] = 0.0
        for cell, sign in ((cell_l, -give_l), (cell_r, give_r)):
            sign = sign.reshape((-1,) + (1,) * (grid.ndim - 1))
            for source, weight in ((cell_l, w_l), (cell_r, w_r)):
                rows.append(cell.ravel())
                cols.append(source.ravel())
                values.append((sign * weight / h).ravel())
    return sparse.csr_matrix((np.concatenate(values), (np.concatenate(rows),
                                                      np.concatenate(cols))),
                             shape=(n_cells, n_cells))


def swirl_velocity():
    """A velocity field with both components varying (not divergence-free): periodic on the
    reference grids below, nonzero through every side."""
    return (lambda x, y: 0.8 + 0.4 * np.sin(2.0 * np.pi * y / 0.5) + 0.2 * np.cos(2 * np.pi * x),
            lambda x, y: -0.3 + 0.5 * np.cos(2.0 * np.pi * x) + 0.0 * y)


REFERENCE_PROBLEMS = {
    # 40 x 20 cells: a full and a partial stage tile along x (32 + 8), and along y (8 + 8 + 4);
    # dx = 0.025 != dy = 0.02.
    "2d-periodic": (StructuredGrid(40, x=(0.0, 1.0), ny=20, y=(0.0, 0.4)), PERIODIC_2D),
    "2d-outflow-wall": (StructuredGrid(40, x=(0.0, 1.0), ny=20, y=(0.0, 0.4)),
                        {"x_lo": "outflow", "x_hi": "outflow", "y_lo": "wall",
                         "y_hi": "wall"}),
    "1d-outflow": (StructuredGrid(300, x=(0.0, 1.0)), {"x_lo": "outflow", "x_hi": "outflow"}),
}


def blob(grid):
    """A smooth initial state, different along x and y: a blob on a background that is
    periodic on the reference grids and varies along every side (so c flows in and out)."""
    x, y = (grid.centres() + (0.0,))[:2] if grid.ndim == 1 else grid.centres()
    background = 0.5 + 0.25 * np.cos(2.0 * np.pi * x) * np.sin(2.0 * np.pi * y / 0.4 + 0.5)
    return np.exp(-((x - 0.4) ** 2 / 0.02 + (y - 0.2) ** 2 / 0.01)) + background


def reference_difference(problem, cfl, t=0.3, diffusivity=2e-3):
    """max |solver - SciPy| / max |c| at t for first-order upwind with SSP-RK3 at this cfl."""
    grid, boundary = REFERENCE_PROBLEMS[problem]
    velocity = swirl_velocity()[:grid.ndim]
    c0 = np.broadcast_to(blob(grid), grid.shape)
    operator = upwind_operator(grid, velocity, diffusivity, boundary)
    reference = expm_multiply(operator * t, c0.ravel()).reshape(grid.shape)
    solver = AdvectionDiffusionSolver(grid, boundary, velocity, diffusivity,
                                      reconstruction="first_order", time_integrator="ssp_rk3",
                                      cfl=cfl, backend="host", precision="fp64")
    solver.set_state(c0)
    Simulation(solver, t).run()
    return float(np.abs(solver.state() - reference).max() / np.abs(reference).max())


@pytest.mark.parametrize("problem", sorted(REFERENCE_PROBLEMS))
def test_upwind_matches_scipy_integration_of_the_semi_discrete_operator(problem):
    """The solver's first-order scheme is the semi-discrete operator assembled above, stepped
    by SSP-RK3; expm_multiply gives the exact solution of that ODE system. Their difference is
    then the time-integration error alone: it must be small (< 2e-6 of the peak at cfl 0.1)
    and fall as dt^3 (a ratio of 8 when cfl halves; we ask for 6, leaving room for the last,
    shortened step). Any difference in the operator stays when dt shrinks and fails both: 10%
    more diffusivity gives 1e-3 to 1e-2, a wall taken for an outflow O(1). Measured at cfl 0.2
    and 0.1: 1.4e-6 and 1.7e-7 (2d-periodic), 5.3e-7 and 6.6e-8 (2d-outflow-wall), 7.4e-10
    and 9.2e-11 (1d-outflow): ratios 8.0."""
    coarse, fine = reference_difference(problem, 0.2), reference_difference(problem, 0.1)
    assert fine < 2e-6, f"difference {fine:.3g} at cfl 0.1"
    assert coarse / fine > 6.0, f"differences {coarse:.3g} (cfl 0.2), {fine:.3g} (cfl 0.1)"


# -- pure diffusion ---------------------------------------------------------------------------

def test_pure_diffusion_decays_a_sine_mode_like_the_heat_kernel():
    """With a = 0 the cell averages of c0 = sin(2 pi x) sin(4 pi y) decay exactly as
    exp(-D k^2 t), k^2 = (2 pi)^2 + (4 pi)^2 (a mode of the heat equation stays one, and so do
    its cell averages). The central scheme's discrete Laplacian has the eigenvalue
    -D sum 4 sin^2(k_i h_i / 2) / h_i^2 on the same mode, which is second-order close to
    -D k^2: the amplitude must agree with that discrete decay to the time-integration error
    (SSP-RK2: t |lambda|^3 dt^2 / 6 ~ 6e-5 relative, bounded by 2e-4) and with the exact decay
    to within the second-order truncation error |exp(lambda_h t) - exp(lambda t)| (7.1e-3 of
    it here), plus the same time allowance. Measured: 5.8e-5 from the discrete decay, 7.2e-3
    from the exact one. dx = 1/32 and dy = 1/40 differ, so each axis's diffusion weight is
    checked."""
    grid = StructuredGrid(32, x=(0.0, 1.0), ny=20, y=(0.0, 0.5))
    diffusivity, t = 0.01, 0.5
    x_nodes, y_nodes = grid.x_nodes(), grid.y_nodes()
    # Cell averages of sin(2 pi x) and sin(4 pi y).
    fx = -(np.cos(2 * np.pi * x_nodes[1:]) - np.cos(2 * np.pi * x_nodes[:-1])) / (2 * np.pi
                                                                                 * grid.dx)
    fy = -(np.cos(4 * np.pi * y_nodes[1:]) - np.cos(4 * np.pi * y_nodes[:-1])) / (4 * np.pi
                                                                                 * grid.dy)
    c0 = np.outer(fx, fy)
    solver = AdvectionDiffusionSolver(grid, PERIODIC_2D, (0.0, 0.0), diffusivity,
                                      backend="host", precision="fp64")
    solver.set_state(c0)
    Simulation(solver, t).run()
    amplitude = float((solver.state() * c0).sum() / (c0 * c0).sum())
    exact = np.exp(-diffusivity * ((2 * np.pi) ** 2 + (4 * np.pi) ** 2) * t)
    discrete_rate = diffusivity * (4 * np.sin(np.pi * grid.dx) ** 2 / grid.dx ** 2
                                   + 4 * np.sin(2 * np.pi * grid.dy) ** 2 / grid.dy ** 2)
    discrete = np.exp(-discrete_rate * t)
    time_tolerance = 2e-4 * exact
    assert abs(amplitude - discrete) < time_tolerance, (amplitude, discrete)
    assert abs(amplitude - exact) < abs(discrete - exact) + time_tolerance, (amplitude, exact)
    # The state stays the mode: nothing but its amplitude changes.
    np.testing.assert_allclose(solver.state(), amplitude * c0, atol=1e-12)


# -- conservation, graphs, precision ---------------------------------------------------------

def lumpy_solver(backend_name="host", precision="fp32", boundary=PERIODIC_2D, **scheme):
    """A 2D problem with everything varying: a blob on a background in a swirling velocity
    field (not divergence-free) with diffusion, on 40 x 20 cells (partial stage tiles)."""
    grid, _ = REFERENCE_PROBLEMS["2d-periodic"]
    solver = AdvectionDiffusionSolver(grid, boundary, swirl_velocity(), 2e-3,
                                      backend=backend_name, precision=precision, **scheme)
    solver.set_state(blob(grid))
    return solver


def rounding_bound(precision, steps, stages):
    """What rounding alone can do to the total. Face fluxes cancel exactly in the sum (both
    cells of a face read the one value computed for it), so the total changes only by the
    rounding of each cell's update, one unbiased error of <= eps/2 relative per cell and stage:
    a random walk of about eps sqrt(stages S / N) over N cells and S steps. We allow
    eps sqrt(stages S), sqrt(N) (~28 here) times more; a biased error of one ulp per cell and
    step (a non-conservative update) grows as eps S and exceeds it."""
    return machine_eps(precision) * np.sqrt(stages * steps)


@pytest.mark.parametrize("boundary", [PERIODIC_2D, dict.fromkeys(SIDES, "wall")],
                         ids=["periodic", "closed-box"])
@pytest.mark.parametrize("precision, time_integrator", [("fp32", "ssp_rk2"),
                                                         ("fp64", "ssp_rk3")])
def test_total_is_conserved_to_rounding(precision, time_integrator, boundary):
    """Periodic sides and walls let nothing out; the MUSCL (MC) fluxes of a varying velocity
    field with diffusion move c around the box for 2.5 box-crossing times."""
    solver = lumpy_solver(precision=precision, boundary=boundary, limiter="mc",
                          time_integrator=time_integrator)
    before = solver.state()
    result = Simulation(solver, 1.0).run()
    after = solver.state()
    drift = abs(after.sum() - before.sum()) / np.abs(before).sum()
    assert drift < rounding_bound(precision, result.steps, len(solver.stages)), (
        f"relative drift {drift:.3g} after {result.steps} steps")
    assert after.min() > 0.0  # the blob has moved (and stays positive: a monotone scheme)
    assert np.abs(after - before).max() > 0.1


@pytest.mark.parametrize("steps_per_graph", [1, 7])
def test_graph_replay_matches_eager_launches_bitwise(backend_name, steps_per_graph):
    """A captured graph of k steps replays the same launches on the same buffers as the eager
    loop; steps past the end time have dt = 0 and write nothing. Same bits."""
    results = []
    for graph in (False, True):
        solver = lumpy_solver(backend_name)
        Simulation(solver, 0.2, graph=graph, steps_per_graph=1 if not graph
                   else steps_per_graph).run()
        results.append(solver.state())
    np.testing.assert_array_equal(results[1], results[0])


def test_step_is_captured_without_host_access():
    """step() only launches kernels: a Stepper captures 3 steps into a graph (the host backend
    raises on any host read, copy or allocation while capturing), and the replays advance
    the clock by 3 steps each."""
    solver = lumpy_solver()
    stepper = Stepper(solver.backend, solver.step, steps_per_graph=3, graph=True)
    for _ in range(3):
        stepper.advance()
    assert solver.clock.read().steps == 9


def test_fp32_agrees_with_fp64_to_fp32_rounding():
    """Both precisions run the same operations; fp32 rounds each to ~6e-8 relative. The
    scheme is stable and its limiters are continuous functions of the differences, so the
    errors of S steps add up to at most ~S eps (S = 39 here: ~2e-6) and do not grow: measured
    1.9e-7 of max |c|. dt is computed in each precision, so the step sizes differ by rounding too
    (the runs end at the same time)."""
    results = {}
    for precision in ("fp32", "fp64"):
        solver = lumpy_solver(precision=precision)
        Simulation(solver, 0.2).run()
        results[precision] = solver.state()
    difference = np.abs(results["fp32"] - results["fp64"]).max() / np.abs(results["fp64"]).max()
    assert difference < 1e-5, f"{difference:.3g}"


# -- velocity input ------------------------------------------------------------------------

def test_face_velocities_from_numbers_functions_and_cell_values():
    """Numbers fill every face; functions are evaluated at the face centres; cell values are
    averaged onto the faces between cells (a periodic axis's boundary face averages both edge
    cells and is one face; an outflow face takes its cell's value); walls let nothing through."""
    grid = StructuredGrid(4, x=(0.0, 1.0), ny=3, y=(0.0, 3.0))
    cells = np.arange(12.0).reshape(4, 3)
    boundary = {"x_lo": "periodic", "x_hi": "periodic", "y_lo": "outflow", "y_hi": "wall"}
    ax, ay = face_velocities(grid, (cells, lambda x, y: x + 10 * y), boundary)
    np.testing.assert_array_equal(ax[1:4], 0.5 * (cells[:-1] + cells[1:]))
    np.testing.assert_array_equal(ax[0], 0.5 * (cells[0] + cells[-1]))
    np.testing.assert_array_equal(ax[4], ax[0])
    expected = grid.x_centres()[:, None] + 10 * grid.y_nodes()[None, :]
    np.testing.assert_array_equal(ay[:, :3], expected[:, :3])
    np.testing.assert_array_equal(ay[:, 3], 0.0)  # the wall at y_hi
    (ax_1d,) = face_velocities(StructuredGrid(5), (2.0,), PERIODIC_1D)
    np.testing.assert_array_equal(ax_1d, np.full(6, 2.0))
    with pytest.raises(ValueError, match="expected a number, a function"):
        face_velocities(grid, (np.ones(5), 0.0), boundary)
    with pytest.raises(ValueError, match="velocity must have 2 components"):
        face_velocities(grid, (1.0,), boundary)


# -- GPU ------------------------------------------------------------------------------------------

@pytest.mark.gpu
def test_cuda_matches_host_to_fp32_rounding():
    """Both backends compile the same source and do the same IEEE fp32 operations; they differ
    where NVRTC contracts a * b + c into an FMA and in the last bit of the (approximate on the
    GPU) division of the van Leer limiter: an ulp or so per operation. The scheme is stable
    and its limiters continuous, so after S = 39 steps the fields differ by ~S ulps (~2e-6)
    at most (measured on an H200: 1.6e-7; in fp64 the two agree to the bit); 1e-5 leaves a
    factor of ~5 over that estimate, while a race or a wrong launch shape would be O(1e-2) or
    more."""
    results = {}
    for backend_name in ("host", "cuda"):
        solver = lumpy_solver(backend_name)
        Simulation(solver, 0.2).run()
        results[backend_name] = solver.state()
    difference = np.abs(results["cuda"] - results["host"]).max() / np.abs(results["host"]).max()
    assert difference < 1e-5, f"{difference:.3g}"
