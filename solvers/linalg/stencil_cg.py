"""Conjugate gradients fused with the matrix-free Laplacian (raw_kernels/linalg/stencil_cg.cu):
two kernels an iteration instead of three, and neither z = M^-1 r nor q = A p stored, so an
iteration moves ten vectors instead of thirteen. ConjugateGradient uses it for a
StencilLaplacian with no preconditioner or Jacobi (fused=True; by default up to
FUSED_MAX_UNKNOWNS unknowns). Both paths are latency bound rather than bandwidth bound, and the
fused kernels load each neighbour's r, M^-1 and p_old: on an H200 they measured faster at
128^3 and slower at 256^3 (docs/performance.md).

    launches = fused_iterations(cg, operator, precondition)   # two CG iterations

The direction p = z + beta p_old is computed where it is needed (at each cell and at its
neighbours), so p_old and p must be two vectors: they trade places every iteration, and one
call of the launches runs two iterations (ITERATIONS_PER_CALL).
"""

import numpy as np

from .stencil import kernel_defines

SOURCE = "linalg/stencil_cg.cu"
ITERATIONS_PER_CALL = 2
LAYERS = 16  # z layers a thread walks in 3D (the fastest of 8 to 64 at 128^3 on an H200)
FUSED_MAX_UNKNOWNS = 2**22  # the default's limit: faster at 128^3, slower at 256^3


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    for ndim in (2, 3):
        for variable in (False, True):
            yield SOURCE, kernel_defines(ndim, variable, LAYERS)


def fused_iterations(cg, operator, precondition):
    """The launches of two CG iterations of `cg` (its vectors and device state) on the
    StencilLaplacian `operator`; precondition: 1 for Jacobi, 0 for none."""
    backend = operator.backend
    kernels = backend.module(SOURCE, operator.dtype,
                             kernel_defines(operator.ndim, operator.variable, LAYERS))
    grid, block = operator.launch_shape(LAYERS)
    blocks = int(np.prod(grid))
    geometry = (*operator.geometry(), precondition)
    # Each launch owns its partial sums and last-block counter; p.Ap goes to cg.pq.
    pq = cg.pq
    p_other = backend.zeros((operator.n,), operator.dtype)

    def direction(p_old, p):
        return kernels.stencil_cg_direction.bind(
            grid, block, cg.r, cg.inv_diag, p_old, p, *geometry, cg.coef, cg.done,
            backend.zeros((blocks,), np.float64), pq, backend.zeros((1,), np.int32))

    def update(p):
        return kernels.stencil_cg_update.bind(
            grid, block, cg.x, cg.r, p, cg.inv_diag, *geometry, pq, cg.state, cg.done,
            cg.coef, backend.zeros((2 * blocks,), np.float64), backend.zeros((1,), np.int32))

    return [direction(cg.p, p_other), update(p_other), direction(p_other, cg.p), update(cg.p)]
