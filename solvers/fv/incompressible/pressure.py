"""The pressure system of the projection, A x = b with A = -lap (5-point, 7-point in 3D,
cell-centred, plain 1/h^2 scaling), and the preconditioned conjugate-gradient solver for it from
solvers.linalg (the 2D and the 3D solver's).

Walls, slip and inflow sides are Neumann, outflow sides Dirichlet (x = 0 on the face). Without
periodic sides A is a matrix-free StencilLaplacian; a periodic axis (which the stencil kernels
do not wrap) makes A a CsrMatrix assembled here. The preconditioner is named as everywhere
(solvers.linalg.preconditioners): "multigrid" is the stencil's GeometricMultigrid V-cycle, or
the smoothed-aggregation AlgebraicMultigrid of the periodic matrix; "amg" is always the
algebraic one; "jacobi" is diagonal-preconditioned CG, the baseline of the benchmark; "none"
plain CG. On a decomposed grid (several MPI ranks) A is each rank's BlockLaplacian and the
solve distributed CG, preconditioned by the distributed multigrid V-cycle or by nothing.
"""

import numpy as np
import scipy.sparse as sp

from ...linalg import ConjugateGradient, CsrMatrix, StencilLaplacian
from ...linalg.block_stencil import BlockLaplacian
from ...linalg.distributed_cg import DistributedConjugateGradient
from ...linalg.distributed_multigrid import DistributedMultigrid
from ...linalg.preconditioners import check, choices, describe, preconditioner
from ..sides import SIDES_3D

PRECONDITIONERS = choices("multigrid")  # every name, the default first
DISTRIBUTED = ("multigrid", "none")  # the preconditioners of a decomposed grid's solve


def laplacian_matrix(shape, spacing, kinds):
    """A as scipy CSR (float64): per axis, w = 1/h^2 between neighbours (wrapping around a
    periodic axis), 2 w on the diagonal at a Dirichlet face, nothing at a Neumann face.
    kinds: {side: 'dirichlet' | 'neumann' | 'periodic'}; cells numbered x fastest (i + nx j,
    in 3D i + nx (j + ny k))."""
    n = int(np.prod(shape))
    index = np.arange(n).reshape(shape, order="F")  # [i, j(, k)] -> i + nx j (+ nx ny k)
    diag = np.zeros(shape)
    rows, cols, vals = [], [], []
    for axis, (lo, hi) in enumerate(zip(SIDES_3D[:2 * len(shape):2], SIDES_3D[1::2])):
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
    return sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n)).tocsr()


def pressure_operator(shape, spacing, kinds, backend, precision):
    """A: a matrix-free StencilLaplacian, or with a periodic axis a CsrMatrix."""
    if "periodic" in kinds.values():
        return CsrMatrix.from_scipy(laplacian_matrix(shape, spacing, kinds), backend=backend,
                                    precision=precision)
    return StencilLaplacian(shape, spacing, boundary=dict(kinds), backend=backend,
                            precision=precision)


def pressure_solver(shape, spacing, kinds, preconditioner_name, rtol, maxiter, backend,
                    precision, atol):
    """(ConjugateGradient on A, a description of the operator and preconditioner)."""
    check(preconditioner_name, PRECONDITIONERS, "pressure preconditioner")
    operator = pressure_operator(shape, spacing, kinds, backend, precision)
    m = preconditioner(preconditioner_name, operator)
    solver = ConjugateGradient(operator, preconditioner=m, rtol=rtol, maxiter=maxiter,
                               atol=atol)
    return solver, f"{type(operator).__name__} + CG({describe(m)})"


def distributed_pressure_solver(comm, layout, shape, spacing, kinds, preconditioner_name, rtol,
                                maxiter, backend, precision, atol):
    """(DistributedConjugateGradient on this rank's block of A, a description) for a grid of
    `shape` cells split by `layout` (linalg.block_layout) among the ranks of comm; the stopping
    rule is pressure_solver's, on the whole grid's norms."""
    if preconditioner_name not in DISTRIBUTED:
        raise ValueError(f"pressure preconditioner '{preconditioner_name}' does not run on "
                         f"several MPI ranks (use {' or '.join(DISTRIBUTED)})")
    operator = BlockLaplacian(comm, layout.block, shape, spacing, boundary=dict(kinds),
                              backend=backend, precision=precision)
    m = DistributedMultigrid(operator, layout) if preconditioner_name == "multigrid" else None
    solver = DistributedConjugateGradient(operator, m, rtol=rtol, maxiter=maxiter, atol=atol)
    return solver, f"{type(operator).__name__} + distributed CG({describe(m)})"
