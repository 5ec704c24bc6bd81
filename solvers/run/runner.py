"""A case turned into a running simulation with output: what `solvers.load_case` returns and
what `solvers run` drives. It uses only the solver contract (solvers/solver.py)."""

import json
import platform
import sys
from importlib import metadata
from pathlib import Path

from ..cases import load
from ..solver import RunError, SteadySolver
from .simulation import Simulation
from .steady import SteadySolve


def versions():
    out = {"python": platform.python_version()}
    for package in ("solvers", "numpy", "scipy", "h5py", "cupy-cuda12x", "cupy-cuda13x"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return out


class CaseRun:
    """A validated case with its solver built and initial state set.

    run() advances to the end time and writes <out>/<name>.h5, .xdmf and .png; step(n) takes
    n steps; fields are host NumPy copies; mesh and solver_class are the objects behind it.
    """

    def __init__(self, case):
        self.case = case
        self.solver = case.adapter.build(case)
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
                max_steps=data["time"]["max_steps"])

    def __repr__(self):
        return f"<CaseRun {self.name}: {self.solver!r}, t={self.t:.6g}, {self.steps} steps>"

    def _checked_fields(self, key, available):
        names = self.case.data["output"][key] or list(available)
        for name in names:
            if name not in available:
                raise self.case.error("output", key, f"unknown field '{name}' (expected some "
                                      f"of {', '.join(available)})")
        return names

    @property
    def name(self):
        return self.case.name

    @property
    def t(self):
        return self.simulation.t

    @property
    def steps(self):
        return self.simulation.steps

    @property
    def fields(self):
        return self.solver.fields()

    def step(self, n=1):
        return self.simulation.step(n)

    def attrs(self):
        """Metadata stored on the HDF5 root."""
        return {"case": self.case.text, "case_path": str(self.case.path),
                "solver": self.solver.name, "precision": self.solver.precision,
                "scheme": json.dumps(self.solver.scheme), "versions": json.dumps(versions()),
                **{k: str(v) for k, v in self.solver.backend.describe().items()}}

    def _selected(self, names):
        """The named fields, stored in the run's precision."""
        fields = self.solver.fields()
        return {name: fields[name].astype(self.solver.dtype) for name in names}

    def run(self, write=True, progress=None):
        """Advance to the end time. With write, snapshots and final state go to the case's
        output folder. Returns a RunResult; on RunError or interrupt the snapshots written so
        far are kept in <name>.partial.h5 and the error is re-raised."""
        from ..io import writer_class

        out_dir = self.case.data["output"]["dir"]
        writer_type = writer_class(self.mesh)
        writer = writer_type(out_dir, self.name, self.mesh, self.attrs()) if write else None
        sim = self.simulation
        if writer:
            sim.on_output = lambda s: writer.snapshot(s.t, s.steps,
                                                      self._selected(self.output_fields))
        if progress:
            sim.on_progress = lambda s, elapsed: progress.update(s.t, s.steps, elapsed)
        try:
            result = sim.run()
        except (RunError, KeyboardInterrupt) as error:
            partial = writer.abort() if writer else None
            if partial:
                error.partial_output = partial
            raise
        finally:
            if progress:
                progress.close()
        if writer:
            writer.datasets(self.solver.datasets())
            paths = writer.finish(result.t, result.steps, self._selected(self.output_fields))
            result.files = list(paths.values())
            if self.case.data["output"]["plot"]:
                try:
                    result.files.append(self._plot(out_dir, result))
                except ImportError as error:
                    print(f"solvers: {error}; no PNG written", file=sys.stderr)
        return result

    def _plot(self, out_dir, result):
        from ..io.plot import plot_fields

        path = Path(out_dir) / f"{self.name}.png"
        # A solver may draw its fields on another mesh (elasticity: the deformed shape).
        mesh, note = self.solver.plot_mesh()
        title = f"{self.name}: {self.solver.report(result).summary}"
        plot_fields(path, mesh, self._selected(self.plot_fields), self.plot_fields,
                    title + note, streamlines=self.solver.plot_vectors())
        return path


def load_case(path, **overrides):
    """Load a case file and build its simulation. Overrides are {section: {key: value}} or
    {'section.key': value}, e.g. load_case('cases/sod.toml', mesh={'nx': 800})."""
    return CaseRun(load(path, overrides))
