"""Advection and diffusion of a scalar c by a fixed velocity field a with constant diffusivity D,
c_t + div(a c) = D lap c, finite volumes on a structured 1D or 2D grid.

Upwind fluxes of first-order or MUSCL (minmod, van Leer or MC limiter) face states, central
second-order diffusive fluxes, SSP-RK2 or SSP-RK3 in time, dt from the CFL number on the device.
Each Runge-Kutta stage is one fused kernel (raw_kernels/fv/advection_diffusion.cu) that computes
every face flux of its tile once and updates the tile's cells. The velocity is given by its
normal components on the cell faces and never changes, so the stability rate is reduced once at
setup and each step's finish_dt turns it into dt; a stage that makes a value non-finite sets
that rate to infinity, which stops the run as diverged.
"""

import numpy as np

from ..backend.clock import RATE_BLOCK, DeviceClock
from ..mesh import StructuredGrid
from ..solver import BackendLike, TimeDependentSolver
from .sides import BoundaryError, check_periodic_pairs, specs_by_side

KERNELS = "fv/advection_diffusion.cu"
RECONSTRUCTIONS = {"first_order": 1, "muscl": 2}
LIMITERS = {"minmod": 1, "van_leer": 2, "mc": 3}
# outflow: zero gradient (c leaves with the flow; no diffusive flux); wall: zero gradient and
# zero normal velocity, so nothing crosses the side.
BOUNDARY_KINDS = ("periodic", "outflow", "wall")

# Shu-Osher SSP Runge-Kutta schemes, as in euler.py. Each stage: out = (1 - w) U^n +
# w (u + dt L(u)), where u is the previous stage. (w, u, out) with buffers by role (ROLE_* of
# the kernel): U^n, the buffer U^(n+1) goes to, scratch. The state alternates between two
# buffers, so that no stage writes what it reads.
OLD, NEW, SCRATCH = 0, 1, 2
TIME_INTEGRATORS = {
    "ssp_rk2": ((1.0, OLD, SCRATCH), (0.5, SCRATCH, NEW)),
    "ssp_rk3": ((1.0, OLD, NEW), (0.25, NEW, SCRATCH), (2.0 / 3.0, SCRATCH, NEW)),
}

# Cells (and threads) of a stage block: a row of 256 in 1D, 32 x 8 in 2D (a warp along x reads
# a row's cells together on the GPU).
TILE_SHAPES = {1: (256, 1), 2: (32, 8)}


def kernel_defines(ndim, reconstruction, limiter):
    """The compilation of the stage and rate kernels for a grid dimension and scheme (first
    order compiles with the minmod limiter, which it does not use)."""
    if reconstruction == "first_order":
        limiter = "minmod"
    tile_x, tile_y = TILE_SHAPES[ndim]
    return {"DIM": ndim, "RECONSTRUCTION": RECONSTRUCTIONS[reconstruction],
            "LIMITER": LIMITERS[limiter], "TILE_X": tile_x, "TILE_Y": tile_y,
            "RATE_THREADS": RATE_BLOCK}


def compiled_kernels():
    """Every distinct (source, defines) this module may compile (REAL_BITS aside)."""
    for ndim in (1, 2):
        yield KERNELS, kernel_defines(ndim, "first_order", "minmod")
        for limiter in LIMITERS:
            yield KERNELS, kernel_defines(ndim, "muscl", limiter)


def parse_boundary(boundary, ndim):
    """{side: kind} -> the kinds of x_lo, x_hi (, y_lo, y_hi), each one of BOUNDARY_KINDS;
    periodic must be set on both sides of an axis."""
    kinds = []
    for side, kind in specs_by_side(boundary, ndim):
        if kind not in BOUNDARY_KINDS:
            raise BoundaryError(side, f"expected one of {', '.join(BOUNDARY_KINDS)}, "
                                f"got {kind!r}")
        kinds.append(kind)
    check_periodic_pairs([kind == "periodic" for kind in kinds])
    return tuple(kinds)


