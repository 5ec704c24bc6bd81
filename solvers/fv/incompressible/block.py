"""A MAC solver's block of a decomposed grid, 2D or 3D (issue 24: one rank's part): its cells,
the sides it shares with other blocks, the exchanges of a step and the whole grid's state
gathered from every block. Kernels pack and unpack on the device; the packs travel the way of
`collectives` (backend/collectives.py, chosen once from run.halo_exchange and shared with the
pressure and viscous solves): NCCL launches inside the step's graph where every rank has a GPU
of its own and "nccl" or "auto" asks for it (on the host backend, "nccl": MPI calls as
launches), else host-staged, MPI between graph segments (HostWork). In the graph, a step's
only host work is the solves' reading of their status between chunks of iterations
(linalg/distributed_cg.py).

The blocks are linalg.block_layout's, aligned so that the pressure multigrid coarsens inside
them. A block holds its cells' pressure and the faces around them: a face between two blocks
is held by both, which compute it alike from the same inputs. A side towards another block is
of kind BC_HALO (raw_kernels/fv/mac_lines.h): no boundary rule, and its faces are predicted
and corrected as interior ones. A periodic axis wraps: the block beyond its ends is the one at
the other end (the block itself where the axis is not split), so its sides are halo sides
too. A step (MacFlow.decomposed_parts):
- before the predictor, the G = 2 ghost layers of every velocity component beyond each such
  side (QUICK reads two faces upstream) are swapped: along the side's axis the layers next to
  it, across it the block's own faces (raw_kernels/fv/mac_halo.cu). The predictor reads no
  diagonal neighbour, so no edge or corner travels;
- implicit viscosity (block_viscous.py) or a body: before the predictor the halo of p^n (its
  gradient at the shared faces); implicit, after it the distributed CG of the viscous stage, each
  application of its operator swapping the ghosts of a padded copy of the increment
  (velocity_halo with copied faces: a face on a side is solved for by the block beyond the
  high side alone, on a periodic axis the block past face 0), then one more swap that gives
  the other block the solution there;
- a body (2D; block_immersed.py): after the prediction the incremental predictions of the
  block's faces are sampled into arrays with as many ghost layers as its forcing's stencils
  reach, whose halos are swapped axis after axis (corners too), then the block's forced faces
  forced; the force is summed over all blocks (sums);
- the pressure solve is distributed CG preconditioned by the distributed multigrid
  (pressure.py), with the single-rank solve's tolerances on the whole grid's norms; its
  solution is copied into an array padded by one cell and that halo swapped (backend/halo.py)
  for the correction's gradients at the shared faces;
- after the correction, the blocks' stability rates and the steady test's maxima (largest
  change, speed, divergence) become the largest of all blocks, and sums (the 3D kinetic
  energy) the sum of all blocks, so the next dt, the records and the steady-state verdict
  are every rank's alike.
"""

import numpy as np

from ...backend.collectives import collectives
from ...backend.mpi import side_transfers
from ...linalg.block_layout import block_layout
from ...mesh.decomposition import Decomposition, block_grid

SOURCE = "fv/mac_halo.cu"
THREADS = 256  # threads of a mac_halo_copy block, one a buffer value
BC_HALO = 5  # mac_lines.h
BOX_INTS = 8  # mac_halo.cu


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    yield SOURCE, {}


