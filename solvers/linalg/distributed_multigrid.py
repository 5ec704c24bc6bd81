"""GeometricMultigrid's V-cycle on a decomposed grid (issue 24): the fine levels smoothed,
restricted and prolonged block by block, the coarse levels gathered onto every rank.

    layout = block_layout(rank, size, shape)          # blocks aligned to the hierarchy
    op = BlockLaplacian(comm, layout.block, shape, spacing, boundary=...)
    mg = DistributedMultigrid(op, layout)
    cycle = mg.bind(r, z)      # a LaunchSequence: z = M r; launches (and HostWork) in order

Levels 0 ... g - 1 (g = layout.gather) are distributed: each rank runs the single-rank cycle's
kernels on its block (raw_kernels/linalg/block_multigrid.cu, the same rows and transfer weights
as multigrid.cu), and the one-cell halo of the array a pass reads is exchanged before it: the
iterate before each smoothing step and the residual, the residual again before the restriction
(its edge and corner cells too), the coarse correction before the prolongation; the passes
that read only face neighbours (smoothing, residual) overlap their exchange with the interior
cells (BlockLaplacian.bind_stencil). Level g is
gathered: every rank packs its block of the restricted residual into a slot as large as the
largest block's, the slots are all-gathered onto every rank, a kernel puts them together into
the whole level-g grid, every rank runs one V-cycle of a GeometricMultigrid of it (levels g ...
L - 1 of the single-rank hierarchy, the coarsest Chebyshev solve included) and a kernel keeps
its block of the result and the halo around it. Solving the coarse grid redundantly costs one
collective where a gather to one rank and a scatter back cost two, and the others would wait
for it anyway.

The exchanges and the all-gather go the operator's way (op.collectives, backend/collectives.py):
as launches in the graph (NCCL; MPI calls on the host backend), so that a whole cycle is
launches, or host-staged, HostWork between graph segments.

The smoothing polynomial, the transfers and the coarse levels are the single-rank cycle's, so
M is the single-rank M up to rounding, and preconditioned CG takes the same iterations.

Periodic sides: the blocks wrap around a periodic axis (block_layout's), so the distributed
levels smooth and transfer across it through their halos; the gathered level, which the
stencil kernels cannot wrap, is one V-cycle of the AlgebraicMultigrid of its assembled matrix
(stencil.laplacian_matrix: the single-rank periodic solve's preconditioner), the halo it
leaves around a block wrapped too. With no Dirichlet side A is singular (the constants): CG
runs on the consistent system, and the gathered algebraic level's result has its mean
removed, so that the cycle adds no constant to x (an fp32 algebraic cycle's can be large: x
then grows by it in every iteration until its rounding swamps the solution and CG breaks
down, measured on a periodic 8^3 pressure; the single-rank solve of the same system converged
in 7 iterations; the mean is added in double on the device: halo.cu's whole_mean). The
geometric gathered level (no periodic side) keeps its mean, as the single-rank cycle does, so a
singular non-periodic pressure (the cavity's) keeps the single rank's bits.
"""

import numpy as np

from ..backend.halo import check_vector
from .amg import AlgebraicMultigrid
from .block_layout import aligned_block
from .block_stencil import BLOCK, BlockLaplacian, launch_grid
from .multigrid import GeometricMultigrid, Smoothing
from .operator import LaunchSequence, overlap
from .stencil import SIDES, StencilLaplacian, laplacian_matrix


