"""Mixed-precision refinement reaches an FP64 residual with FP32 inner solves, where FP32
conjugate gradients alone stall."""

import numpy as np
import pytest
import scipy.sparse.linalg as spla

from solvers.backend import get_backend
from solvers.linalg.csr import CsrMatrix
from solvers.linalg.krylov import ConjugateGradient
from solvers.linalg.refinement import IterativeRefinement, inner_matrix
from solvers.linalg.stencil import StencilLaplacian

SHAPE, SPACING = (64, 64), (1 / 64, 1 / 64)


def operators(backend_name):
    return [StencilLaplacian(SHAPE, SPACING, backend=backend_name, precision=p)
            for p in ("fp64", "fp32")]


def test_refinement_reaches_1e10_where_fp32_stalls(backend_name):
    a64, a32 = operators(backend_name)
    b = np.random.default_rng(3).uniform(-1, 1, a64.n)
    # FP32 alone: the true residual cannot go far below eps32 * cond-ish; asking 1e-10 of the
    # recursive residual either never converges or leaves a true residual far above 1e-10.
    x32, info32 = ConjugateGradient(a32, "jacobi", rtol=1e-10, maxiter=2000).solve(b)
    true32 = np.linalg.norm(b - a64.to_scipy() @ get_backend(backend_name).to_host(x32))
    assert not info32.converged or true32 / np.linalg.norm(b) > 1e-8

    refine = IterativeRefinement(a64, ConjugateGradient(a32, "jacobi", rtol=1e-4))
    x, info = refine.solve(b, rtol=1e-10)
    x = get_backend(backend_name).to_host(x)
    assert info.converged and info.status == "converged" and info.residual <= 1e-10
    assert info.outer_iterations <= 8
    assert np.linalg.norm(b - a64.to_scipy() @ x) / np.linalg.norm(b) <= 1.01e-10
    # cond(A) ~ 2e3 for 64^2: the error is at most cond * 1e-10.
    reference = spla.spsolve(a64.to_scipy().tocsc(), b)
    assert np.linalg.norm(x - reference) / np.linalg.norm(reference) < 1e-6


def test_refinement_reports_an_inner_maxiter_and_the_fp32_copy_shares_the_pattern():
    a64, a32 = operators("host")
    b = np.random.default_rng(4).uniform(-1, 1, a64.n)
    x, info = IterativeRefinement(a64, ConjugateGradient(a32, rtol=1e-4, maxiter=2)).solve(b)
    assert not info.converged and info.status == "maxiter" and info.inner_iterations == 2
    matrix = CsrMatrix.from_scipy(a64.to_scipy(), backend="host", precision="fp64")
    inner = inner_matrix(matrix)
    assert inner.dtype == np.float32 and inner.columns is matrix.columns
    np.testing.assert_array_equal(inner.host.values, matrix.host.values.astype(np.float32))


def test_refinement_errors():
    a64, a32 = operators("host")
    with pytest.raises(ValueError, match="outer operator must be fp64"):
        IterativeRefinement(a32, ConjugateGradient(a32))
    with pytest.raises(ValueError, match="inner solver must be fp32"):
        IterativeRefinement(a64, ConjugateGradient(a64))
