"""One-cell halos of a decomposed structured grid's blocks (issue 24): a block's arrays are
stored padded by one cell on every side (layout in raw_kernels/core/halo.cu), and an exchange
fills the halo cells beyond the sides towards other blocks with their cells.

    halo = PaddedHalo(backend, dtype, (nx, ny), neighbours, coll)   # coll: collectives.py's
    a = halo.zeros()                  # a padded array
    parts = halo.bind(a)              # the parts filling a's halo from the neighbours
    to_padded = halo.bind_copy(v, a, to_padded=True)   # a launch: v (the block's cells) -> a

An exchange goes axis by axis: a kernel packs the block's first and last layer along the axis
(whole padded cross-sections) into one buffer, the two layers are swapped with the neighbours
(`coll`: launches in the graph, NCCL or MPI calls, or host-staged: copies to host memory, MPI
between graph segments, copies back), and a kernel writes what arrived into the halo layers.
Since the cross-sections include the halo cells of the axes exchanged before, edge and corner
cells of the halo arrive too (the multigrid transfers read them). The halo beyond a side of
the whole grid (no neighbour) is never written. A periodic axis that is not split swaps with
the rank itself.

A stencil that reads only the face neighbours (the Laplacian's rows) needs only the faces of
the halo: `bind_faces` packs every axis at once, swaps them in one exchange while launches
that read no halo run (the block's interior cells, `regions`), and unpacks them (the edge and
corner cells of the halo then hold stale values, which such a stencil never reads).

A grid gathered onto every rank from the blocks (the multigrid's coarse level): each rank's
block of it packed into a slot (bind_copy), the slots all-gathered, then `bind_unpack_blocks`
puts them together into the whole grid and `bind_keep` cuts a block and its halo out of it.
"""

import math

import numpy as np

from .mpi import side_transfers

SOURCE = "core/halo.cu"
THREADS = 256  # threads of a block of the pack, unpack and copy launches
MEAN_THREADS = 256  # halo.cu's
TILE = (32, 8, 1)  # threads of a block of pad_copy: one thread per (i, j), one z layer per block z
MAX_GRID_YZ = 65535  # CUDA's limit on gridDim.y and gridDim.z; pad_copy loops beyond it


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    yield SOURCE, {}


def padded_extents(shape):
    """(px, py, pz) of a block of `shape` cells (2 or 3 axes): one halo cell each side, none
    along z in 2D."""
    cells = (*shape, 1)[:3]
    return cells[0] + 2, cells[1] + 2, cells[2] + 2 if len(shape) == 3 else 1


def interior(shape):
    """The block's cells in a padded array viewed as (pz, py, px) (C order)."""
    pad = (1, 1, 1) if len(shape) == 3 else (0, 1, 1)
    cells = tuple(reversed((*shape, 1)[:3]))
    return tuple(slice(p, p + n) for p, n in zip(pad, cells))


def check_vector(backend, array, size, dtype, name):
    """A clear error for an array that is not a `backend` vector of `size` `dtype` values."""
    if not backend.is_array(array) or array.shape != (size,) or array.dtype != dtype:
        raise ValueError(f"{name} must be a {backend.name} vector of {size} {np.dtype(dtype)} "
                         f"values, got {type(array).__name__} {getattr(array, 'shape', '?')} "
                         f"{getattr(array, 'dtype', '?')}")


