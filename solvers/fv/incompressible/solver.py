"""Incompressible Navier-Stokes equations (unit density) on a 2D staggered (MAC) grid:
u_t + div(u u) = -grad p + nu lap u + f, div u = 0.

Scheme (kernels in raw_kernels/fv/incompressible.cu and, for a body, fv/immersed.cu; one
launch each, in this order):
- Momentum predictor, one fused kernel: u* = u^n + dt (a N^n + c N^{n-1}), N = -div(u u) +
  nu lap u + f in conservative form, second-order Adams-Bashforth for advection and diffusion
  alike (variable-dt weights a = 1 + dt/(2 dt_old), c = -dt/(2 dt_old); forward Euler on the
  first step). The transported velocity at a flux point is the central mean ("central", second
  order, for cell Reynolds numbers |u| h / nu up to about 2) or QUICK's upwind-biased quadratic
  ("quick", third order, for high Reynolds numbers).
- Incremental pressure correction: A x = -div u* with A = -lap (Neumann at walls and inflow,
  Dirichlet p = 0 at outflow, periodic), solved from the initial guess x = dt p^n, then
  u^{n+1} = u* - grad x and p^{n+1} = x / dt. This is the incremental scheme (u* - dt grad p^n
  corrected by the increment) written in the total pressure: the first residual of the solve is
  exactly the incremental right-hand side, and its relative tolerance is measured against
  |div u*| rather than against the increment, which tends to zero at a steady state.
  The solve is conjugate gradients preconditioned by multigrid (solvers.linalg), looping on the
  device inside the step's graph.
- dt = cfl / (|u|/dx + |v|/dy + cfl * 4 nu (1/dx^2 + 1/dy^2) / DIFFUSION_LIMIT) on the device:
  the convective CFL and the AB2 diffusion limit dt 4 nu (1/dx^2 + 1/dy^2) <= 1, combined.
- A body (obstacle) is a sub-cell immersed boundary, one launch on the predicted velocity
  after the predictor and before the divergence, so that the projection follows it:
  interpolated direct forcing from the body's signed distance (Fadlun et al. 2000, Balaras
  2004; geometry in immersed.py, kernel in immersed.cu). The faces beside the cells whose
  centre is inside (body cells) are forced: next to the fluid, outside (forcing points) and
  inside (ghost points), to the velocity of a wall at rest extended through it from two image
  points along the normal (quadratic profiles); deeper inside to rest. What is forced is the
  incremental prediction u* - dt grad p^n, and the body cells' divergence is left out of the
  pressure solve, so the correction changes a forced face by the pressure increment only.
  The force on the body is the momentum the forcing removes per unit time, summed on the
  device every step (drag and lift coefficients 2 F / (U_ref^2 L_ref)).
- Steady state: the relative change of the velocity per unit time, max|u - u_ref| / ((t - t_ref)
  max|u|) over windows of `steady_window` simulated time (default 0.1 L_ref / U_ref; over one
  step, the pressure solve's tolerance would set a floor of about rtol / dt), is computed on the
  device; observe() reads it between replays and ends the run below the tolerance.
"""

import numpy as np

from ...backend.clock import DeviceClock
from ...linalg.preconditioners import MULTIGRIDS
from ...mesh import StructuredGrid
from ...mesh.decomposition import Decomposition
from ...solver import BackendLike, TimeDependentSolver
from .block_immersed import BlockForcing
from .block_viscous import block_viscous_stage
from .boundary import BoundaryError, parse_boundaries  # noqa: F401 (re-export)
from .distance import body_distance, face_coordinates
from .fields import centreline_profiles
from .flow import ADVECTION, HISTORY_ROWS, MacFlow, check_options
from .forcing import SOURCE as IMMERSED_SOURCE
from .forcing import ImmersedForcing
from .forcing import kernel_defines as immersed_defines
from .immersed import ImmersedBoundary
from .pressure import distributed_pressure_solver, pressure_solver
from .state import MacState
from .viscous import THETA, FaceHelmholtz, ViscousStage, packed_size

SOURCE = "fv/incompressible.cu"
VISCOUS_SOURCE = "fv/viscous.cu"
G = 2  # ghost layers (passed to the kernels as G)
BLOCK = (32, 8)  # threads of a face block (BX, BY of the kernels); 256, a power of two
FILL_THREADS = 128
FINISH_THREADS = BLOCK[0] * BLOCK[1]  # ins_finish's one block: its shared arrays hold BX * BY
HIST_COLUMNS = ("t", "dt", "force_x", "force_y", "change_rate", "max_divergence",
                "pressure_iterations", "pressure_status", "viscous_iterations")
