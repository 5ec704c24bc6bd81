"""The halo exchange of a decomposed Euler grid, on one rank: with wrap_self a periodic axis
that is not split exchanges its halos with the rank itself, through everything a split grid's
exchange runs (the pack kernel, the copies, the swap: MPI through host memory, or NCCL inside
the step graph on a GPU, the global dt), so the run must equal the undecomposed run bit for
bit. Runs on several ranks: tests/test_run_mpi.py."""

import numpy as np
import pytest

from solvers.backend.stepper import HostWork
from solvers.fv.euler import EulerSolver
from solvers.mesh import StructuredGrid
from solvers.mesh.decomposition import Decomposition
from solvers.run.simulation import Simulation

MPI = pytest.importorskip("mpi4py.MPI")

# 1D all periodic; 3D periodic in x and z with walls and an open side in y (no halos there).
GRIDS = {
    1: (StructuredGrid(nx=64, x=(0.0, 1.0)), {"x_lo": "periodic", "x_hi": "periodic"}),
    3: (StructuredGrid(nx=12, x=(0.0, 1.0), ny=10, y=(0.0, 1.0), nz=9, z=(0.0, 1.0)),
        {"x_lo": "periodic", "x_hi": "periodic", "y_lo": "reflective",
         "y_hi": "transmissive", "z_lo": "periodic", "z_hi": "periodic"}),
}


def _run(ndim, backend, decomposition=None, graph=True):
    grid, boundary = GRIDS[ndim]
    solver = EulerSolver(grid, boundary, time_integrator="ssp_rk3", backend=backend,
                         decomposition=decomposition)
    if ndim == 1:
        x = grid.centres()[0]
        solver.set_primitive(rho=1 + 0.5 * (x > 0.5), vx=0.3, p=1 + 0.3 * np.sin(6 * x))
    else:
        x, y, z = grid.centres()
        solver.set_primitive(rho=1 + 0.5 * (x > 0.5) + 0.2 * np.sin(6 * z), vx=0.3 - 0.2 * y,
                             vy=0.1 * np.cos(2 * np.pi * x), vz=-0.1, p=1 + 0.3 * (y > 0.4))
    Simulation(solver, end_time=0.03, steps_per_graph=3, graph=graph).run()
    return solver, solver.conserved()


def _check_wrapped(ndim, backend, exchange, graph=True):
    _, expected = _run(ndim, backend)
    solver, got = _run(ndim, backend, Decomposition(MPI.COMM_SELF, exchange=exchange,
                                                    wrap_self=True), graph)
    assert solver.parallel.kinds[:2] == [4, 4]  # the x sides read halos
    assert np.array_equal(got, expected)
    return solver


@pytest.mark.parametrize("ndim", [1, 3])
def test_exchange_with_itself_equals_periodic_run(ndim):
    solver = _check_wrapped(ndim, "host", "auto")
    assert solver.parallel.path.startswith("host-staged")
    # One wait on the host a stage: the rates travel with the first stage's halos.
    assert sum(isinstance(p, HostWork) for p in solver.step_segments()) == 3


def test_eager_exchange_equals_graph():
    _check_wrapped(3, "host", "host", graph=False)


@pytest.mark.gpu
@pytest.mark.parametrize("exchange", ["host", "nccl"])
def test_exchange_with_itself_on_the_gpu(exchange):
    """Host-staged (pinned copies captured in the graph, MPI between segments) and NCCL
    (send/recv and the rate's all-reduce captured: the step is one graph, no host work)."""
    solver = _check_wrapped(3, "cuda", exchange)
    assert (solver.step_segments() is None) == (exchange == "nccl")
    _check_wrapped(1, "cuda", exchange)
