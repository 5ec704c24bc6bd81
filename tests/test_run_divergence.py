"""A run whose state turns non-finite stops with RunError (exit 1) in the solver's own words
(issue 18): the incompressible solver's maxima used fmax, which skips NaN, so an all-NaN field
never set the clock's divergence flag and was even reported as a steady state; the
advection-diffusion solver reduces its rate once, at setup, so a stage must report a
non-finite value itself."""

from pathlib import Path

import numpy as np
import pytest

from solvers.cli import main
from solvers.fv.advection_diffusion import AdvectionDiffusionSolver
from solvers.fv.incompressible import IncompressibleSolver
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation
from solvers.solver import RunError

CASES = Path(__file__).parent.parent / "cases"
DIVERGED = "solvers: run stopped: the solution became non-finite at t="


@pytest.mark.parametrize("case, overrides", [
    ("channel", ["physics.force_x=1e30"]),
    ("taylor_green", ['initial.u="1e30 * sin(x) * cos(y)"']),
])
def test_a_blown_up_incompressible_case_exits_1_with_the_divergence_message(
        case, overrides, tmp_path, capsys):
    sets = [arg for o in overrides + ["mesh.nx=16", "mesh.ny=16"] for arg in ("--set", o)]
    code = main(["run", str(CASES / f"{case}.toml"), "--backend", "host", "--quiet",
                 "--out", str(tmp_path), *sets])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith(DIVERGED) and len(err.strip().splitlines()) == 1, err
    assert "steady" not in err


def test_a_nan_field_is_diverged_never_steady():
    grid = StructuredGrid(16, ny=16, x=(0.0, 2.0), y=(0.0, 1.0))
    sides = {"x_lo": "periodic", "x_hi": "periodic", "y_lo": "wall", "y_hi": "wall"}
    solver = IncompressibleSolver(grid, sides, nu=0.1, force=(0.8, 0.0), steady_tolerance=1e30,
                                  backend="host")
    u = solver.backend.to_host(solver.u)
    u[5, 5] = np.nan
    solver.backend.write(solver.u, u)
    simulation = Simulation(solver, 1.0, steps_per_graph=1)
    with pytest.raises(RunError, match="became non-finite"):
        simulation.run()
    assert simulation.stopped is None  # not "steady state reached", whatever the tolerance
    assert solver.clock.read().diverged


@pytest.mark.parametrize("ndim", [1, 2])
def test_advection_diffusion_stops_when_a_stage_overflows(ndim):
    grid = StructuredGrid(32) if ndim == 1 else StructuredGrid(32, ny=32, y=(0.0, 1.0))
    sides = dict.fromkeys(("x_lo", "x_hi", "y_lo", "y_hi")[:2 * ndim], "periodic")
    solver = AdvectionDiffusionSolver(grid, sides, (1.0, 0.5)[:ndim], 1e-3, backend="host")
    # Finite in fp32, but neighbours differ by 6e38: the fluxes overflow.
    checker = (-1.0) ** np.indices(grid.shape).sum(axis=0)
    solver.set_state(3e38 * checker)
    with pytest.raises(RunError, match="became non-finite"):
        Simulation(solver, 1.0).run()
    solver.set_state(1.0)  # the rate is the velocity's again
    assert np.isfinite(solver.backend.to_host(solver.clock.rates)).all()