DIFFUSION_LIMIT = 0.8  # fraction of AB2's real-axis stability limit dt |lambda| <= 1
VISCOUS_THREADS = 256  # threads of a viscous_helmholtz block (one thread a face)


def kernel_defines(advection, implicit):
    return {"ADVECTION": ADVECTION[advection], "IMPLICIT": int(bool(implicit)), "G": G,
            "BX": BLOCK[0], "BY": BLOCK[1]}


def viscous_defines():
    return {"G": G, "BX": BLOCK[0], "BY": BLOCK[1]}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    for advection in ADVECTION:
        for implicit in (False, True):
            yield SOURCE, kernel_defines(advection, implicit)
    yield VISCOUS_SOURCE, viscous_defines()
    for implicit in (False, True):
        for sampled in (False, True):  # one rank, a decomposed grid's block
            yield IMMERSED_SOURCE, immersed_defines(G, implicit, sampled)


def _blocks(n, size):
    return -(-n // size)


class IncompressibleSolver(MacFlow, MacState, TimeDependentSolver):
    """The state and kernels of one incompressible flow on a 2D StructuredGrid; `step()`
    launches one time step (capturable: no host read, the pressure solve included).

    boundary            {side: spec}, see solvers.fv.incompressible.solver.boundary
    nu                  kinematic viscosity (Re = U_ref L_ref / nu)
    advection           'central' or 'quick'
    viscous             'explicit' (AB2, dt within the diffusion limit), 'implicit'
                        (Crank-Nicolson) or 'backward_euler' (first order, for steady runs):
                        see viscous.py; dt then follows the advective CFL alone
    force               constant body force (fx, fy)
    obstacle            None or a function (x, y) -> bool array, true inside a body held at
                        rest (its signed distance then comes from a distance transform, see
                        distance.py)
    obstacle_distance   None or the body's signed distance, a function (x, y) -> array,
                        negative inside (with `obstacle` too, the two must agree)
    reference_velocity  U_ref of the force coefficients and the steady test's scale (default:
                        the largest boundary speed, else 1); reference_length L_ref (default:
                        the domain height)
    pressure_*          preconditioner ('multigrid', 'amg', 'jacobi' or 'none': see
                        solvers.linalg.preconditioners), relative tolerance, iteration
                        cap, and divergence: the solve also stops once the RMS divergence it
                        leaves is below pressure_divergence U_ref / L_ref
    steady_tolerance    end the run when the change rate (1/s) drops below it (0: never)
    steady_window       simulated time over which the change rate is measured
    inflow_ramp         inflow profiles ramp up as (1 - cos(pi t / T)) / 2 over this time
    decomposition       this rank's share of a grid split over MPI ranks: the solver holds
                        its block (block.py; a body's forcing: block_immersed.py),
                        exchanges halos between its launches and gathers the whole grid's
                        fields; None: the whole grid
    """

    name = "incompressible"
    history_columns = HIST_COLUMNS
    ghosts = G

    def __init__(self, grid: StructuredGrid, boundary: dict, nu: float,
                 advection: str = "central", viscous: str = "explicit", cfl: float = 0.5,
                 force=(0.0, 0.0), obstacle=None, obstacle_distance=None,
                 reference_velocity=None, reference_length=None,
                 pressure_preconditioner="multigrid", pressure_rtol=1e-6, pressure_maxiter=None,
                 pressure_divergence=1e-6,
                 steady_tolerance=0.0, steady_window=None, inflow_ramp=0.0,
                 backend: BackendLike = "auto", precision: str = "fp32",
                 decomposition: Decomposition | None = None) -> None:
        if grid.ndim != 2:
            raise ValueError("the incompressible solver needs a 2D grid")
        check_options(nu, advection, viscous)
        self.mesh = self.grid = grid
        self.nu = float(nu)
        self.boundaries = parse_boundaries(boundary, grid.nx, grid.ny)
        self._platform(backend, precision)
        self.parallel = self._block(decomposition)
        self.force = tuple(float(f) for f in force)
        speed = self.boundaries.max_speed()
        self.reference_velocity = float(reference_velocity or speed or 1.0)
        self.reference_length = float(reference_length or (grid.y[1] - grid.y[0]))
        for name in ("reference_velocity", "reference_length"):  # squares, inverses finite
            if not 1e-100 <= getattr(self, name) <= 1e100:
                raise ValueError(f"{name} must be in [1e-100, 1e100], got "
                                 f"{getattr(self, name):g}")
        self.steady_tolerance = float(steady_tolerance)
        self.steady_window = float(steady_window or
                                   0.1 * self.reference_length / self.reference_velocity)
        self.implicit = viscous != "explicit"
        self.scheme = {"advection": advection, "viscous": viscous, "cfl": cfl,
                       "time": "adams_bashforth2",
                       "projection": "incremental", "pressure": pressure_preconditioner,
                       "pressure_rtol": pressure_rtol}
        local = grid if self.parallel is None else self.parallel.local
        nx, ny = local.nx, local.ny
        b, dtype = self.backend, self.dtype
        codes, inflow = self.boundaries.codes, self.boundaries.inflow
        if self.parallel is not None:
            codes, inflow = self.parallel.codes, self.parallel.boundaries.inflow

        # Device state: face velocities with ghosts, their predictions and last N, pressure.
        self.u_shape, self.v_shape = (ny + 2 * G, nx + 1 + 2 * G), (ny + 1 + 2 * G, nx + 2 * G)
        self.u, self.us, self.nu_old, self.u_ref = (b.zeros(self.u_shape, dtype)
                                                    for _ in range(4))
        self.v, self.vs, self.nv_old, self.v_ref = (b.zeros(self.v_shape, dtype)
                                                    for _ in range(4))
        self.refresh = b.zeros((1,), np.int32)
        self.p = b.zeros((nx * ny,), dtype)
        self.inflow = b.to_device(inflow.astype(dtype))
        self.scale = b.zeros((1,), dtype)
        self.has_obstacle = obstacle is not None or obstacle_distance is not None

        # The pressure solve: its vectors b and x are the right-hand side and the solution.
        kinds = self.boundaries.pressure_kinds
        maxiter = pressure_maxiter or (200 if pressure_preconditioner in MULTIGRIDS
                                       else 20 * max(grid.shape))
        # An absolute floor under the relative tolerance, |r| <= atol: an RMS divergence of
        # pressure_divergence U_ref / L_ref over the cells. Without it a relative tolerance
        # below what the precision resolves (eps cond(A) for a smooth pressure) is never met,
        # and CG iterates in rounding noise until it breaks down.
        self.pressure_atol = float(pressure_divergence * self.reference_velocity
                                   / self.reference_length * np.sqrt(grid.ncells))
        arguments = (grid.shape, (grid.dx, grid.dy), kinds, pressure_preconditioner,
                     pressure_rtol, maxiter, b, precision, self.pressure_atol)
        self.pressure, self.pressure_method = (
            pressure_solver(*arguments) if self.parallel is None else
            distributed_pressure_solver(self.parallel, *arguments))

        # Reductions: per face block, then one block; the clock's dt from the rates.
        self.face_grid = (_blocks(nx + 1, BLOCK[0]), _blocks(ny + 1, BLOCK[1]))
        blocks = self.face_grid[0] * self.face_grid[1]
        self.clock = DeviceClock(b, dtype, blocks, cfl)
        self.partials = b.zeros((3 * blocks,), dtype)
        self.diag = b.zeros((8,), np.float64)
        self.dt_prev = b.zeros((1,), dtype)
        self._zeroed = (self.nu_old, self.nv_old, self.dt_prev, self.refresh)
        self.history = b.zeros((HISTORY_ROWS * len(HIST_COLUMNS),), np.float64)
        inv_dx, inv_dy = 1.0 / grid.dx, 1.0 / grid.dy
        self.diffusion_rate = 0.0 if self.implicit else \
            cfl * 4 * self.nu * (inv_dx**2 + inv_dy**2) / DIFFUSION_LIMIT
        # Implicit viscosity leaves no diffusion limit: the reference velocity bounds dt
        # before the flow moves (a start from rest driven by a body force).
        floor_speed = max(speed, self.reference_velocity) if self.implicit else speed
        self.rate_floor = floor_speed * (inv_dx + inv_dy)

        # p^n as the implicit predictor and a body's forcing read it (a decomposed grid's:
        # padded, its halo swapped).
        p_source, p_halo = (self.p, nx, 0), []
        if self.parallel is not None and (self.implicit or self.has_obstacle):
            p_halo, padded_p, first, (stride,) = self.parallel.cell_halo(self.pressure, self.p)
            p_source = (padded_p, stride, first)

        # The body's immersed boundary (a decomposed grid's: its block's, block_immersed.py):
        # its forcing (on u* after the viscous stage) and force partials.
        # Continuity holds in the fluid cells: all of them (of this rank's block), or those
        # outside the body.
        self.immersed = None
        self.fluid_cells = np.ones(local.shape, bool)
        if self.has_obstacle:
            fixed = [kind in ("wall", "slip", "inflow") for kind in self.boundaries.kinds]
            geometry = ImmersedBoundary(grid, body_distance(grid, obstacle, obstacle_distance),
                                        fixed)
            arguments = (b, dtype, geometry, self.us, self.vs)
            self.immersed = (
                ImmersedForcing(*arguments, self.p, self.clock.dt, G, self.implicit)
                if self.parallel is None else
                BlockForcing(self.parallel, *arguments, p_source, self.clock.dt, G,
                             self.implicit))
            self._forcing = self.immersed.parts
            self.fluid_cells = ~geometry.body_cells[self.immersed.window.slices]
        fluid = b.to_device(self.fluid_cells.T.ravel().astype(np.int32))
        force_partials, force_blocks = ((self.immersed.force_partials, self.immersed.blocks)
                                        if self.immersed else (b.zeros((2,), dtype), 0))

        k = b.module(SOURCE, dtype, kernel_defines(advection, self.implicit))
        walls = self.boundaries.wall_speeds
        self.viscous = self._viscous_stage(viscous, codes) if self.implicit else None
        rhs = self.viscous.b if self.implicit else self.dt_prev  # (unused when explicit)
        self._scale = k.ins_boundary_scale.bind(1, 1, self.clock.ctrl, self.scale,
                                                float(inflow_ramp))
        self._fill = {fix: [k.ins_boundary.bind(
            _blocks(lines + 1 + 2 * G, FILL_THREADS), FILL_THREADS, self.u, self.v, nx, ny, axis,
            codes[2 * axis], codes[2 * axis + 1], walls[2 * axis], walls[2 * axis + 1],
            self.inflow, self.scale, fix) for axis, lines in ((0, ny), (1, nx))]
            for fix in (0, 1)}
        self._predict = k.ins_predict.bind(
            self.face_grid, BLOCK, self.u, self.v, self.us, self.vs, self.nu_old, self.nv_old,
            *p_source, self.clock.dt, self.dt_prev, rhs, nx, ny, inv_dx, inv_dy, self.nu,
            *self.force, *codes)
        solver = self.pressure
        self._divergence = k.ins_divergence.bind(
            (_blocks(nx, BLOCK[0]), _blocks(ny, BLOCK[1])), BLOCK, self.us, self.vs, self.p,
            self.clock.dt, fluid, solver.b, solver.x, nx, ny, inv_dx, inv_dy)
        # The solution x as the correction reads it (a decomposed grid's: padded, its halo
        # swapped), and the parts of the solve.
        x, solve = (solver.x, nx, 0), []
        if self.parallel is not None:
            solve, padded, first, (stride,) = self.parallel.pressure_parts(solver)
            x = (padded, stride, first)
        self._correct = k.ins_correct.bind(
            self.face_grid, BLOCK, self.u, self.v, self.us, self.vs, *x, self.p,
            self.clock.dt, fluid, nx, ny, inv_dx, inv_dy, *codes, self.diffusion_rate,
            self.rate_floor, self.clock.rates, self.partials, self.u_ref, self.v_ref,
            self.refresh)
        viscous_solver = self.viscous.solver if self.implicit else solver  # (unused if explicit)
        # The step's maxima: a decomposed grid's are every block's (after host work).
        maxima = (self.partials, blocks)
        if self.parallel is not None:
            reduce, largest = self.parallel.maxima(self.clock.rates, self.partials)
            maxima = (largest, 1)
        self._finish = k.ins_finish.bind(
            1, FINISH_THREADS, *maxima, force_partials, force_blocks,
            self.clock.ctrl, solver.state, solver.done, viscous_solver.state,
            viscous_solver.done, self.diag, self.dt_prev, self.history, HISTORY_ROWS,
            grid.dx * grid.dy, self.steady_tolerance, self.steady_window, self.refresh)
        # A decomposed grid's step: launches, and host work between them (block.py).
        if self.parallel is not None:
            viscous = [*self._viscous_parts, self._increment] if self.implicit else []
            self._parts = self._decomposed_parts((self.u, self.v), solve, reduce, p_halo,
                                                 viscous)
        self.set_state(np.zeros((grid.nx + 1, grid.ny)), np.zeros((grid.nx, grid.ny + 1)))

    def _viscous_stage(self, viscous, codes):
        """The implicit viscous stage (viscous.py; a decomposed grid's: block_viscous.py, and
        the parts of its solve) and its launch u* = u^n + d."""
        b, grid, theta_nu = self.backend, self.grid, THETA[viscous] * self.nu
        module = b.module(VISCOUS_SOURCE, self.dtype, viscous_defines())
        if self.parallel is None:
            shape = (grid.nx, grid.ny)
            launch = (-(-packed_size(shape) // VISCOUS_THREADS), VISCOUS_THREADS)
            operator = FaceHelmholtz(shape, (grid.dx, grid.dy), codes, theta_nu, self.clock.dt,
                                     module.viscous_helmholtz, launch, b, self.dtype)
            stage, self._viscous_parts = ViscousStage(operator, self.reference_velocity), []
        else:
            shape = self.parallel.local.shape
            stage, self._viscous_parts = block_viscous_stage(
                self.parallel, theta_nu, self.clock.dt, module, (self.u_shape, self.v_shape),
                self.reference_velocity, b, self.dtype)
        self._increment = module.ins_viscous_increment.bind(
            self.face_grid, BLOCK, self.us, self.vs, self.u, self.v, stage.x, *shape, *codes)
        return stage

    # -- geometry ------------------------------------------------------------------------------
    def face_coordinates(self):
        """((x, y) of the u faces, shape (nx + 1, ny) each; (x, y) of the v faces)."""
        return face_coordinates(self.grid)

    # -- checkpoints ---------------------------------------------------------------------------
    def checkpoint_arrays(self):
        """Velocities and pressure, the AB2 history (last N and dt), the steady window (its
        reference, refresh flag and diag), the history rows not yet read and, implicit, the
        last viscous increment (the next solve's initial guess)."""
        arrays = {"u": self.u, "v": self.v, "p": self.p, "n_u_old": self.nu_old,
                  "n_v_old": self.nv_old, "dt_prev": self.dt_prev, "u_ref": self.u_ref,
                  "v_ref": self.v_ref, "refresh": self.refresh, "diag": self.diag,
                  "history": self.history}
        return {**arrays, **self._viscous_arrays()}

    def coefficients(self):
        """Drag and lift coefficients 2 F / (U_ref^2 L_ref) of the recorded steps."""
        scale = 2.0 / (self.reference_velocity**2 * self.reference_length)
        return (np.array(self.series["force_x"]) * scale,
                np.array(self.series["force_y"]) * scale)

    def datasets(self):
        """Extra datasets for the run file: {group: {name: array}}."""
        self.observe()
        drag, lift = self.coefficients()
        series = {name: np.array(values) for name, values in self.series.items()}
        if self.has_obstacle:
            series["drag_coefficient"], series["lift_coefficient"] = drag, lift
        profiles = {}
        for name, (coords, values) in centreline_profiles(self.grid,
                                                          *self.face_velocities()).items():
            profiles[name] = np.stack([coords, values], axis=1)
        return {"series": series, "profiles": profiles}

    def diagnostics(self):
        """Integral diagnostics for sweeps and logs."""
        self.observe()
        u, v = self.face_velocities()
        area = self.grid.dx * self.grid.dy
        out = {"kinetic_energy": float(0.5 * area * ((u[:-1]**2 + u[1:]**2).sum() / 2
                                                     + (v[:, :-1]**2 + v[:, 1:]**2).sum() / 2)),
               "max_divergence": self.series["max_divergence"][-1]
               if self.series["max_divergence"] else 0.0,
               **self.pressure_report()}
        if self.has_obstacle and self.series["force_x"]:
            drag, lift = self.coefficients()
            out["drag_coefficient"], out["lift_coefficient"] = float(drag[-1]), float(lift[-1])
        return out
