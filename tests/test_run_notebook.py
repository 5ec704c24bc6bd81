"""Using the package from a notebook: `run.run(progress=...)` takes True (a tqdm bar where tqdm
is installed, the built-in line otherwise), a tqdm bar, any object with update/close or a plain
function; the public classes have readable reprs; `run.plot()` and `solver.plot()` return a
matplotlib Figure that Jupyter shows inline, written to a PNG only when a path is given; the
public API has type hints and the package ships `py.typed`."""

import inspect
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

import solvers
from solvers.fe import Dirichlet, PoissonSolver, unit_square
from solvers.fv.euler import EulerSolver
from solvers.mesh import StructuredGrid
from solvers.run.progress import Progress
from solvers.run.runner import CaseRun
from solvers.run.simulation import Simulation
from solvers.solver import Solver, SteadySolver, TimeDependentSolver

CASES = Path(__file__).resolve().parent.parent / "cases"
PNG = b"\x89PNG\r\n\x1a\n"


def sod(tmp_path, nx=32):
    return solvers.load_case(CASES / "sod.toml", mesh={"nx": nx}, run={"backend": "host"},
                             output={"dir": str(tmp_path)})


def poisson_square(tmp_path):
    return solvers.load_case(CASES / "poisson_square.toml", run={"backend": "host"},
                             output={"dir": str(tmp_path)}, mesh={"cells": [8, 8]},
                             solver={"preconditioner": "jacobi"})


# -- progress ---------------------------------------------------------------------------------

def test_progress_true_shows_a_tqdm_bar_where_tqdm_is_installed(tmp_path, capsys):
    pytest.importorskip("tqdm")
    sod(tmp_path).run(write=False, progress=True)
    err = capsys.readouterr().err
    assert "sod: 100%" in err and "t=0.2/0.2" in err and "steps" in err and "cell/s" in err


def test_progress_true_without_tqdm_prints_the_built_in_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `import tqdm...` raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    result = sod(tmp_path).run(write=False, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines and all("%  t=" in line and "Mcell/s" in line for line in lines)
    assert lines[-1].startswith("100.0%  t=0.2 / 0.2")
    assert f"steps {result.steps}" in lines[-1]


def test_progress_takes_a_function_of_t_steps_elapsed(tmp_path):
    calls = []
    result = sod(tmp_path).run(write=False, progress=lambda *args: calls.append(args))
    t, steps, elapsed = zip(*calls)
    assert t[-1] == pytest.approx(0.2) and steps[-1] == result.steps
    assert list(t) == sorted(t) and list(elapsed) == sorted(elapsed) and elapsed[0] >= 0


def test_progress_takes_any_object_with_update_and_close(tmp_path):
    class Recorder:
        def __init__(self):
            self.updates, self.closed = [], 0

        def update(self, t, steps, elapsed):
            self.updates.append((t, steps))

        def close(self):
            self.closed += 1

    recorder = Recorder()
    result = sod(tmp_path).run(write=False, progress=recorder)
    assert recorder.updates[-1] == (pytest.approx(0.2), result.steps) and recorder.closed == 1
    stream = io.StringIO()  # the built-in Progress is such an object
    sod(tmp_path).run(write=False, progress=Progress(0.2, 32, stream=stream))
    assert stream.getvalue().splitlines()[-1].startswith("100.0%")


def test_progress_takes_a_tqdm_bar_and_fills_it_with_simulated_time(tmp_path):
    tqdm = pytest.importorskip("tqdm")
    bar = tqdm.tqdm(file=io.StringIO())
    result = sod(tmp_path).run(write=False, progress=bar)
    assert bar.total == pytest.approx(0.2) and bar.n == pytest.approx(result.t)
    assert bar.disable  # tqdm's close() sets it: the run closed the bar
    assert f"steps {result.steps}" in bar.postfix


def test_progress_is_closed_when_the_run_stops_early(tmp_path):
    closed = []
    run = solvers.load_case(CASES / "sod.toml", mesh={"nx": 32}, run={"backend": "host"},
                            time={"max_steps": 3})

    class Watch:
        def update(self, t, steps, elapsed):
            pass

        def close(self):
            closed.append(True)

    with pytest.raises(solvers.RunError, match="max_steps=3"):
        run.run(write=False, progress=Watch())
    assert closed == [True]


def test_progress_of_a_steady_solve_and_bad_values(tmp_path, capsys):
    run = poisson_square(tmp_path)
    run.run(write=False, progress=True)  # a solve has no simulated time: nothing is drawn
    assert capsys.readouterr().err == ""
    for progress in (None, False):
        sod(tmp_path).run(write=False, progress=progress)
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress must be True, False, None, an object with "
                       r"update\(t, steps, elapsed\) and close\(\), or a function"):
        sod(tmp_path).run(write=False, progress=5)


# -- reprs ------------------------------------------------------------------------------------

