"""Geometric multigrid (raw_kernels/linalg/multigrid.cu) for the structured-grid Laplacian.

M denotes one V-cycle from z = 0, z = M r. The tests drive M as a stand-alone iteration
x += M (b - A x) with the residual formed on the host in float64 from operator.to_scipy(), so
they do not depend on the Krylov solvers, and they compare:
- the residual factor per cycle on the model problem across grid sizes (grid independence) and
  the converged x with scipy.sparse.linalg.spsolve;
- (M against an independent NumPy/SciPy V-cycle: test_linalg_multigrid_reference.py);
- symmetry and positive definiteness of M (what CG needs), assembled column by column;
- eager launches with a graph replay, bit for bit.

Error bound for the spsolve comparison: ||x - x*|| / ||x*|| <= cond(A) ||b - A x|| / ||b||. The
iteration stops at a relative residual of 1e-11 and cond(A) < 1e4 for these grids, so 1e-7 is a
bound with margin; the float64 residual itself bottoms out near 1e-14 (eps times cond).
"""

import functools

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.backend import get_backend
from solvers.linalg.csr import CsrMatrix
from solvers.linalg.multigrid import GeometricMultigrid, coarse_shapes
from solvers.linalg.stencil import SIDES, StencilLaplacian

MIXED_2D = {"x_hi": "neumann", "y_lo": "neumann"}
MIXED_3D = {"x_lo": "neumann", "y_hi": "neumann", "z_hi": "neumann"}
RTOL = 1e-11


def unit_spacing(shape):
    return tuple(1 / n for n in shape)


def laplacian(shape, backend, precision="fp64", coefficient=None, boundary=None, spacing=None):
    return StencilLaplacian(shape, spacing or unit_spacing(shape), coefficient=coefficient,
                            boundary=boundary, backend=backend, precision=precision)


def smooth_coefficient(shape):
    """exp(1.5 sin(2 pi x) cos(3 y)) (x z-modulated in 3D): a factor 20 variation."""
    centres = np.meshgrid(*[(np.arange(n) + 0.5) / n for n in shape], indexing="ij")
    value = 1.5 * np.sin(2 * np.pi * centres[0]) * np.cos(3 * centres[1])
    if len(shape) == 3:
        value = value * np.cos(centres[2])
    return np.exp(value)


def rough_coefficient(shape, seed=1):
    """Independent per cell over two decades (as in test_linalg_stencil.py)."""
    return np.exp(np.random.default_rng(seed).uniform(-2.3, 2.3, shape))


def inclusion_coefficient(shape, contrast):
    """1 outside, `contrast` inside a ball of radius 0.3 at the centre of the unit box."""
    centres = np.meshgrid(*[(np.arange(n) + 0.5) / n for n in shape], indexing="ij")
    inside = sum((c - 0.5) ** 2 for c in centres) < 0.09
    return np.where(inside, contrast, 1.0)


def random_vector(n, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, n)


class Preconditioner:
    """M r on host vectors through one bound cycle (eager launches)."""

    def __init__(self, mg):
        self.mg, self.backend = mg, mg.backend
        self.r = self.backend.zeros((mg.n,), mg.dtype)
        self.z = self.backend.zeros((mg.n,), mg.dtype)
        self.cycle = mg.bind(self.r, self.z)

    def __call__(self, r):
        self.backend.write(self.r, np.asarray(r).astype(self.mg.dtype))
        self.cycle()
        return self.backend.to_host(self.z).astype(np.float64)


def stand_alone(mg, b, rtol=RTOL, max_cycles=200):
    """x += M (b - A x) until ||b - A x|| <= rtol ||b||; returns x and the residual norms."""
    A, M = mg.operator.to_scipy(), Preconditioner(mg)
    x = np.zeros(mg.n)
    norms = [np.linalg.norm(b)]
    for _ in range(max_cycles):
        x += M(b - A @ x)
        norms.append(np.linalg.norm(b - A @ x))
        if norms[-1] <= rtol * norms[0]:
            break
    return x, np.array(norms)


def factors(norms, first=1, last=8):
    """Residual reduction per cycle: each ratio, and their geometric mean over cycles
    first..last (the first cycle benefits from a rough random right-hand side)."""
    ratios = norms[1:] / norms[:-1]
    window = ratios[first:last]
    return ratios, float(np.exp(np.mean(np.log(window))))


def relative_error(x, reference):
    return np.linalg.norm(x - reference) / np.linalg.norm(reference)


# -- (a) model problem: grid-independent factors, converged result equals spsolve ------------

