"""Incompressible Navier-Stokes equations (unit density) on a 3D staggered (MAC) grid:
u_t + div(u u) = -grad p + nu lap u + f, div u = 0.

The scheme of the 2D solver (solvers/fv/incompressible/solver.py), one launch per stage
(raw_kernels/fv/incompressible3d.cu, viscous3d.cu):
- momentum predictor u* = u^n + dt (a N^n + c N^{n-1}), N = -div(u u) + nu lap u + f,
  conservative central (or QUICK) fluxes, variable-dt Adams-Bashforth 2; or with implicit
  viscosity AB2 for advection and the viscous stage of incompressible/viscous.py (Crank-Nicolson
  or backward Euler, the three components' Helmholtz systems by CG in the step), with the
  pressure in incremental form;
- incremental pressure correction: A x = -div u* (A = -lap: Neumann at walls, slip and inflow,
  Dirichlet at outflow, periodic) from the guess x = dt p^n by CG with multigrid, looping on the
  device inside the step's graph; u^{n+1} = u* - grad x, p^{n+1} = x / dt;
- dt = cfl / (|u|/dx + |v|/dy + |w|/dz + cfl 4 nu sum 1/h^2 / DIFFUSION_LIMIT) on the device;
- per step on the device: a history row (t, dt, change rate, max |div u|, pressure iterations
  and status, kinetic energy per unit volume), and the steady-state test of the 2D solver.
On several MPI ranks (a decomposition) each rank holds one block of the grid, as the 2D
solver does (incompressible/block.py; implicit viscosity: incompressible/block_viscous.py).
"""

import numpy as np

from ...backend.clock import DeviceClock
from ...linalg.preconditioners import MULTIGRIDS
from ...mesh import StructuredGrid
from ...mesh.decomposition import Decomposition
from ...solver import BackendLike, TimeDependentSolver
from ..incompressible.block_viscous import block_viscous_stage
from ..incompressible.flow import ADVECTION, HISTORY_ROWS, MacFlow, check_options
from ..incompressible.pressure import distributed_pressure_solver, pressure_solver
from ..incompressible.viscous import THETA, FaceHelmholtz, ViscousStage
from .boundary import parse_boundaries
from .fields import cell_velocity, centreline_profiles

SOURCE = "fv/incompressible3d.cu"
VISCOUS_SOURCE = "fv/viscous3d.cu"
G = 2  # ghost layers
BLOCK = (32, 8, 1)  # threads of a face block (BX, BY, BZ); 256, a power of two; BZ = 1
# (the kernels' block reductions span x and y)
FILL_THREADS = 128
FINISH_THREADS = BLOCK[0] * BLOCK[1] * BLOCK[2]
HIST_COLUMNS = ("t", "dt", "change_rate", "max_divergence", "pressure_iterations",
                "pressure_status", "kinetic_energy", "viscous_iterations")
DIFFUSION_LIMIT = 0.8  # fraction of AB2's real-axis stability limit dt |lambda| <= 1
COMPONENTS = ("u", "v", "w")


def kernel_defines(advection, implicit):
    return {"ADVECTION": ADVECTION[advection], "IMPLICIT": int(bool(implicit)),
            **viscous_defines()}


def viscous_defines():
    return {"G": G, "BX": BLOCK[0], "BY": BLOCK[1], "BZ": BLOCK[2]}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    for advection in ADVECTION:
        for implicit in (False, True):
            yield SOURCE, kernel_defines(advection, implicit)
    yield VISCOUS_SOURCE, viscous_defines()


