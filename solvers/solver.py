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
replays) and `diverged_message(t, steps)`; for checkpoints and restarts `checkpoint()` ->
{name: host array} of everything the next step reads (exact bits) and `restore(arrays)`, both
built from the solver's `checkpoint_arrays()` (its device state besides the clock). A
SteadySolver has `solve()` -> (values, SolveInfo) and `failure_message(info)`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .backend import Backend, get_backend
from .precision import real_dtype

BackendLike = str | Backend  # "auto", "cuda", "host" or a Backend

if TYPE_CHECKING:
    from pathlib import Path

    from matplotlib.figure import Figure

    from .backend.clock import DeviceClock
    from .linalg.krylov import SolveInfo
    from .mesh import Mesh, StructuredGrid


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
    info: SolveInfo | None = None
    stopped: str | None = None
    files: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class Report:
    """A solver's account of a run: one line for people, figures for tables."""

    summary: str
    figures: dict[str, Any]


class Solver:
    """The part every solver shares; subclass TimeDependentSolver or SteadySolver."""

    name: str | None = None
    field_names: tuple[str, ...] = ()
    scheme: dict[str, Any] = {}
    mesh: StructuredGrid | Mesh

    def _platform(self, backend, precision):
        """Resolve the backend (a name or a Backend) and the precision, once per solver."""
        self.backend = get_backend(backend)
        self.precision = precision
        self.dtype = real_dtype(precision)

    def fields(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def report(self, result: RunResult) -> Report:
        raise NotImplementedError

    def diagnostics(self) -> dict[str, float]:
        """Integral figures of the current state for reports and sweep tables."""
        return {}

    def datasets(self) -> dict[str, dict[str, np.ndarray]]:
        """Extra output written beside the fields: {group: {name: array}} (time series,
        profiles)."""
        return {}

    def plot_vectors(self) -> tuple[np.ndarray, np.ndarray] | None:
        """A vector field (x and y components at the mesh's cells) drawn as streamlines, or
        None."""
        return None

    def plot_mesh(self) -> tuple[StructuredGrid | Mesh, str]:
        """(the mesh the PNG draws the fields on, a note for its title)."""
        return self.mesh, ""

    def plot(self, fields: Sequence[str] | None = None, path: str | os.PathLike | None = None,
             title: str | None = None) -> Figure:
        """A matplotlib Figure of the current `fields` (default: all of field_names) as a run's
        PNG draws them (on plot_mesh(), with plot_vectors() as streamlines); Jupyter shows it
        inline. Written to `path` (a PNG) if given. It imports io/ when called: the one use of
        a layer above this file, for convenience in notebooks."""
        from .io.plot import field_figure, save_png

        names = list(self.field_names if fields is None else fields)
        values = self.fields()
        for name in names:
            if name not in values:
                raise ValueError(f"unknown field '{name}' (expected some of "
                                 f"{', '.join(values)})")
        mesh, note = self.plot_mesh()
        figure = field_figure(mesh, {name: values[name] for name in names}, names,
                              (self._title() if title is None else title) + note,
                              streamlines=self.plot_vectors())
        if path is not None:
            save_png(figure, path)
        return figure

    def _title(self) -> str:
        return f"{self.name}"

    def __repr__(self):
        return (f"<{type(self).__name__} {self.name}: {self.mesh!r}, {self.backend.name}, "
                f"{self.precision}>")


class TimeDependentSolver(Solver):
    """A solver advanced in time by `step()` on a device clock."""

    clock: DeviceClock | None = None

    def step(self) -> None:
        raise NotImplementedError

    def step_segments(self) -> list | None:
        """The step as launches and HostWork (backend/stepper.py) in order, where it needs the
        host between its launches (a decomposed run's exchanges); None: step() is launches
        only, captured whole."""
        return None

    def observe(self) -> str | None:
        """Between graph replays: a reason (a short phrase) to end the run now, or None. May
        raise RunError."""
        return None

    def _title(self) -> str:
        reading = self.clock.read()
        return f"{self.name}: t={reading.t:.6g}, {reading.steps} steps"

    def diverged_message(self, t: float, steps: int) -> str:
        """Why the run stopped when the clock's divergence flag is set."""
        return f"the solution became non-finite at t={t:.6g} after {steps} steps"

    # -- checkpoints -----------------------------------------------------------------------------
    def checkpoint_arrays(self):
        """{name: device array}: the state the next step reads besides the clock (state
        buffers, multistep history, ...), as stored. Every solver that checkpoints declares it;
        checkpoint() and restore() are built from it."""
        raise NotImplementedError(f"the {self.name} solver does not write checkpoints")

    def checkpoint(self):
        """{name: host array}: everything the next step reads, bit for bit at its stored
        precision: the clock's arrays ('clock/...') and checkpoint_arrays(). A solver with
        state on the host adds it (and takes it back in restore)."""
        arrays = {**_prefixed("clock/", self.clock.arrays()), **self.checkpoint_arrays()}
        return {name: self.backend.to_host(array) for name, array in arrays.items()}

    def restore(self, arrays):
        """Continue from `arrays`, a checkpoint() of a solver built from the same case: the
        same names, shapes and dtypes, or a ValueError naming the first that differs."""
        arrays = dict(arrays)
        if "clock/rates" in arrays:
            arrays["clock/rates"] = self.clock.partials_of(arrays["clock/rates"])
        # The clock first: its parity may choose the buffer checkpoint_arrays() names.
        _write_arrays(self.backend, _prefixed("clock/", self.clock.arrays()), arrays)
        _write_arrays(self.backend, self.checkpoint_arrays(), arrays)
        if arrays:
            raise ValueError(f"array '{sorted(arrays)[0]}' is not part of the "
                             f"{self.name} solver's state")

    def report(self, result: RunResult) -> Report:
        cells = self.mesh.ncells
        rate = result.steps_run * cells / result.wall_seconds if result.wall_seconds else 0.0
        stopped = f" ({result.stopped})" if result.stopped else ""
        figures = {"t": result.t, "steps": result.steps,
                   "cell_updates_per_second": float(f"{rate:.4g}"), **self.diagnostics()}
        return Report(f"{cells} cells, {result.steps} steps to t={result.t:.6g}{stopped}, "
                      f"{rate:.3g} cell updates/s", figures)


def _prefixed(prefix, arrays):
    return {prefix + name: array for name, array in arrays.items()}


def _write_arrays(backend, targets, arrays):
    """Check every array of `targets` in `arrays` (popped), then write them."""
    values = {}
    for name, target in targets.items():
        if name not in arrays:
            raise ValueError(f"array '{name}' is missing")
        value = np.asarray(arrays.pop(name))
        if value.shape != target.shape or value.dtype != target.dtype:
            raise ValueError(f"array '{name}' is {value.dtype} of shape {value.shape}, the "
                             f"solver's {target.dtype} of shape {tuple(target.shape)}")
        values[name] = value
    for name, target in targets.items():
        backend.write(target, values[name])


class SteadySolver(Solver):
    """A solver whose answer is one solve."""

    dofs = 0

    def solve(self) -> tuple[np.ndarray, SolveInfo]:
        """Solve; returns (the solution's host values, a SolveInfo)."""
        raise NotImplementedError

    def failure_message(self, info: SolveInfo) -> str:
        """Why the run stopped when the solve did not converge."""
        return (f"the solve did not converge ({info.status} after {info.iterations} "
                f"iterations, relative residual {info.residual:.3g})")

    def report(self, result: RunResult) -> Report:
        info = result.info
        figures = {"dofs": self.dofs, "iterations": info.iterations,
                   "residual": float(f"{info.residual:.4g}"), **self.diagnostics()}
        return Report(f"{self.dofs} dofs on {self.mesh.ncells} cells, {info.status} in "
                      f"{info.iterations} iterations (residual {info.residual:.3g})", figures)
