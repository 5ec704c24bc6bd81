"""The 2D incompressible solver's block of a decomposed grid (issue 24: one rank's part): its
cells, the sides it shares with other blocks, the exchanges of a step and the whole grid's
state gathered from every block. Host-staged throughout: kernels pack and unpack on the
device, and the host swaps the packs by MPI between graph segments (HostWork).

The blocks are linalg.block_layout's, aligned so that the pressure multigrid coarsens inside
them. A block holds its cells' pressure and the faces around them: a face between two blocks
is held by both, which compute it alike from the same inputs. A side towards another block is
of kind BC_HALO (raw_kernels/fv/mac_lines.h): no boundary rule, and its faces are predicted
and corrected as interior ones. A step (IncompressibleSolver._decomposed_parts):
- before the predictor, the G = 2 ghost layers of u and v beyond each such side (QUICK reads
  two faces upstream) are swapped: along the side's axis the layers next to it, across it the
  block's own faces (raw_kernels/fv/mac_halo.cu). The predictor reads no diagonal neighbour,
  so no corner travels;
- implicit viscosity (block_viscous.py): before the predictor the halo of p^n (its gradient at
  the shared faces); after it the distributed CG of the viscous stage, each application of its
  operator swapping the ghosts of a padded copy of the increment (velocity_halo with copied
  faces: a face on a side is solved for by the block beyond the high side alone), then one
  more swap that gives the other block the solution there;
- the pressure solve is distributed CG preconditioned by the distributed multigrid
  (pressure.py), with the single-rank solve's tolerances on the whole grid's norms; its
  solution is copied into an array padded by one cell and that halo swapped (backend/halo.py)
  for the correction's gradients at the shared faces;
- after the correction, the blocks' stability rates and the steady test's maxima (largest
  change, speed, divergence) become the largest of all blocks (Allreduce MAX, exact), so the
  next dt, the records and the steady-state verdict are every rank's alike.
"""

import numpy as np

from ...backend.mpi import max_op, swap_sides
from ...backend.stepper import HostWork
from ...linalg.block_layout import block_layout
from ...mesh.decomposition import Decomposition, block_grid

SOURCE = "fv/mac_halo.cu"
THREADS = 256  # threads of a mac_halo_copy block, one a buffer value
BC_HALO = 5  # mac_lines.h
BOX_INTS = 6  # mac_halo.cu


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    yield SOURCE, {}