class MacBlock:
    """One rank's block of the 2D or 3D `grid` under `decomposition`, for a solver with
    `boundaries` (its boundary table) and G ghost layers of face velocities, on `backend`."""

    def __init__(self, decomposition: Decomposition, grid, boundaries, ghosts, backend, dtype):
        self.comm, self.backend, self.dtype = decomposition.comm, backend, np.dtype(dtype)
        self.grid, self.G, self.ndim = grid, ghosts, grid.ndim
        self.periodic = [boundaries.kinds[2 * a] == "periodic" for a in range(self.ndim)]
        self._tables = []  # the halos' box tables (device), kept for the launches
        self.layout = block_layout(decomposition.rank, decomposition.size, grid.shape,
                                   dims=decomposition.dims or None, periodic=self.periodic)
        self.block = block = self.layout.block
        self.collectives = collectives(self.comm, backend, decomposition.exchange)
        self.overlap = decomposition.overlap
        self.local = block_grid(grid, block)
        self.neighbours = block.neighbours
        self.codes = tuple(BC_HALO if other is not None else code
                           for code, other in zip(boundaries.codes, self.neighbours))
        # The boundary table of the block: the inflow profiles along its sides.
        profiles = []
        for side, profile in enumerate(boundaries.side_profiles(grid.shape)):
            across = [d for d in range(self.ndim) if d != side // 2]
            profiles.append(profile[tuple(slice(block.start[d], block.start[d] + block.shape[d])
                                          for d in across)])
        self.boundaries = boundaries.with_profiles(profiles)

    @property
    def dims(self):
        return self.block.dims

    @property
    def path(self):
        """The exchanges' path, in words (the run summary's)."""
        return self.collectives.path

    def face_counts(self, component):
        """The block's faces of a velocity component along each axis (x, y(, z))."""
        return [n + (d == component) for d, n in enumerate(self.block.shape)]

    # -- the velocity halos ----------------------------------------------------------------------
    def _boxes(self, send, copied=False, layers=None, axis=None):
        """The velocity halo's boxes, BOX_INTS ints each (component, first padded index along
        x, y, z, counts along x, y, z, offset in the buffer), and the offsets of the sides'
        boxes in the buffer (side s: offsets[s] to offsets[s + 1]). Along a side's axis
        `layers` lines (default G; the arrays' ghost layers: send, the block's next to the
        side, else the ghosts beyond it), across it the component's own faces; a neighbour's
        box of the facing side has the same size. The faces on a side are the two blocks' own,
        unless `copied`: then those on a high side are the next block's (mac_lines.h
        copied_face) and arrive with the ghosts. With `axis`, the sides of that axis alone,
        their boxes across the earlier axes spanning the ghost layers too: swapped axis after
        axis, the edges and corners of the halo travel."""
        G, n = layers or self.G, self.block.shape
        table, offsets, total = [], [0], 0
        for side, other in enumerate(self.neighbours):
            along, high = divmod(side, 2)
            swapped = other is not None and axis in (None, along)
            for component in range(self.ndim) if swapped else ():
                # Faces 0..n along the axis (the side's own unless copied), else cells.
                beyond = int(component == along and not copied)
                first = ((n[along] - G if high else beyond) if send else
                         (n[along] + beyond if high else -G))
                start, size = [G] * 3, self.face_counts(component) + [1] * (3 - self.ndim)
                for earlier in range(along if axis is not None else 0):
                    start[earlier], size[earlier] = 0, size[earlier] + 2 * G
                start[along], size[along] = G + first, G
                if self.ndim == 2:
                    start[2] = 0
                table.append((component, *start, *size, total))
                total += int(np.prod(size))
            offsets.append(total)
        return np.array(table, np.int32).reshape(-1, BOX_INTS), offsets

    def velocity_halo(self, *q, copied=False, layers=None, axis=None):
        """The parts swapping the ghost layers of the face arrays q (u, v(, w); padded by
        `layers`, default G) beyond the sides towards other blocks (copied: and the copied
        faces; axis: that axis's sides alone, _boxes): pack (launch), the swap (launches, or
        host work between them: self.collectives), unpack (launch); none where no such side
        is left."""
        b, kernel = self.backend, self.backend.module(SOURCE, self.dtype, {}).mac_halo_copy
        neighbours = [other if axis in (None, side // 2) else None
                      for side, other in enumerate(self.neighbours)]
        if all(other is None for other in neighbours):
            return []
        arrays = (*q, q[0])[:3]  # 2D: no w (no box reads it)
        strides = [s for a in arrays for s in (a.shape[-1], int(np.prod(a.shape[-2:]))
                                               if a.ndim == 3 else 0)]
        parts, buffers = [], []
        for send in (True, False):
            table, offsets = self._boxes(send, copied, layers, axis)
            total = offsets[-1]
            buffers.append(b.zeros((max(1, total),), self.dtype))
            self._tables.append(b.to_device(table.ravel()))
            parts.append(kernel.bind(-(-total // THREADS), THREADS, *arrays, buffers[-1],
                                     self._tables[-1], len(table), total, *strides,
                                     int(not send)))
        # Pack, swap (each side's box to the rank beyond it), unpack.
        send, receive = buffers
        swap = [(kind, buffer[offsets[side]:offsets[side + 1]], peer)
                for kind, buffer, side, peer in side_transfers(neighbours, send, receive)]
        return [parts[0], *self.collectives.bind_swap(swap), parts[1]]

    # -- the pressure solve and the step's maxima ------------------------------------------------
    def pressure_parts(self, solver):
        """The parts of the distributed pressure solve (a DistributedConjugateGradient from its
        b and x, as the divergence left them), then its solution copied into a padded array
        and the halo of that swapped: (parts, the padded array, the index of the block's
        first cell in it, its strides along y(, z))."""
        parts, *padded = self.cell_halo(solver, solver.x)
        return [*solver.step_parts(), *parts], *padded

    def cell_halo(self, solver, cells):
        """(parts, padded, first, strides): the block's cell array `cells` copied into an array
        padded by one cell and the halo of that swapped (the pressure solver's operator's
        exchange); the index of the block's first cell in it, its strides along y(, z)."""
        halo = solver.operator.halo
        padded = halo.zeros()
        px, py, _ = halo.extents
        first = 1 + px + (px * py if self.ndim == 3 else 0)
        return ([halo.bind_copy(cells, padded, to_padded=True), *solver.operator.exchange(padded)],
                padded, first, (px, px * py)[:self.ndim - 1])

    def maxima(self, rates, partials, maxima=3, sums=0):
        """(parts, reduced): the largest stability rate of all blocks into rates[0] (the
        clock's dt comes from rates), and of the block partials (`maxima` rows of maxima, then
        `sums` rows of sums, a value a block each) the largest, then the sums, of all blocks
        into the device array `reduced`, which the finish kernel then reads as the partials of
        one block. Every rank folds its rows (mac_halo.cu), the rows are all-gathered, and
        every rank folds them in rank order: the same bits on all."""
        return self._fold(rates, partials, maxima, sums)

    def sums(self, partials, rows):
        """(parts, reduced): the sums over all blocks of `rows` rows of block values (the
        device array partials, a row after the other) into the device array `reduced` of `rows`
        values, in float64 block after block, then rank after rank: the same bits on all."""
        return self._fold(None, partials, 0, rows)

    def _fold(self, rates, partials, maxima, sums):
        """maxima() and sums(): the parts folding this rank's rows (the rates' unless None,
        `maxima` rows of maxima, `sums` of sums), all-gathering them and folding every rank's
        in rank order; the device array of the folded partials' rows."""
        b, rated, ranks = self.backend, int(rates is not None), self.comm.Get_size()
        width = rated + maxima + sums
        kernels = b.module(SOURCE, self.dtype, {})
        reduced = b.zeros((maxima + sums,), self.dtype)
        rates = rates if rated else reduced  # (neither read nor written without rates)
        local, gathered = b.zeros((width,), np.float64), b.zeros((width * ranks,), np.float64)
        parts = [kernels.mac_rank_fold.bind(1, width, rates, rates.size * rated, partials,
                                            partials.size // (maxima + sums), maxima, sums,
                                            local),
                 *self.collectives.bind_allgather(local, gathered),
                 kernels.mac_ranks_fold.bind(1, 1, gathered, ranks, rated, maxima, sums, rates,
                                             reduced)]
        return parts, reduced

    # -- the whole grid's state --------------------------------------------------------------
    def _own(self, axis, n, faces):
        """The block's entries along `axis` of a padded face array: its own lines (n cells,
        and one more of faces), and the G ghost lines beyond a side of the whole grid (the
        lines beyond a side towards a block are that block's); (first, stop) padded."""
        lo = 0 if self.neighbours[2 * axis] is None else self.G
        extra = 2 * self.G if self.neighbours[2 * axis + 1] is None else self.G
        return lo, n + faces + extra

    def gather(self, q, p, shapes):
        """The whole grid's padded face arrays (shapes[a], device order: [z,] row, column) and
        cell pressure (device order) from every block's host copies (q padded, p flat), on
        every rank (collective): each block's own faces and its ghosts beyond the grid's
        sides; beyond a periodic side (a halo side of its blocks) the ghosts then wrapped as
        the single-rank fill wraps them, axis after axis (edges and corners too)."""
        start, n = self.block.start, self.block.shape
        mine = []
        for component, values in enumerate(q):
            spans = [self._own(d, n[d], int(d == component)) for d in range(self.ndim)][::-1]
            offsets = start[::-1]
            mine.append((tuple(slice(lo + s, hi + s) for (lo, hi), s in zip(spans, offsets)),
                         values[tuple(slice(lo, hi) for lo, hi in spans)]))
        mine.append((self.block.slices[::-1], p.reshape(n[::-1])))
        whole = [np.zeros(shape) for shape in shapes] + [np.zeros(self.grid.shape[::-1])]
        for parts in self.comm.allgather(mine):
            for target, (where, part) in zip(whole, parts):
                target[where] = part
        G = self.G
        for axis in (a for a in range(self.ndim) if self.periodic[a]):
            n = self.grid.shape[axis]
            for component, values in enumerate(whole[:-1]):
                lines = np.moveaxis(values, self.ndim - 1 - axis, 0)  # a view
                normal = int(component == axis)
                lines[:G] = lines[n:n + G]
                lines[G + n + normal:] = lines[G + normal:2 * G + normal]
        return whole

    def scatter(self, q, p):
        """This block's part of whole-grid face velocities q (component a: n + 1 faces along
        axis a, [i, j(, k)]) and cell pressure p ([i, j(, k)])."""
        start = self.block.start
        parts = [value[tuple(slice(s, s + c) for s, c in zip(start, self.face_counts(a)))]
                 for a, value in enumerate(q)]
        return parts, p[self.block.slices]
