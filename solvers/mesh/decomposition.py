"""A structured grid split into blocks of cells, one a rank of a decomposed run: the process
grid, each rank's block and the ranks beyond its sides. Arithmetic only; the communicator
(mpi4py's, or anything with rank and size) rides along untouched.

Ranks are numbered x fastest: rank = (cz py + cy) px + cx for process-grid coordinates
(cx, cy, cz). Along an axis of n cells split p ways, the first n % p blocks have one cell more.
"""

import itertools
import math
from dataclasses import dataclass

from .structured import StructuredGrid

# The fewest cells of a block along a split axis: the two ghost layers a stage reads beyond a
# side come from one neighbouring block.
MIN_BLOCK_CELLS = 2


@dataclass(frozen=True)
class Decomposition:
    """How a run is split: comm (rank, size and the exchanges), the process grid `dims`
    (None: chosen from the size and the grid's shape by process_grid), the halo exchange's
    path ("auto", "nccl" or "host": staged through host memory), and wrap_self: a periodic
    axis that is not split exchanges its halos with this rank itself (the exchange of a block
    with its own other side: one rank runs the exchange's code), and overlap: whether the work
    that reads no halo runs while the halos travel (True), after them (False: for measuring the
    overlap), or where the solver finds it pays (None: the Euler step when its halos are large,
    the Poisson solve on its fine levels)."""

    comm: object
    dims: tuple | None = None
    exchange: str = "auto"
    wrap_self: bool = False
    overlap: bool | None = None

    @property
    def rank(self):
        return self.comm.Get_rank()

    @property
    def size(self):
        return self.comm.Get_size()


@dataclass(frozen=True)
class Block:
    """One rank's block: dims (the process grid), coords, start (first cell along each axis),
    shape (cells along each axis), and neighbours, the rank beyond each side (x_lo, x_hi,
    y_lo, ...; the grid's axes only), None where the side is the block's own: a side of the
    grid, or a periodic axis that is not split."""

    dims: tuple
    coords: tuple
    start: tuple
    shape: tuple
    neighbours: tuple

    @property
    def slices(self):
        """The block's cells in an array of the whole grid's shape."""
        return tuple(slice(s, s + n) for s, n in zip(self.start, self.shape))


def process_grid(size, shape):
    """The process grid (one count per axis of `shape`, product `size`) whose blocks share the
    fewest faces, every split axis at least MIN_BLOCK_CELLS cells a block; among equals the one
    that splits x least (its rows stay long). ValueError if none fits."""
    best = None
    for dims in itertools.product(range(1, size + 1), repeat=len(shape)):
        if math.prod(dims) != size:
            continue
        if any(p > 1 and n // p < MIN_BLOCK_CELLS for n, p in zip(shape, dims)):
            continue
        faces = sum((p - 1) * math.prod(shape) // n for n, p in zip(shape, dims))
        key = (faces, dims)
        if best is None or key < best:
            best = key
    if best is None:
        raise ValueError(f"a grid of {' x '.join(map(str, shape))} cells cannot be split "
                         f"into {size} blocks of at least {MIN_BLOCK_CELLS} cells an axis")
    return best[1]


def check_dims(dims, size, shape):
    """dims as a tuple, checked against the rank count and the grid's shape."""
    dims = tuple(int(p) for p in dims)
    if len(dims) != len(shape) or math.prod(dims) != size or min(dims) < 1:
        raise ValueError(f"process grid {dims} does not give {size} blocks of a "
                         f"{len(shape)}D grid")
    for n, p in zip(shape, dims):
        if p > 1 and n // p < MIN_BLOCK_CELLS:
            raise ValueError(f"process grid {dims}: an axis of {n} cells split {p} ways leaves "
                             f"blocks of fewer than {MIN_BLOCK_CELLS} cells")
    return dims


def split(n, p, c):
    """(first cell, cells) of part c of n cells split p ways."""
    base, extra = divmod(n, p)
    return c * base + min(c, extra), base + (1 if c < extra else 0)


def block_of(rank, dims, shape, periodic, wrap_self=False):
    """The Block of `rank` in process grid `dims` over a grid of `shape`; periodic: per axis,
    whether it wraps around (its end blocks are then neighbours; with wrap_self also where
    the axis is not split, the block its own neighbour)."""
    coords, rest = [], rank
    for p in dims:
        coords.append(rest % p)
        rest //= p
    parts = [split(n, p, c) for n, p, c in zip(shape, dims, coords)]

    # The rank beyond each side: the next block along the axis, wrapping on periodic axes.
    def rank_at(at):
        return sum(c * math.prod(dims[:a]) for a, c in enumerate(at))

    neighbours = []
    for axis, (p, c) in enumerate(zip(dims, coords)):
        for step in (-1, 1):
            other = c + step
            if (p == 1 and not (wrap_self and periodic[axis])) or (
                    not periodic[axis] and not 0 <= other < p):
                neighbours.append(None)
                continue
            at = list(coords)
            at[axis] = other % p
            neighbours.append(rank_at(at))
    return Block(dims=tuple(dims), coords=tuple(coords), start=tuple(s for s, _ in parts),
                 shape=tuple(n for _, n in parts), neighbours=tuple(neighbours))


def block_grid(grid, block):
    """The cells of `block` of `grid` (a StructuredGrid) as a grid of their own: the whole
    grid's spacing, its coordinates from the block's first cell."""
    ranges = []
    for axis, (first, cells) in enumerate(zip(block.start, block.shape)):
        lo, step = (grid.x, grid.y, grid.z)[axis][0], (grid.dx, grid.dy, grid.dz)[axis]
        ranges.append((lo + first * step, lo + (first + cells) * step))
    n = list(block.shape) + [1] * (3 - grid.ndim)
    r = ranges + [None] * (3 - grid.ndim)
    return StructuredGrid(nx=n[0], x=r[0], ny=n[1], y=r[1], nz=n[2], z=r[2])
