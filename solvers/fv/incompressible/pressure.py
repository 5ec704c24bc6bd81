"""The pressure system of the projection, A x = b with A = -lap (5-point, 7-point in 3D,
cell-centred, plain 1/h^2 scaling), and the preconditioned conjugate-gradient solver for it from
solvers.linalg (the 2D and the 3D solver's).

Walls, slip and inflow sides are Neumann, outflow sides Dirichlet (x = 0 on the face). Without
periodic sides A is a matrix-free StencilLaplacian; a periodic axis (which the stencil kernels
do not wrap) makes A a CsrMatrix (linalg.stencil.laplacian_matrix). The preconditioner is
named as everywhere (solvers.linalg.preconditioners): "multigrid" is the stencil's
GeometricMultigrid V-cycle, or the smoothed-aggregation AlgebraicMultigrid of the periodic
matrix; "amg" is always the
algebraic one; "jacobi" is diagonal-preconditioned CG, the baseline of the benchmark; "none"
plain CG. On a decomposed grid (several MPI ranks) A is each rank's BlockLaplacian (periodic
sides too: its blocks wrap) and the solve distributed CG, preconditioned by the distributed
multigrid V-cycle or by nothing.
"""

from ...linalg import ConjugateGradient, CsrMatrix, StencilLaplacian
from ...linalg.block_stencil import OVERLAP_CELLS, BlockLaplacian
from ...linalg.distributed_cg import DistributedConjugateGradient
from ...linalg.distributed_multigrid import DistributedMultigrid
from ...linalg.preconditioners import check, choices, describe, preconditioner
from ...linalg.stencil import laplacian_matrix

PRECONDITIONERS = choices("multigrid")  # every name, the default first
DISTRIBUTED = ("multigrid", "none")  # the preconditioners of a decomposed grid's solve


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


def distributed_pressure_solver(parallel, shape, spacing, kinds, preconditioner_name, rtol,
                                maxiter, backend, precision, atol):
    """(DistributedConjugateGradient on this rank's block of A, a description) for a grid of
    `shape` cells split by the block `parallel` (block.py: its layout, linalg.block_layout, and
    the way of its exchanges) among its ranks; the stopping rule is pressure_solver's, on the
    whole grid's norms."""
    if preconditioner_name not in DISTRIBUTED:
        raise ValueError(f"pressure preconditioner '{preconditioner_name}' does not run on "
                         f"several MPI ranks (use {' or '.join(DISTRIBUTED)})")
    # Decomposition.overlap: True overlaps every level's exchange, False none, None (the
    # default) the levels of at least OVERLAP_CELLS cells.
    overlap = OVERLAP_CELLS if parallel.overlap is None else (0 if parallel.overlap else None)
    operator = BlockLaplacian(parallel.comm, parallel.layout.block, shape, spacing,
                              boundary=dict(kinds), backend=backend, precision=precision,
                              collectives=parallel.collectives, overlap=overlap)
    layout = parallel.layout
    m = DistributedMultigrid(operator, layout) if preconditioner_name == "multigrid" else None
    solver = DistributedConjugateGradient(operator, m, rtol=rtol, maxiter=maxiter, atol=atol)
    return solver, f"{type(operator).__name__} + distributed CG({describe(m)})"
