"""One-cell halos of a decomposed structured grid's blocks, host-staged (issue 24): a block's
arrays are stored padded by one cell on every side (layout in raw_kernels/core/halo.cu), and
an exchange fills the halo cells beyond the sides towards other blocks with their cells.

    halo = PaddedHalo(backend, dtype, (nx, ny), neighbours, comm)
    a = halo.zeros()                  # a padded array
    exchange = halo.bind(a)           # a callable: fill a's halo from the neighbours
    to_padded = halo.bind_copy(v, a, to_padded=True)   # a launch: v (the block's cells) -> a

An exchange goes axis by axis: a kernel packs the block's first and last layer along the axis
(whole padded cross-sections) into one buffer, the host copies it, swaps the two layers with
the neighbours (MPI Sendrecv), and a kernel writes what arrived into the halo layers. Since the
cross-sections include the halo cells of the axes exchanged before, edge and corner cells of
the halo arrive too (the multigrid transfers read them). The halo beyond a side of the whole
grid (no neighbour) is never written. The same kernels serve both backends; only the staging
through the host is in Python.
"""

import math

import numpy as np

from .mpi import proc_null

SOURCE = "core/halo.cu"
THREADS = 256  # threads of a block of the pack, unpack and copy launches
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
    beyond each side x_lo, x_hi, y_lo, ..., None for a side of the whole grid), comm (mpi4py's
    communicator), on `backend` for arrays of `dtype`."""

    def __init__(self, backend, dtype, shape, neighbours, comm):
        self.backend, self.dtype, self.comm = backend, np.dtype(dtype), comm
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
        # Page-locked host copies of each axis' buffers, through which MPI swaps them.
        self.staged = [(backend.pinned(send.shape, self.dtype),
                        backend.pinned(receive.shape, self.dtype))
                       for _, _, _, send, receive in self.axes]

    def zeros(self):
        """A padded array of zeros (halo included)."""
        return self.backend.zeros((self.size,), self.dtype)

    def bind(self, array):
        """A callable that fills the halo of the padded `array` from the neighbours' blocks
        (host work between launches: not capturable)."""
        check_vector(self.backend, array, self.size, self.dtype, "array")
        b, steps = self.backend, []
        for (axis, lo, hi, send, receive), (out, into) in zip(self.axes, self.staged):
            blocks = -(-send.size // THREADS)
            sides = int(lo is not None) | int(hi is not None) << 1
            pack = self.kernels.halo_pack.bind(blocks, THREADS, array, send, *self.extents, axis)
            unpack = self.kernels.halo_unpack.bind(blocks, THREADS, array, receive,
                                                   *self.extents, axis, sides)
            steps.append(([pack, b.bind_copy(out, send)], lo, hi, out, into,
                          [b.bind_copy(receive, into), unpack]))
        return lambda: self._exchange(steps)

    def _exchange(self, steps):
        null = proc_null()
        for before, lo, hi, out, into, after in steps:
            for launch in before:
                launch()
            self.backend.synchronize()  # the packed layers are in `out`
            out, into = out.reshape(2, -1), into.reshape(2, -1)
            lo = null if lo is None else lo
            hi = null if hi is None else hi
            # The low layer goes to the low neighbour, whose high halo it fills; and back.
            self.comm.Sendrecv(out[0], dest=lo, sendtag=0, recvbuf=into[1], source=hi,
                               recvtag=0)
            self.comm.Sendrecv(out[1], dest=hi, sendtag=1, recvbuf=into[0], source=lo,
                               recvtag=1)
            for launch in after:
                launch()

    def bind_copy(self, packed, padded, to_padded):
        """A launch copying the block's cells between `packed` (i + nx (j + ny k)) and the
        padded array `padded`: into it when to_padded, else out of it (capturable)."""
        check_vector(self.backend, packed, math.prod(self.shape), self.dtype, "packed")
        check_vector(self.backend, padded, self.size, self.dtype, "padded")
        nx, ny, nz = (*self.shape, 1)[:3]
        grid = (-(-nx // TILE[0]), min(-(-ny // TILE[1]), MAX_GRID_YZ), min(nz, MAX_GRID_YZ))
        return self.kernels.pad_copy.bind(grid, TILE, packed, padded, nx, ny, nz,
                                          int(self.ndim == 3), int(bool(to_padded)))
