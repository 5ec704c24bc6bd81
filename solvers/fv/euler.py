"""Compressible Euler equations of an ideal gas, finite volumes on a structured 1D, 2D or 3D
grid.

MUSCL reconstruction of primitive variables (minmod, van Leer or MC limiter) or first order,
Rusanov or HLLC fluxes, SSP-RK2 or SSP-RK3 or MUSCL-Hancock in time, dt from the CFL number on
the device. Each Runge-Kutta stage is one fused kernel (raw_kernels/fv/euler.cu, or
euler_tile.cu for small 2D grids on the GPU) that reads each conserved variable once and writes
it once. A MUSCL-Hancock step is one kernel (euler_hancock.cu, or euler_hancock_tile.cu for
small 2D grids on the GPU) that also advances the clock,
stable up to cfl = 1 with dt = cfl / max((|vx|+c)/dx + (|vy|+c)/dy (+ (|vz|+c)/dz)).
"""

import math

import numpy as np

from ..backend.clock import RATE_BLOCK, DeviceClock
from ..backend.stepper import HostWork
from ..mesh import StructuredGrid
from ..mesh.decomposition import Decomposition
from ..solver import BackendLike, TimeDependentSolver
from .euler_fields import VELOCITIES, primitive, state_figures, to_buffer, to_cells
from .euler_halo import EulerBlock
from .sides import SIDES_3D, BoundaryError, check_periodic_pairs, specs_by_side

RECONSTRUCTIONS = {"first_order": 1, "muscl": 2}
LIMITERS = {"minmod": 1, "van_leer": 2, "mc": 3}
RIEMANN_SOLVERS = {"rusanov": 1, "hllc": 2}
BOUNDARY_KINDS = {"periodic": 0, "transmissive": 1, "reflective": 2, "inflow": 3}
INFLOW_KEYS = ("rho", "vx", "vy", "vz", "p")  # an inflow state per side (INFLOW_VARS there)

# Shu-Osher SSP Runge-Kutta schemes. Each stage: out = (1 - w) U^n + w (u + dt L(u)), where
# u is the previous stage. (w, u, out) with buffers by role (ROLE_* of euler_scheme.h): U^n, the
# buffer U^(n+1) goes to, scratch. The state alternates between two buffers, so that no stage
# writes what it reads.
OLD, NEW, SCRATCH = 0, 1, 2
# hancock has no stages: a half-step predictor of the face states, then one update.
TIME_INTEGRATORS = {
    "ssp_rk2": ((1.0, OLD, SCRATCH), (0.5, SCRATCH, NEW)),
    "ssp_rk3": ((1.0, OLD, NEW), (0.25, NEW, SCRATCH), (2.0 / 3.0, SCRATCH, NEW)),
    "hancock": (),
}

MARCH_SOURCE, TILE_SOURCE = "fv/euler.cu", "fv/euler_tile.cu"
HANCOCK_SOURCE, HANCOCK_TILE_SOURCE = "fv/euler_hancock.cu", "fv/euler_hancock_tile.cu"

# A stage block marches up a strip of MARCH_WIDTH columns (passed to euler.cu as MARCH_W), one
# thread per column, updating all but two halo columns on each side.
MARCH_WIDTH = 128
MARCH_CELLS = MARCH_WIDTH - 4
MAX_MARCH_ROWS = 64
HOST_MARCH_ROWS = 16