class PaddedHalo:
    """The halo exchange of one rank's block: shape (its cells per axis), neighbours (the rank
    beyond each side x_lo, x_hi, y_lo, ..., None for a side of the whole grid), collectives
    (backend/collectives.py: the way the layers travel), on `backend` for arrays of
    `dtype`."""

    def __init__(self, backend, dtype, shape, neighbours, collectives):
        self.backend, self.dtype, self.collectives = backend, np.dtype(dtype), collectives
        self.shape = tuple(int(n) for n in shape)
        self.ndim = len(self.shape)
        self.neighbours = tuple(neighbours)
        self.extents = padded_extents(self.shape)
        self.size = math.prod(self.extents)
        self.kernels = backend.module(SOURCE, self.dtype, {})
        # The axes with a neighbour on either side, each with its send and receive buffers.
        self.axes = []
        for axis in range(self.ndim):
            lo, hi = self.neighbours[2 * axis], self.neighbours[2 * axis + 1]
            if lo is None and hi is None:
                continue
            cross = self.size // self.extents[axis]
            self.axes.append((axis, lo, hi, backend.zeros((2 * cross,), self.dtype),
                              backend.zeros((2 * cross,), self.dtype)))

    def zeros(self):
        """A padded array of zeros (halo included)."""
        return self.backend.zeros((self.size,), self.dtype)

    def bind(self, array):
        """The parts that fill the halo of the padded `array` from the neighbours' blocks, axis
        by axis: the pack launch, the swap's parts (launches, or host work between them where
        host-staged), the unpack launch."""
        check_vector(self.backend, array, self.size, self.dtype, "array")
        parts = []
        for axis, lo, hi, send, receive in self.axes:
            blocks = -(-send.size // THREADS)
            sides = int(lo is not None) | int(hi is not None) << 1
            # Layer 0 (low) goes to the low neighbour, whose high halo (layer 1) it fills.
            swap = [(kind, buffer.reshape(2, -1)[side], peer)
                    for kind, buffer, side, peer in side_transfers((lo, hi), send, receive)]
            parts += [self.kernels.halo_pack.bind(blocks, THREADS, array, send, *self.extents,
                                                  axis),
                      *self.collectives.bind_swap(swap),
                      self.kernels.halo_unpack.bind(blocks, THREADS, array, receive,
                                                    *self.extents, axis, sides)]
        return parts

    def regions(self):
        """The block's cells as boxes (first cell, cell counts per axis): the box of those that
        read no halo cell through a face (None when there are none) and slabs covering the
        others, one or two an axis with neighbours."""
        first = [int(self.neighbours[2 * a] is not None) for a in range(self.ndim)]
        last = [n - int(self.neighbours[2 * a + 1] is not None)
                for a, n in enumerate(self.shape)]
        if any(e <= f for f, e in zip(first, last)):
            return None, [((0,) * self.ndim, self.shape)]
        slabs, span = [], [(0, n) for n in self.shape]
        for axis, n in enumerate(self.shape):
            for lo, hi in ((0, first[axis]), (last[axis], n)):
                if hi > lo:
                    box = span[:axis] + [(lo, hi)] + span[axis + 1:]
                    slabs.append((tuple(a for a, _ in box), tuple(e - a for a, e in box)))
            span[axis] = (first[axis], last[axis])
        return (tuple(first), tuple(e - f for f, e in zip(first, last))), slabs

    def bind_faces(self, array, during=()):
        """The parts that fill the faces of the padded `array`'s halo from the neighbours'
        blocks in one exchange of every axis, the launches `during` (which must not read the
        halo) run while it travels: the pack launches, the swap's parts, the unpack launches."""
        check_vector(self.backend, array, self.size, self.dtype, "array")
        if not self.axes:
            return list(during)
        packs, swap, unpacks = [], [], []
        for axis, lo, hi, send, receive in self.axes:
            blocks = -(-send.size // THREADS)
            sides = int(lo is not None) | int(hi is not None) << 1
            packs.append(self.kernels.halo_pack.bind(blocks, THREADS, array, send,
                                                     *self.extents, axis))
            swap += [(kind, buffer.reshape(2, -1)[side], peer)
                     for kind, buffer, side, peer in side_transfers((lo, hi), send, receive)]
            unpacks.append(self.kernels.halo_unpack.bind(blocks, THREADS, array, receive,
                                                         *self.extents, axis, sides))
        return [*packs, *self.collectives.bind_swap(swap, during), *unpacks]

    def bind_copy(self, packed, padded, to_padded):
        """A launch copying the block's cells between `packed` (i + nx (j + ny k)) and the
        padded array `padded`: into it when to_padded, else out of it (capturable)."""
        check_vector(self.backend, packed, math.prod(self.shape), self.dtype, "packed")
        check_vector(self.backend, padded, self.size, self.dtype, "padded")
        nx, ny, nz = (*self.shape, 1)[:3]
        grid = (-(-nx // TILE[0]), min(-(-ny // TILE[1]), MAX_GRID_YZ), min(nz, MAX_GRID_YZ))
        return self.kernels.pad_copy.bind(grid, TILE, packed, padded, nx, ny, nz,
                                          int(self.ndim == 3), int(bool(to_padded)))

    def bind_keep(self, whole, whole_shape, start, wrap, padded, mean=None):
        """A launch: the block whose first cell is `start` in the grid `whole` (whole_shape
        cells, x fastest) and the halo around it into the padded array `padded`, the halo
        wrapped along the axes where `wrap` (beyond another end of the grid: 0, never read);
        with `mean` (a device double), less it."""
        check_vector(self.backend, whole, math.prod(whole_shape), self.dtype, "whole")
        check_vector(self.backend, padded, self.size, self.dtype, "padded")
        centre = mean is not None
        mean = mean if centre else self.backend.zeros((1,), np.float64)
        bits = sum(1 << a for a, w in enumerate(wrap) if w)
        return self.kernels.keep_block.bind(
            -(-self.size // THREADS), THREADS, whole, padded, *self.extents,
            *(*start, 0)[:3], *(*whole_shape, 1)[:3], bits, mean, int(centre))

    def bind_mean(self, whole, mean):
        """A launch: mean[0] (a device double) = the mean of the device vector `whole`."""
        return self.kernels.whole_mean.bind(1, MEAN_THREADS, whole, whole.size, mean)

    def bind_unpack_blocks(self, gathered, blocks, whole, whole_shape):
        """A launch: the grid `whole` (whole_shape cells, x fastest) from `gathered`, one
        equal slot a rank in rank order holding that rank's block (blocks[rank], a
        mesh.decomposition.Block of the grid) x fastest."""
        check_vector(self.backend, whole, math.prod(whole_shape), self.dtype, "whole")
        slot = gathered.size // len(blocks)
        boxes = np.array([(*(*b.start, 0)[:3], *(*b.shape, 1)[:3]) for b in blocks], np.int32)
        self._boxes = self.backend.to_device(boxes.ravel())
        return self.kernels.blocks_unpack.bind(-(-gathered.size // THREADS), THREADS, whole,
                                               gathered, self._boxes, len(blocks), slot,
                                               *(*whole_shape, 1)[:2])
