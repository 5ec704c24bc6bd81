"""The structured Euler solver's block of a decomposed grid (one rank's part): its sides'
kinds, the halo exchange before each stage, the global dt and the gathered state.

Host-staged: between the step's launches the host packs the two boundary layers of each side
of the stage's input state, swaps them with the neighbouring ranks (MPI Sendrecv) and writes
them into the halo buffers the stage kernel reads beyond sides of kind BC_HALO (layout:
halo_sides in raw_kernels/fv/euler_state.h). A stage reads only the cells along its axes, so
faces suffice (no edges or corners). dt is global: the largest stability rate of all blocks
(a max, exact, so every rank's dt has the bits of a single-rank run's).
"""

import numpy as np

from ..backend.mpi import max_op, proc_null
from ..mesh import StructuredGrid
from ..mesh.decomposition import Decomposition, block_of, check_dims, process_grid

BC_HALO = 4  # euler_state.h
PERIODIC = 0
# The buffers by role (ROLE_* of ssp_stages.h) and the clock's parity -> index in buffers.
ROLE_NEW, ROLE_SCRATCH = 1, 2


def stage_buffer(role, parity):
    """Index into (state_a, state_b, scratch) of the buffer of a role (stage_buffer there)."""
    if role == ROLE_SCRATCH:
        return 2
    return 1 if (role == ROLE_NEW) == (parity != 0) else 0


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
        self.block = block_of(self.rank, dims, shape, periodic)
        self.grid, self.nvar, self.backend = grid, nvar, backend
        self.local = self._local_grid(grid)
        # A side between two blocks reads its halo; the grid's own sides keep their kind.
        self.kinds = list(kinds)
        for side, other in enumerate(self.block.neighbours):
            if other is not None:
                self.kinds[side] = BC_HALO

        # The halo buffers, one block a side in halo_sides' order (all six in every dimension).
        nx, ny, nz = self.local.nx, self.local.ny, self.local.nz
        self.cross = (ny * nz, ny * nz, nx * nz, nx * nz, nx * ny, nx * ny)
        self.halos = backend.zeros((2 * nvar * sum(self.cross),), dtype)

    def _local_grid(self, grid):
        """The block as a grid of its own: its cells keep the whole grid's spacing."""
        ranges = []
        for axis, (first, cells) in enumerate(zip(self.block.start, self.block.shape)):
            lo, step = (grid.x, grid.y, grid.z)[axis][0], (grid.dx, grid.dy, grid.dz)[axis]
            ranges.append((lo + first * step, lo + (first + cells) * step))
        n = list(self.block.shape) + [1] * (3 - grid.ndim)
        r = ranges + [None] * (3 - grid.ndim)
        return StructuredGrid(nx=n[0], x=r[0], ny=n[1], y=r[1], nz=n[2], z=r[2])

    @property
    def dims(self):
        return self.block.dims

    # -- between a step's launches -------------------------------------------------------------
    def exchange(self, state):
        """Fill the halo buffers from the neighbours' boundary layers of `state` (a stage's
        input buffer, (nvar, (nz,) ny, nx) on the device)."""
        local = self.local
        u = self.backend.to_host(state).reshape(self.nvar, local.nz, local.ny, local.nx)
        halos = self.backend.to_host(self.halos)
        views = self._host_views(halos)
        for axis in range(self.grid.ndim):
            lo, hi = self.block.neighbours[2 * axis], self.block.neighbours[2 * axis + 1]
            lo = proc_null() if lo is None else lo
            hi = proc_null() if hi is None else hi
            # Layer 0 is the cell next to the side: the low side sends cells 0, 1 (the high
            # neighbour's ghosts n, n + 1), the high side n - 1, n - 2.
            n = u.shape[3 - axis]
            first = self._layers(u, axis, (0, 1))
            last = self._layers(u, axis, (n - 1, n - 2))
            self.comm.Sendrecv(first, dest=lo, sendtag=2 * axis, recvbuf=views[2 * axis + 1],
                               source=hi, recvtag=2 * axis)
            self.comm.Sendrecv(last, dest=hi, sendtag=2 * axis + 1, recvbuf=views[2 * axis],
                               source=lo, recvtag=2 * axis + 1)
        self.backend.write(self.halos, halos)

    def _host_views(self, halos):
        """The halo buffers of a host copy, one (nvar, 2, cross-section) view a side."""
        out, start = [], 0
        for c in self.cross:
            out.append(halos[start:start + 2 * self.nvar * c].reshape(self.nvar, 2, c))
            start += 2 * self.nvar * c
        return out

    def _layers(self, u, axis, indices):
        """Layers `indices` of u (nvar, nz, ny, nx) across `axis`, packed [v][layer][c]."""
        if axis == 0:
            part = u[:, :, :, list(indices)].transpose(0, 3, 1, 2)
        elif axis == 1:
            part = u[:, :, list(indices), :].transpose(0, 2, 1, 3)
        else:
            part = u[:, list(indices), :, :]
        return np.ascontiguousarray(part).reshape(self.nvar, 2, -1)

    def global_rates(self, rates):
        """Make the largest of the per-block rates in `rates` (device) every rank's largest:
        the step's dt (finish_dt takes the max of them) is then the same everywhere."""
        host = self.backend.to_host(rates)
        host[0] = self.comm.allreduce(host.max(), op=max_op())
        self.backend.write(rates, host)

    # -- the whole grid's state ----------------------------------------------------------------
    def scatter(self, conserved):
        """The block's part of conserved variables of the whole grid, (nvar, *grid.shape)."""
        return conserved[(slice(None), *self.block.slices)]

    def gather(self, local):
        """Every rank's block of conserved variables (nvar, *block shape) put together into
        the whole grid's (nvar, *grid.shape), on every rank (in grid order, so sums over it
        have the single-rank run's bits)."""
        whole = np.empty((self.nvar, *self.grid.shape), local.dtype)
        for slices, part in self.comm.allgather((self.block.slices, local)):
            whole[(slice(None), *slices)] = part
        return whole
