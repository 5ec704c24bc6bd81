"""The structured Euler solver's block of a decomposed grid (one rank's part): its sides'
kinds, the halo exchange before each stage, the global dt and the gathered state.

Before each stage a pack kernel (raw_kernels/fv/euler_halo.cu) writes the two boundary layers
of every side with a neighbour into one contiguous buffer in the halo layout (halo_sides in
raw_kernels/fv/euler_state.h), and the neighbours swap those blocks into the halo buffers the
stage kernel reads beyond sides of kind BC_HALO. A stage reads only the cells along its axes,
so faces suffice (no edges or corners). dt is global: each block folds its stability rates into
one, and the largest of all blocks' is every block's (a max, exact: every rank's dt has the
bits of a single-rank run's).

Two paths carry the swaps:
- in the graph (backend/collectives.py): every rank has a GPU of its own, and NCCL's
  send/recv and all-reduce are launches in the step, so a step with its exchanges is one
  graph replay (on the host backend, with halo_exchange "nccl", blocking MPI calls are those
  launches);
- host-staged (two ranks on one GPU, no NCCL, the host backend): the packed blocks and the
  folded rate are copied to page-locked host buffers inside the step's graph, MPI swaps them
  between graph segments, and the next segment copies them in. The rates and the first stage's
  halos travel in one swap, so a step waits on the host once a stage.
Either way the later stages' blocks that read no halo can run while the halos travel (in the
graph by NCCL on a second stream, forked and joined in the graph), the others once they have
arrived. Overlapped, a stage is several launches and (host-staged) one more graph segment, which
costs more than small halos take to travel: by default (Decomposition.overlap None) a block
overlaps only when a swap sends at least OVERLAP_BYTES (the measurements: docs/performance.md).
"""

import numpy as np

from ..backend.collectives import collectives
from ..backend.mpi import max_op, side_transfers, swap_sides
from ..backend.stepper import HostWork
from ..mesh.decomposition import (
    Decomposition,
    block_grid,
    block_of,
    check_dims,
    process_grid,
)
from .euler_fields import to_buffer, to_cells

