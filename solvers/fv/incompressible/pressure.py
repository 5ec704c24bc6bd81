"""The pressure system of the projection, A x = b with A = -lap (5-point, cell-centred, plain
1/h^2 scaling), and the preconditioned conjugate-gradient solver for it from solvers.linalg.

Walls, slip and inflow sides are Neumann, outflow sides Dirichlet (x = 0 on the face). Without
periodic sides A is a matrix-free StencilLaplacian and "multigrid" is its GeometricMultigrid
V-cycle; a periodic axis (which the stencil kernels do not wrap) makes A a CsrMatrix assembled
here and "multigrid" pyamg's smoothed aggregation (AlgebraicMultigrid). "jacobi" is
diagonal-preconditioned CG, the baseline of the benchmark.
"""

import numpy as np
import scipy.sparse as sp

from ...linalg import (
    AlgebraicMultigrid,
    ConjugateGradient,
    CsrMatrix,
    GeometricMultigrid,
    StencilLaplacian,
)
from ...linalg.multigrid import coarse_shapes

PRECONDITIONERS = ("multigrid", "jacobi")


def laplacian_matrix(shape, spacing, kinds):
    """A as scipy CSR (float64): per axis, w = 1/h^2 between neighbours (wrapping around a
    periodic axis), 2 w on the diagonal at a Dirichlet face, nothing at a Neumann face.
    kinds: {side: 'dirichlet' | 'neumann' | 'periodic'}; cells numbered i + nx j."""
    nx, ny = shape
    index = np.arange(nx * ny).reshape(ny, nx).T  # [i, j] -> i + nx j
    diag = np.zeros((nx, ny))
    rows, cols, vals = [], [], []
    for axis, (lo, hi) in enumerate((("x_lo", "x_hi"), ("y_lo", "y_hi"))):
        w = 1.0 / spacing[axis] ** 2
        a = np.moveaxis(index, axis, 0)
        d = np.moveaxis(diag, axis, 0)  # a view: writes reach diag
        pairs = [(a[:-1], a[1:])]
        if kinds[lo] == "periodic":
            pairs.append((a[-1:], a[:1]))
        for left, right in pairs:
            rows += [left.ravel(), right.ravel()]
            cols += [right.ravel(), left.ravel()]
            vals += [np.full(left.size, -w)] * 2
        d[:-1] += w
        d[1:] += w
        if kinds[lo] == "periodic":
            d[0] += w
            d[-1] += w
        d[0] += 2 * w * (kinds[lo] == "dirichlet")
        d[-1] += 2 * w * (kinds[hi] == "dirichlet")
    rows.append(index.ravel())
    cols.append(index.ravel())
    vals.append(diag.ravel())
    n = nx * ny
    return sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n)).tocsr()


def geometric_multigrid_fits(shape, kinds):
    """Whether the stencil operator and its geometric multigrid can take this system."""
    return "periodic" not in kinds.values() and len(coarse_shapes(shape)) >= 2


def pressure_solver(shape, spacing, kinds, preconditioner, rtol, maxiter, backend, precision,
                    atol):
    """(ConjugateGradient on A, a description of the operator and preconditioner)."""
    if preconditioner not in PRECONDITIONERS:
        raise ValueError(f"pressure preconditioner must be one of {', '.join(PRECONDITIONERS)},"
                         f" got {preconditioner!r}")
    if "periodic" in kinds.values():
        operator = CsrMatrix.from_scipy(laplacian_matrix(shape, spacing, kinds), backend=backend,
                                        precision=precision)
        preconditioner_object = (AlgebraicMultigrid(operator.to_scipy(), backend=backend,
                                                    precision=precision)
                                 if preconditioner == "multigrid" else "jacobi")
    else:
        boundary = {side: kind for side, kind in kinds.items()}
        operator = StencilLaplacian(shape, spacing, boundary=boundary, backend=backend,
                                    precision=precision)
        if preconditioner == "multigrid" and not geometric_multigrid_fits(shape, kinds):
            raise ValueError(f"geometric multigrid needs even cell counts of at least 8 per "
                             f"axis, got {shape}; use preconditioner 'jacobi'")
        preconditioner_object = (GeometricMultigrid(operator) if preconditioner == "multigrid"
                                 else "jacobi")
    solver = ConjugateGradient(operator, preconditioner=preconditioner_object, rtol=rtol,
                               maxiter=maxiter, atol=atol)
    name = preconditioner_object if isinstance(preconditioner_object, str) else \
        type(preconditioner_object).__name__
    return solver, f"{type(operator).__name__} + CG({name})"
