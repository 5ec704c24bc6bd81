"""What each rank runs for tests/test_linalg_distributed_poisson.py, under mpiexec:

    mpiexec -n 3 python tests/mpi_poisson_driver.py problems.json results.npz

For every problem of the JSON list (see problem() in the test) it applies the distributed
operator to a fixed vector and solves A x = b by MG-preconditioned CG on the host backend,
gathers both onto every rank, and rank 0 writes them with the iteration counts and solve times
(the least of the problem's "repeats", default 1) into the .npz (keys <name>_y, <name>_x,
<name>_iterations, <name>_residual, <name>_seconds, <name>_gather, <name>_converged).
A problem with "exchanges" (a list of BlockLaplacian's exchange ways, each maybe with
"_serial": no overlap of the exchanges with the interior; without, every level overlaps,
however small) is solved once each way instead, on
the rank counts of its "ranks" only, and its keys end in _<way> (x, iterations, residual,
converged, path); with "graph": false the solves run eagerly.
"""

import json
import sys
import time

import numpy as np
from mpi4py import MPI

from solvers.linalg.block_layout import block_layout
from solvers.linalg.block_stencil import BlockLaplacian
from solvers.linalg.distributed_cg import DistributedConjugateGradient
from solvers.linalg.distributed_multigrid import DistributedMultigrid


def coefficient(kind, shape):
    """None, or exp(1.5 sin(2 pi x) cos(3 y)) (z-modulated in 3D): a factor 20 variation."""
    if kind is None:
        return None
    centres = np.meshgrid(*[(np.arange(n) + 0.5) / n for n in shape], indexing="ij")
    value = 1.5 * np.sin(2 * np.pi * centres[0]) * np.cos(3 * centres[1])
    if len(shape) == 3:
        value = value * np.cos(centres[2])
    return np.exp(value)


def vectors(shape, seed):
    """The operator's input v and the right-hand side b, whole-grid arrays [i, j(, k)]."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)


def right_hand_side(problem):
    """The problem's b (whole grid); with "singular" (no Dirichlet side) less its mean, so that
    A x = b has solutions."""
    b = vectors(tuple(problem["shape"]), problem.get("seed", 0))[1]
    return b - b.mean() if problem.get("singular") else b


def build(problem, comm, exchange="auto", overlap=0):
    """(layout, BlockLaplacian) of a problem on this rank, its exchanges going `exchange`'s
    way, overlapped with the interior or not; a periodic side's axis wraps."""
    shape = tuple(problem["shape"])
    boundary = problem.get("boundary") or {}
    periodic = [boundary.get(f"{axis}_lo") == "periodic" for axis in "xyz"[:len(shape)]]
    layout = block_layout(comm.Get_rank(), comm.Get_size(), shape, gather=problem.get("gather"),
                          periodic=periodic)
    op = BlockLaplacian(comm, layout.block, shape, tuple(1 / n for n in shape),
                        coefficient=coefficient(problem.get("coefficient"), shape),
                        boundary=boundary, backend="host", precision=problem["precision"],
                        exchange=exchange, overlap=overlap)
    return layout, op


def run_ways(problem, comm):
    """One solve of the problem each of its exchange ways: {key_way: value}."""
    b = right_hand_side(problem)
    out = {}
    for way in problem["exchanges"]:
        layout, op = build(problem, comm, way.removesuffix("_serial"),
                           overlap=None if way.endswith("_serial") else 0)
        cg = DistributedConjugateGradient(op, DistributedMultigrid(op, layout),
                                          rtol=problem["rtol"], graph=problem.get("graph", True))
        x, info = cg.solve(op.scatter(b))
        out.update({f"x_{way}": op.gather(op.backend.to_host(x)),
                    f"iterations_{way}": info.iterations, f"residual_{way}": info.residual,
                    f"converged_{way}": info.converged, f"path_{way}": cg.path})
    return out


def run(problem, comm):
    if "exchanges" in problem:
        return run_ways(problem, comm)
    shape = tuple(problem["shape"])
    layout, op = build(problem, comm)
    v, b = vectors(shape, problem.get("seed", 0))

    # y = A v on the blocks.
    x_dev = op.backend.to_device(op.scatter(v).astype(op.dtype))
    y_dev = op.backend.zeros((op.n,), op.dtype)
    op.bind(x_dev, y_dev)()
    y = op.gather(op.backend.to_host(y_dev))

    # The MG-preconditioned CG solve, timed after a first solve (kernels compiled, warm): the
    # least of `repeats` solves, each the slowest rank's time.
    cg = DistributedConjugateGradient(op, DistributedMultigrid(op, layout), rtol=problem["rtol"])
    local_b = op.scatter(b)
    cg.solve(local_b)
    seconds = []
    for _ in range(problem.get("repeats", 1)):
        comm.Barrier()
        start = time.perf_counter()
        x, info = cg.solve(local_b)
        seconds.append(comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
    seconds = min(seconds)
    return {"y": y, "x": op.gather(op.backend.to_host(x)), "iterations": info.iterations,
            "residual": info.residual, "seconds": seconds, "gather": layout.gather,
            "converged": info.converged}


def main():
    comm = MPI.COMM_WORLD
    problems = json.loads(open(sys.argv[1]).read())
    results = {}
    for problem in problems:
        if comm.Get_size() not in problem.get("ranks", [comm.Get_size()]):
            continue
        for key, value in run(problem, comm).items():
            results[f"{problem['name']}_{key}"] = value
    if comm.Get_rank() == 0:
        np.savez(sys.argv[2], **results)


if __name__ == "__main__":
    main()
