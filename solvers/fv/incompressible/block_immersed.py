"""The immersed boundary of a body on a decomposed 2D grid's block (issue 24; immersed.py is
the geometry, forcing.py the single-rank forcing).

Every rank builds the whole grid's ImmersedBoundary (float64, on the host: the single rank's
geometry) and packs the forced faces its block holds (immersed.Window): flat indices into its
face arrays, the two cells of each one's pressure step in p^n padded by one halo cell (the
copy the step swaps before the predictor: a cell beside a face on a side between two blocks
is the neighbour's), and the stencils' faces in arrays of incremental predictions padded by as
many ghost layers as the farthest stencil of any block reaches beyond its block. A face on a
side between two blocks is held by both, which force it alike from the same values; its
forcing counts in the force of the block below the side alone.

A step, after the predictor (and the implicit viscous stage), before the divergence:
- ins_immersed_sample (raw_kernels/fv/immersed.cu) writes the incremental prediction
  q* - dt grad p^n of every face of the block into su, sv, as the single-rank forcing computes
  it at its stencils;
- their ghost layers are swapped (MacBlock.velocity_halo, x sides then y sides, so that the
  corners arrive): a stencil reads the single rank's values wherever it lies;
- ins_immersed forces the block's faces and sums their force per thread block;
- the force of all blocks is summed (MacBlock.sums: float64, rank after rank, the same bits on
  every rank) into the array the step's last kernel reads, rounded to the precision once.
"""

import dataclasses

from .forcing import THREADS, ImmersedForcing
from .immersed import Window


def stencil_layers(parallel, reach):
    """The ghost layers of the stencils' arrays: the farthest reach of any block's stencils
    beyond its block (at least one), the same on every rank (collective); a one-line
    ValueError naming a block that holds fewer lines than that along an axis it shares."""
    blocks = parallel.comm.allgather((reach, parallel.block.coords, parallel.block.shape,
                                      parallel.neighbours))
    layers = max(1, *(reach for reach, *_ in blocks))
    for _, coords, shape, neighbours in blocks:
        for axis, cells in enumerate(shape):
            shared = any(other is not None for other in neighbours[2 * axis:2 * axis + 2])
            if shared and cells < layers:
                raise ValueError(
                    f"the obstacle's image stencils reach {layers} faces beyond a block, more "
                    f"than block {tuple(coords)} of the process grid "
                    f"{' x '.join(map(str, parallel.dims))} holds along {'xy'[axis]} ({cells} "
                    f"cells): set decomposition in [run] to fewer blocks along {'xy'[axis]}")
    return layers


class BlockForcing(ImmersedForcing):
    """ImmersedForcing on the block of `parallel` (a 2D MacBlock) of a solver with `ghosts`
    ghost layers, p_source: (p^n padded by one cell, its stride along y, the index of the
    block's first cell); `parts` are the step's launches and host work (module docstring), and
    force_partials the sum of all blocks' force (x, y; blocks = 1)."""

    def __init__(self, parallel, backend, dtype, geometry, us, vs, p_source, dt, ghosts,
                 incremental):
        p, stride, first = p_source
        block = parallel.block
        # The block's part, its stencils' arrays padded by the farthest reach of any block's.
        shared = tuple(parallel.neighbours[2 * axis] is not None for axis in range(2))
        window = Window(block.start, block.shape, ghosts, stencil_ghosts=0, cell_first=first,
                        cell_stride=stride, shared_low=shared)
        layers = stencil_layers(parallel, geometry.reach(window))
        window = dataclasses.replace(window, stencil_ghosts=layers)
        nx, ny = block.shape
        stencils = [backend.zeros((ny + 2 * layers, nx + 1 + 2 * layers), dtype),
                    backend.zeros((ny + 1 + 2 * layers, nx + 2 * layers), dtype)]
        super().__init__(backend, dtype, geometry, us, vs, p, dt, ghosts, incremental, window,
                         stencils)
        # The step's parts: sample, swap x sides then y sides, force, sum the force.
        grid = geometry.grid
        sample = self.kernels.ins_immersed_sample.bind(
            -(-(nx + 1) * (ny + 1) // THREADS), THREADS, us, vs, p, stride, first, dt,
            *stencils, layers, nx, ny, 1.0 / grid.dx, 1.0 / grid.dy, *parallel.codes)
        halo = [part for axis in range(2)
                for part in parallel.velocity_halo(*stencils, layers=layers, axis=axis)]
        reduce, self.force_partials = parallel.sums(self.force_partials, 2)
        self.blocks = 1
        self.parts = [sample, *halo, self.launch, *reduce]