def _component_on_faces(grid, value, axis, kinds):
    """One velocity component on the faces normal to `axis` (a host array, the grid's shape
    with one more face than cells along axis) from a number, a function of (x, y) evaluated
    at the face centres, an array of face values, or an array of cell values (the mean of the
    two cells of a face; a non-periodic boundary face takes its cell's value). On a periodic
    axis the last face is the first one; a wall side's face velocity is 0."""
    n = grid.shape[axis]
    face_shape = tuple(m + 1 if k == axis else m for k, m in enumerate(grid.shape))
    if callable(value):
        if grid.ndim == 1:
            points = (grid.x_nodes(), 0.0)
        else:
            x = grid.x_nodes() if axis == 0 else grid.x_centres()
            y = grid.y_centres() if axis == 0 else grid.y_nodes()
            points = np.meshgrid(x, y, indexing="ij")
        faces = np.asarray(value(*points), dtype=np.float64)
    else:
        faces = np.asarray(value, dtype=np.float64)
        if faces.ndim and faces.shape == grid.shape:
            cells = np.moveaxis(faces, axis, 0)
            moved = np.empty((n + 1, *cells.shape[1:]))
            moved[1:n] = 0.5 * (cells[:-1] + cells[1:])
            if kinds[0] == "periodic":
                moved[0] = moved[n] = 0.5 * (cells[0] + cells[-1])
            else:
                moved[0], moved[n] = cells[0], cells[-1]
            faces = np.moveaxis(moved, 0, axis)
    if faces.ndim and faces.shape != face_shape:
        raise ValueError(f"velocity component {'xy'[axis]}: expected a number, a function of "
                         f"(x, y), or an array of shape {face_shape} (faces) or {grid.shape} "
                         f"(cells), got shape {faces.shape}")
    faces = np.broadcast_to(faces, face_shape).copy()
    moved = np.moveaxis(faces, axis, 0)  # a view: faces along axis first
    if kinds[0] == "periodic":
        moved[n] = moved[0]
    if kinds[0] == "wall":
        moved[0] = 0.0
    if kinds[1] == "wall":
        moved[n] = 0.0
    if not np.all(np.isfinite(faces)):
        raise ValueError(f"velocity component {'xy'[axis]} is not finite on every face")
    return faces


def face_velocities(grid, velocity, boundary):
    """The normal velocity on the faces as host arrays: x faces (nx + 1,) in 1D, (nx + 1, ny)
    in 2D, and (2D only) y faces (nx, ny + 1). `velocity` has one component per axis (see
    _component_on_faces); `boundary` is {side: kind}."""
    kinds = parse_boundary(boundary, grid.ndim)
    if isinstance(velocity, (int, float)) or callable(velocity) or len(velocity) != grid.ndim:
        raise ValueError(f"velocity must have {grid.ndim} component"
                         f"{'s' if grid.ndim > 1 else ''} on a {grid.ndim}D grid")
    return tuple(_component_on_faces(grid, velocity[axis], axis, kinds[2 * axis:2 * axis + 2])
                 for axis in range(grid.ndim))


def _choice(name, value, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}, got '{value}'")
    return value


