"""Transient heat time steps as graphs: a captured step contains the whole step (clock, right-
hand side, CG solve, update) and replays with no host call, graph replays equal eager steps bit
for bit, runs land exactly on output and end times (a shortened last step rebuilds the matrix
and equals a solver built with that dt), a failed solve stops the run, cuda equals host."""

import numpy as np
import pytest

from solvers.fe import Dirichlet, Neumann, Robin, unit_square
from solvers.fe.heat import HeatSolver
from solvers.run.simulation import RunError, Simulation


def initial(x, y, t):
    return np.sin(3 * x) * y + 0.2


def make(backend="host", precision="fp32", dt=1e-3, theta=0.5, start=initial, **options):
    mesh = unit_square(6)
    boundary = {"left": Dirichlet(1.0), "right": Neumann(0.5), "top": Robin(2.0, 0.25)}
    options = {"rtol": 1e-6 if precision == "fp32" else 1e-12, **options}
    return HeatSolver(mesh, dt, theta, 2, source=lambda x, y, t: x, initial=start,
                      boundary=boundary, backend=backend, precision=precision, **options)


def test_a_captured_step_contains_the_solve(backend_name):
    """One step captured (the host backend raises on any host read or allocation during a
    capture, so the step has none), replayed 5 times back to back: the state and clock equal
    those of 6 eager steps, bit for bit, and the temperature moved."""
    solver, eager = make(backend_name), make(backend_name)
    backend = solver.backend
    solver.step()  # eager: compiles and warms up
    graph = backend.capture(solver.step)
    for _ in range(5):
        graph.replay()
    for _ in range(6):
        eager.step()
    u = solver.values()
    np.testing.assert_array_equal(u, eager.values())
    assert solver.clock.read() == eager.clock.read()
    assert solver.clock.read().steps == 6
    assert abs(u - make(backend_name).values()).max() > 1e-3


def test_graph_replays_equal_eager_steps_and_land_on_output_times(backend_name):
    """Output every 0.005 and the end at 0.0105 with dt = 1e-3: the run stops exactly at each
    output time (the last step is shortened to 5e-4) and the graph run (4 steps per replay)
    equals the eager run bit for bit."""
    def run(graph):
        solver, times = make(backend_name), []
        Simulation(solver, 0.0105, output_interval=0.005, steps_per_graph=4, graph=graph,
                   on_output=lambda sim: times.append((sim.t, sim.steps))).run()
        return solver.values(), times

    runs = [run(graph) for graph in (True, False)]
    (graph_u, graph_times), (eager_u, eager_times) = runs
    np.testing.assert_array_equal(graph_u, eager_u)
    assert graph_times == eager_times == [(0.0, 0), (0.005, 5), (0.01, 10), (0.0105, 11)]


def test_a_shortened_step_equals_a_solver_with_that_dt():
    """Stopping at 0.0105 takes 10 steps of 1e-3 and one of 5e-4 (the matrix rebuilt for it),
    and continuing to 0.0125 two of 1e-3 again (rebuilt back): equal, to the CG tolerance, to
    solvers built with dt = 1e-3, then 5e-4, then 1e-3 started from each other's states."""
    run = make(precision="fp64")
    simulation = Simulation(run, 0.0125, output_interval=0.0105, steps_per_graph=3)
    simulation.run()
    assert run.clock.read().steps == 13

    first = make(precision="fp64")
    Simulation(first, 0.01, steps_per_graph=5).run()
    short = make(precision="fp64", dt=5e-4, start=lambda *x: first.values())
    short.step()
    last = make(precision="fp64", start=lambda *x: short.values())
    last.step()
    last.step()
    np.testing.assert_allclose(run.values(), last.values(), rtol=0, atol=1e-10)


def test_a_failed_solve_stops_the_run():
    solver = make(precision="fp64", preconditioner="none", rtol=1e-12, maxiter=1)
    with pytest.raises(RunError, match="linear solve reached maxiter"):
        Simulation(solver, 0.01, steps_per_graph=2).run()


@pytest.mark.gpu
def test_cuda_equals_host():
    """fp64, CG to 1e-12: the backends sum in other orders, so they agree to rounding
    amplified by the solves (1e-10 of u ~ 1)."""
    results = []
    for backend in ("host", "cuda"):
        solver = make(backend, "fp64")
        Simulation(solver, 0.02, output_interval=0.0075, steps_per_graph=4).run()
        results.append(solver.values())
    np.testing.assert_allclose(results[1], results[0], rtol=0, atol=1e-10)