class MacBlock:
    """One rank's block of the 2D `grid` under `decomposition`, for a solver with `boundaries`
    (boundary.Boundaries) and G ghost layers of face velocities, on `backend`."""

    def __init__(self, decomposition: Decomposition, grid, boundaries, ghosts, backend, dtype):
        if decomposition.exchange == "nccl":
            raise ValueError("halo_exchange 'nccl': the incompressible solver exchanges its "
                             "halos host-staged only")
        if "periodic" in boundaries.kinds:
            raise ValueError("the incompressible solver does not run on several MPI ranks "
                             "with periodic sides yet")
        self.comm, self.backend, self.dtype = decomposition.comm, backend, np.dtype(dtype)
        self.grid, self.G = grid, ghosts
        self._tables = []  # the halos' box tables (device), kept for the launches
        self.layout = block_layout(decomposition.rank, decomposition.size, grid.shape,
                                   dims=decomposition.dims or None)
        self.block = block = self.layout.block
        self.local = block_grid(grid, block)
        self.neighbours = block.neighbours
        self.codes = tuple(BC_HALO if other is not None else code
                           for code, other in zip(boundaries.codes, self.neighbours))
        # The inflow profiles along the block's sides: x_lo, x_hi (its rows), y_lo, y_hi.
        nx, ny = grid.nx, grid.ny
        (i0, j0), (mx, my) = block.start, block.shape
        profiles = np.split(boundaries.inflow, [ny, 2 * ny, 2 * ny + nx])
        self.inflow = np.concatenate([profiles[0][j0:j0 + my], profiles[1][j0:j0 + my],
                                      profiles[2][i0:i0 + mx], profiles[3][i0:i0 + mx]])

    @property
    def dims(self):
        return self.block.dims

    path = "host-staged"  # the exchanges' path, in words (the run summary's)

    # -- the velocity halos ----------------------------------------------------------------------
    def _boxes(self, send, copied=False):
        """The velocity halo's boxes, BOX_INTS ints each (component 0 u or 1 v, first padded
        column, first padded row, columns, rows, offset in the buffer), and the offsets of the
        sides' blocks in the buffer (side s: offsets[s] to offsets[s + 1]). Along a side's axis
        G lines (send: the block's next to the side, else the ghosts beyond it), across it the
        component's own faces; a neighbour's box of the facing side has the same size. The
        faces on a side are the two blocks' own, unless `copied`: then those on a high side
        are the next block's (mac_lines.h copied_face) and arrive with the ghosts."""
        G, (nx, ny) = self.G, self.block.shape
        table, offsets, total = [], [0], 0
        for side, other in enumerate(self.neighbours):
            axis, high = divmod(side, 2)
            n = (nx, ny)[axis]
            components = () if other is None else enumerate(((nx + 1, ny), (nx, ny + 1)))
            for component, counts in components:
                # Faces 0..n along the axis (the side's own unless copied), else cells.
                beyond = int(component == axis and not copied)
                first = (n - G if high else beyond) if send else (n + beyond if high else -G)
                start, size = [G, G], list(counts)
                start[axis], size[axis] = G + first, G
                table.append((component, *start, *size, total))
                total += size[0] * size[1]
            offsets.append(total)
        return np.array(table, np.int32).reshape(-1, BOX_INTS), offsets

    def velocity_halo(self, u, v, copied=False):
        """The parts swapping the ghost layers of the face arrays u and v beyond the sides
        towards other blocks (copied: and the copied faces, _boxes): pack (launch), MPI
        (HostWork), unpack (launch)."""
        b, kernel = self.backend, self.backend.module(SOURCE, self.dtype, {}).mac_halo_copy
        parts, buffers = [], []
        for send in (True, False):
            table, offsets = self._boxes(send, copied)
            total = offsets[-1]
            buffers.append(b.zeros((max(1, total),), self.dtype))
            self._tables.append(b.to_device(table.ravel()))
            parts.append(kernel.bind(-(-total // THREADS), THREADS, u, v, buffers[-1],
                                     self._tables[-1], len(table), total, u.shape[1],
                                     v.shape[1], int(not send)))
        # Staged through page-locked host copies: pack, copy out, MPI, copy in, unpack.
        send, receive = buffers
        sent, received = (b.pinned(a.shape, self.dtype) for a in buffers)

        def swap():
            self.backend.synchronize()
            swap_sides(self.comm, self.neighbours, sent, received, offsets)
        return [parts[0], b.bind_copy(sent, send), HostWork(swap),
                b.bind_copy(receive, received), parts[1]]

    # -- the pressure solve and the step's maxima ------------------------------------------------
    def pressure_parts(self, solver):
        """The parts of the distributed pressure solve (a DistributedConjugateGradient from its
        b and x, as the divergence left them), then its solution copied into a padded array
        and the halo of that swapped: (parts, the padded array)."""
        solve = HostWork(lambda: solver.solve_in_place(restarts=0))
        parts, padded = self.cell_halo(solver, solver.x)
        return [solve, *parts], padded

    def cell_halo(self, solver, cells):
        """(parts, padded): the block's cell array `cells` copied into an array padded by one
        cell and the halo of that swapped (the pressure solver's operator's exchange)."""
        halo = solver.operator.halo
        padded = halo.zeros()
        return [halo.bind_copy(cells, padded, to_padded=True),
                solver.operator.exchange(padded)], padded

    def maxima(self, rates, partials):
        """(HostWork, maxima): the largest stability rate of all blocks into rates[0] (the
        clock's dt comes from rates), and the largest of all blocks' partials (3 of each
        block: change, speed, divergence, ins_correct's) into the device array `maxima` of 3,
        which ins_finish then reads as the partials of one block."""
        maxima = self.backend.zeros((3,), self.dtype)

        def reduce():
            local_rates = np.array(self.backend.to_host(rates))
            local = self.backend.to_host(partials).reshape(3, -1).max(axis=1)
            largest = np.empty(4)
            self.comm.Allreduce(np.array([local_rates.max(), *local], np.float64), largest,
                                op=max_op())
            local_rates[0] = largest[0]
            self.backend.write(rates, local_rates)
            self.backend.write(maxima, largest[1:].astype(self.dtype))
        return HostWork(reduce), maxima

    # -- the whole grid's state --------------------------------------------------------------
    def _own(self, axis, n, faces):
        """The block's entries along `axis` of a padded face array: its own lines (n cells,
        and one more of faces), and the G ghost lines beyond a side of the whole grid (the
        lines beyond a side towards a block are that block's); (first, stop) padded."""
        lo = 0 if self.neighbours[2 * axis] is None else self.G
        extra = 2 * self.G if self.neighbours[2 * axis + 1] is None else self.G
        return lo, n + faces + extra

    def _regions(self):
        """(local, whole) slices of u and v's padded arrays ([row, column]) this block gives
        the whole grid's, and its cells' slices of the whole grid's [row, column] cells."""
        (nx, ny), (i0, j0) = self.block.shape, self.block.start
        regions = []
        for faces_x, faces_y in ((1, 0), (0, 1)):
            rows, columns = self._own(1, ny, faces_y), self._own(0, nx, faces_x)
            regions.append(((slice(*rows), slice(*columns)),
                            (slice(rows[0] + j0, rows[1] + j0),
                             slice(columns[0] + i0, columns[1] + i0))))
        return regions, (slice(j0, j0 + ny), slice(i0, i0 + nx))

    def gather(self, u, v, p, u_shape, v_shape):
        """The whole grid's padded u and v (u_shape, v_shape, [row, column]) and cell
        pressure ([row, column]) from every block's host copies (u, v padded, p flat), on every
        rank (collective): each block's own faces and its ghosts beyond the grid's sides."""
        (u_region, v_region), cells = self._regions()
        mine = (u_region[1], v_region[1], cells, u[u_region[0]], v[v_region[0]],
                p.reshape(self.local.ny, self.local.nx))
        whole = (np.zeros(u_shape), np.zeros(v_shape), np.zeros((self.grid.ny, self.grid.nx)))
        for *slices, ub, vb, pb in self.comm.allgather(mine):
            for target, where, part in zip(whole, slices, (ub, vb, pb)):
                target[where] = part
        return whole

    def scatter(self, u, v, p):
        """This block's part of whole-grid face velocities u ((nx + 1, ny), [i, j]), v and
        cell pressure p ([i, j])."""
        (i0, j0), (nx, ny) = self.block.start, self.block.shape
        return (u[i0:i0 + nx + 1, j0:j0 + ny], v[i0:i0 + nx, j0:j0 + ny + 1],
                p[i0:i0 + nx, j0:j0 + ny])
