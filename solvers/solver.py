"""The solver contract: what every solver is, and all that the run loop, the command line, the
writers and sweeps may use of one.

A solver has
    name            class attribute; the case adapter whose SOLVER it is makes it findable by
                    name (`solvers.solver_class(name)`)
    backend, dtype  the Backend it runs on and its float type, resolved once (`_platform`)
    precision       "fp32" or "fp64"
    mesh            a StructuredGrid or an unstructured Mesh
    field_names     the names of `fields()`, in order
    fields()        {name: host float64 array}: the current state for output
    scheme          {setting: value}: the numerical method, stored in output files
    report(result)  a Report: its one-line summary and the figures a sweep table records
and hooks with defaults: `datasets()` (extra output: time series, profiles), `plot_vectors()`
(a velocity to draw as streamlines), `plot_mesh()` (the mesh to draw the fields on) and
`diagnostics()` (integral figures for reports).

A TimeDependentSolver also has `clock` (a DeviceClock), `step()` (kernel launches only, so the
shared Stepper can capture it into a graph), `observe()` (a reason to end the run, read between
replays) and `diverged_message(t, steps)`. A SteadySolver has `solve()` -> (values, SolveInfo)
and `failure_message(info)`.
"""

from dataclasses import dataclass, field

from .backend import get_backend
from .precision import real_dtype


class RunError(RuntimeError):
    """A run stopped before its end (divergence, a failed solve, the step limit); output so far
    is kept. The message is one line in the solver's own words."""


@dataclass
class RunResult:
    """What a run did: t and steps of the final state, steps_run in this run, the wall time,
    the steady solve's SolveInfo (None for time-dependent runs), the files written and the
    reason the solver ended the run early (None if it reached its end)."""

    t: float
    steps: int
    wall_seconds: float
    steps_run: int = 0
    info: object = None
    stopped: str = None
    files: list = field(default_factory=list)


@dataclass(frozen=True)
class Report:
    """A solver's account of a run: one line for people, figures for tables."""

    summary: str
    figures: dict


class Solver:
    """The part every solver shares; subclass TimeDependentSolver or SteadySolver."""

    name = None
    field_names = ()
    scheme = {}

    def _platform(self, backend, precision):
        """Resolve the backend (a name or a Backend) and the precision, once per solver."""
        self.backend = get_backend(backend)
        self.precision = precision
        self.dtype = real_dtype(precision)

    def fields(self):
        raise NotImplementedError

    def report(self, result):
        raise NotImplementedError

    def diagnostics(self):
        """Integral figures of the current state for reports and sweep tables."""
        return {}

    def datasets(self):
        """Extra output written beside the fields: {group: {name: array}} (time series,
        profiles)."""
        return {}

    def plot_vectors(self):
        """A vector field (x and y components at the mesh's cells) drawn as streamlines, or
        None."""
        return None

    def plot_mesh(self):
        """(the mesh the PNG draws the fields on, a note for its title)."""
        return self.mesh, ""

    def __repr__(self):
        return (f"<{type(self).__name__} {self.name}: {self.mesh!r}, {self.backend.name}, "
                f"{self.precision}>")


class TimeDependentSolver(Solver):
    """A solver advanced in time by `step()` on a device clock."""

    clock = None

    def step(self):
        raise NotImplementedError

    def observe(self):
        """Between graph replays: a reason (a short phrase) to end the run now, or None. May
        raise RunError."""
        return None

    def diverged_message(self, t, steps):
        """Why the run stopped when the clock's divergence flag is set."""
        return f"the solution became non-finite at t={t:.6g} after {steps} steps"

    def report(self, result):
        cells = self.mesh.ncells
        rate = result.steps_run * cells / result.wall_seconds if result.wall_seconds else 0.0
        stopped = f" ({result.stopped})" if result.stopped else ""
        figures = {"t": result.t, "steps": result.steps,
                   "cell_updates_per_second": float(f"{rate:.4g}"), **self.diagnostics()}
        return Report(f"{cells} cells, {result.steps} steps to t={result.t:.6g}{stopped}, "
                      f"{rate:.3g} cell updates/s", figures)


class SteadySolver(Solver):
    """A solver whose answer is one solve."""

    dofs = 0

    def solve(self):
        """Solve; returns (the solution's host values, a SolveInfo)."""
        raise NotImplementedError

    def failure_message(self, info):
        """Why the run stopped when the solve did not converge."""
        return (f"the solve did not converge ({info.status} after {info.iterations} "
                f"iterations, relative residual {info.residual:.3g})")

    def report(self, result):
        info = result.info
        figures = {"dofs": self.dofs, "iterations": info.iterations,
                   "residual": float(f"{info.residual:.4g}"), **self.diagnostics()}
        return Report(f"{self.dofs} dofs on {self.mesh.ncells} cells, {info.status} in "
                      f"{info.iterations} iterations (residual {info.residual:.3g})", figures)