# Bounds on the residual factor per cycle, Dirichlet Poisson with the default V(2,2) Chebyshev
# cycle. Asymptotic factors (power iteration on the error): 0.186 / 0.186 / 0.187 / 0.187 on
# 32^2 ... 256^2 and 0.241 / 0.255 / 0.261 on 16^3, 32^3, 64^3 (3D saturates with the levels).
MODEL_BOUND = {2: 0.2, 3: 0.27}
MODEL_GRIDS = {2: [(32, 32), (64, 64), (128, 128)], 3: [(16, 16, 16), (32, 32, 32)]}


@functools.cache
def model_solution(shape):
    """spsolve of the model problem for random_vector(n) (cached: SuperLU takes 6 s at 32^3)."""
    A = laplacian(shape, "host").to_scipy().tocsc()
    return spla.spsolve(A, random_vector(A.shape[0]))


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
@pytest.mark.parametrize("ndim", [2, 3])
def test_model_problem_factor_is_grid_independent(backend_name, ndim, precision):
    means = {}
    for shape in MODEL_GRIDS[ndim]:
        op = laplacian(shape, backend_name, precision)
        mg = GeometricMultigrid(op)
        b = random_vector(op.n)
        x, norms = stand_alone(mg, b)
        ratios, means[shape] = factors(norms)
        print(f"{precision} {mg}: factors {np.round(ratios, 3)}")
        assert norms[-1] <= RTOL * norms[0]
        assert ratios.max() <= MODEL_BOUND[ndim]
        assert relative_error(x, model_solution(shape)) <= 1e-7
    # Grid independence: the mean factor moves by less than 0.02 from the coarsest grid.
    values = list(means.values())
    assert max(values) - min(values) <= 0.02, means


def test_three_sweeps_bring_3d_under_0_2(backend_name):
    """V(3,3): asymptotic 0.151 (16^3) and 0.152 (32^3)."""
    for shape in ((16, 16, 16), (32, 32, 32)):
        mg = GeometricMultigrid(laplacian(shape, backend_name), sweeps=3)
        _, norms = stand_alone(mg, random_vector(mg.n))
        ratios, _ = factors(norms)
        print(f"{mg}: factors {np.round(ratios, 3)}")
        assert ratios.max() <= 0.17


def test_jacobi_smoother_converges_at_its_known_rate(backend_name):
    """Damped Jacobi V(2,2): asymptotic 0.276 (2D, omega 0.8) and 0.337 (3D, omega 6/7)."""
    for shape, bound in (((64, 64), 0.3), ((16, 16, 16), 0.36)):
        op = laplacian(shape, backend_name)
        mg = GeometricMultigrid(op, smoother="jacobi")
        b = random_vector(op.n)
        x, norms = stand_alone(mg, b)
        ratios, _ = factors(norms)
        print(f"{mg}: factors {np.round(ratios, 3)}")
        assert ratios.max() <= bound
        assert relative_error(x, spla.spsolve(op.to_scipy().tocsc(), b)) <= 1e-7


# -- (b) M is symmetric positive definite ----------------------------------------------------

def assemble(mg):
    """M as a dense float64 matrix, one cycle per column."""
    M = Preconditioner(mg)
    identity = np.eye(mg.n)
    return np.column_stack([M(identity[:, i]) for i in range(mg.n)])


SPD_CASES = {
    "2d": ((16, 16), "rough", MIXED_2D, {}),
    "2d_jacobi": ((16, 16), "rough", MIXED_2D, {"smoother": "jacobi", "sweeps": 1}),
    "3d": ((8, 8, 8), "rough", MIXED_3D, {}),
    "3d_neumann": ((8, 8, 8), None, dict.fromkeys(SIDES, "neumann"), {"sweeps": 3}),
}
SYMMETRY_TOL = {"fp64": 1e-13, "fp32": 2e-6}  # relative to max |M|; measured 2e-16, 7e-8


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
@pytest.mark.parametrize("case", sorted(SPD_CASES))
def test_cycle_is_symmetric_positive_definite(backend_name, case, precision):
    shape, coefficient, boundary, options = SPD_CASES[case]
    k = rough_coefficient(shape) if coefficient == "rough" else None
    mg = GeometricMultigrid(laplacian(shape, backend_name, precision, k, boundary), **options)
    M = Preconditioner(mg)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, y = rng.uniform(-1, 1, mg.n), rng.uniform(-1, 1, mg.n)
        mx, my = M(x), M(y)
        scale = np.linalg.norm(x) * np.linalg.norm(my) + np.linalg.norm(y) * np.linalg.norm(mx)
        assert abs(x @ my - y @ mx) <= SYMMETRY_TOL[precision] * scale
        assert x @ M(x) > 0
    dense = assemble(mg)
    assert np.max(np.abs(dense - dense.T)) <= SYMMETRY_TOL[precision] * np.max(np.abs(dense))
    eigenvalues = np.linalg.eigvalsh((dense + dense.T) / 2)
    assert eigenvalues[0] > 0


