"""The compressible Euler solver's execution paths (solvers/fv/euler.py): graph replay against
eager launches, the stage kernels' layouts, the CUDA backend against the host's, and a run that
fails (a vacuum) stopping with a RunError."""

import sys
from pathlib import Path

import numpy as np
import pytest

import solvers.fv.euler as euler_module
from solvers.fv.euler import EulerSolver
from solvers.mesh import StructuredGrid
from solvers.run.simulation import RunError, Simulation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_fv_euler import (  # noqa: E402
    PERIODIC_2D,
    RiemannProblem,
    initial_riemann_state,
    lumpy_flow,
    relative_max_difference,
    smooth_flow,
)

# -- execution paths and backends ------------------------------------------------------------

def lumpy_solver(backend_name, precision="fp32", boundary=PERIODIC_2D, scheme=None):
    """A solver on a 32 x 24 grid holding the lumpy flow."""
    grid = StructuredGrid(32, x=(0.0, 1.0), ny=24, y=(0.0, 0.75))
    solver = EulerSolver(grid, boundary, backend=backend_name, precision=precision,
                         **(scheme or {}))
    rho, vx, p, vy = lumpy_flow(grid)
    solver.set_primitive(rho, vx, p, vy=vy)
    return solver


def lumpy_run(backend_name, precision="fp32", t=0.1, **simulation):
    """Conserved state after running the lumpy periodic flow to t."""
    solver = lumpy_solver(backend_name, precision)
    Simulation(solver, t, **simulation).run()
    return solver.conserved()


@pytest.mark.parametrize("steps_per_graph", [1, 7, 10])
def test_graph_replay_matches_eager_run_bitwise(backend_name, steps_per_graph):
    """Replaying a captured graph of k steps launches the same kernels on the same buffers as
    the eager loop; steps past the end time have dt = 0 and write nothing. Same bits."""
    eager = lumpy_run(backend_name, graph=False, steps_per_graph=1)
    graph = lumpy_run(backend_name, graph=True, steps_per_graph=steps_per_graph)
    np.testing.assert_array_equal(graph, eager)


WALLS_AND_INFLOW = {"x_lo": "reflective", "x_hi": "transmissive",
                    "y_lo": {"inflow": {"rho": 1.2, "vx": 0.1, "vy": 0.3, "p": 1.1}},
                    "y_hi": "reflective"}


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
@pytest.mark.parametrize("boundary, scheme", [
    (PERIODIC_2D, {}),
    (WALLS_AND_INFLOW, {}),
    (WALLS_AND_INFLOW, dict(reconstruction="first_order", riemann="rusanov",
                            time_integrator="ssp_rk2")),
    (PERIODIC_2D, dict(limiter="van_leer", riemann="rusanov")),
    (PERIODIC_2D, dict(time_integrator="hancock")),
    (WALLS_AND_INFLOW, dict(time_integrator="hancock", limiter="minmod", riemann="rusanov")),
], ids=["periodic", "walls-inflow", "walls-inflow-first-order-rusanov", "periodic-vanleer",
        "periodic-hancock", "walls-inflow-hancock-minmod-rusanov"])
def test_stage_layouts_give_the_same_bits(backend_name, monkeypatch, precision, boundary,
                                          scheme):
    """The march cuts the grid into strips of `rows` rows (24 rows: 24 strips of 1, strips of
    5 with a partial last one, one partial strip of 16) and the tile into blocks of 31 x 7
    cells (MUSCL-Hancock's: 30 x 10; a partial last block each way). Both compute each face
    flux once from the same states (and predicted face states) in the same operations, so
    every cut gives the same bits, boundaries included."""
    runs = {}
    # (layout, march rows, stage blocks: each leaves one partial stability rate)
    tile_blocks = 2 * 3 if scheme.get("time_integrator") == "hancock" else 2 * 4
    for layout, rows, blocks in (("march", 1, 24), ("march", 5, 5), ("march", 16, 2),
                                 ("tile", None, tile_blocks)):
        monkeypatch.setattr(euler_module, "uses_tile", lambda grid, name, t=layout: t == "tile")
        monkeypatch.setattr(euler_module, "march_rows", lambda nx, ny, name, r=rows: r)
        solver = lumpy_solver(backend_name, precision, boundary, scheme)
        assert solver.clock.partials == blocks
        Simulation(solver, 0.05).run()
        runs[layout, rows] = solver.conserved()
    for key, result in runs.items():
        np.testing.assert_array_equal(result, runs["march", 1], err_msg=str(key))


@pytest.mark.gpu
def test_cuda_matches_host_to_fp32_rounding():
    """Both backends compile the same source and do the same IEEE fp32 operations; they differ
    only where the compilers contract a * b + c into an FMA and in the last bit of sqrt and
    division. That is an ulp or so per operation, and a smooth flow does not amplify it: after
    the 58 steps below the fields can differ by ~60 ulps (~1e-5) at most (measured on an H200
    against an x86-64 host: 1.7e-6). 1e-4 leaves a factor of ~10 over that estimate; a real
    discrepancy (a race, a wrong launch shape) is O(1e-2) or more."""
    results = {}
    for backend_name in ("host", "cuda"):
        grid = StructuredGrid(64, x=(0.0, 1.0), ny=64, y=(0.0, 1.0))
        solver = EulerSolver(grid, PERIODIC_2D, backend=backend_name, precision="fp32")
        rho, vx, p, vy = smooth_flow(grid)
        solver.set_primitive(rho, vx, p, vy=vy)
        Simulation(solver, 0.1).run()
        results[backend_name] = solver.fields()
    for name, host in results["host"].items():
        difference = relative_max_difference(results["cuda"][name], host)
        assert difference < 1e-4, f"{name}: {difference:.3g}"


# -- failure ----------------------------------------------------------------------------------

@pytest.mark.parametrize("graph", [True, False])
def test_vacuum_generating_run_raises_run_error(backend_name, graph):
    """Two streams leaving each other at u = -+20 open a vacuum (2 (cL + cR) / (gamma - 1) =
    7.5 < 40), which no finite-volume state can hold: within a few steps a cell's pressure goes
    negative (measured: step 2 to 5 for every scheme and cfl tried). The run must stop with
    RunError, not carry on with NaNs."""
    problem = RiemannProblem((1.0, -20.0, 0.4), (1.0, 20.0, 0.4), x0=0.5, t=0.02)
    grid = StructuredGrid(100, x=(0.0, 1.0))
    solver = EulerSolver(grid, {"x_lo": "transmissive", "x_hi": "transmissive"},
                         backend=backend_name, precision="fp32", cfl=1.0)
    solver.set_primitive(*initial_riemann_state(problem, grid.x_centres()))
    simulation = Simulation(solver, problem.t, graph=graph)
    with pytest.raises(RunError, match="non-finite or non-physical"):
        simulation.run()
    assert simulation.reading.diverged and simulation.t < problem.t
