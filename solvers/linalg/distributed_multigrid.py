"""GeometricMultigrid's V-cycle on a decomposed grid (issue 24): the fine levels smoothed,
restricted and prolonged block by block, the coarse levels gathered onto every rank.

    layout = block_layout(rank, size, shape)          # blocks aligned to the hierarchy
    op = BlockLaplacian(comm, layout.block, shape, spacing, boundary=...)
    mg = DistributedMultigrid(op, layout)
    cycle = mg.bind(r, z)      # a LaunchSequence: z = M r; launches and HostWork in order

Levels 0 ... g - 1 (g = layout.gather) are distributed: each rank runs the single-rank cycle's
kernels on its block (raw_kernels/linalg/block_multigrid.cu, the same rows and transfer weights
as multigrid.cu), and the host exchanges the one-cell halo of the array a pass reads before it:
the iterate before each smoothing step and the residual, the residual again before the
restriction (its edge and corner cells too), the coarse correction before the prolongation.
Level g is gathered: every rank sends its block of the restricted residual to every rank
(Allgatherv), every rank runs one V-cycle of a GeometricMultigrid of the whole level-g grid
(levels g ... L - 1 of the single-rank hierarchy, the coarsest Chebyshev solve included) and
keeps its block of the result and the halo around it. Solving the coarse grid redundantly
costs one collective where a gather to one rank and a scatter back cost two, and the others
would wait for it anyway.

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
in 7 iterations). The geometric gathered level (no periodic side) keeps its mean, as the
single-rank cycle does, so a singular non-periodic pressure (the cavity's) keeps the single
rank's bits.
"""

import numpy as np

from ..backend.halo import check_vector, interior, padded_extents
from ..backend.stepper import HostWork
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
        dims = layout.block.dims
        self._gathered_blocks = [aligned_block(r, dims, layout.shapes[self.gather], 0)
                                 for r in range(self.comm.Get_size())]

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
                parts += [op.exchange(source),
                          k.block_smooth.bind(grid, BLOCK, source, target, b, *op.args(), scale,
                                              alpha, beta)]
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
        parts += [op.exchange(current),
                  k.block_residual.bind(grid, BLOCK, current, self._b[level], r, *op.args()),
                  op.exchange(r),
                  k.block_restrict.bind(launch_grid(coarse.local_shape), BLOCK, r,
                                        self._b[level + 1], *(*op.local_shape, 1)[:3],
                                        op.dirichlet, op.walls)]
        self._bind_level(level + 1, parts)
        # The gathered level's x arrives with its halo; a distributed one's is exchanged.
        if level + 1 < self.gather:
            parts.append(coarse.exchange(self._x[level + 1]))
        parts.append(k.block_prolong_add.bind(grid, BLOCK, self._x[level + 1], current,
                                              *(*op.local_shape, 1)[:3], op.dirichlet,
                                              op.walls))
        other = y if current is x else x
        result = self._smooth(level, other, current, self.smoothing.post_steps, False, parts)
        assert result is x

    def _bind_gathered(self, parts):
        """Gather the level's right-hand side, one whole-grid V-cycle, keep the block."""
        parts += [HostWork(self._gather_rhs), self.coarse.bind(self._whole_b, self._whole_x),
                  HostWork(self._keep_block)]

    # -- host work of the gathered level ------------------------------------------------------
    def _gather_rhs(self):
        """Every rank's block of b at the gather level into the whole grid's b, on every
        rank (Allgatherv in rank order)."""
        op = self.operators[-1]
        shape = tuple(reversed(padded_extents(op.local_shape)))
        mine = self.backend.to_host(self._b[-1]).reshape(shape)
        send = np.ascontiguousarray(mine[interior(op.local_shape)])
        counts = [int(np.prod(b.shape)) for b in self._gathered_blocks]
        received = np.empty(sum(counts), self.dtype)
        self.comm.Allgatherv(send.ravel(), [received, counts])
        whole = np.empty(tuple(reversed(self.whole_shape)), self.dtype)
        start = 0
        for block, count in zip(self._gathered_blocks, counts):
            cells = tuple(reversed(block.slices))
            whole[cells] = received[start:start + count].reshape(tuple(reversed(block.shape)))
            start += count
        self.backend.write(self._whole_b, whole.ravel())

    def _keep_block(self):
        """This rank's block of the whole grid's x and the halo cells around it (beyond a
        periodic side: the cells at the other end; beyond a wall: 0, never read) into the
        padded x of the gather level."""
        op = self.operators[-1]
        whole = self.backend.to_host(self._whole_x).reshape(tuple(reversed(self.whole_shape)))
        if op.dirichlet == 0 and any(self.periodic):  # singular, algebraic: no constant
            whole = (whole - whole.mean(dtype=np.float64)).astype(self.dtype)
        padded = np.zeros(tuple(reversed(padded_extents(op.local_shape))), self.dtype)
        source, target = [], []
        for start, cells, n, wrap in zip(op.block.start, op.block.shape, self.whole_shape,
                                         self.periodic):
            cell = np.arange(start - 1, start + cells + 1)
            kept = np.ones(cell.size, bool) if wrap else (cell >= 0) & (cell < n)
            source.append(cell[kept] % n)
            target.append(np.flatnonzero(kept))
        view = padded[0] if len(op.local_shape) == 2 else padded  # 2D: no halo along z
        view[np.ix_(*reversed(target))] = whole[np.ix_(*reversed(source))]
        self.backend.write(self._x[-1], padded.ravel())

