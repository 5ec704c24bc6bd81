"""The run layer drives any solver through the contract of solvers/solver.py alone: a toy solver
written only through it runs, stops on its own reason and fails in its own words; every
shipped solver is registered by name; reports use each solver's own units."""

import csv
from pathlib import Path

import numpy as np
import pytest

from solvers import RunError, solver_class
from solvers.backend.clock import DeviceClock
from solvers.cases import adapters
from solvers.cli import main
from solvers.fv.euler import EulerSolver
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation
from solvers.solver import Solver, SteadySolver, TimeDependentSolver

CASES = Path(__file__).resolve().parent.parent / "cases"


class ConstantRate(TimeDependentSolver):
    """A clock that advances with dt = cfl / rate and nothing else: the smallest solver."""

    name = "constant_rate"
    field_names = ("steps",)

    def __init__(self, rate=4.0, stop_after=None, backend="host"):
        self._platform(backend, "fp64")
        self.mesh = StructuredGrid(4)
        self.clock = DeviceClock(self.backend, self.dtype, partials=1, cfl=1.0)
        self.backend.write(self.clock.rates, np.array([rate]))
        self.stop_after = stop_after

    def step(self):
        self.clock.finish_dt()

    def fields(self):
        return {"steps": np.full(self.mesh.shape, float(self.clock.read().steps))}

    def observe(self):
        if self.stop_after is not None and self.clock.read().steps >= self.stop_after:
            return "enough steps"
        return None

    def diverged_message(self, t, steps):
        return f"toy diverged at step {steps}"


def test_a_solver_is_found_by_its_name():
    assert solver_class("euler") is EulerSolver
    with pytest.raises(ValueError, match=r"no solver named 'nope' \(known: .*euler"):
        solver_class("nope")


def test_every_adapter_builds_a_registered_solver_of_its_name():
    found = adapters()
    assert {"euler", "incompressible", "poisson", "heat", "elasticity"} <= set(found)
    for name, adapter in found.items():
        assert solver_class(name) is adapter.SOLVER
        assert issubclass(adapter.SOLVER, (TimeDependentSolver, SteadySolver))
        assert adapter.__name__ == f"solvers.cases.{name}"


def test_simulation_reaches_the_end_time_exactly():
    result = Simulation(ConstantRate(rate=4.0), end_time=1.1, steps_per_graph=2).run()
    # dt = 1/4: four full steps reach 1.0, a fifth lands on 1.1.
    assert result.t == 1.1 and result.steps == 5 and result.steps_run == 5
    assert result.stopped is None


def test_the_solver_ends_the_run_with_its_reason():
    result = Simulation(ConstantRate(rate=4.0, stop_after=3), end_time=10.0,
                        steps_per_graph=1).run()
    assert result.stopped == "enough steps" and result.steps == 3
    assert "(enough steps)" in ConstantRate().report(result).summary


def test_divergence_is_reported_in_the_solvers_words():
    solver = ConstantRate()
    solver.backend.write(solver.clock.rates, np.array([np.inf]))
    with pytest.raises(RunError, match="^toy diverged at step 0$"):
        Simulation(solver, end_time=1.0).run()


def test_time_dependent_report_counts_steps_and_cell_updates():
    solver = ConstantRate()
    result = Simulation(solver, end_time=1.0, steps_per_graph=1).run()
    figures = solver.report(result).figures
    assert figures["t"] == 1.0 and figures["steps"] == 4
    assert figures["cell_updates_per_second"] > 0


def test_solvers_have_a_readable_repr():
    text = repr(ConstantRate())
    assert text.startswith("<ConstantRate constant_rate: StructuredGrid(nx=4")
    assert "host, fp64>" in text


def test_contract_hooks_have_defaults():
    solver = ConstantRate()
    assert solver.datasets() == {} and solver.plot_vectors() is None
    assert solver.plot_mesh() == (solver.mesh, "") and solver.diagnostics() == {}
    assert Solver.report is not TimeDependentSolver.report


def test_steady_sweep_rows_count_iterations_and_dofs(tmp_path):
    """A finite-element sweep records its solve in its own units: dofs, iterations, residual;
    no time steps or cell updates."""
    code = main(["sweep", str(CASES / "poisson_square.toml"), "--backend", "host", "--quiet",
                 "--out", str(tmp_path), "--set", "mesh.cells=[4,4],[8,8]",
                 "--set", "output.plot=false"])
    assert code == 0
    with open(tmp_path / "poisson_square-sweep.csv") as stream:
        rows = list(csv.DictReader(stream))
    assert [int(r["dofs"]) for r in rows] == [81, 289]  # P2 nodes of 4x4 and 8x8 squares
    assert all(int(r["iterations"]) > 0 and float(r["residual"]) <= 1e-6 for r in rows)
    assert not {"steps", "t", "cell_updates_per_second"} & set(rows[0])


def test_a_checkpoint_interval_too_small_to_count_checkpoints_every_replay():
    """t / interval overflows to inf: the next checkpoint is due now, not an OverflowError."""
    solver = ConstantRate(rate=1e-20)
    saved = []
    simulation = Simulation(solver, end_time=1e30, steps_per_graph=1, max_steps=2,
                            checkpoint_interval=1e-300, on_checkpoint=lambda s: saved.append(s.t))
    with pytest.raises(RunError, match="max_steps=2"):
        simulation.run()
    assert saved and saved[0] == 1e20
