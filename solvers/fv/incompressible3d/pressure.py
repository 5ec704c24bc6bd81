"""The 3D pressure system of the projection, A x = b with A = -lap (7-point, cell-centred),
and its preconditioned CG from solvers.linalg, as in 2D (solvers/fv/incompressible/pressure.py):
without periodic sides a matrix-free StencilLaplacian with geometric multigrid; a periodic axis
(which the stencil kernels do not wrap) makes A a CsrMatrix assembled here, preconditioned by
algebraic multigrid."""

import numpy as np
import scipy.sparse as sp

from ...linalg import ConjugateGradient, CsrMatrix, StencilLaplacian
from ...linalg.preconditioners import check, choices, describe, preconditioner
from ..sides import SIDES_3D

PRECONDITIONERS = choices("multigrid")  # every name, the default first


def laplacian_matrix(shape, spacing, kinds):
    """A as scipy CSR (float64), any dimension: per axis w = 1/h^2 between neighbours (wrapping
    around a periodic axis), 2 w on the diagonal at a Dirichlet face, nothing at a Neumann one.
    kinds: {side: 'dirichlet' | 'neumann' | 'periodic'}; cells numbered x fastest."""
    n = int(np.prod(shape))
    index = np.arange(n).reshape(shape, order="F")
    diag = np.zeros(shape)
    rows, cols, vals = [], [], []
    for axis in range(len(shape)):
        lo, hi = (kinds[side] for side in SIDES_3D[2 * axis:2 * axis + 2])
        w = 1.0 / spacing[axis] ** 2
        a, d = np.moveaxis(index, axis, 0), np.moveaxis(diag, axis, 0)  # views
        pairs = [(a[:-1], a[1:])] + ([(a[-1:], a[:1])] if lo == "periodic" else [])
        for left, right in pairs:
            rows += [left.ravel(), right.ravel()]
            cols += [right.ravel(), left.ravel()]
            vals += [np.full(left.size, -w)] * 2
        d[:-1] += w
        d[1:] += w
        if lo == "periodic":
            d[0] += w
            d[-1] += w
        d[0] += 2 * w * (lo == "dirichlet")
        d[-1] += 2 * w * (hi == "dirichlet")
    rows.append(index.ravel())
    cols.append(index.ravel())
    vals.append(diag.ravel())
    return sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n)).tocsr()


def pressure_solver(shape, spacing, kinds, preconditioner_name, rtol, maxiter, backend,
                    precision, atol):
    """(ConjugateGradient on A, a description of the operator and preconditioner)."""
    check(preconditioner_name, PRECONDITIONERS, "pressure preconditioner")
    if "periodic" in kinds.values():
        operator = CsrMatrix.from_scipy(laplacian_matrix(shape, spacing, kinds),
                                        backend=backend, precision=precision)
    else:
        operator = StencilLaplacian(shape, spacing, boundary=dict(kinds), backend=backend,
                                    precision=precision)
    m = preconditioner(preconditioner_name, operator)
    solver = ConjugateGradient(operator, preconditioner=m, rtol=rtol, maxiter=maxiter,
                               atol=atol)
    return solver, f"{type(operator).__name__} + CG({describe(m)})"
