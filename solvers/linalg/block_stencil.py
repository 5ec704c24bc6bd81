"""One rank's block of a StencilLaplacian on a decomposed grid (issue 24): y = A x on the
block's cells, equal to the whole grid's operator restricted to them (the same terms in the
same order: raw_kernels/linalg/block_multigrid.cu), with a one-cell halo exchanged between
launches (backend/halo.py).

    layout = block_layout(comm.Get_rank(), comm.Get_size(), (nx, ny))
    op = BlockLaplacian(comm, layout.block, (nx, ny), (hx, hy), boundary={"y_hi": "neumann"})
    apply = op.bind(x, y)      # x, y: the block's cells (i + nx (j + ny k) of the block)
    apply()                    # copy x into a padded array, exchange its halo, launch y = A x
    apply.launches             # the parts in order: launches and HostWork (a Stepper's segments)

The exchanges go the way of `exchange` (backend/collectives.py), chosen once here and shared
by the coarser levels and the solvers built on the operator (`op.collectives`): "auto" is NCCL
launches in the graph where every rank has a GPU of its own, else host-staged (HostWork between
graph segments); "nccl" asks for launches in the graph (on the host backend: MPI calls as
launches); "host" for host-staged.

A pass that reads the face neighbours (y = A x, the multigrid's residual and smoothing steps:
`bind_stencil`) on a block of at least `overlap` cells (default OVERLAP_CELLS) overlaps its
exchange: the halo's faces travel in one exchange while the pass runs over the block's interior
cells, and the cells next to the sides towards other blocks follow once the halo has arrived
(PaddedHalo.regions); the same cells get the same arithmetic, so the bits do not change. On a
smaller block (the coarser levels), or with overlap=None, the halo is exchanged axis by axis
before one launch over the block: there a pass takes less than the launches and the graph
segment an overlap adds.

Every rank passes the whole grid's description: shape, spacing, boundary, and a coefficient
that is a number or an array of the whole grid (each rank keeps its block and the halo cells
of it). A side of the block towards another block reads the halo; a side of the whole grid
keeps its Dirichlet or Neumann rule. A periodic side (both sides of an axis) is a side towards
another block: the block's neighbours wrap around it (block_layout(..., periodic=...)), the
block itself where the axis is not split.
"""

import math

import numpy as np

from ..backend import get_backend
from ..backend.collectives import collectives as choose_collectives
from ..backend.halo import PaddedHalo, check_vector
from ..precision import real_dtype
from .multigrid import coarsen_coefficient
from .operator import LaunchSequence
from .stencil import (
    BLOCK,
    KINDS,
    MAX_GRID_YZ,
    SIDES,
    axis_weights,
    check_problem,
    dirichlet_bits,
    inverse_coefficient,
)

SOURCE = "linalg/block_multigrid.cu"


def kernel_defines(ndim, variable):
    return {"DIM": int(ndim), "VARIABLE": int(bool(variable))}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    for ndim in (2, 3):
        for variable in (False, True):
            yield SOURCE, kernel_defines(ndim, variable)


OVERLAP_CELLS = 1 << 20  # the least cells of a block whose passes overlap their exchanges


def box_arguments(first, counts):
    """The last six arguments of a box launch: the first cell and the counts along x, y, z."""
    return (*(*first, 0)[:3], *(*counts, 1)[:3])