class DistributedMultigrid:
    """One V-cycle z = M r from z = 0 on a decomposed grid (see the module docstring).

    operator       the finest level: a BlockLaplacian on layout.block
    layout         the BlockLayout (block_layout.py): the blocks of every distributed level and
                   the gather level
    smoother, sweeps, omega, coarse_sweeps   as GeometricMultigrid's
    """

    name = "distributed_multigrid"

    def __init__(self, operator, layout, smoother="chebyshev", sweeps=2, omega=None,
                 coarse_sweeps=None):
        if not isinstance(operator, BlockLaplacian):
            raise TypeError(f"distributed multigrid needs a BlockLaplacian, got "
                            f"{type(operator).__name__}")
        if tuple(operator.block.shape) != tuple(layout.block.shape) \
                or tuple(operator.block.start) != tuple(layout.block.start):
            raise ValueError("the operator's block is not the layout's: build it on "
                             "layout.block, whose bounds the hierarchy needs")
        self.operator, self.layout = operator, layout
        self.backend, self.dtype, self.n = operator.backend, operator.dtype, operator.n
        self.comm, self.gather = operator.comm, layout.gather
        self.operators = [operator]
        for level in range(1, self.gather + 1):
            self.operators.append(self.operators[-1].coarsened(layout.blocks[level]))

        # The gathered level: the whole grid's cycle on every rank (periodic: algebraic).
        self.smoothing = Smoothing(smoother, sweeps, omega, operator.ndim)
        last = self.operators[-1]
        self.whole_shape = layout.shapes[self.gather]
        self.periodic = [last.boundary[SIDES[2 * a]] == "periodic" for a in range(last.ndim)]
        if any(self.periodic):
            if last.variable:
                raise ValueError("the distributed multigrid takes a constant coefficient on a "
                                 "grid with periodic sides")
            matrix = laplacian_matrix(self.whole_shape, last.spacing, last.boundary)
            self.coarse = AlgebraicMultigrid(matrix * last.coefficient, backend=self.backend,
                                             precision=last.precision)
            shapes = (self.whole_shape,) + self.coarse.shapes[1:]
        else:
            whole = StencilLaplacian(self.whole_shape, last.spacing,
                                     coefficient=last.coefficient, boundary=last.boundary,
                                     backend=self.backend, precision=last.precision)
            self.coarse = GeometricMultigrid(whole, smoother=smoother, sweeps=sweeps,
                                             omega=omega, coarse_sweeps=coarse_sweeps)
            shapes = self.coarse.shapes
        self.levels = self.gather + self.coarse.levels
        self.shapes = layout.shapes[:self.gather] + tuple(shapes)
        cells = int(np.prod(self.whole_shape))
        self._whole_b = self.backend.zeros((cells,), self.dtype)
        self._whole_x = self.backend.zeros((cells,), self.dtype)
        # The gathered level's blocks, one slot a rank (the largest block's cells).
        dims = layout.block.dims
        self._gathered_blocks = [aligned_block(r, dims, layout.shapes[self.gather], 0)
                                 for r in range(self.comm.Get_size())]
        slot = max(int(np.prod(b.shape)) for b in self._gathered_blocks)
        self._slot = self.backend.zeros((slot,), self.dtype)
        self._slots = self.backend.zeros((slot * len(self._gathered_blocks),), self.dtype)
        self._mean = self.backend.zeros((1,), np.float64)

        # Padded work vectors per level: right-hand side b, iterate x and its partner y, the
        # residual r (distributed levels only).
        self._b = [op.halo.zeros() for op in self.operators]
        self._x = [op.halo.zeros() for op in self.operators]
        self._y = [op.halo.zeros() for op in self.operators[:-1]]
        self._r = [op.halo.zeros() for op in self.operators[:-1]]

    def __repr__(self):
        grids = " -> ".join("x".join(map(str, s)) for s in self.shapes)
        return (f"DistributedMultigrid({self.levels} levels {grids}, gathered from level "
                f"{self.gather} ({type(self.coarse).__name__}); {self.smoothing.smoother} "
                f"V({self.smoothing.sweeps},{self.smoothing.sweeps}))")

    def bind(self, r, z):
        """z = M r for vectors of the block's cells: a LaunchSequence of launches and
        HostWork (halo exchanges, the gather), run in order. Bound cycles share the work
        vectors: run one at a time."""
        op = self.operator
        check_vector(self.backend, r, self.n, self.dtype, "r")
        check_vector(self.backend, z, self.n, self.dtype, "z")
        if overlap(r, z):
            raise ValueError("r and z must not overlap: the cycle reads r while writing z")
        parts = [op.halo.bind_copy(r, self._b[0], to_padded=True)]
        self._bind_level(0, parts)
        parts.append(op.halo.bind_copy(z, self._x[0], to_padded=False))
        return LaunchSequence(self, parts)

    # -- one level of the cycle ---------------------------------------------------------------
    def _smooth(self, level, first, other, steps, zero_start, parts):
        """Append `steps` writing alternately into `first` and `other` (starting from `other`
        holding the current iterate unless zero_start), each reading its iterate after a halo
        exchange; returns the buffer of the result."""
        op, b = self.operators[level], self._b[level]
        k, grid = op.kernels, launch_grid(op.local_shape)
        target, source = first, other
        for m, (scale, alpha, beta) in enumerate(steps):
            if zero_start and m == 0:
                parts.append(k.block_smooth_first.bind(grid, BLOCK, b, target, *op.args(), beta))
            else:
                parts += op.bind_stencil(source, k.block_smooth, source, target, b, *op.args(),
                                         scale, alpha, beta)
            target, source = source, target
        return source

    def _bind_level(self, level, parts):
        """Append the parts solving level `level` approximately for its b, into its x."""
        if level == self.gather:
            self._bind_gathered(parts)
            return
        op, x, y, r = self.operators[level], self._x[level], self._y[level], self._r[level]
        k, grid = op.kernels, launch_grid(op.local_shape)
        # Pre- and post-smoothing write 2 sweeps times alternately; starting in y ends in x.
        current = self._smooth(level, y, x, self.smoothing.pre_steps, True, parts)
        coarse = self.operators[level + 1]
        parts += [*op.bind_stencil(current, k.block_residual, current, self._b[level], r,
                                   *op.args()),
                  *op.exchange(r),
                  k.block_restrict.bind(launch_grid(coarse.local_shape), BLOCK, r,
                                        self._b[level + 1], *(*op.local_shape, 1)[:3],
                                        op.dirichlet, op.walls)]
        self._bind_level(level + 1, parts)
        # The gathered level's x arrives with its halo; a distributed one's is exchanged.
        if level + 1 < self.gather:
            parts += coarse.exchange(self._x[level + 1])
        parts.append(k.block_prolong_add.bind(grid, BLOCK, self._x[level + 1], current,
                                              *(*op.local_shape, 1)[:3], op.dirichlet,
                                              op.walls))
        other = y if current is x else x
        result = self._smooth(level, other, current, self.smoothing.post_steps, False, parts)
        assert result is x

    def _bind_gathered(self, parts):
        """Gather the level's right-hand side from the blocks, one whole-grid V-cycle, keep the
        block and its halo (beyond a periodic side: the cells at the other end)."""
        op = self.operators[-1]
        halo, n = op.halo, op.n
        # Singular and algebraic (periodic, no Dirichlet side): no constant in the result.
        centre = op.dirichlet == 0 and any(self.periodic)
        parts += [halo.bind_copy(self._slot[:n], self._b[-1], to_padded=False),
                  *op.collectives.bind_allgather(self._slot, self._slots),
                  halo.bind_unpack_blocks(self._slots, self._gathered_blocks, self._whole_b,
                                          self.whole_shape),
                  self.coarse.bind(self._whole_b, self._whole_x),
                  *([halo.bind_mean(self._whole_x, self._mean)] if centre else []),
                  halo.bind_keep(self._whole_x, self.whole_shape, op.block.start, self.periodic,
                                 self._x[-1], self._mean if centre else None)]
