"""Transient heat conduction: rho c du/dt - div(k grad u) = f, with Dirichlet, Neumann and
Robin conditions on named boundaries, k and rho c per material, and the theta scheme in time
(theta = 1 backward Euler, 1/2 Crank-Nicolson).

    solver = HeatSolver(mesh, dt=1e-3, theta=0.5, initial=lambda x, y, t: ...,
                        conductivity={"steel": 45.0}, capacity={"steel": 3.6e6},
                        boundary={"left": Dirichlet(TimeFunction("20 + 5 * sin(t)")),
                                  "top": Robin(10.0, 20.0)})
    solver.step()                # one time step (launches only; capturable into a graph)
    solver.clock.read().t        # the device clock, read between steps
    solver.fields()              # {"u": values at the mesh vertices (, "exact", "error")}

A time step, all on the device (raw_kernels/fe/heat.cu), is one captured graph when driven by
solvers.run.simulation (the Stepper captures steps_per_graph of them):
  1. heat_clock: this step's dt, the fixed dt or less to land exactly on the clock's stop time
     (an output or the end time), 0 once there (the step is then a no-op); advances t.
  2. Data given as TimeFunctions (time_values.py: expressions of x, y, z, t compiled into a
     kernel): Dirichlet values at t^{n+1}, and the source, fluxes and ambients at
     t^n + theta dt (the midpoint for Crank-Nicolson) with the load vector F from them.
  3. heat_matrix: only if dt changed, A = M + theta dt K and its Dirichlet cut; with output
     times on multiples of dt the system matrix is assembled once, at setup. (The
     preconditioner stays the one built for dt: still symmetric positive definite, so CG
     converges for a shortened step's matrix too.)
  4. heat_rhs + Dirichlet lifting: b = dt (F - K u^n), increments g - u^n on Dirichlet dofs.
  5. CG (ConjugateGradient.launch_solve: its iterations loop on the device) for the increment
     d of A d = b, from the last increment; 6. u += d.
The increment form is the theta scheme A u^{n+1} = (M - (1 - theta) dt K) u^n + dt F solved
for u^{n+1} - u^n: CG's relative tolerance then applies to the change in a step, not to u.

In fp32 (refine=True, the default) the step converges on its true residual: fp32 CG alone
cannot certify rtol below about eps32 ||A|| ||d|| / ||b||, and its status is the recursive
residual's. So the state, the matrices, b and every kernel above are fp64, and step 5 is
linalg.refinement.CapturedRefinement: a fixed number of captured passes, each the fp64
residual b - A d, fp32 CG (with the preconditioner of the fp32 copy of A, re-rounded in a step
that rebuilds A) on it, d += correction in fp64; a device-side verdict makes the passes after
convergence no-ops (they still launch the fp64 residual, CG's start and one iteration's
product and preconditioner, which read no flag) and gives the step's status from the fp64
residual. Passes are fixed, not a
loop, because a captured step holds no host decision (a nested device loop would need nested
conditional nodes), and the warm start (the last increment) leaves 2 or 3 passes of work
(PASSES = 4). The fp32 work is CG's (its iterations move most of the bytes); the fp64 kernels
run once a step or a pass, memory-bound. maxiter bounds each pass's CG. Memory: the fp64
mass, stiffness, full and cut system values and the fp32 copy, 40 bytes a nonzero with the
columns, against 20 in plain fp32. refine=False is plain fp32 throughout, whose status may say
converged on the recursive residual alone.

K (conductivity plus Robin facet terms) and the load F (source, Neumann fluxes, Robin ambients)
are those of the steady problem: the Diffusion operator (diffusion.py) that the Poisson solver
uses too, without the Dirichlet conditions (`diffusion`). The preconditioner is named as in
every solver (solvers.linalg.preconditioners; "multigrid" is "amg" here). Data given as
numbers or Python functions are evaluated once, at the initial time, and stay fixed;
TimeFunctions are re-evaluated on the device every step. `exact` (any function of x, y[, z],
t) is evaluated on the host for the output fields.
"""

import numpy as np

from ..backend.clock import DeviceClock
from ..linalg import ConjugateGradient
from ..linalg.preconditioners import check
from ..linalg.preconditioners import preconditioner as build_preconditioner
from ..linalg.refinement import PASS_RTOL, PASSES, STALLED, CapturedRefinement, inner_matrix
from ..mesh import Mesh
from ..solver import BackendLike, RunError, TimeDependentSolver
from .assembly import THREADS, Assembler, cells
from .boundary import dirichlet_values, nodal, split
from .diffusion import Diffusion
from .space import FunctionSpace
from .steady import PRECONDITIONERS
from .system import DirichletSystem
from .time_values import TimeFunction, bind_nodal_values

SOURCE = "fe/heat.cu"


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    yield SOURCE, {}