def test_preconditioned_spectrum_with_a_jump(backend_name):
    """With a 1000-fold jump the stand-alone cycle diverges (bilinear interpolation misses the
    kink of the solution at the interface), but M stays SPD and cond(M A) is 240 against 3.4e5
    for Jacobi: what CG needs. Constant coefficient: M A in [0.81, 1.0], cond 1.23 (Jacobi
    1.6e3)."""
    shape = (32, 32)
    for coefficient, bound in ((None, 1.3), (inclusion_coefficient(shape, 1e3), 400)):
        op = laplacian(shape, backend_name, coefficient=coefficient, boundary=MIXED_2D)
        M = assemble(GeometricMultigrid(op))
        A = op.to_scipy().toarray()
        L = np.linalg.cholesky(A)
        eigenvalues = np.linalg.eigvalsh(L.T @ ((M + M.T) / 2) @ L)  # those of M A
        scale = 1 / np.sqrt(np.diag(A))
        jacobi = np.linalg.eigvalsh(scale[:, None] * A * scale[None, :])
        print(f"cond(MA) = {eigenvalues[-1] / eigenvalues[0]:.3g} "
              f"(Jacobi {jacobi[-1] / jacobi[0]:.3g})")
        assert eigenvalues[0] > 0
        assert eigenvalues[-1] / eigenvalues[0] <= bound


# -- (c) variable coefficients and Neumann sides ---------------------------------------------

# (shape, coefficient, boundary, bound on the factor per cycle). Measured: smooth 0.29 / 0.28,
# rough 0.72 (2D) / 0.6 (3D): re-discretised coarse operators see the per-cell noise only
# through averages. The last case has equal spacing on a 2:1 grid; with the domain's spacing
# 1/64 x 1/32 instead (weights 4:1) the factor grows to 0.34: point smoothing.
VARIABLE_CASES = {
    "2d_smooth_mixed": ((64, 64), "smooth", MIXED_2D, 0.35),
    "2d_rough_mixed": ((32, 32), "rough", MIXED_2D, 0.8),
    "3d_smooth_mixed": ((16, 16, 16), "smooth", MIXED_3D, 0.35),
    "3d_rough_mixed": ((16, 16, 16), "rough", MIXED_3D, 0.7),
    "2d_neumann_channel": ((64, 32), None, {"y_lo": "neumann", "y_hi": "neumann"}, 0.2),
}


@pytest.mark.parametrize("case", sorted(VARIABLE_CASES))
def test_variable_coefficient_and_neumann_converge(backend_name, case):
    shape, coefficient, boundary, bound = VARIABLE_CASES[case]
    k = {"rough": rough_coefficient(shape), "smooth": smooth_coefficient(shape)}.get(
        coefficient)
    op = laplacian(shape, backend_name, coefficient=k, boundary=boundary,
                   spacing=(1 / shape[0],) * len(shape))
    mg = GeometricMultigrid(op)
    b = random_vector(op.n)
    x, norms = stand_alone(mg, b)
    ratios, _ = factors(norms)
    print(f"{case}: {mg}: factors {np.round(ratios, 3)}")
    assert norms[-1] <= RTOL * norms[0]
    assert ratios.max() <= bound
    assert relative_error(x, spla.spsolve(op.to_scipy().tocsc(), b)) <= 1e-7


def test_all_neumann_converges_to_the_zero_mean_solution(backend_name):
    """A singular system (constants as null space) with a compatible right-hand side."""
    shape = (16, 16, 16)
    op = laplacian(shape, backend_name, coefficient=smooth_coefficient(shape),
                   boundary=dict.fromkeys(SIDES, "neumann"))
    b = random_vector(op.n)
    b -= b.mean()
    x, norms = stand_alone(GeometricMultigrid(op), b, rtol=1e-10)
    ratios, _ = factors(norms)
    print(f"all Neumann: factors {np.round(ratios, 3)}")
    assert norms[-1] <= 1e-10 * norms[0] and ratios.max() <= 0.35
    # Reference: the bordered system [[A, 1], [1^T, 0]] fixes the mean to 0.
    ones = np.ones((op.n, 1))
    bordered = sp.bmat([[op.to_scipy(), ones], [ones.T, None]], format="csc")
    reference = spla.spsolve(bordered, np.append(b, 0.0))[:-1]
    assert relative_error(x - x.mean(), reference) <= 1e-7