def _blocks(n, size):
    return -(-n // size)


class IncompressibleSolver3D(MacFlow, TimeDependentSolver):
    """The state and kernels of one incompressible flow on a 3D StructuredGrid; `step()`
    launches one time step (capturable: no host read, the pressure solve included).

    boundary            {side: spec} of the six sides, see boundary.py
    nu                  kinematic viscosity
    advection           'central' or 'quick'
    viscous             'explicit', 'implicit' (Crank-Nicolson) or 'backward_euler', as the 2D
                        solver: implicit ones leave dt to the advective CFL
    force               constant body force (fx, fy, fz)
    reference_velocity  U_ref of the steady test's and the pressure floor's scale (default: the
                        largest boundary speed, else 1); reference_length L_ref (default: the
                        domain height along y)
    pressure_*          as the 2D solver: preconditioner, relative tolerance, iteration cap and
                        the RMS divergence floor pressure_divergence U_ref / L_ref
    steady_tolerance    end the run when the change rate (1/s) drops below it (0: never)
    steady_window       simulated time over which the change rate is measured
    inflow_ramp         inflow profiles ramp up as (1 - cos(pi t / T)) / 2 over this time
    decomposition       this rank's share of a grid split over MPI ranks: the solver holds
                        its block, as the 2D solver's; None: the whole grid
    """

    name = "incompressible3d"
    history_columns = HIST_COLUMNS
    ghosts = G

    def __init__(self, grid: StructuredGrid, boundary: dict, nu: float,
                 advection: str = "central", viscous: str = "explicit", cfl: float = 0.5,
                 force=(0.0, 0.0, 0.0),
                 reference_velocity=None, reference_length=None,
                 pressure_preconditioner="multigrid", pressure_rtol=1e-6, pressure_maxiter=None,
                 pressure_divergence=1e-6, steady_tolerance=0.0, steady_window=None,
                 inflow_ramp=0.0, backend: BackendLike = "auto", precision: str = "fp32",
                 decomposition: Decomposition | None = None):
        if grid.ndim != 3:
            raise ValueError("the incompressible3d solver needs a 3D grid")
        check_options(nu, advection, viscous)
        self.implicit = viscous != "explicit"
        self.mesh = self.grid = grid
        self.nu = float(nu)
        self.boundaries = parse_boundaries(boundary, grid.shape)
        self._platform(backend, precision)
        self.parallel = self._block(decomposition)
        self.force = tuple(float(f) for f in force)
        speed = self.boundaries.max_speed()
        self.reference_velocity = float(reference_velocity or speed or 1.0)
        self.reference_length = float(reference_length or (grid.y[1] - grid.y[0]))
        self.steady_tolerance = float(steady_tolerance)
        self.steady_window = float(steady_window or
                                   0.1 * self.reference_length / self.reference_velocity)
        self.scheme = {"advection": advection, "viscous": viscous, "cfl": cfl,
                       "time": "adams_bashforth2", "projection": "incremental",
                       "pressure": pressure_preconditioner, "pressure_rtol": pressure_rtol}
        # The block's cells and boundary table (a decomposed grid's, its halo sides' codes).
        n = grid.shape if self.parallel is None else self.parallel.block.shape
        self.block_sides = ((self.boundaries, self.boundaries.codes) if self.parallel is None
                            else (self.parallel.boundaries, self.parallel.codes))
        self.spacing = (grid.dx, grid.dy, grid.dz)
        b, dtype = self.backend, self.dtype

        # Device state per component: face velocity with ghosts, prediction, last N, reference.
        self.face_shapes = [tuple(n[d] + 2 * G + (d == a) for d in (2, 1, 0)) for a in range(3)]
        self.q, self.q_star, self.n_old, self.q_ref = (
            [b.zeros(shape, dtype) for shape in self.face_shapes] for _ in range(4))
        self.refresh = b.zeros((1,), np.int32)
        self.p = b.zeros((int(np.prod(n)),), dtype)
        self.inflow = [b.to_device(self.block_sides[0].inflow_of_axis(a).astype(dtype))
                       for a in range(3)]
        self.scale = b.zeros((1,), dtype)

        # The pressure solve: its vectors b and x are the right-hand side and the solution.
        maxiter = pressure_maxiter or (200 if pressure_preconditioner in MULTIGRIDS
                                       else 20 * max(n))
        self.pressure_atol = float(pressure_divergence * self.reference_velocity
                                   / self.reference_length * np.sqrt(grid.ncells))
        arguments = (grid.shape, self.spacing, self.boundaries.pressure_kinds,
                     pressure_preconditioner, pressure_rtol, maxiter, b, precision,
                     self.pressure_atol)
        self.pressure, self.pressure_method = (
            pressure_solver(*arguments) if self.parallel is None else
            distributed_pressure_solver(self.parallel, *arguments))

        # Reductions: per face block, then one block; the clock's dt from the rates.
        self.face_grid = tuple(_blocks(n[d] + 1, BLOCK[d]) for d in range(3))
        blocks = int(np.prod(self.face_grid))
        self.clock = DeviceClock(b, dtype, blocks, cfl)
        self.partials = b.zeros((4 * blocks,), dtype)
        self.diag = b.zeros((8,), np.float64)
        self.dt_prev = b.zeros((1,), dtype)
        self._zeroed = (*self.n_old, self.dt_prev, self.refresh)
        self.history = b.zeros((HISTORY_ROWS * len(HIST_COLUMNS),), np.float64)
        inv = tuple(1.0 / h for h in self.spacing)
        # Implicit viscosity: no diffusion limit, and U_ref bounds dt before the flow moves.
        self.diffusion_rate = 0.0 if self.implicit else \
            cfl * 4 * self.nu * sum(i**2 for i in inv) / DIFFUSION_LIMIT
        self.rate_floor = (max(speed, self.reference_velocity) if self.implicit
                           else speed) * sum(inv)
        self.viscous = self._viscous_stage(viscous, n) if self.implicit else None
        self._bind(b.module(SOURCE, dtype, kernel_defines(advection, self.implicit)), n, blocks,
                   inv, float(inflow_ramp))
        self.set_state(*(np.zeros(shape[::-1]) for shape in self.face_shapes_interior()))

    def _viscous_stage(self, viscous, n):
        """The implicit viscous stage on n cells (a decomposed grid's: block_viscous.py, and
        the parts of its solve) and its launch u* = u^n + d."""
        module = self.backend.module(VISCOUS_SOURCE, self.dtype, viscous_defines())
        codes, theta_nu = self.block_sides[1], THETA[viscous] * self.nu
        launch = (self.face_grid, BLOCK)
        self._viscous_parts = []
        if self.parallel is None:
            operator = FaceHelmholtz(n, self.spacing, codes, theta_nu, self.clock.dt,
                                     module.viscous_helmholtz, launch, self.backend, self.dtype)
            stage = ViscousStage(operator, self.reference_velocity)
        else:
            stage, self._viscous_parts = block_viscous_stage(
                self.parallel, theta_nu, self.clock.dt, module, self.face_shapes,
                self.reference_velocity, self.backend, self.dtype, launch)
        self._increment = module.ins3_viscous_increment.bind(
            self.face_grid, BLOCK, *self.q_star, *self.q, stage.x, *n, *codes)
        return stage

    def _bind(self, k, n, blocks, inv, ramp):
        """The launches of one step on n cells (the block's of a decomposed grid)."""
        codes, walls = self.block_sides[1], self.block_sides[0].wall_speeds
        solver, q, q_star = self.pressure, self.q, self.q_star
        self._scale = k.ins_boundary_scale.bind(1, 1, self.clock.ctrl, self.scale, ramp)
        self._fill = {fix: [k.ins3_boundary.bind(
            _blocks((n[b] + 1 + 2 * G) * (n[c] + 1 + 2 * G), FILL_THREADS), FILL_THREADS, *q,
            *n, a, codes[2 * a], codes[2 * a + 1], *walls[2 * a], *walls[2 * a + 1],
            self.inflow[a], self.scale, fix)
            for a, (b, c) in ((0, (1, 2)), (1, (0, 2)), (2, (0, 1)))] for fix in (0, 1)}
        rhs = self.viscous.b if self.implicit else self.dt_prev  # (unused when explicit)
        # p^n as the implicit predictor reads it (a decomposed grid's: padded, its halo swapped).
        p_source, p_halo = (self.p, 0, n[0], n[0] * n[1]), []
        if self.parallel is not None and self.implicit:
            p_halo, padded_p, first, strides = self.parallel.cell_halo(solver, self.p)
            p_source = (padded_p, first, *strides)
        self._predict = k.ins3_predict.bind(
            self.face_grid, BLOCK, *q, *q_star, *self.n_old, *p_source, self.clock.dt,
            self.dt_prev, rhs, *n, *inv, self.nu, *self.force, *codes)
        self._divergence = k.ins3_divergence.bind(
            tuple(_blocks(n[d], BLOCK[d]) for d in range(3)), BLOCK, *q_star, self.p,
            self.clock.dt, solver.b, solver.x, *n, *inv)
        # The solution x as the correction reads it (a decomposed grid's: padded, its halo
        # swapped, after the solve's parts), and the step's maxima (every block's).
        x, solve, maxima = (solver.x, 0, n[0], n[0] * n[1]), [], (self.partials, blocks)
        if self.parallel is not None:
            solve, padded, first, strides = self.parallel.pressure_parts(solver)
            x = (padded, first, *strides)
            reduce, largest = self.parallel.maxima(self.clock.rates, self.partials, sums=1)
            maxima = (largest, 1)
        self._correct = k.ins3_correct.bind(
            self.face_grid, BLOCK, *q, *q_star, *x, self.p, self.clock.dt, *n, *inv,
            *codes, self.diffusion_rate, self.rate_floor, 1.0 / self.grid.ncells,
            self.clock.rates, self.partials, *self.q_ref, self.refresh)
        viscous = self.viscous.solver if self.implicit else solver  # (unused if explicit)
        self._finish = k.ins3_finish.bind(
            1, FINISH_THREADS, *maxima, self.clock.ctrl, solver.state,
            solver.done, viscous.state, viscous.done, self.diag, self.dt_prev, self.history,
            HISTORY_ROWS, self.steady_tolerance, self.steady_window, self.refresh)
        if self.parallel is not None:
            viscous = [*self._viscous_parts, self._increment] if self.implicit else []
            self._parts = self._decomposed_parts(q, solve, reduce, p_halo, viscous)

    # -- geometry ------------------------------------------------------------------------------
    def face_shapes_interior(self):
        """Face counts [i, j, k] of u, v, w: (nx + 1, ny, nz), (nx, ny + 1, nz), (nx, ny,
        nz + 1), reversed to the device's (k, j, i) order."""
        n = self.grid.shape
        return [tuple(n[d] + (d == a) for d in (2, 1, 0)) for a in range(3)]

    def face_coordinates(self):
        """For u, v, w: (x, y, z) of its faces, each of shape [i, j, k]."""
        g = self.grid
        nodes, centres = g.axis_nodes(), [g.x_centres(), g.y_centres(), g.z_centres()]
        return tuple(tuple(np.meshgrid(*[nodes[d] if d == a else centres[d] for d in range(3)],
                                       indexing="ij")) for a in range(3))

    # -- state ---------------------------------------------------------------------------------
    def set_state(self, u, v, w, p=0.0, t=0.0):
        """Set the face velocities ([i, j, k]: u (nx + 1, ny, nz), v (nx, ny + 1, nz), w (nx,
        ny, nz + 1)), the cell pressure and the time, all of the whole grid; boundary faces
        then take their boundary values."""
        q = [np.asarray(value) for value in (u, v, w)]
        for a, value in enumerate(q):
            shape = self.face_shapes_interior()[a][::-1]
            if value.shape != shape:
                raise ValueError(f"{COMPONENTS[a]} must have shape {shape} (faces), got "
                                 f"{value.shape}")
        pressure = np.broadcast_to(np.asarray(p, np.float64), self.grid.shape)
        if self.parallel is not None:
            q, pressure = self.parallel.scatter(q, pressure)
        self._gathered = None
        for a, value in enumerate(q):
            padded = np.zeros(self.face_shapes[a])
            padded[G:-G, G:-G, G:-G] = value.T
            self.backend.write(self.q[a], padded.astype(self.dtype))
        self.backend.write(self.p, pressure.T.ravel().astype(self.dtype))
        self._start_records(t, zip(self.q, self.q_ref))
        rate = max(sum(np.abs(q).max() / h for q, h in zip(self.face_velocities(),
                                                           self.spacing)), self.rate_floor)
        rates = np.zeros(self.clock.partials)
        rates[0] = rate + self.diffusion_rate
        self.backend.write(self.clock.rates, rates.astype(self.dtype))

    def face_velocities(self):
        """Host copies (u, v, w) of the face velocities of the whole grid, [i, j, k], float64
        (a decomposed grid's gathered from every block: collective)."""
        return tuple(q[G:-G, G:-G, G:-G].T for q in self._host_state_of(self.q)[:3])

    def pressure_field(self):
        """Cell pressure [i, j, k]; with no outflow side its mean is 0."""
        p = self._host_state_of(self.q)[3].T
        return p - p.mean() if self.boundaries.closed else p

    field_names = ("u", "v", "w", "velocity", "p")

    def fields(self):
        """Host copies of the cell-centred u, v, w, velocity (u, v, w) as one vector field
        (ParaView's glyphs and streamlines) and p."""
        u, v, w = cell_velocity(*self.face_velocities())
        return {"u": u, "v": v, "w": w, "velocity": np.stack([u, v, w], axis=-1),
                "p": self.pressure_field()}

    # -- diagnostics, read between replays -----------------------------------------------------
    def checkpoint_arrays(self):
        """Velocities and pressure, the AB2 history (last N and dt), the steady window (its
        reference, refresh flag and diag) and the history rows not yet read."""
        arrays = {"p": self.p, "dt_prev": self.dt_prev, "refresh": self.refresh,
                  "diag": self.diag, "history": self.history}
        for name, q, n_old, q_ref in zip(COMPONENTS, self.q, self.n_old, self.q_ref):
            arrays.update({name: q, f"n_{name}_old": n_old, f"{name}_ref": q_ref})
        return {**arrays, **self._viscous_arrays()}

    def datasets(self):
        """The per-step series and the centreline profiles: {group: {name: array}}."""
        self.observe()
        profiles = {name: np.stack([coords, values], axis=1) for name, (coords, values)
                    in centreline_profiles(self.grid, *self.face_velocities()).items()}
        return {"series": {name: np.array(values) for name, values in self.series.items()},
                "profiles": profiles}

    def diagnostics(self):
        """Integral diagnostics for sweeps and logs."""
        self.observe()
        last = {name: values[-1] if values else 0.0 for name, values in self.series.items()}
        return {"kinetic_energy": last["kinetic_energy"],
                "max_divergence": last["max_divergence"], **self.pressure_report()}
