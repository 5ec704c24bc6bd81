"""How a decomposed Poisson solve splits its grid: the process grid of mesh/decomposition.py,
blocks aligned so that the first levels of the multigrid hierarchy coarsen inside every block,
and the level at which the coarse grid is gathered onto every rank.

Multigrid halves every axis per level (multigrid.coarse_shapes). A block halves with the grid
only if its first cell and its cell count are even, so m distributed coarsenings need blocks
whose bounds are multiples of 2^m along every axis: the grid is split in units of 2^m cells
(block_of on the grid of level m, scaled by 2^m). Level m, the gather level, is then solved as
a whole grid on every rank; it must still coarsen once (m <= levels - 2), so that the gathered
part is a GeometricMultigrid with the single-rank cycle's coarse levels.

Larger m gathers a smaller grid but splits in coarser units (less even blocks: 64 cells on 3
ranks are 22, 21, 21 cells, 22, 22, 20 for m = 1 and 24, 20, 20 for m = 2). The default m
minimises the cells of the largest block plus the cells of the gathered grid, the work of the
slowest rank at the finest level and of every rank at the gather level (both repeat with the
same factor on the coarser levels).
"""

import math
from dataclasses import dataclass

from ..mesh.decomposition import Block, block_of, check_dims, process_grid
from .multigrid import coarse_shapes


@dataclass(frozen=True)
class BlockLayout:
    """shapes (the whole grid of every multigrid level), gather (the level solved whole on
    every rank) and blocks (this rank's Block of each level up to gather)."""

    shapes: tuple
    gather: int
    blocks: tuple

    @property
    def block(self):
        """This rank's block of the finest grid."""
        return self.blocks[0]


def aligned_block(rank, dims, shape, level, periodic=None):
    """The Block of `rank` when `shape` is split in units of 2^level cells per axis; periodic:
    per axis whether it wraps (the block beyond its ends is the one at the other end, this
    block itself where the axis is not split)."""
    unit = 2**level
    periodic = periodic or [False] * len(shape)
    coarse = block_of(rank, dims, tuple(n // unit for n in shape), periodic, wrap_self=True)
    return Block(dims=coarse.dims, coords=coarse.coords,
                 start=tuple(s * unit for s in coarse.start),
                 shape=tuple(n * unit for n in coarse.shape), neighbours=coarse.neighbours)


def _feasible(dims, shapes, level):
    """Whether level `level` leaves every block at least one cell along each split axis."""
    return all(p == 1 or n // p >= 1 for n, p in zip(shapes[level], dims))


def _cost(dims, shapes, level):
    """Cells of the largest aligned block of the finest grid plus cells of the gathered one."""
    unit = 2**level
    largest = math.prod(-(-n // p) * unit for n, p in zip(shapes[level], dims))
    return largest + math.prod(shapes[level])


def block_layout(rank, size, shape, dims=None, gather=None, periodic=None):
    """The BlockLayout of `rank` of `size` for a grid of `shape` cells; dims: the process grid
    (None: process_grid's); gather: the gather level (None: the cheapest, see the module
    docstring); periodic: per axis whether it wraps (aligned_block). ValueError where the grid
    cannot carry a multigrid hierarchy."""
    shapes = tuple(coarse_shapes(shape))
    if len(shapes) < 2:
        raise ValueError(f"grid {tuple(shape)} cannot be coarsened: multigrid halves every "
                         f"axis, so each needs an even number of at least 8 cells")
    dims = check_dims(dims, size, shape) if dims else process_grid(size, shape)
    levels = [m for m in range(len(shapes) - 1) if _feasible(dims, shapes, m)]
    if gather is None:
        gather = min(levels, key=lambda m: (_cost(dims, shapes, m), m))
    elif gather not in levels:
        raise ValueError(f"gather level {gather!r}: grid {tuple(shape)} on process grid {dims} "
                         f"can gather at levels {levels[0]} to {levels[-1]}")
    fine = aligned_block(rank, dims, shape, gather, periodic)
    blocks = tuple(Block(dims=fine.dims, coords=fine.coords,
                         start=tuple(s >> level for s in fine.start),
                         shape=tuple(n >> level for n in fine.shape), neighbours=fine.neighbours)
                   for level in range(gather + 1))
    return BlockLayout(shapes=shapes, gather=gather, blocks=blocks)
