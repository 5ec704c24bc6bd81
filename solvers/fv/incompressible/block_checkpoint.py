"""Checkpoints of a decomposed MAC grid, 2D or 3D (issue 24 item 4): the whole grid's state in
the single-rank layout (checkpoint_arrays' names, shapes and dtypes), so a checkpoint written
by any number of ranks restarts on any other, one included.

checkpoint() gathers every block's part (MacBlock.gather: collective, onto every rank, as the
host views are; rank 0 alone writes the file) and restore() cuts each rank's block out of the
whole grid's arrays. By kind of array:
- face arrays (u, v(, w), their last advection terms n_u_old ... for AB2, the steady test's
  references u_ref ...): padded as on the device; a block's own faces and its ghosts beyond the
  grid's sides (a face between two blocks is held by both, alike), ghosts beyond a periodic
  side wrapped. A block restores its padded window of the whole array: its ghosts towards
  other blocks are then those blocks' faces, as the step's halo swap would leave them;
- the cell pressure p (flat, x fastest);
- the implicit stage's last increment (viscous_increment, the packed face vector of mac.h and
  mac3.h: each component's faces in turn, x fastest): a face on a side between two blocks
  holds the solving block's value on both (block_viscous.py settles it);
- the clock's rates: the largest of all blocks' (DeviceClock.partials_of restores it as the
  largest of the clock's partials, all a step reads);
- the rest (the clock's other arrays, dt_prev, refresh, diag, history, and the host series of
  checkpoint.py) are every rank's alike: dt, the records and the steady test come from the
  maxima over the ranks (MacBlock.maxima), and they are stored as this rank holds them.
"""

import numpy as np

from ...backend.mpi import max_op
from .viscous import packed_size

COMPONENTS = "uvw"
FACES = ("{}", "n_{}_old", "{}_ref")  # the face arrays' names, a component's letter in each
PACKED = "viscous_increment"


class BlockCheckpoint:
    """checkpoint() and restore() of a MacFlow whose `parallel` (a MacBlock, or None on one
    rank) holds its block: the whole grid's arrays in and out (collective)."""

    decomposed_checkpoints = True  # the run layer's: checkpoints under MPI hold the whole grid

    def checkpoint(self):
        arrays = super().checkpoint()
        return arrays if self.parallel is None else whole_arrays(self.parallel, arrays)

    def restore(self, arrays):
        self._gathered = None  # the host views of the state before
        super().restore(arrays if self.parallel is None else
                        block_arrays(self.parallel, arrays))


def _face_names(ndim):
    """[[names of one kind of face array, a component each]]."""
    return [[kind.format(c) for c in COMPONENTS[:ndim]] for kind in FACES]


def _window(block, component, ghosts):
    """The block's padded part of a whole padded face array of `component` (device order)."""
    counts = block.face_counts(component)
    return tuple(slice(s, s + c + 2 * ghosts)
                 for s, c in zip(block.block.start, counts))[::-1]


def whole_arrays(block, arrays):
    """A block's checkpoint arrays (host copies, `block` a MacBlock) made the whole grid's, as
    one rank stores them (collective)."""
    arrays, ndim, g = dict(arrays), block.ndim, block.G
    n = block.grid.shape
    shapes = [tuple(n[d] + 2 * g + (d == a) for d in reversed(range(ndim)))
              for a in range(ndim)]
    p = arrays["p"]
    for names in _face_names(ndim):  # each gather brings the whole pressure along
        *q, whole_p = block.gather([arrays[name] for name in names], p, shapes)
        arrays.update({name: q[a].astype(arrays[name].dtype) for a, name in enumerate(names)})
    arrays["p"] = whole_p.ravel().astype(p.dtype)
    if PACKED in arrays:
        arrays[PACKED] = _whole_packed(block, arrays[PACKED])
    rates = arrays["clock/rates"]
    largest = block.comm.allreduce(float(rates.max()), op=max_op())
    arrays["clock/rates"] = np.array([largest], rates.dtype)
    return arrays


def block_arrays(block, arrays):
    """The whole grid's checkpoint arrays (whole_arrays', or one rank's) cut to `block`'s."""
    arrays, g = dict(arrays), block.G
    for names in _face_names(block.ndim):
        for a, name in enumerate(names):
            if name in arrays:
                arrays[name] = np.ascontiguousarray(
                    np.asarray(arrays[name])[_window(block, a, g)])
    if "p" in arrays:
        p = np.asarray(arrays["p"]).reshape(block.grid.shape[::-1])
        arrays["p"] = np.ascontiguousarray(p[block.block.slices[::-1]]).ravel()
    whole = _components(np.asarray(arrays.get(PACKED, ())), block.grid.shape)
    if whole is not None:
        arrays[PACKED] = np.concatenate([
            part[_window(block, a, 0)].ravel() for a, part in enumerate(whole)])
    return arrays


def _components(packed, shape):
    """A packed face vector of a grid of `shape` cells split into its components' face arrays
    (device order: [z,] row, column); None if it is not one (restore() names a mismatch)."""
    if packed.size != packed_size(shape):
        return None
    out, offset = [], 0
    for a in range(len(shape)):
        counts = [n + (d == a) for d, n in enumerate(shape)][::-1]
        size = int(np.prod(counts))
        out.append(packed[offset:offset + size].reshape(counts))
        offset += size
    return out


def _whole_packed(block, packed):
    """The whole grid's packed face vector from every block's (collective)."""
    start, mine = block.block.start, _components(packed, block.block.shape)
    whole = [np.zeros([n + (d == a) for d, n in enumerate(block.grid.shape)][::-1],
                      packed.dtype) for a in range(block.ndim)]
    for first, parts in block.comm.allgather((start, mine)):
        for target, part in zip(whole, parts):
            where = tuple(slice(s, s + c) for s, c in zip(first, part.shape[::-1]))[::-1]
            target[where] = part
    return np.concatenate([w.ravel() for w in whole])
