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

# 1D periodic, long enough for march blocks that read no halo; 3D periodic in z (the halos)
# with open sides in x and walls in y. Both have blocks away from the halos, which update
# while the halos travel (host-staged).
GRIDS = {
    1: (StructuredGrid(nx=400, x=(0.0, 1.0)), {"x_lo": "periodic", "x_hi": "periodic"}),
    3: (StructuredGrid(nx=12, x=(0.0, 1.0), ny=10, y=(0.0, 1.0), nz=9, z=(0.0, 1.0)),
        {"x_lo": "transmissive", "x_hi": "transmissive", "y_lo": "reflective",
         "y_hi": "reflective", "z_lo": "periodic", "z_hi": "periodic"}),
}
HALO_SIDES = {1: slice(0, 2), 3: slice(4, 6)}


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


def _check_wrapped(ndim, backend, exchange, graph=True, overlap=True):
    _, expected = _run(ndim, backend)
    solver, got = _run(ndim, backend, Decomposition(MPI.COMM_SELF, exchange=exchange,
                                                    wrap_self=True, overlap=overlap), graph)
    assert solver.parallel.kinds[HALO_SIDES[ndim]] == [4, 4]  # these sides read halos
    assert np.array_equal(got, expected)
    return solver


@pytest.mark.parametrize("ndim", [1, 3])
def test_exchange_with_itself_equals_periodic_run(ndim):
    solver = _check_wrapped(ndim, "host", "auto")
    assert solver.parallel.path.startswith("host-staged")
    # One swap on the host a stage (the rates travel with the first stage's halos); the later
    # stages also mark when their halos reached the host, then update the cells away from
    # the halos during the swap.
    assert sum(isinstance(p, HostWork) for p in solver.step_segments()) == 5


def test_exchange_after_the_stage_equals_periodic_run():
    """overlap=False: a later stage's blocks all wait for its halos (one swap a stage)."""
    solver = _check_wrapped(3, "host", "host", overlap=False)
    assert sum(isinstance(p, HostWork) for p in solver.step_segments()) == 3


def test_only_large_halos_overlap_by_default():
    """Decomposition.overlap None: a block overlaps its swaps when one sends OVERLAP_BYTES or
    more (here the z halos: 2 sides x 2 layers x 5 variables x nx ny cells x 4 bytes)."""
    for nx, expected in ((100, False), (128, True)):  # 800 000 and 1 310 720 bytes
        grid = StructuredGrid(nx=nx, x=(0.0, 1.0), ny=128, y=(0.0, 1.0), nz=4, z=(0.0, 1.0))
        solver = EulerSolver(grid, GRIDS[3][1], backend="host",
                             decomposition=Decomposition(MPI.COMM_SELF, wrap_self=True))
        assert solver.parallel.overlap is expected


def test_eager_exchange_equals_graph():
    _check_wrapped(3, "host", "host", graph=False)


def test_in_graph_exchange_on_the_host_backend():
    """halo_exchange "nccl" on the host backend: the swaps and the rates' maximum are blocking
    MPI calls made launches (backend/collectives.py), so a step has no host work."""
    solver = _check_wrapped(1, "host", "nccl")
    assert solver.step_segments() is None
    assert solver.parallel.path.startswith("in the step graph")


@pytest.mark.gpu
@pytest.mark.parametrize("exchange", ["host", "nccl"])
def test_exchange_with_itself_on_the_gpu(exchange):
    """Host-staged (pinned copies captured in the graph, MPI between segments) and NCCL
    (send/recv and the rate's all-reduce captured: the step is one graph, no host work)."""
    solver = _check_wrapped(3, "cuda", exchange)
    assert (solver.step_segments() is None) == (exchange == "nccl")
    _check_wrapped(1, "cuda", exchange)


@pytest.mark.parametrize("ndim, launch, halo_sides", [
    (2, (5, 7, 1), (2, 3)), (2, (5, 7, 1), (0, 1, 2, 3)), (3, (3, 4, 9), (4, 5)),
    (3, (3, 4, 9), (0, 3, 4)), (3, (1, 1, 3), (4, 5)), (1, (4, 1, 1), (0, 1))])
def test_regions_cover_the_launch_once_and_the_interior_reads_no_halo(ndim, launch, halo_sides):
    """The blocks of a stage's launch split into the interior (run while the halos travel)
    and boundary slabs: every block in exactly one box, no interior block reading beyond a
    side with a halo."""
    from solvers.fv.euler import march_reach

    shape = {1: (200,), 2: (200, 50), 3: (200, 40, 9)}[ndim]
    grid = StructuredGrid(**{k: v for k, v in zip(("nx", "ny", "nz"), shape)},
                          **{a: (0.0, 1.0) for a in ("x", "y", "z")[:ndim]})
    kinds = [1] * (2 * ndim)
    solver = EulerSolver(grid, {s: "transmissive" for s in
                                ("x_lo", "x_hi", "y_lo", "y_hi", "z_lo", "z_hi")[:2 * ndim]},
                         backend="host", decomposition=Decomposition(MPI.COMM_SELF))
    block = solver.parallel
    block.kinds = [4 if s in halo_sides else k for s, k in enumerate(kinds)]
    rows = 8
    reach = lambda axis, b: march_reach(axis, b, rows)  # noqa: E731
    interior, boundary = block.regions(launch, reach)
    seen = np.zeros(launch, int)
    n = (block.local.nx, block.local.ny, block.local.nz)
    for inside, (first, count) in [(True, box) for box in interior] + [
            (False, box) for box in boundary]:
        part = tuple(slice(f, f + c) for f, c in zip(first, count))
        seen[part] += 1
        if inside:
            for axis in range(3):
                for b in range(first[axis], first[axis] + count[axis]):
                    lo, hi = reach(axis, b)
                    assert not (2 * axis in halo_sides and lo < 0), (axis, b)
                    assert not (2 * axis + 1 in halo_sides and hi >= n[axis]), (axis, b)
    assert (seen == 1).all()
    assert interior or min(launch) < 3  # small launches may have no interior
