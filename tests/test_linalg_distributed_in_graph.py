"""The ways of a distributed Poisson solve's exchanges (backend/collectives.py) on one rank:
periodic axes that are not split swap their halos with the rank itself through everything a
split grid's exchange runs (pack kernel, swap, unpack kernel; the gathered level's all-gather),
and the dot products go through the all-gather of the ranks' sums. Solved in the graph (NCCL on
a GPU; MPI calls as launches on the host backend), eagerly, in chunks of several iterations and
host-staged, x and the iterations must be equal bit for bit (the same launches; only the way
the bytes travel differs; iterations past convergence change nothing), x meets rtol with the
periodic matrix's float64 residual, and an iteration in the graph holds no host work. Several
ranks: tests/test_linalg_distributed_poisson.py."""

import numpy as np
import pytest
import scipy.sparse.linalg as spla

from solvers.backend.stepper import HostWork
from solvers.linalg.block_layout import block_layout
from solvers.linalg.block_stencil import BlockLaplacian
from solvers.linalg.distributed_cg import DistributedConjugateGradient
from solvers.linalg.distributed_multigrid import DistributedMultigrid
from solvers.linalg.stencil import SIDES, laplacian_matrix

MPI = pytest.importorskip("mpi4py.MPI")

# (shape, boundary, precision, rtol): 2D periodic along x, Neumann and Dirichlet in y; 3D
# periodic along x and z; gathered at an intermediate level (an algebraic coarse cycle).
PROBLEMS = {
    2: ((64, 48), {"x_lo": "periodic", "x_hi": "periodic", "y_hi": "neumann"}, "fp32", 1e-5),
    3: ((16, 16, 16), {"x_lo": "periodic", "x_hi": "periodic", "z_lo": "periodic",
                       "z_hi": "periodic", "y_lo": "neumann"}, "fp64", 1e-8),
}


def _solve(ndim, backend, exchange, graph=True, chunk=1):
    """(solver, x as a host array, SolveInfo) of the problem on one rank."""
    shape, boundary, precision, rtol = PROBLEMS[ndim]
    periodic = [boundary.get(f"{axis}_lo") == "periodic" for axis in "xyz"[:ndim]]
    layout = block_layout(0, 1, shape, periodic=periodic)
    op = BlockLaplacian(MPI.COMM_SELF, layout.block, shape, tuple(1 / n for n in shape),
                        boundary=boundary, backend=backend, precision=precision,
                        exchange=exchange)
    cg = DistributedConjugateGradient(op, DistributedMultigrid(op, layout), rtol=rtol,
                                      graph=graph, chunk=chunk)
    b = np.random.default_rng(0).uniform(-1, 1, shape).ravel(order="F")
    x, info = cg.solve(b)
    return cg, op.backend.to_host(x), info


def _check(ndim, backend):
    staged, x_staged, info_staged = _solve(ndim, backend, "host")
    cg, x, info = _solve(ndim, backend, "nccl")
    _, x_eager, info_eager = _solve(ndim, backend, "nccl", graph=False)
    # Chunks of 3 iterations: those past convergence change nothing.
    _, x_chunks, info_chunks = _solve(ndim, backend, "nccl", chunk=3)
    assert staged.path.startswith("host-staged")
    assert [isinstance(part, HostWork) for part in staged.step_parts()] == [True]
    # In the graph: launches, then the host's reading of the status.
    assert [isinstance(part, HostWork) for part in cg.step_parts()][-2:] == [False, True]
    assert sum(isinstance(part, HostWork) for part in cg.step_parts()) == 1
    assert info.converged and info.iterations == info_staged.iterations == info_eager.iterations
    assert info_chunks.iterations == info.iterations
    for other in (x_staged, x_eager, x_chunks):
        assert np.array_equal(x, other)
    shape, boundary, precision, rtol = PROBLEMS[ndim]
    kinds = {**{side: "dirichlet" for side in SIDES[:2 * ndim]}, **boundary}
    A = laplacian_matrix(shape, tuple(1 / n for n in shape), kinds)
    b = np.random.default_rng(0).uniform(-1, 1, shape).ravel(order="F")
    floor = 0 if precision == "fp64" else 4 * np.finfo(np.float32).eps * \
        spla.norm(A) * np.linalg.norm(x)
    assert np.linalg.norm(b - A @ x.astype(np.float64)) <= rtol * np.linalg.norm(b) + floor
    return cg


def test_in_graph_solve_on_one_rank_equals_host_staged():
    cg = _check(2, "host")
    assert cg.path.startswith("in the step graph (MPI calls as launches")


@pytest.mark.gpu
@pytest.mark.parametrize("ndim", [2, 3])
def test_nccl_solve_on_the_gpu_equals_host_staged(ndim):
    """NCCL's send/recv to the rank itself and its all-gather, captured in the graph of a
    chunk of iterations; without NCCL (or a GPU) asking for it fails."""
    cg = _check(ndim, "cuda")
    assert cg.path == "NCCL in the step graph"