def march_rows(nx, ny, backend_name="cuda"):
    """Rows a stage block marches over. Tall strips share the two halo rows at each end among
    more cells; short ones leave less of a GPU idle while a kernel's last blocks finish. The
    balance moves with the square root of the grid's count of single-row strips, hence
    round(sqrt(strips / 200)) rows (measurements: docs/euler_performance.md). The host runs a
    block's threads one after another and has no idle tail to shorten; there one fixed,
    moderate height (HOST_MARCH_ROWS) serves every grid, as taller strips gain nothing."""
    if backend_name != "cuda":
        return HOST_MARCH_ROWS
    strips = -(-nx // MARCH_CELLS) * ny
    return max(1, min(MAX_MARCH_ROWS, round(math.sqrt(strips / 200))))


# Small 2D grids on the GPU: a stage block of TILE_SHAPE threads, one cell each
# (euler_tile.cu), updates all its rows at once instead of marching up a strip, whose chain of
# rows is the latency there. On larger grids the march, which loads and reconstructs each cell
# once, is the faster (where they cross: docs/euler_performance.md); hence TILE_MAX_CELLS.
# The host runs the march (the same bits; the tile does more work a cell).
TILE_SHAPE = (32, 8)
TILE_MAX_CELLS = 768 * 768
# A MUSCL-Hancock tile block (euler_hancock_tile.cu) updates all but its edge rows and columns;
# taller than TILE_SHAPE, to lose fewer of its threads to them (shapes compared:
# docs/euler_performance.md).
HANCOCK_TILE_SHAPE = (32, 12)


def march_reach(axis, b, rows):
    """The first and last cell along `axis` that march block b (its index along the axis)
    reads: its strip and two cells beyond each end."""
    cells = (MARCH_CELLS, rows, 1)[axis]
    return b * cells - 2, (b + 1) * cells + 1


def uses_tile(grid, backend_name="cuda"):
    """Whether the stage kernels of this grid are the tile (else the march)."""
    return backend_name == "cuda" and grid.ndim == 2 and grid.nx * grid.ny <= TILE_MAX_CELLS


def scheme_defines(ndim, reconstruction, limiter, riemann):
    """The scheme's defines (euler_scheme.h), the same for every Euler source. First order
    compiles with the minmod limiter, which it does not use."""
    if reconstruction == "first_order":
        limiter = "minmod"
    return {"DIM": ndim, "RECONSTRUCTION": RECONSTRUCTIONS[reconstruction],
            "LIMITER": LIMITERS[limiter], "RIEMANN": RIEMANN_SOLVERS[riemann]}


def kernel_defines(source, ndim, reconstruction, limiter, riemann, halos=False):
    """The defines of `source` (MARCH_SOURCE, TILE_SOURCE or HANCOCK_SOURCE) for a scheme: the
    scheme's and the launch constants the source sizes its blocks and shared memory by; with
    halos (the march of a decomposed grid's block), HALOS."""
    launch = {MARCH_SOURCE: {"MARCH_W": MARCH_WIDTH, "RATE_THREADS": RATE_BLOCK},
              TILE_SOURCE: {"TILE_X": TILE_SHAPE[0], "TILE_Y": TILE_SHAPE[1]},
              HANCOCK_SOURCE: {"MARCH_W": MARCH_WIDTH},
              HANCOCK_TILE_SOURCE: {"TILE_X": HANCOCK_TILE_SHAPE[0],
                                    "TILE_Y": HANCOCK_TILE_SHAPE[1]}}[source]
    return {**scheme_defines(ndim, reconstruction, limiter, riemann), **launch,
            **({"HALOS": 1} if halos else {})}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside): the march and the
    MUSCL-Hancock step in 1D, 2D and 3D, their tiles in 2D, for every scheme; the march with
    halos for every scheme in 2D and the default (MUSCL, MC) in 1D and 3D (the halos are the
    neighbour loads, the same code in every scheme)."""
    schemes = [("first_order", "minmod")] + [("muscl", limiter) for limiter in LIMITERS]
    for ndim in (1, 2, 3):
        sources = (MARCH_SOURCE, HANCOCK_SOURCE)
        if ndim == 2:
            sources += (TILE_SOURCE, HANCOCK_TILE_SOURCE)
        for source in sources:
            for riemann in RIEMANN_SOLVERS:
                for reconstruction, limiter in schemes:
                    yield source, kernel_defines(source, ndim, reconstruction, limiter, riemann)
                    if source == MARCH_SOURCE and (ndim == 2 or limiter == "mc"):
                        yield source, kernel_defines(source, ndim, reconstruction, limiter,
                                                     riemann, halos=True)


def parse_boundary(boundary, ndim):
    """{side: spec} -> (kind code of x_lo, x_hi, y_lo, y_hi, z_lo, z_hi; their inflow states,
    INFLOW_KEYS of each, 30 numbers).

    A spec is 'periodic' (on both sides of an axis), 'transmissive', 'reflective', or
    {'inflow': {'rho':, 'vx':, 'vy':, 'vz':, 'p':}} (rho and p required, velocities default to
    0; the grid's axes only)."""
    kinds = [BOUNDARY_KINDS["periodic"]] * len(SIDES_3D)
    inflow = np.zeros((len(SIDES_3D), len(INFLOW_KEYS)))
    keys = ("rho", *VELOCITIES[:ndim], "p")
    wanted = "{inflow = {" + ", ".join(f"{k} = .." for k in keys) + "}}"
    for index, (side, spec) in enumerate(specs_by_side(boundary, ndim)):
        if isinstance(spec, dict):
            state = spec.get("inflow")
            if (set(spec) != {"inflow"} or not isinstance(state, dict)
                    or not set(state) <= set(keys) or not {"rho", "p"} <= set(state)
                    or not all(isinstance(v, (int, float)) and np.isfinite(v)
                               for v in state.values())):
                raise BoundaryError(side, f"expected {wanted} with rho and p, got {spec!r}")
            inflow[index] = [state.get(k, 0.0) for k in INFLOW_KEYS]
            if not (state["rho"] > 0 and state["p"] > 0):
                raise BoundaryError(side, "inflow rho and p must be > 0")
        elif isinstance(spec, str) and spec in BOUNDARY_KINDS and spec != "inflow":
            kinds[index] = BOUNDARY_KINDS[spec]
            continue
        else:
            raise BoundaryError(side, "expected periodic, transmissive, reflective or "
                                f"{{inflow = {{{', '.join(keys)}}}}}, got {spec!r}")
        kinds[index] = BOUNDARY_KINDS["inflow"]
    check_periodic_pairs([kind == BOUNDARY_KINDS["periodic"] for kind in kinds[:2 * ndim]])
    return kinds, inflow.ravel()


def _choice(name, value, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}, got '{value}'")
    return value


class EulerSolver(TimeDependentSolver):
    """The state and fused kernels of one Euler problem; `step()` launches one time step.

    boundary: {side: kind} for sides x_lo, x_hi (and y_lo, y_hi in 2D and 3D, z_lo, z_hi in
    3D), kind 'periodic', 'transmissive', 'reflective' or {'inflow': {'rho':, 'vx':, ..., 'p':}}.
    decomposition: this rank's share of a grid split over MPI ranks (Runge-Kutta only): the
    solver holds its block, exchanges halos before each stage and gathers the whole grid's
    fields; None: the whole grid.
    """

    name = "euler"
    decomposed_checkpoints = True  # checkpoint() gathers a decomposed grid's whole state

    def __init__(self, grid: StructuredGrid, boundary: dict, gamma: float = 1.4,
                 reconstruction: str = "muscl", limiter: str = "mc", riemann: str = "hllc",
                 time_integrator: str = "ssp_rk3", cfl: float = 0.5,
                 backend: BackendLike = "auto", precision: str = "fp32",
                 decomposition: Decomposition | None = None) -> None:
        if not gamma > 1:
            raise ValueError(f"gamma must be > 1, got {gamma}")
        self.mesh = self.grid = grid
        self.gamma = float(gamma)
        self._platform(backend, precision)
        self.nvar = grid.ndim + 2
        self.stages = TIME_INTEGRATORS[_choice("time_integrator", time_integrator,
                                               TIME_INTEGRATORS)]
        hancock = time_integrator == "hancock"
        scheme = (grid.ndim, _choice("reconstruction", reconstruction, RECONSTRUCTIONS),
                  _choice("limiter", limiter, LIMITERS),
                  _choice("riemann", riemann, RIEMANN_SOLVERS))
        self.scheme = {"reconstruction": reconstruction, "limiter": limiter, "riemann": riemann,
                       "time_integrator": time_integrator, "cfl": cfl}
        bc_kinds, inflow = parse_boundary(boundary, grid.ndim)
        if decomposition is not None and hancock:
            raise ValueError("a decomposed grid needs a Runge-Kutta time_integrator (ssp_rk2 "
                             "or ssp_rk3), not hancock")

        # A decomposed grid: this rank's block, whose sides between blocks read halos.
        b = self.backend
        self.parallel = None
        if decomposition is not None:
            self.parallel = EulerBlock(decomposition, grid, bc_kinds, self.nvar, b, self.dtype)
            bc_kinds = self.parallel.kinds
        self.local = grid if self.parallel is None else self.parallel.local
        self._gathered = None  # (clock reading, the whole grid's state) of a decomposed grid

        # Device memory: two state buffers (the clock's parity names the one holding the state)
        # and, for Runge-Kutta, a scratch stage (48 bytes a cell for 2D fp32), the inflow
        # states, one partial stability rate per stage block, and the clock.
        grid = self.local
        shape = (self.nvar, *([grid.nz] if grid.ndim == 3 else []), grid.ny, grid.nx)
        self.buffers = [b.zeros(shape, self.dtype) for _ in range(2 if hancock else 3)]
        self.inflow = b.to_device(inflow.astype(self.dtype))
        self.halos = b.zeros((1,), self.dtype) if self.parallel is None else self.parallel.halos
        halos = self.parallel is not None
        kernels = b.module(MARCH_SOURCE, self.dtype,
                           kernel_defines(MARCH_SOURCE, *scheme, halos=halos))
        tile = uses_tile(grid, b.name) and not halos
        if tile:
            block = HANCOCK_TILE_SHAPE if hancock else TILE_SHAPE
            rows = ()
            launch = tuple(-(-n // (t - (2 if hancock else 1)))
                           for n, t in zip((grid.nx, grid.ny), block))
        else:
            block = MARCH_WIDTH
            rows = (march_rows(grid.nx, grid.ny * grid.nz, b.name),)
            launch = (-(-grid.nx // MARCH_CELLS), -(-grid.ny // rows[0]), grid.nz)
        self.clock = DeviceClock(b, self.dtype, math.prod(launch), cfl)
        # The tiles (2D) take no z arguments; the marches take them in every dimension.
        inv_dx, inv_dy, inv_dz = 1.0 / grid.dx, 1.0 / grid.dy, 1.0 / grid.dz
        if tile:
            sizes, sides, spacings = (grid.nx, grid.ny), bc_kinds[:4], (inv_dx, inv_dy)
        else:
            sizes, sides, spacings = (grid.nx, grid.ny, grid.nz, *rows), bc_kinds, (
                inv_dx, inv_dy, inv_dz)
        gas = (self.gamma, 1.0 / (self.gamma - 1.0))

        # A step's launches. MUSCL-Hancock: one kernel, which takes dt from the clock and
        # advances it (one-launch steps, raw_kernels/core/clock.h).
        if hancock:
            source = HANCOCK_TILE_SOURCE if tile else HANCOCK_SOURCE
            step = getattr(b.module(source, self.dtype, kernel_defines(source, *scheme)),
                           "euler_hancock_tile" if tile else "euler_hancock")
            self._launches = [step.bind(
                launch, block, *self.buffers, self.clock.parity, self.clock.ctrl,
                self.clock.rates, self.clock.tickets, self.inflow, *sizes, *sides, *spacings,
                *gas, cfl)]
        # Runge-Kutta: the step's dt (finish_dt), then its stages; the last stage also leaves
        # the stability rates of the new state for the next step's dt (one partial per stage
        # block).
        else:
            if tile:
                stage = b.module(TILE_SOURCE, self.dtype,
                                 kernel_defines(TILE_SOURCE, *scheme)).euler_stage_tile
                inputs = (self.inflow,)
            else:
                stage, inputs = kernels.euler_stage, (self.inflow, self.halos)
            last = len(self.stages) - 1

            # Stage k over the launch's blocks from `first`, `count` of them along each axis
            # (the march's take their offset in the whole launch).
            def bind_stage(k, first=(0, 0, 0), count=launch):
                w, src, dst = self.stages[k]
                march = () if tile else (*first, launch[0], launch[1])
                return stage.bind(count, block, *self.buffers, self.clock.parity, src, dst,
                                  self.clock.dt, *inputs, self.clock.rates, *sizes, *sides,
                                  *spacings, *gas, w, int(k == last), *march)
            self._launches = [self.clock.finish_dt] + [bind_stage(k) for k in range(last + 1)]
        self._parts = self._launches if self.parallel is None else self.parallel.step_parts(
            self.clock, self.buffers, self.stages, self._launches[0], bind_stage, launch,
            lambda axis, b: march_reach(axis, b, rows[0]))
        # The rate kernel (the first dt of a state set from the host) reads buffer 0, where
        # set_conserved puts a state.
        self._rate = kernels.euler_max_rate.bind(
            self.clock.partials, RATE_BLOCK, self.buffers[0], self.clock.rates, grid.nx, grid.ny,
            grid.nz, inv_dx, inv_dy, inv_dz, self.gamma)

    # -- state -----------------------------------------------------------------------------------
    @property
    def field_names(self):
        return ("rho", *VELOCITIES[:self.grid.ndim], "p")

    def set_primitive(self, rho, vx, p, vy=0.0, t=0.0, vz=0.0):
        """Set the state from primitive fields (arrays of grid.shape or scalars), at time t."""
        shape = self.grid.shape
        rho, vx, vy, vz, p = (np.broadcast_to(np.asarray(f, np.float64), shape)
                              for f in (rho, vx, vy, vz, p))
        if not (np.all(rho > 0) and np.all(p > 0)):
            raise ValueError("initial rho and p must be > 0 everywhere")
        for axis, (name, v) in enumerate(zip(VELOCITIES, (vx, vy, vz))):
            if axis >= self.grid.ndim and np.any(v != 0):
                raise ValueError(f"a {self.grid.ndim}D grid has no {name[1]} velocity")
        energy = p / (self.gamma - 1) + 0.5 * rho * (vx**2 + vy**2 + vz**2)
        momentum = [rho * v for v in (vx, vy, vz)[:self.grid.ndim]]
        conserved = np.stack([rho, *momentum, energy])
        self.set_conserved(conserved, t)

    def set_conserved(self, conserved, t=0.0):
        """Set the state from conserved variables of shape (nvar, *grid.shape)."""
        shape = (self.nvar, *self.grid.shape)
        if np.shape(conserved) != shape:
            raise ValueError(f"conserved state must have shape {shape}, got {np.shape(conserved)}")
        conserved = np.asarray(conserved, np.float64)
        if self.parallel is not None:
            conserved = self.parallel.scatter(conserved)
        self._gathered = None
        self.backend.write(self.buffers[0], to_buffer(conserved, self.local).astype(self.dtype))
        self.clock.set(t=t, steps=0, parity=0)
        self._rate()
        if not self.stages:  # the step kernel takes its dt from the clock
            self.clock.next_dt()

    def checkpoint_arrays(self):
        """The state buffer the clock's parity names (the others are written before they are
        read in every step)."""
        return {"conserved": self.buffers[self.clock.read().parity]}

    def checkpoint(self):
        """On a decomposed grid (collective) the whole grid's state, as one rank stores it: a
        run on any number of ranks restarts from it."""
        arrays = super().checkpoint()
        return arrays if self.parallel is None else self.parallel.whole_checkpoint(arrays)

    def restore(self, arrays):
        super().restore(arrays if self.parallel is None else
                        self.parallel.block_checkpoint(arrays))

    def conserved(self):
        """Host copy of the conserved variables, shape (nvar, *grid.shape), float64. On a
        decomposed grid rank 0 gathers the whole grid's and the other ranks get None
        (collective: all ranks call it together; kept until the state changes)."""
        reading = self.clock.read()
        if self.parallel is not None and self._gathered and self._gathered[0] == reading:
            return self._gathered[1]
        state = self.backend.to_host(self.buffers[reading.parity]).astype(np.float64)
        cells = to_cells(state, self.local)
        if self.parallel is not None:
            cells = self.parallel.gather(cells)
            self._gathered = (reading, cells)
        return cells

    def fields(self):
        """Host copies of the primitive fields {rho, vx, (vy, (vz,)) p}, each of grid.shape
        (none on the ranks of a decomposed grid but rank 0)."""
        u = self.conserved()
        return {} if u is None else primitive(u, self.gamma, self.field_names)

    def diagnostics(self):
        """Totals of the conserved variables and the minima of density and pressure."""
        u = self.conserved()
        return {} if u is None else state_figures(u, self.grid.cell_volume, self.fields())

    def diverged_message(self, t, steps):
        return (f"the solution became non-finite or non-physical (rho or p <= 0) at t={t:.6g} "
                f"after {steps} steps; try a smaller cfl or a more dissipative scheme")

    # -- time stepping -----------------------------------------------------------------------
    def step(self):
        """Launch one time step: dt on the device, then the fused Runge-Kutta stages; or the
        one MUSCL-Hancock kernel. A decomposed grid's step also exchanges halos (and may have
        host work between its launches: step_segments)."""
        for part in self._parts:
            part()

    def step_segments(self):
        """The step's parts where the host works between its launches (a decomposed grid's
        host-staged exchange), else None."""
        return self._parts if any(isinstance(p, HostWork) for p in self._parts) else None

    @property
    def bytes_per_cell(self):
        """Device memory a cell needs: two state buffers and, for Runge-Kutta, a scratch
        stage (the clock's few bytes aside)."""
        return len(self.buffers) * self.nvar * self.dtype.itemsize
