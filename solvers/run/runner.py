"""A case turned into a running simulation with output: what `solvers.load_case` returns and
what `solvers run` drives. It uses only the solver contract (solvers/solver.py)."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._metadata import DISTRIBUTION
from ..cases import CaseError, load
from ..cases.resolved import dumps, overrides_json
from ..mesh.decomposition import Decomposition
from ..solver import RunError, RunResult, SteadySolver
from . import restart as checkpoints
from .progress import ProgressLike, as_progress
from .signals import deferred, handled
from .simulation import Simulation
from .steady import SteadySolve

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..backend.clock import ClockReading


def versions():
    out = {"python": platform.python_version()}
    for package in (DISTRIBUTION, "numpy", "scipy", "h5py", "cupy-cuda12x", "cupy-cuda13x"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return out


class CaseRun:
    """A validated case with its solver built and initial state set.

    run() advances to the end time and writes <out>/<name>.h5, .xdmf and .png; step(n) takes
    n steps; fields are host NumPy copies; mesh and solver_class are the objects behind it.
    With `restart` (a checkpoint or partial run file) it continues from that state (restart.py).
    """

    def __init__(self, case, restart: str | os.PathLike | None = None, comm=None) -> None:
        self.case = case
        self.comm = comm
        self.root = comm is None or comm.Get_rank() == 0
        self.solver = self._build(case)
        self.solver_class = type(self.solver)
        self.mesh = self.solver.mesh
        data = case.data
        self.output_fields = self._checked_fields("fields", self.solver.field_names)
        self.plot_fields = self._checked_fields("plot_fields", self.output_fields)
        self.steady = isinstance(self.solver, SteadySolver)
        if self.steady:
            self.simulation = SteadySolve(self.solver)
        else:
            self.simulation = Simulation(
                self.solver, data["time"]["end"], output_interval=data["output"]["interval"],
                steps_per_graph=data["run"]["steps_per_graph"], graph=data["run"]["graph"],
                max_steps=data["time"]["max_steps"],
                checkpoint_interval=data["output"]["checkpoint_interval"],
                checkpoint_wall_seconds=data["output"]["checkpoint_wall_seconds"])
        self.checkpointing = bool(data["output"]["checkpoint_interval"]
                                  or data["output"]["checkpoint_wall_seconds"])
        if self.checkpointing and (self.steady
                                   or not checkpoints.supports_checkpoints(self.solver)):
            raise case.error("output", "checkpoint_interval", f"the {self.solver.name} solver "
                             "does not write checkpoints")
        # A decomposed solver's checkpoint must hold the whole grid (gathered from the blocks).
        if self.comm is not None and (self.checkpointing or restart is not None) and not \
                getattr(self.solver, "decomposed_checkpoints", False):
            raise case.error("output", "checkpoint_interval", f"the {self.solver.name} solver "
                             "does not write or read checkpoints on several MPI ranks yet")
        self.restart = checkpoints.restore(self, restart) if restart is not None else None

    def _build(self, case):
        """The case's solver; on several MPI ranks (comm), this rank's block of it."""
        if self.comm is None:
            return case.adapter.build(case)
        name = case.adapter.SOLVER.name
        if not getattr(case.adapter, "DECOMPOSES", False):
            raise CaseError(f"the {name} solver does not run on several MPI ranks yet")
        # Ranks decide on wall-clock checkpoints apart, and a checkpoint gathers from them all.
        if case.data["output"]["checkpoint_wall_seconds"]:
            raise case.error("output", "checkpoint_wall_seconds", "not available on several "
                             "MPI ranks (ranks would not agree when); use checkpoint_interval")
        run = case.data["run"]
        return case.adapter.build(case, decomposition=Decomposition(
            self.comm, dims=tuple(run["decomposition"]) or None,
            exchange=run["halo_exchange"]))

    def __repr__(self):
        if self.steady:
            state = "solved" if self.simulation.info is not None else "not solved yet"
        else:
            state = f"t={self.t:.6g} of {self.simulation.end_time:g}, {self.steps} steps"
        return f"<CaseRun {self.name}: {self.solver!r}, {state}>"

    def _checked_fields(self, key, available):
        names = self.case.data["output"][key] or list(available)
        for name in names:
            if name not in available:
                raise self.case.error("output", key, f"unknown field '{name}' (expected some "
                                      f"of {', '.join(available)})")
        return names

    @property
    def name(self) -> str:
        return self.case.name

    @property
    def t(self) -> float:
        return self.simulation.t

    @property
    def steps(self) -> int:
        return self.simulation.steps

    @property
    def fields(self) -> dict[str, np.ndarray]:
        return self.solver.fields()

    def step(self, n: int = 1) -> ClockReading:
        return self.simulation.step(n)

    def attrs(self):
        """Metadata stored on the HDF5 root: the case as given and as resolved (every
        override and default applied, TOML), the overrides (JSON), solver, scheme, platform."""
        try:
            resolved = dumps(self.case.data)
        except ValueError:  # a Python override with no TOML form
            resolved = json.dumps(self.case.data, default=repr)
        return {"case": self.case.text, "case_path": str(self.case.path),
                "resolved_case": resolved, "overrides": overrides_json(self.case.overrides),
                "solver": self.solver.name, "precision": self.solver.precision,
                "scheme": json.dumps(self.solver.scheme), "versions": json.dumps(versions()),
                **{k: str(v) for k, v in self.solver.backend.describe().items()}}

    def _selected(self, names):
        """The named fields, stored in the run's precision."""
        fields = self.solver.fields()
        return {name: fields[name].astype(self.solver.dtype) for name in names}

    @property
    def checkpoint_path(self) -> Path:
        return Path(self.case.data["output"]["dir"]) / f"{self.name}.checkpoint.h5"

    def write_checkpoint(self, path: str | os.PathLike | None = None) -> Path:
        """Write the current state to `path` (default <out>/<name>.checkpoint.h5)."""
        return checkpoints.write(self, path or self.checkpoint_path)

    def _writer(self, out_dir):
        """The run file's writer (the folder checked before the run); after a restart from a
        partial file it holds that file's snapshots."""
        from ..io import writer_class

        attrs = self.attrs()
        if self.restart:
            attrs.update(restart_from=str(self.restart.path), restart_time=self.t,
                         restart_steps=self.steps)
        writer = writer_class(self.mesh)(out_dir, self.name, self.mesh, attrs, targets=[
            self.checkpoint_path, Path(out_dir) / f"{self.name}.png"])
        if self.restart and self.restart.in_run_file:
            try:
                writer.carry(self.restart.path, self.steps, self.output_fields)
            except OSError as error:
                writer.abort()
                raise CaseError(f"{self.restart.path}: cannot read its snapshots: "
                                f"{error.strerror or error}") from None
        return writer

    def run(self, write: bool = True, progress: ProgressLike = None) -> RunResult:
        """Advance to the end time. With write, snapshots and final state go to the case's
        output folder (and checkpoints, if the case asks for them). Returns a RunResult; on
        RunError, a write error (OutputError) or interrupt (SIGINT, SIGTERM, SIGHUP) the
        snapshots written so far are kept in <name>.partial.h5, with the state to restart
        from, and the error is re-raised.

        progress: True shows a bar (tqdm's where installed, a notebook widget in Jupyter; else
        a line on stderr); a tqdm bar, an object with update(t, steps, elapsed) and close(), or
        a function f(t, steps, elapsed) called after each graph replay also work."""
        out_dir = self.case.data["output"]["dir"]
        writer = None
        with handled():
            try:
                with deferred():  # no signal between the temp file's creation and the try
                    writer = self._writer(out_dir) if write and self.root else None
                return self._run(writer, out_dir, progress, write)
            except (RunError, KeyboardInterrupt) as error:
                with deferred():
                    partial = writer.abort(checkpoints.abort_state(self)) if writer else None
                if partial:
                    error.partial_output = partial
                raise

    def _run(self, writer, out_dir, progress, write):
        sim = self.simulation
        if writer:
            sim.on_output = lambda s: writer.snapshot(s.t, s.steps,
                                                      self._selected(self.output_fields))
            if self.checkpointing:
                sim.on_checkpoint = lambda s: self.write_checkpoint()
        # A decomposed run's other ranks: their part of each gather, and no files.
        elif write and self.comm is not None:
            sim.on_output = lambda s: self.solver.fields()
            if self.checkpointing:
                sim.on_checkpoint = lambda s: self.solver.checkpoint()
        progress = as_progress(progress if self.root else None, self)
        sim.on_progress = None
        if progress is not None:
            sim.on_progress = lambda s, elapsed: progress.update(s.t, s.steps, elapsed)
        try:
            result = sim.run()
        finally:
            if progress is not None:
                progress.close()
        if writer:
            with deferred():  # a signal now ends the run after its files are complete
                writer.datasets(self.solver.datasets())
                paths = writer.finish(result.t, result.steps,
                                      self._selected(self.output_fields))
            result.files = list(paths.values())
        elif write and self.comm is not None:
            self.solver.fields()  # the final state's gather
        if writer:
            if self.case.data["output"]["plot"]:
                try:
                    result.files.append(self._plot(out_dir, result))
                except ImportError as error:
                    print(f"solvers: {error}; no PNG written", file=sys.stderr)
        return result

    def plot(self, fields: Sequence[str] | None = None,
             path: str | os.PathLike | None = None) -> Figure:
        """A matplotlib Figure of the current state of `fields` (default: output.plot_fields),
        as the run's PNG draws them; Jupyter shows it inline. Written to `path` (a PNG) if
        given."""
        from ..io.plot import save_png

        names = list(self.plot_fields if fields is None else fields)
        for name in names:
            if name not in self.solver.field_names:
                raise ValueError(f"unknown field '{name}' (expected some of "
                                 f"{', '.join(self.solver.field_names)})")
        title = self.name if self.steady else f"{self.name}: t={self.t:.6g}, {self.steps} steps"
        figure = self._figure(names, title)
        if path is not None:
            save_png(figure, path)
        return figure

    def _figure(self, names, title):
        from ..io.plot import field_figure

        # A solver may draw its fields on another mesh (elasticity: the deformed shape).
        mesh, note = self.solver.plot_mesh()
        return field_figure(mesh, self._selected(names), names, title + note,
                            streamlines=self.solver.plot_vectors())

    def _plot(self, out_dir, result):
        from ..io.plot import save_png

        title = f"{self.name}: {self.solver.report(result).summary}"
        return save_png(self._figure(self.plot_fields, title), Path(out_dir) / f"{self.name}.png")


def load_case(path: str | os.PathLike, restart: str | os.PathLike | None = None,
              comm=None, **overrides: Any) -> CaseRun:
    """Load a case file and build its simulation. Overrides are {section: {key: value}} or
    {'section.key': value}, e.g. load_case('cases/sod.toml', mesh={'nx': 800}). With `restart`
    (a checkpoint or partial run file of this case) the run continues from that state. With
    comm (an MPI communicator of several ranks, every rank calling this) the grid is split
    among its ranks; rank 0 alone writes files and shows progress."""
    return CaseRun(load(path, overrides), restart=restart, comm=comm)