BC_HALO = 4  # euler_state.h
PERIODIC = 0
SOURCE = "fv/euler_halo.cu"
PACK_THREADS = 256
OVERLAP_BYTES = 1 << 20  # the least bytes a swap sends for the default to overlap it
ROLE_NEW = 1  # ssp_stages.h: the buffer the clock's parity names as the step's new state


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside): the pack kernel in 1D,
    2D and 3D."""
    for ndim in (1, 2, 3):
        yield SOURCE, {"DIM": ndim}


def _first_and_count(box):
    """((lo, hi) along each axis) -> (first, count) along each axis."""
    return tuple(lo for lo, _ in box), tuple(hi - lo for lo, hi in box)


class EulerBlock:
    """One rank's block of `grid` under `decomposition`, for a solver of nvar conserved
    variables on `backend`; kinds: the grid's side kinds (parse_boundary)."""

    def __init__(self, decomposition: Decomposition, grid, kinds, nvar, backend, dtype):
        self.comm = decomposition.comm
        self.rank, size = decomposition.rank, decomposition.size
        shape = grid.shape
        dims = (check_dims(decomposition.dims, size, shape) if decomposition.dims
                else process_grid(size, shape))
        periodic = [kinds[2 * a] == PERIODIC for a in range(grid.ndim)]
        self.block = block_of(self.rank, dims, shape, periodic, decomposition.wrap_self)
        self.grid, self.nvar, self.backend, self.dtype = grid, nvar, backend, np.dtype(dtype)
        self.local = block_grid(grid, self.block)
        # A side between two blocks reads its halo; the grid's own sides keep their kind.
        self.kinds = list(kinds)
        for side, other in enumerate(self.block.neighbours):
            if other is not None:
                self.kinds[side] = BC_HALO

        # The halo and send buffers, one block a side of the grid's dimension in halo_sides'
        # order, [v][layer][cross-section] each.
        nx, ny, nz = self.local.nx, self.local.ny, self.local.nz
        cross = (ny * nz, ny * nz, nx * nz, nx * nz, nx * ny, nx * ny)[:2 * grid.ndim]
        sizes = [2 * nvar * c for c in cross]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.halos = backend.zeros((max(1, self.offsets[-1]),), dtype)
        self.send = backend.zeros(self.halos.shape, dtype)
        self.sides = sum(1 << s for s, other in enumerate(self.block.neighbours)
                         if other is not None)
        self._pack = backend.module(SOURCE, dtype, {"DIM": grid.ndim}).euler_halo_pack
        self._pack_grid = -(-self.offsets[-1] // PACK_THREADS)

        # The path of the swaps (module docstring): launches in the graph, or host-staged.
        way = collectives(self.comm, backend, decomposition.exchange)
        self.path = way.path  # in words (the run summary's)
        self.overlap = (self.swap_bytes >= OVERLAP_BYTES if decomposition.overlap is None
                        else decomposition.overlap)
        self.nccl = way if way.in_graph else None
        if self.nccl is None:
            self.send_host = backend.pinned(self.send.shape, dtype)
            self.halos_host = backend.pinned(self.halos.shape, dtype)
            self.rate_host = backend.pinned((1,), dtype)

    @property
    def dims(self):
        return self.block.dims

    @property
    def swap_bytes(self):
        """The bytes this block sends in one swap: its sides' halo layers."""
        return self.dtype.itemsize * int(sum(
            self.offsets[s + 1] - self.offsets[s] for s, other in enumerate(self.block.neighbours)
            if other is not None))

    # -- a step's parts ------------------------------------------------------------------------
    def step_parts(self, clock, buffers, stages, finish_dt, bind_stage, launch, reach):
        """A Runge-Kutta step on this block: the global dt before finish_dt and the halos of
        each stage's input before the stage. stages: (weight, input role, output role) of each
        stage; buffers: (state_a, state_b, scratch); bind_stage(k, first block, block counts):
        a launch of stage k over part of its whole launch `launch` (blocks along x, y, z);
        reach(axis, b): the first and last cell along the axis that block b reads."""
        # The first stage reads U^n, which before finish_dt flips the parity is the buffer the
        # parity names as new: it is packed and swapped with the rates, before dt is known.
        parts = self._swap(self._pack_launch(buffers, clock.parity, ROLE_NEW), clock)
        parts += [finish_dt, bind_stage(0)]
        # The later stages: the blocks that read no halo run while the halos travel, the
        # others after.
        interior, boundary = (self.regions(launch, reach) if self.overlap else
                              ([], [_first_and_count([(0, count) for count in launch])]))
        for k, (_, src, _) in enumerate(stages[1:], start=1):
            pack = self._pack_launch(buffers, clock.parity, src)
            inside = [bind_stage(k, *box) for box in interior]
            parts += self._swap(pack, during=inside) + [bind_stage(k, *box) for box in boundary]
        return parts

    def regions(self, launch, reach):
        """The blocks of a stage's launch as boxes (first block, block counts): those that read
        no halo (at most one box) and the others (slabs along the axes in turn)."""
        n = (self.local.nx, self.local.ny, self.local.nz)
        inner = []
        for axis, count in enumerate(launch):
            lo, hi = (self.kinds[2 * axis:2 * axis + 2] if axis < self.grid.ndim
                      else (None, None))
            clear = [b for b in range(count) if not (
                (lo == BC_HALO and reach(axis, b)[0] < 0)
                or (hi == BC_HALO and reach(axis, b)[1] >= n[axis]))]
            inner.append((clear[0], clear[-1] + 1) if clear else (0, 0))
        boundary, rest = [], [(0, count) for count in launch]
        for axis, (a, e) in enumerate(inner):
            for lo, hi in ((0, a), (e, launch[axis])) if a < e else ((0, launch[axis]),):
                if hi > lo:
                    box = rest[:axis] + [(lo, hi)] + rest[axis + 1:]
                    boundary.append(_first_and_count(box))
            if a >= e:
                return [], boundary
            rest[axis] = (a, e)
        return [_first_and_count(rest)], boundary

    def _pack_launch(self, buffers, parity, role):
        return self._pack.bind(self._pack_grid, PACK_THREADS, *buffers, parity, role, self.send,
                               self.sides, self.local.nx, self.local.ny, self.local.nz)

    def _swap(self, pack, clock=None, during=()):
        """The parts that fill the halos from the neighbours' packs (pack: the launch packing
        this block's), and with the clock make rates[0] the largest rate of all blocks;
        `during`: launches that read no halo, run while the halos travel."""
        rate = None if clock is None else clock.rates[0:1]
        fold = [] if clock is None else [clock.fold_rates]
        if self.nccl is not None:
            ops = [(kind, buffer[self.offsets[side]:self.offsets[side + 1]], peer)
                   for kind, buffer, side, peer in self._transfers(self.send, self.halos)]
            return [*fold, *(self.nccl.bind_max(rate) if clock else []), pack,
                    *self.nccl.bind_swap(ops, during)]
        b = self.backend
        out = [pack, b.bind_copy(self.send_host, self.send)]
        back = [b.bind_copy(self.halos, self.halos_host)]
        if clock is not None:
            out += [*fold, b.bind_copy(self.rate_host, rate)]
            back += [b.bind_copy(rate, self.rate_host)]
        if not during:  # the swap waits for everything launched
            return [*out, HostWork(lambda: self._mpi_swap(clock is not None)), *back]
        sent = b.marker()
        return [*out, HostWork(sent.record), *during,
                HostWork(lambda: self._mpi_swap(clock is not None, sent)), *back]

    def _transfers(self, send, halos):
        """(kind, buffer, side, peer) of the sends and receives of an exchange in issue order
        (backend/mpi.py's side_transfers)."""
        return side_transfers(self.block.neighbours, send, halos)

    def _mpi_swap(self, with_rate, sent=None):
        """The host-staged swap, between graph segments, once the packs are in host memory
        (the marker `sent`, else all work launched): the packs through MPI (each side's
        message tagged by the side it leaves), and the largest rate of all blocks."""
        if sent is None:
            self.backend.synchronize()
        else:
            sent.wait()
        swap_sides(self.comm, self.block.neighbours, self.send_host, self.halos_host,
                   self.offsets)
        if with_rate:
            self.rate_host[0] = self.comm.allreduce(float(self.rate_host[0]), op=max_op())

    # -- the whole grid's state ----------------------------------------------------------------
    def whole_checkpoint(self, arrays):
        """This block's checkpoint arrays (the solver's) made the whole grid's, as a single
        rank stores them: the state gathered on rank 0 (None on the others), the rates folded
        into the largest of all blocks' (collective)."""
        arrays = dict(arrays)
        cells = self.gather(to_cells(arrays["conserved"], self.local))
        arrays["conserved"] = None if cells is None else to_buffer(cells, self.grid)
        largest = self.comm.allreduce(float(arrays["clock/rates"].max()), op=max_op())
        arrays["clock/rates"] = np.array([largest], arrays["clock/rates"].dtype)
        return arrays

    def block_checkpoint(self, arrays):
        """A whole grid's checkpoint arrays (whole_checkpoint's, or a single rank's) cut to
        this block's state."""
        arrays = dict(arrays)
        cells = to_cells(np.asarray(arrays["conserved"]), self.grid)
        arrays["conserved"] = np.ascontiguousarray(to_buffer(self.scatter(cells), self.local))
        return arrays

    def scatter(self, conserved):
        """The block's part of conserved variables of the whole grid, (nvar, *grid.shape)."""
        return conserved[(slice(None), *self.block.slices)]

    def gather(self, local):
        """Every rank's block of conserved variables (nvar, *block shape) put together into
        the whole grid's (nvar, *grid.shape) on rank 0 (sums over it have the single-rank
        run's bits); None on the other ranks (collective)."""
        parts = self.comm.gather((self.block.slices, local), root=0)
        if parts is None:
            return None
        whole = np.empty((self.nvar, *self.grid.shape), local.dtype)
        for slices, part in parts:
            whole[(slice(None), *slices)] = part
        return whole
