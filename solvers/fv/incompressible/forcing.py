"""The incompressible solver's immersed boundary on the device: the geometry of
solvers/fv/incompressible/immersed.py packed into device arrays, and the launch of its
forcing kernel (raw_kernels/fv/immersed.cu), which also leaves the force's block sums. A
decomposed grid's block packs its part (block_immersed.py)."""

import numpy as np

from .immersed import CORNERS, TERMS, Window

SOURCE = "fv/immersed.cu"
THREADS = 256  # a power of two (the block sums)


def kernel_defines(ghosts, incremental, sampled=False):
    """incremental: u* holds the incremental prediction u* - dt grad p^n already (the implicit
    viscous scheme's predictor), else the forcing subtracts it; sampled: the stencils read
    arrays of incremental predictions (a decomposed grid's block: ins_immersed_sample), else
    us and vs themselves."""
    return {"G": ghosts, "THREADS": THREADS, "INCREMENTAL": int(bool(incremental)),
            "SAMPLED": int(bool(sampled)), "TERMS": TERMS, "CORNERS": CORNERS}


class ImmersedForcing:
    """The forcing of a body's ImmersedBoundary on the face predictions (us, vs) of a solver
    with `ghosts` ghost layers, with its pressure p (incremental: see kernel_defines), on the
    whole grid, or on `window` with its stencils reading the arrays `stencils` (a decomposed
    grid's block): `launch()` (capturable), `parts` (the step's launches: on one rank that
    one), and `force_partials` (x of every block, then y; `blocks` of them) for the step's
    last kernel to sum; `window` the part of the grid it forces."""

    def __init__(self, backend, dtype, geometry, us, vs, p, dt, ghosts, incremental,
                 window=None, stencils=None):
        self.window = window or Window.whole(geometry.grid, ghosts)
        arrays, counts = geometry.pack(dtype, self.window)
        # (an empty list as one entry never read: no device array of size zero)
        self.arrays = {name: backend.to_device(values if len(values) else
                                               np.zeros(1, values.dtype))
                       for name, values in arrays.items()}
        self.blocks = max(1, -(-sum(counts[0::2]) // THREADS))
        self.force_partials = backend.zeros((2 * self.blocks,), dtype)
        grid, a = geometry.grid, self.arrays
        self.kernels = backend.module(SOURCE, dtype, kernel_defines(ghosts, incremental,
                                                                    stencils is not None))
        self.launch = self.kernels.ins_immersed.bind(
            self.blocks, THREADS, us, vs, *(stencils or (us, vs)), p, dt, a["face"],
            a["cells"], a["counted"], a["stencil"], a["coefficient"], *counts, grid.nx,
            grid.ny, 1.0 / grid.dx, 1.0 / grid.dy, self.force_partials)
        self.parts = [self.launch]