def test_public_classes_have_readable_reprs(tmp_path):
    run = sod(tmp_path)
    assert repr(run) == ("<CaseRun sod: <EulerSolver euler: StructuredGrid(nx=32, x=(0.0, 1.0)), "
                         "host, fp32>, t=0 of 0.2, 0 steps>")
    assert repr(run.case) == f"<Case sod: euler from {CASES / 'sod.toml'}>"
    assert repr(run.simulation) == ("<Simulation EulerSolver: t=0 of 0.2, 0 steps, output "
                                    "every 0.05>")
    result = run.run(write=False)
    assert repr(run).endswith(f", t=0.2 of 0.2, {result.steps} steps>")
    assert repr(result).startswith(f"RunResult(t={result.t!r}, steps={result.steps}, ")

    steady = poisson_square(tmp_path)
    assert repr(steady).startswith("<CaseRun poisson_square: <PoissonSolver poisson: Mesh(81 "
                                   "points, 128 triangle cells, boundaries bottom, left, right,")
    assert repr(steady).endswith(", host, fp32>, not solved yet>")
    assert repr(steady.simulation) == "<SteadySolve PoissonSolver: not solved yet>"
    steady.run(write=False)
    assert repr(steady).endswith(", solved>")
    assert repr(steady.simulation).startswith("<SteadySolve PoissonSolver: SolveInfo(converged="
                                              "True, iterations=")
    for obj in (run, run.case, run.simulation, run.solver, run.mesh, steady.mesh, result):
        assert " object at 0x" not in repr(obj)


# -- figures ----------------------------------------------------------------------------------

def test_run_plot_returns_a_figure_and_writes_only_when_asked(tmp_path):
    run = sod(tmp_path / "out")
    run.step(5)
    figure = run.plot()
    assert isinstance(figure, Figure) and len(figure.axes) == len(run.plot_fields)
    assert figure.get_suptitle() == f"sod: t={run.t:.6g}, 5 steps"
    assert figure._repr_png_().startswith(PNG)  # how Jupyter shows it without pyplot
    assert not (tmp_path / "out").exists()
    one = run.plot(["p"], path=tmp_path / "p.png")
    assert len(one.axes) == 1 and (tmp_path / "p.png").read_bytes().startswith(PNG)
    with pytest.raises(ValueError, match="unknown field 'T' .expected some of rho, vx, p.$"):
        run.plot(["T"])


def test_solver_plot_returns_a_figure(tmp_path):
    grid = StructuredGrid(16, x=(0, 1), ny=16, y=(0, 1))
    solver = EulerSolver(grid, dict.fromkeys(["x_lo", "x_hi", "y_lo", "y_hi"], "periodic"),
                         backend="host")
    x, y = grid.centres()
    solver.set_primitive(rho=1 + 0.2 * np.sin(2 * np.pi * (x + y)), vx=1.0, vy=1.0, p=1.0)
    Simulation(solver, end_time=0.01).run()
    figure = solver.plot(["rho", "p"])
    assert isinstance(figure, Figure) and len(figure.axes) == 4  # two panels, two colorbars
    assert figure.get_suptitle().startswith("euler: t=0.01, ")
    walls = {side: Dirichlet(0.0) for side in ("left", "right", "bottom", "top")}
    fe = PoissonSolver(unit_square(8), 1, source=1.0, boundary=walls, backend="host")
    fe.solve()
    figure = fe.plot(path=tmp_path / "u.png", title="u")
    assert figure.get_suptitle() == "u" and (tmp_path / "u.png").read_bytes().startswith(PNG)


# -- type hints -------------------------------------------------------------------------------

def _annotated(function, *names):
    signature = inspect.signature(function)
    missing = [n for n in names if signature.parameters[n].annotation is inspect.Parameter.empty]
    assert not missing, f"{function.__qualname__}: {missing} without a type hint"
    assert signature.return_annotation is not inspect.Signature.empty, function.__qualname__


def test_the_public_api_has_type_hints():
    _annotated(solvers.load_case, "path", "overrides")
    _annotated(CaseRun.run, "write", "progress")
    _annotated(CaseRun.step, "n")
    _annotated(CaseRun.plot, "fields", "path")
    _annotated(Simulation.__init__, "solver", "end_time", "output_interval", "max_steps")
    _annotated(Simulation.run)
    _annotated(EulerSolver.__init__, "grid", "boundary", "gamma", "backend", "precision")
    _annotated(PoissonSolver.__init__, "mesh", "degree", "backend", "precision")
    for method in (Solver.fields, Solver.report, Solver.plot, TimeDependentSolver.step,
                   TimeDependentSolver.observe, SteadySolver.solve):
        _annotated(method)
    for name in solvers.__all__:
        assert getattr(solvers, name)  # exported
    assert (Path(solvers.__file__).parent / "py.typed").is_file()