def blocks(n):
    return -(-n // THREADS)


def check_scheme(dt, theta, preconditioner="amg"):
    """A one-line ValueError for a step or theta outside the stable, consistent range, or an
    unknown preconditioner."""
    if not (isinstance(dt, (int, float)) and dt > 0 and np.isfinite(dt)):
        raise ValueError(f"dt must be a number > 0, got {dt!r}")
    if not (isinstance(theta, (int, float)) and 0.5 <= theta <= 1):
        raise ValueError(f"theta must be in [0.5, 1] (1 backward Euler, 0.5 Crank-Nicolson; "
                         f"below 0.5 the scheme is not unconditionally stable), got {theta!r}")
    check(preconditioner, PRECONDITIONERS)


class HeatSolver(TimeDependentSolver):
    name = "heat"

    def __init__(self, mesh: Mesh, dt: float, theta: float = 1.0, degree: int = 1,
                 conductivity: dict | None = None, default_conductivity: float = 1.0,
                 capacity: dict | None = None, default_capacity: float = 1.0, source=0.0,
                 initial=0.0, boundary: dict | None = None, preconditioner: str = "amg",
                 rtol: float = 1e-8, maxiter: int | None = None, exact=None,
                 renumber: bool = True, backend: BackendLike = "auto",
                 precision: str = "fp32", refine: bool = True) -> None:
        check_scheme(dt, theta, preconditioner)
        mesh.require_boundaries(list(boundary or {}))
        dirichlet, neumann, robin = split(dict(boundary or {}))
        self.dirichlet_conditions = dirichlet
        self.mesh = mesh
        self.dt, self.theta = float(dt), float(theta)
        self.exact = exact
        self.field_names = ("u", "exact", "error") if exact is not None else ("u",)
        self._platform(backend, precision)
        # The type of the state, matrices and step kernels: fp64 where fp32 refines.
        self.refine = bool(refine) and precision == "fp32"
        real = self.real = np.dtype(np.float64 if self.refine else self.dtype)

        self.space = space = FunctionSpace(mesh, degree, renumber=renumber)
        a = self.assembler = Assembler(space, self.backend, "fp64" if self.refine else precision)
        b = self.backend

        # K and F: the diffusion operator -div(k grad u) with the Neumann and Robin conditions
        # and its load, without the Dirichlet conditions.
        self.conductivity = mesh.cell_material_values(conductivity or {}, default_conductivity)
        self.diffusion = Diffusion(a, self.conductivity, source, neumann, robin)
        self.diffusion.assemble_matrix()
        self.diffusion.assemble_load()
        stiffness = self.stiffness = self.diffusion.values
        load = self.load = self.diffusion.load

        # M: rho c u v over the cells.
        self.capacity = mesh.cell_material_values(capacity or {}, default_capacity)
        mass = self.mass = a.values()
        a.bilinear("mass", cells(space), self.capacity).bind(mass)()

        # The clock (its t, stop time and step count; heat_clock replaces its CFL kernel), the
        # dt the matrix holds, the rebuild flag and the first failed solve's status.
        self.clock = DeviceClock(b, real, partials=1, cfl=1.0)
        self.matrix_dt = b.to_device(np.array([self.dt]))
        self.rebuild = b.to_device(np.array([1], np.int32))
        self.failed = b.zeros((1,), np.int32)
        self.times = b.zeros((2,), real)
        b.write(self.clock.dt, np.array([self.dt]))

        # The system A = M + theta dt K with Dirichlet rows and columns cut, its solver, state.
        dofs, self.dirichlet = dirichlet_values(space, dirichlet)
        full = a.values()
        self.system = system = DirichletSystem(a, full, dofs)
        matrix = system.matrix
        kernels = b.module(SOURCE, real)
        rows = blocks(space.n)
        matrix_launch = kernels.heat_matrix.bind(
            rows, THREADS, matrix.row_ptr, matrix.columns, system.mask, mass, stiffness,
            self.clock.dt, self.rebuild, self.theta, full, matrix.values, space.n)
        matrix_launch()
        system.apply_matrix()  # the same cut again, and the host copy AMG and Jacobi read
        solve, rounding = self._linear_solver(preconditioner, rtol, maxiter)
        self.u = b.zeros((space.n,), real)
        self.dirichlet_device = a.device(self.dirichlet, real)
        self.launches = [
            kernels.heat_clock.bind(1, 1, self.clock.ctrl, self.matrix_dt, self.rebuild,
                                    self.clock.dt, self.times, self.dt, self.theta),
            *self._time_value_launches(source, dirichlet, neumann, robin),
            matrix_launch,
            *rounding,
            kernels.heat_rhs.bind(rows, THREADS, matrix.row_ptr, matrix.columns, stiffness,
                                  self.u, load, system.mask, self.dirichlet_device,
                                  self.clock.dt,
                                  solve.b, system.g, solve.x, space.n),
            system.bind_rhs(solve.b),
            solve.launch_solve,
            kernels.heat_update.bind(rows, THREADS, self.u, solve.x, solve.done, self.failed,
                                     space.n),
        ]
        self.scheme = {"element": f"P{degree}", "cell": mesh.cell_type, "dofs": space.n,
                       "nonzeros": a.pattern.nnz, "dt": self.dt, "theta": self.theta,
                       "preconditioner": preconditioner, "rtol": rtol,
                       "refinement": self.refine}
        self.set_initial(initial)

    def _linear_solver(self, preconditioner, rtol, maxiter):
        """(the step's solver, the launches keeping its fp32 matrix current): CG on the
        system, or refinement around fp32 CG on its rounded copy (each pass's CG to
        PASS_RTOL or rtol), re-rounded when the step rebuilds the matrix. self.cg is the CG
        (the inner one when refined)."""
        matrix = self.system.matrix
        inner = inner_matrix(matrix) if self.refine else matrix
        self.cg = ConjugateGradient(inner, build_preconditioner(preconditioner, inner),
                                    rtol=max(rtol, PASS_RTOL) if self.refine else rtol,
                                    maxiter=maxiter)
        if not self.refine:
            self.linear = self.cg
            return self.cg, []
        self.linear = refined = CapturedRefinement(matrix, self.cg, rtol)
        return refined, [refined.bind_round(self.rebuild)]

    def _time_value_launches(self, source, dirichlet, neumann, robin):
        """Launches refreshing the data given as TimeFunctions: Dirichlet values at t^{n+1}
        (times[0]) and, when a load changes in time, its nodal data at t^n + theta dt
        (times[1], the midpoint for Crank-Nicolson) and the load vector F from them."""
        space = self.space
        points = self.node_points = self.assembler.device(space.node_points, self.real)

        def bind(function, nodes, which, out):
            return bind_nodal_values(self.backend, self.real, function, nodes, points,
                                     self.times, which, out)

        # Later Dirichlet boundaries win at shared nodes, as in dirichlet_values.
        owner = np.full(space.nnodes, -1)
        for index, name in enumerate(dirichlet):
            owner[space.boundary_nodes([name])] = index
        launches = [bind(condition.value, np.flatnonzero(owner == index), 0,
                         self.dirichlet_device)
                    for index, condition in enumerate(dirichlet.values())
                    if isinstance(condition.value, TimeFunction)]
        # The diffusion operator's nodal load data, in its order: source, fluxes, ambients.
        loads = ([(source, np.arange(space.nnodes))]
                 + [(c.flux, space.boundary_nodes([name])) for name, c in neumann.items()]
                 + [(c.ambient, space.boundary_nodes([name])) for name, c in robin.items()])
        timed = [bind(function, nodes, 1, out)
                 for (function, nodes), out in zip(loads, self.diffusion.sources)
                 if isinstance(function, TimeFunction)]
        return launches + (timed + self.diffusion.load_launches if timed else [])

    def set_initial(self, initial, t=0.0):
        """u = initial (a number or f(x, y[, z], t)) at the nodes, with the Dirichlet values
        at time t on their dofs; the clock restarts at t."""
        u = nodal(initial, self.space.node_points, t)
        dofs, values = dirichlet_values(self.space, self.dirichlet_conditions, t)
        u[dofs] = values[dofs]
        self.backend.write(self.u, u.astype(self.real))
        self.backend.fill(self.linear.x, 0)
        self.clock.set(t=t, steps=0)

    def checkpoint_arrays(self):
        """u, the last increment (the next initial guess), the system matrix (and its fp32
        copy when refined) and the dt it was built for (a step clipped to an output time
        rebuilds it), and the failed flag."""
        arrays = {"u": self.u, "increment": self.linear.x,
                  "matrix": self.system.matrix.values, "matrix_full": self.system.full,
                  "matrix_dt": self.matrix_dt, "rebuild": self.rebuild, "failed": self.failed}
        if self.refine:
            arrays["matrix_fp32"] = self.cg.operator.values
        return arrays

    def step(self):
        """Launch one time step (no host access: capturable)."""
        for launch in self.launches:
            launch()

    def observe(self):
        """Between replays: a RunError if a step's solve failed (never ends a run early)."""
        status = int(self.backend.to_host(self.failed)[0])
        if status == STALLED:
            raise RunError(f"a time step's linear solve stayed above rtol on its fp64 residual "
                           f"after {PASSES} fp32 refinement passes, before t="
                           f"{self.clock.read().t:.6g}; raise solver.rtol or use precision "
                           "fp64")
        if status:
            reason = {2: "reached maxiter", 3: "broke down"}.get(status, f"status {status}")
            raise RunError(f"a time step's linear solve {reason} before t="
                           f"{self.clock.read().t:.6g}; raise solver.maxiter or rtol, or use "
                           "the amg preconditioner")
        return None

    def values(self):
        """u at the nodes (host float64, space numbering)."""
        return self.backend.to_host(self.u).astype(np.float64)

    def fields(self):
        """{"u": float64 values at the mesh vertices} now (and "exact", "error" at the clock's
        t when the exact solution is known)."""
        u = self.space.vertex_values(self.values())
        if self.exact is None:
            return {"u": u}
        exact = nodal(self.exact, self.mesh.points, self.clock.read().t)
        return {"u": u, "exact": exact, "error": u - exact}

    def diagnostics(self):
        """Extremes (and the largest nodal error) of the current state."""
        fields = self.fields()
        out = {"dofs": self.space.n, "min_u": float(fields["u"].min()),
               "max_u": float(fields["u"].max())}
        if "error" in fields:
            out["max_nodal_error"] = float(abs(fields["error"]).max())
        return out