class AdvectionDiffusionSolver(TimeDependentSolver):
    """The state and fused stage kernels of one advection-diffusion problem; `step()` launches
    one time step.

    boundary: {side: kind} for sides x_lo, x_hi (and y_lo, y_hi in 2D), kind 'periodic' (on
    both sides of an axis), 'outflow' or 'wall'. velocity: one component per axis, each a
    number, a function of (x, y), or an array of face or cell values (see face_velocities).
    diffusivity: D >= 0.
    """

    name = "advection_diffusion"
    field_names = ("c",)

    def __init__(self, grid: StructuredGrid, boundary: dict, velocity,
                 diffusivity: float = 0.0, reconstruction: str = "muscl",
                 limiter: str = "van_leer", time_integrator: str = "ssp_rk2", cfl: float = 0.5,
                 backend: BackendLike = "auto", precision: str = "fp32") -> None:
        diffusivity = float(diffusivity)
        if not diffusivity >= 0 or not np.isfinite(diffusivity):
            raise ValueError(f"diffusivity must be a finite number >= 0, got {diffusivity}")
        self.mesh = self.grid = grid
        self.diffusivity = diffusivity
        self.stages = TIME_INTEGRATORS[_choice("time_integrator", time_integrator,
                                               TIME_INTEGRATORS)]
        defines = kernel_defines(grid.ndim, _choice("reconstruction", reconstruction,
                                                    RECONSTRUCTIONS),
                                 _choice("limiter", limiter, LIMITERS))
        self.scheme = {"reconstruction": reconstruction, "limiter": limiter,
                       "time_integrator": time_integrator, "cfl": cfl}
        kinds = parse_boundary(boundary, grid.ndim)
        faces = face_velocities(grid, velocity, boundary)
        self.face_velocity = faces  # host copies, in the grid's [i, j] order
        self._platform(backend, precision)

        # Device memory: two state buffers (the clock's parity names the one holding the
        # state) and a scratch stage, the face velocities (x faces of each row, then y faces
        # of each row of faces; 1D: zeros), one partial stability rate per rate block, and the
        # clock.
        b = self.backend
        nx, ny = grid.nx, grid.ny
        self.buffers = [b.zeros((ny, nx), self.dtype) for _ in range(3)]
        ax = faces[0].reshape(nx + 1, ny).T
        ay = faces[1].T if grid.ndim == 2 else np.zeros((2, nx))
        self.ax = b.to_device(np.ascontiguousarray(ax, dtype=self.dtype))
        self.ay = b.to_device(np.ascontiguousarray(ay, dtype=self.dtype))
        kernels = b.module(KERNELS, self.dtype, defines)
        partials = min(-(-grid.ncells // RATE_BLOCK), RATE_BLOCK)
        self.clock = DeviceClock(b, self.dtype, partials, cfl)

        # The stability rate of the fixed velocity (reduced here, once) and the stage kernels,
        # bound once to their arguments.
        inv_dx = 1.0 / grid.dx
        inv_dy = 1.0 / grid.dy if grid.ndim == 2 else 0.0
        diffusion_x = diffusivity * inv_dx ** 2
        diffusion_y = diffusivity * inv_dy ** 2
        self._rates = kernels.advection_diffusion_rates.bind(
            partials, RATE_BLOCK, self.ax, self.ay, self.clock.rates, nx, ny, inv_dx, inv_dy,
            2.0 * (diffusion_x + diffusion_y))
        self._rates()
        tile = TILE_SHAPES[grid.ndim]
        launch = (-(-nx // tile[0]), -(-ny // tile[1]))
        periodic = (int(kinds[0] == "periodic"), int(grid.ndim == 2 and kinds[2] == "periodic"))
        self._stages = [
            kernels.advection_diffusion_stage.bind(
                launch, tile, *self.buffers, self.clock.parity, src, dst, self.clock.dt,
                self.ax, self.ay, nx, ny, *periodic, inv_dx, inv_dy, diffusion_x, diffusion_y, w,
                self.clock.rates)  # a stage that makes a value non-finite sets an infinite rate
            for w, src, dst in self.stages]

    # -- state -----------------------------------------------------------------------------------
    def set_state(self, c, t=0.0):
        """Set c (an array of grid.shape or a number) at time t."""
        c = np.broadcast_to(np.asarray(c, np.float64), self.grid.shape)
        if not np.all(np.isfinite(c)):
            raise ValueError("initial c must be finite everywhere")
        state = c.reshape(self.grid.nx, self.grid.ny).T
        self.backend.write(self.buffers[0], np.ascontiguousarray(state, dtype=self.dtype))
        self.clock.set(t=t, steps=0, parity=0)
        self._rates()  # again: a diverged earlier run left an infinite rate

    def checkpoint_arrays(self):
        """The state buffer the clock's parity names (the velocities are the case's; the
        stability rate is the clock's)."""
        return {"c": self.buffers[self.clock.read().parity]}

    def state(self):
        """Host copy of c, shape grid.shape, float64."""
        buffer = self.buffers[self.clock.read().parity]
        c = self.backend.to_host(buffer).astype(np.float64)
        return c.T.reshape(self.grid.shape)

    def fields(self):
        return {"c": self.state()}

    def diagnostics(self):
        """The total of c (times the cell volume) and its extrema."""
        c = self.state()
        return {"total_c": float(c.sum() * self.grid.dx * self.grid.dy),
                "min_c": float(c.min()), "max_c": float(c.max())}

    # -- time stepping -----------------------------------------------------------------------
    def step(self):
        """Launch one time step: dt on the device, then the fused Runge-Kutta stages."""
        self.clock.finish_dt()
        for stage in self._stages:
            stage()

    @property
    def bytes_per_cell(self):
        """Device memory a cell needs: two state buffers and a scratch stage, and about two
        face velocities."""
        return (len(self.buffers) + 2) * self.dtype.itemsize