def launch_grid(shape):
    """The grid of the block kernels over cells of `shape`: (i, j) tiles of BLOCK, one z layer
    per block z."""
    nx, ny, nz = (*shape, 1)[:3]
    return (-(-nx // BLOCK[0]), min(-(-ny // BLOCK[1]), MAX_GRID_YZ), min(nz, MAX_GRID_YZ))


class BlockLaplacian:
    """y = A x on `block` (a mesh.decomposition.Block) of the grid of `shape` cells, for the
    ranks of `comm`; spacing, coefficient, boundary, backend and precision as StencilLaplacian's;
    exchange: the way of the exchanges, or collectives: one already chosen; overlap: the least
    cells of a block (this one or a coarser level's) whose passes run over the interior while
    their halo travels, None for none (see the module docstring)."""

    name = "block_laplacian"

    def __init__(self, comm, block, shape, spacing, coefficient=None, boundary=None,
                 backend="auto", precision="fp32", exchange="auto", collectives=None,
                 overlap=OVERLAP_CELLS):
        self.comm, self.block = comm, block
        self.shape, self.spacing, self.coefficient, self.boundary = check_problem(
            shape, spacing, coefficient, boundary, KINDS + ("periodic",))
        self.ndim = len(self.shape)
        for side, other in zip(SIDES, block.neighbours):
            if self.boundary[side] == "periodic" and other is None:
                raise ValueError(f"boundary {side} is periodic but the block has no neighbour "
                                 "beyond it: take the blocks of block_layout(..., periodic=...)")
        self.precision = precision
        self.dtype = dtype = real_dtype(precision)
        self.backend = backend = get_backend(backend)
        self.local_shape = tuple(block.shape)
        self.n = math.prod(self.local_shape)

        # Kernel arguments: the grid's weights and Dirichlet sides, the block's walls (its sides
        # that are the grid's), and the inverse coefficient padded like the vectors, its halo
        # the neighbouring blocks' cells (beyond a wall: never read).
        self.variable = isinstance(self.coefficient, np.ndarray)
        self.weights = axis_weights(self.spacing, self.coefficient, dtype)
        self.dirichlet = dirichlet_bits(self.boundary, self.ndim)
        self.walls = sum(1 << s for s, other in enumerate(block.neighbours) if other is None)
        self.collectives = collectives or choose_collectives(comm, backend, exchange)
        self.halo = PaddedHalo(backend, dtype, self.local_shape, block.neighbours,
                               self.collectives)
        self.overlap = overlap
        self.interior, self.shell = self.halo.regions()
        if self.variable:
            around = self.coefficient
            for axis in range(self.ndim):  # the halo: a wrapped cell or the edge's (unread)
                wrap = self.boundary[SIDES[2 * axis]] == "periodic"
                around = np.pad(around, [(int(d == axis),) * 2 for d in range(self.ndim)],
                                mode="wrap" if wrap else "edge")
            around = around[tuple(slice(s, s + n + 2) for s, n in zip(block.start, block.shape))]
            self.inv_coef = backend.to_device(
                inverse_coefficient(around, dtype).ravel(order="F"))
        else:
            self.inv_coef = backend.to_device(np.ones(1, dtype))
        self.kernels = backend.module(SOURCE, dtype, kernel_defines(self.ndim, self.variable))
        self._padded_x = self.halo.zeros()

    def args(self):
        """The block kernels' arguments after the vectors."""
        return (self.inv_coef, *(*self.local_shape, 1)[:3], *self.weights, self.dirichlet,
                self.walls)

    def exchange(self, padded):
        """The parts filling the halo of a padded array from the neighbouring blocks."""
        return self.halo.bind(padded)

    def bind_stencil(self, padded, kernel, *arguments):
        """The parts of a pass of `kernel` (its `arguments` before the box's) over the block,
        reading the face neighbours in `padded`: the exchange of its halo and the launches
        over boxes of the block's cells (overlapped: see the module docstring)."""
        def launch(first, counts):
            return kernel.bind(launch_grid(counts), BLOCK, *arguments,
                               *box_arguments(first, counts))
        if self.overlap is not None and self.n >= self.overlap and self.interior is not None:
            return [*self.halo.bind_faces(padded, [launch(*self.interior)]),
                    *(launch(*box) for box in self.shell)]
        return [*self.exchange(padded), launch((0,) * self.ndim, self.local_shape)]

    def bind(self, x, y):
        """y = A x for vectors of the block's cells: a LaunchSequence of a copy into a padded
        array, the halo exchange's parts and the stencil launches."""
        check_vector(self.backend, x, self.n, self.dtype, "x")
        check_vector(self.backend, y, self.n, self.dtype, "y")
        work = self._padded_x
        parts = [self.halo.bind_copy(x, work, to_padded=True),
                 *self.bind_stencil(work, self.kernels.block_apply, work, y, *self.args(), 1)]
        return LaunchSequence(self, parts)

    def coarsened(self, block):
        """The operator of the next multigrid level on `block` (its cells halved): spacing
        doubled, coefficient averaged over children (multigrid.coarsen_coefficient)."""
        return BlockLaplacian(self.comm, block, tuple(n // 2 for n in self.shape),
                              tuple(2 * h for h in self.spacing),
                              coarsen_coefficient(self.coefficient), self.boundary,
                              self.backend, self.precision, collectives=self.collectives,
                              overlap=self.overlap)

    # -- the whole grid's vectors ------------------------------------------------------------
    def scatter(self, whole):
        """The block's part of a whole-grid array (indexed [i, j(, k)], or flat in the grid's
        order i + nx (j + ny k)), as a flat host array in the block's order."""
        whole = np.asarray(whole).reshape(self.shape, order="F")
        return np.ascontiguousarray(whole[self.block.slices]).ravel(order="F")

    def gather(self, local):
        """The whole grid's array ([i, j(, k)]) from every rank's block values (flat, block
        order), on every rank."""
        local = np.asarray(local).reshape(self.local_shape, order="F")
        whole = np.empty(self.shape, local.dtype)
        for slices, part in self.comm.allgather((self.block.slices, local)):
            whole[slices] = part
        return whole