# -- (d) graph capture -------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(66, 66), (24, 16, 40)])
def test_graph_replay_matches_eager_bits(backend_name, shape):
    backend = get_backend(backend_name)
    op = laplacian(shape, backend, "fp32", rough_coefficient(shape), None)
    mg = GeometricMultigrid(op)
    r = backend.to_device(random_vector(op.n).astype(np.float32))
    z = backend.zeros((op.n,), np.float32)
    cycle = mg.bind(r, z)
    cycle()
    eager = backend.to_host(z)
    # Stale work vectors and output do not matter: every buffer is written before it is read.
    backend.fill(z, np.nan)
    graph = backend.capture(cycle)
    graph.replay()
    np.testing.assert_array_equal(backend.to_host(z), eager)
    # bind() itself inside the capture: no allocation, no host read.
    backend.fill(z, np.nan)
    graph = backend.capture(lambda: mg.bind(r, z)())
    graph.replay()
    graph.replay()
    np.testing.assert_array_equal(backend.to_host(z), eager)


# -- (e) errors and the hierarchy --------------------------------------------------------------

@pytest.mark.parametrize("shape", [(7, 8), (6, 6), (16, 16, 6), (16, 9)])
def test_grid_that_cannot_be_coarsened_is_a_clear_error(shape):
    with pytest.raises(ValueError, match="cannot be coarsened") as error:
        GeometricMultigrid(laplacian(shape, "host"))
    assert "\n" not in str(error.value)


def test_operator_that_is_not_a_stencil_is_a_clear_error():
    matrix = CsrMatrix.from_scipy(laplacian((8, 8), "host").to_scipy(), backend="host")
    with pytest.raises(TypeError, match="needs a StencilLaplacian.*CsrMatrix") as error:
        GeometricMultigrid(matrix)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("options, message", [
    ({"levels": 1}, "levels must be"),
    ({"levels": 6}, "levels must be"),
    ({"smoother": "gauss-seidel"}, "smoother must be"),
    ({"sweeps": 0}, "sweeps must be"),
    ({"omega": 0.8}, "omega is the damping"),
    ({"smoother": "jacobi", "omega": 1.0}, r"omega must be in \(0, 1\)"),
    ({"coarse_sweeps": 0}, "coarse_sweeps must be"),
])
def test_bad_options_are_clear_errors(options, message):
    with pytest.raises(ValueError, match=message) as error:
        GeometricMultigrid(laplacian((64, 64), "host"), **options)
    assert "\n" not in str(error.value)


def test_bind_checks_its_vectors():
    mg = GeometricMultigrid(laplacian((16, 16), "host"))
    backend = mg.backend
    v = backend.zeros((mg.n,), mg.dtype)
    with pytest.raises(ValueError, match="must not overlap"):
        mg.bind(v, v)
    with pytest.raises(ValueError, match="z must be"):
        mg.bind(v, backend.zeros((mg.n + 1,), mg.dtype))


def test_hierarchy():
    assert coarse_shapes((64, 48)) == [(64, 48), (32, 24), (16, 12), (8, 6)]
    assert coarse_shapes((16, 8, 32)) == [(16, 8, 32), (8, 4, 16)]
    assert coarse_shapes((66, 66)) == [(66, 66), (33, 33)]
    shape = (16, 8, 32)
    k = rough_coefficient(shape)
    op = laplacian(shape, "host", coefficient=k, boundary=MIXED_3D)
    mg = GeometricMultigrid(op)
    assert mg.levels == 2 and mg.shapes == ((16, 8, 32), (8, 4, 16))
    coarse = mg.operators[1]
    np.testing.assert_allclose(coarse.coefficient[1, 2, 3],
                               k[2:4, 4:6, 6:8].mean(), rtol=1e-14)
    assert coarse.spacing == tuple(2 * h for h in op.spacing)
    assert coarse.boundary == op.boundary
    # The coarsest-level Chebyshev interval brackets the spectrum of D^-1 A there.
    A = coarse.to_scipy().toarray()
    scale = 1 / np.sqrt(np.diag(A))
    eigenvalues = np.linalg.eigvalsh(scale[:, None] * A * scale[None, :])
    low, high = mg.coarse_interval
    assert low < eigenvalues[0] and eigenvalues[-1] < high
    # Past 1024 coarsest cells the interval comes from Lanczos: deterministic too.
    big = laplacian((66, 66), "host")
    assert GeometricMultigrid(big).coarse_interval == GeometricMultigrid(big).coarse_interval
