"""Conjugate gradients on the device against scipy.sparse.linalg.spsolve of the same system.

The error bound: at a relative residual rtol, ||x - x*|| / ||x*|| <= cond(A) * rtol; the tests
use rtol small enough that this stays far under the tolerance they assert, in fp64. In fp32 the
attainable residual is limited by rounding of A x (about sqrt(nnz per row) * eps32 * ||A|| ||x||),
so fp32 solves ask for rtol 1e-5."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.backend import get_backend
from solvers.linalg import krylov
from solvers.linalg.csr import CsrMatrix
from solvers.linalg.krylov import BiCGStab, ConjugateGradient
from solvers.linalg.multigrid import GeometricMultigrid
from solvers.linalg.stencil import StencilLaplacian


def random_rhs(n, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, n)


def relative_error(x, reference):
    return np.linalg.norm(x - reference) / np.linalg.norm(reference)


def variable_coefficient(shape, seed=1):
    """A coefficient varying over two orders of magnitude, smooth plus noise."""
    rng = np.random.default_rng(seed)
    return np.exp(rng.uniform(-2.3, 2.3, shape))


OPERATORS = {
    "laplace2d": lambda b, prec: StencilLaplacian((40, 30), (1 / 40, 1 / 30), backend=b,
                                                  precision=prec),
    "laplace3d": lambda b, prec: StencilLaplacian((12, 10, 9), (1 / 12, 1 / 10, 1 / 9),
                                                  backend=b, precision=prec),
    "anisotropic": lambda b, prec: StencilLaplacian((40, 40), (1 / 40, 1 / 4), backend=b,
                                                    precision=prec),
    "variable": lambda b, prec: StencilLaplacian(
        (32, 32), (1 / 32, 1 / 32), coefficient=variable_coefficient((32, 32)),
        boundary={"x_lo": "dirichlet", "x_hi": "neumann", "y_lo": "neumann",
                  "y_hi": "dirichlet"}, backend=b, precision=prec),
    "csr_shifted": lambda b, prec: CsrMatrix.from_scipy(
        StencilLaplacian((30, 30), (1.0, 1.0), backend=b).to_scipy()
        + sp.diags(np.linspace(0.1, 3.0, 900)), backend=b, precision=prec),
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.parametrize("preconditioner", [None, "jacobi"])
def test_fp64_solve_matches_spsolve(backend_name, name, preconditioner):
    op = OPERATORS[name](backend_name, "fp64")
    A = op.to_scipy()
    b = random_rhs(op.n)
    x, info = ConjugateGradient(op, preconditioner, rtol=1e-11).solve(b)
    reference = spla.spsolve(A.tocsc(), b)
    assert info.converged and info.residual <= 1e-11
    # cond(A) of these operators is below 1e4 (variable: 1e4 with the coefficient contrast),
    # so cond * rtol <= 1e-7.
    assert relative_error(get_backend(backend_name).to_host(x), reference) < 1e-7


@pytest.mark.parametrize("name", ["laplace2d", "variable"])
def test_fp32_solve_matches_spsolve(backend_name, name):
    op = OPERATORS[name](backend_name, "fp32")
    b = random_rhs(op.n)
    x, info = ConjugateGradient(op, "jacobi", rtol=1e-5).solve(b)
    reference = spla.spsolve(op.to_scipy().tocsc(), b)
    assert info.converged
    # cond(A) ~ 1e3-1e4 times rtol 1e-5, plus the fp32 drift of the recursive residual.
    assert relative_error(get_backend(backend_name).to_host(x), reference) < 5e-2
    true_residual = np.linalg.norm(b - op.to_scipy() @ get_backend(backend_name).to_host(x))
    assert true_residual / np.linalg.norm(b) < 1e-4


def test_jacobi_helps_a_badly_scaled_problem(backend_name):
    op = OPERATORS["variable"](backend_name, "fp64")
    b = random_rhs(op.n)
    plain = ConjugateGradient(op, None, rtol=1e-8).solve(b)[1]
    jacobi = ConjugateGradient(op, "jacobi", rtol=1e-8).solve(b)[1]
    assert jacobi.iterations < 0.8 * plain.iterations


def test_graph_and_eager_give_the_same_bits(backend_name):
    op = OPERATORS["laplace2d"](backend_name, "fp32")
    b = random_rhs(op.n)
    results = []
    for graph in (True, False):
        x, info = ConjugateGradient(op, "jacobi", rtol=1e-5, chunk=7, graph=graph).solve(b)
        results.append((get_backend(backend_name).to_host(x), info.iterations))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


def test_whole_solve_replays_from_one_graph(backend_name):
    """The solve's iterations loop on the device (on cuda a conditional WHILE node, which the
    GPU machine's driver and cuda-bindings support): a solve captured into a caller's step
    runs to convergence from one replay, for any right-hand side, with the same bits and
    iteration count as the host-checked eager solve."""
    backend = get_backend(backend_name)
    assert backend.device_loops() is None
    op = OPERATORS["laplace2d"](backend_name, "fp32")
    eager = ConjugateGradient(op, "jacobi", rtol=1e-5, graph=False)
    captured = ConjugateGradient(op, "jacobi", rtol=1e-5)
    captured.launch_solve()  # warm-up outside the capture (b = 0: converges at once)
    step = backend.capture(captured.launch_solve)
    for seed in (1, 2):
        b = random_rhs(op.n, seed)
        x_eager, info_eager = eager.solve(b, restarts=0)  # launch_solve never restarts
        backend.write(captured.b, b.astype(np.float32))
        backend.fill(captured.x, 0)
        step.replay()
        assert captured.status() == "converged"
        np.testing.assert_array_equal(backend.to_host(captured.x), backend.to_host(x_eager))
        assert captured.info().iterations == info_eager.iterations > 10


def test_without_device_loops_a_captured_solve_holds_maxiter_iterations(monkeypatch):
    """Where the backend cannot loop inside a graph (CUDA < 12.4, no cuda-bindings), a solve
    captured into a step holds maxiter iterations that are no-ops once converged: the same
    bits as the looping solve; a bare loop without a fallback is a CaptureError."""
    from solvers.backend.base import CaptureError

    backend = get_backend("host")
    op = OPERATORS["laplace2d"]("host", "fp32")
    b = random_rhs(op.n, 3)
    looping = ConjugateGradient(op, "jacobi", rtol=1e-5, maxiter=400)
    x_loop, info_loop = looping.solve(b, restarts=0)  # launch_solve never restarts
    monkeypatch.setattr(backend, "device_loops", lambda: "no conditional nodes here")
    unrolled = ConjugateGradient(op, "jacobi", rtol=1e-5, maxiter=400, graph=False)
    unrolled.launch_solve()  # warm-up outside the capture
    step = backend.capture(unrolled.launch_solve)
    backend.write(unrolled.b, b.astype(np.float32))
    backend.fill(unrolled.x, 0)
    step.replay()
    np.testing.assert_array_equal(backend.to_host(unrolled.x), backend.to_host(x_loop))
    assert unrolled.info().iterations == info_loop.iterations
    with pytest.raises(CaptureError, match="no conditional nodes here"):
        backend.capture(lambda: backend.loop_until(unrolled.iterate, unrolled.done))


def test_repeat_solves_are_deterministic(backend_name):
    op = OPERATORS["laplace3d"](backend_name, "fp32")
    cg = ConjugateGradient(op, "jacobi", rtol=1e-5)
    b = random_rhs(op.n)
    first = get_backend(backend_name).to_host(cg.solve(b)[0])
    second = get_backend(backend_name).to_host(cg.solve(b)[0])
    np.testing.assert_array_equal(first, second)


def test_maxiter_is_reported_not_hidden(backend_name):
    op = OPERATORS["laplace2d"](backend_name, "fp64")
    x, info = ConjugateGradient(op, rtol=1e-12, maxiter=5, chunk=3).solve(random_rhs(op.n))
    assert not info.converged and info.status == "maxiter" and info.iterations == 5
    assert info.residual > 1e-3


def test_indefinite_matrix_breaks_down(backend_name):
    op = CsrMatrix.from_scipy(sp.diags([1.0, -1.0]).tocsr(), backend=backend_name,
                              precision="fp64")
    info = ConjugateGradient(op).solve(np.array([1.0, 1.0]))[1]
    assert info.status == "breakdown" and not info.converged


def test_absolute_floor_stops_a_solve_the_relative_tolerance_would_not(backend_name):
    """||r|| <= max(rtol ||b||, atol): with atol at 1e-3 ||b|| a solve asked for rtol 1e-12
    stops as converged once the true residual is under the floor, in fewer iterations."""
    op = OPERATORS["laplace2d"](backend_name, "fp64")
    b = random_rhs(op.n)
    floor = 1e-3 * np.linalg.norm(b)
    _, strict = ConjugateGradient(op, "jacobi", rtol=1e-12).solve(b)
    _, floored = ConjugateGradient(op, "jacobi", rtol=1e-12, atol=floor).solve(b)
    assert floored.converged and floored.status == "converged"
    assert floored.residual <= 1e-3 and floored.iterations < strict.iterations


def test_zero_rhs_converges_at_once(backend_name):
    op = OPERATORS["laplace2d"](backend_name, "fp64")
    x, info = ConjugateGradient(op).solve(np.zeros(op.n))
    assert info.converged and info.iterations == 0
    assert not np.any(get_backend(backend_name).to_host(x))


def test_clear_errors():
    op = CsrMatrix.from_scipy(sp.csr_matrix(np.array([[1.0, 2.0], [2.0, 0.0]])),
                              backend="host", precision="fp64")
    with pytest.raises(ValueError, match="Jacobi needs a nonzero diagonal: row 1 is 0"):
        ConjugateGradient(op, "jacobi")
    cg = ConjugateGradient(op)
    with pytest.raises(ValueError, match=r"b must have shape \(2,\), got \(3,\)"):
        cg.solve(np.ones(3))
    with pytest.raises(ValueError, match="b has non-finite values"):
        cg.solve(np.array([1.0, np.nan]))


def convection_diffusion(n, peclet):
    """Upwind convection-diffusion on an n x n grid: -lap u + peclet (u_x + u_y), Dirichlet.
    Non-symmetric; diagonally dominant, so BiCGStab converges without breakdown."""
    h = 1.0 / n
    lap = StencilLaplacian((n, n), (h, h), backend="host", precision="fp64").to_scipy()
    d1 = sp.diags([-1.0, 1.0], [-1, 0], shape=(n, n)) / h
    eye = sp.identity(n)
    return (lap + peclet * (sp.kron(eye, d1) + sp.kron(d1, eye))).tocsr()


@pytest.mark.parametrize("precision, rtol, tolerance", [("fp64", 1e-11, 1e-7),
                                                        ("fp32", 1e-5, 5e-2)])
@pytest.mark.parametrize("preconditioner", [None, "jacobi"])
def test_bicgstab_matches_spsolve(backend_name, precision, rtol, tolerance, preconditioner):
    A = convection_diffusion(32, peclet=50.0)
    op = CsrMatrix.from_scipy(A, backend=backend_name, precision=precision)
    b = random_rhs(op.n)
    x, info = BiCGStab(op, preconditioner, rtol=rtol).solve(b)
    assert info.converged, info
    # As for CG: cond(A) (about 1e3 here) times rtol, plus fp32 rounding of the iterates.
    reference = spla.spsolve(A.tocsc(), b)
    assert relative_error(get_backend(backend_name).to_host(x), reference) < tolerance


def test_bicgstab_graph_equals_eager_and_reports_maxiter(backend_name):
    op = CsrMatrix.from_scipy(convection_diffusion(24, peclet=20.0), backend=backend_name,
                              precision="fp32")
    b = random_rhs(op.n)
    xs = [get_backend(backend_name).to_host(
        BiCGStab(op, "jacobi", rtol=1e-5, chunk=4, graph=graph).solve(b)[0])
        for graph in (True, False)]
    np.testing.assert_array_equal(xs[0], xs[1])
    info = BiCGStab(op, rtol=1e-12, maxiter=3).solve(b)[1]
    assert info.status == "maxiter" and info.iterations == 3 and not info.converged


class ExplicitJacobi:
    """Jacobi as a general preconditioner object (its own launch), to test that path."""

    def __init__(self, op):
        backend = get_backend(op.backend.name)
        self.kernel = backend.module(krylov.SOURCE, op.dtype, krylov.kernel_defines()).jacobi_apply
        self.inv_diag = backend.to_device((1 / op.diagonal()).astype(op.dtype))
        self.running = backend.zeros((1,), np.int32)
        self.n = op.n

    def bind(self, r, z):
        return self.kernel.bind(-(-self.n // 256), 256, z, r, self.inv_diag, self.running,
                                self.n)


@pytest.mark.parametrize("solver", [ConjugateGradient, BiCGStab])
def test_general_preconditioner_path_equals_fused_jacobi(backend_name, solver):
    """The same M applied as separate launches gives the fused path's iterates bit for bit
    (the dot products add in the same order)."""
    op = OPERATORS["variable"](backend_name, "fp32")
    b = random_rhs(op.n)
    fused = solver(op, "jacobi", rtol=1e-5,
                   **({"fused": False} if solver is ConjugateGradient else {}))
    general = solver(op, ExplicitJacobi(op), rtol=1e-5)
    for _ in range(2):  # a second solve must start clean
        x_fused, info_fused = fused.solve(b)
        x_general, info_general = general.solve(b)
        assert info_general == info_fused
        np.testing.assert_array_equal(get_backend(backend_name).to_host(x_general),
                                      get_backend(backend_name).to_host(x_fused))


@pytest.mark.parametrize("precision, rtol, tolerance", [("fp64", 1e-10, 1e-9),
                                                       ("fp32", 1e-3, 1e-3)])
@pytest.mark.parametrize("name", ["laplace2d", "laplace3d", "variable"])
@pytest.mark.parametrize("preconditioner", [None, "jacobi"])
def test_stencil_fused_cg_follows_the_general_iteration(backend_name, name, preconditioner,
                                                        precision, rtol, tolerance):
    """stencil_cg.py's two-kernel iteration is the same CG in another summation order: the
    same iteration count up to the drift rounding gives CG (2%, at least one iteration; 362
    against 364 in fp64 and 196 against 193 in fp32 without a preconditioner on the variable
    coefficient) and the same solution within the tolerance (fp32 to rtol 1e-3, above where
    its residual stalls on the variable coefficient, 3e-5)."""
    op = OPERATORS[name](backend_name, precision)
    b = random_rhs(op.n, 4)
    runs = [ConjugateGradient(op, preconditioner, rtol=rtol, fused=fused).solve(b, restarts=0)
            for fused in (True, False)]
    (x_fused, fused), (x_general, general) = runs
    assert fused.status == general.status == "converged"
    assert abs(fused.iterations - general.iterations) <= max(1, general.iterations // 50), (
        fused, general)
    to_host = get_backend(backend_name).to_host
    assert relative_error(to_host(x_fused), to_host(x_general)) < tolerance


def test_fp32_asked_beyond_its_precision_reports_stalled(backend_name):
    """The recursive residual of fp32 CG falls below 1e-10 while the true residual of the
    returned x stays near 1e-6: that must not be reported as converged."""
    op = OPERATORS["laplace2d"](backend_name, "fp32")
    x, info = ConjugateGradient(op, "jacobi", rtol=1e-10, maxiter=3000).solve(random_rhs(op.n))
    assert info.status in ("stalled", "maxiter") and not info.converged
    assert info.residual > 1e-9


@pytest.mark.parametrize("shape", [(32, 32), (64, 64), (128, 128), (16, 16, 16), (32, 32, 32)])
def test_multigrid_pcg_iterations_stay_flat_under_refinement(backend_name, shape):
    """Geometric multigrid as CG's preconditioner: the iteration count to 1e-8 does not grow
    with the grid (Jacobi-CG's grows like 1/h). Bound: V(2,2) contracts by ~0.19 (2D) and
    ~0.26 (3D) a cycle on its own, so PCG needs at most about a dozen iterations."""
    spacing = tuple(1.0 / n for n in shape)
    op = StencilLaplacian(shape, spacing, backend=backend_name, precision="fp64")
    b = random_rhs(op.n)
    x, info = ConjugateGradient(op, GeometricMultigrid(op), rtol=1e-8).solve(b)
    assert info.converged and info.iterations <= 12, info
    reference = spla.spsolve(op.to_scipy().tocsc(), b)
    assert relative_error(get_backend(backend_name).to_host(x), reference) < 1e-5
