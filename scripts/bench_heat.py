"""Transient heat benchmark on one card: time per step of solvers.fe.HeatSolver (Crank-Nicolson,
one captured graph per `--steps-per-graph` steps with the CG solve looping on the device)
against the same steps launched eagerly (the host checks CG's flag every iteration), and
against what a user would do on the CPU: SciPy, factorising M + theta dt K once (splu) and
back-substituting every step.

    python scripts/bench_heat.py [--dofs 1e4,1e5,1e6] [--json bench_heat.json]
    python scripts/bench_heat.py --backend host --dofs small          # CPU smoke test

Problem: the decay of sin(pi x) sin(pi y) on the unit square (rectangle(n, n), P1, or
box(n, n, n) with --dim 3), k = rho c = 1, u = 0 on the boundary, dt = --dt, plain fp32
(refine=False), CG to rtol 1e-6 with Jacobi and (up to --amg-max-dofs) algebraic multigrid.
Times are device time (CUDA
events; host: wall clock) of --replays graph replays (or eager step batches) divided by the
steps. `check` is the largest difference from the SciPy steps over the largest value, after
the same number of steps from the same state (about 1e-6: fp32 and rtol).

Bytes per step, each array once (a lower bound; Jacobi rows only, AMG's V-cycle traffic is not
modelled): the right-hand side and lifting kernels (2 sparse products), CG's start (one more)
and per iteration the fused product + dot (column indices, values, row pointers, x, q) and the
vector updates (about 12 vectors read or written), all against the measured copy bandwidth.
"""

import argparse
import json
import sys
import time

import bench_fem
import benchrun
import devicetime
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.backend.stepper import Stepper
from solvers.fe import Dirichlet, box, rectangle
from solvers.fe.heat import HeatSolver
from solvers.linalg.krylov import ITER

DOFS = {"default": "1e4,1e5,1e6", "small": "300,3000"}
THETA = 0.5
RTOL = 1e-6


def mode(*x):
    return np.prod([np.sin(np.pi * c) for c in x[:-1]], axis=0)


def build(dim, dofs, preconditioner, args):
    n = max(2, round(dofs ** (1 / dim)) - 1)
    mesh = rectangle(n, n) if dim == 2 else box(n, n, n)
    walls = {name: Dirichlet(0.0) for name in mesh.boundaries}
    start = time.perf_counter()
    # refine=False: plain fp32 steps are what this measures (not the fp64-refined default).
    solver = HeatSolver(mesh, args.dt, THETA, 1, initial=mode, boundary=walls,
                        preconditioner=preconditioner, rtol=RTOL, backend=args.backend,
                        precision="fp32", refine=False)
    return solver, time.perf_counter() - start


def step_bytes(solver, iterations):
    """Lower bound of the bytes a step moves (see the module docstring)."""
    n, nnz = solver.space.n, solver.assembler.pattern.nnz
    item = np.dtype(solver.dtype).itemsize
    product = nnz * (4 + item) + n * (4 + 2 * item)
    return 3 * product + 10 * n * item + iterations * (product + 12 * n * item)


def time_steps(solver, graph, args):
    """(seconds per step, iterations of the last solve) over --replays batches of steps."""
    dev = solver.backend
    stepper = Stepper(dev, solver.step, args.steps_per_graph, graph)
    stepper.advance()  # eager first batch: compiles, warms up (and captures the graph)

    def batches():
        for _ in range(args.replays):
            stepper.advance()

    seconds = devicetime.seconds(dev, batches)
    iterations = int(dev.to_host(solver.cg.state)[ITER])
    return seconds / (args.replays * args.steps_per_graph), iterations


def host_matrices(solver):
    """(A, B, free dofs): the theta-scheme matrices on the free dofs, from the device values."""
    dev = solver.backend
    row_ptr, columns = solver.assembler.pattern.host_arrays()
    shape = (solver.space.n,) * 2

    def matrix(values):
        return sp.csr_matrix((dev.to_host(values).astype(np.float64), columns, row_ptr),
                             shape=shape)

    mass, stiffness = matrix(solver.mass), matrix(solver.stiffness)
    free = np.setdiff1d(np.arange(solver.space.n), solver.system.dirichlet_dofs)
    dt = solver.dt
    a = (mass + THETA * dt * stiffness)[free][:, free].tocsc()
    b = (mass - (1 - THETA) * dt * stiffness)[free][:, free].tocsr()
    return a, b, free


def scipy_steps(solver, steps):
    """(seconds per step, factorisation seconds, u after `steps` steps from u0)."""
    a, b, free = host_matrices(solver)
    u = mode(*solver.space.node_points[free].T, 0)
    start = time.perf_counter()
    lu = spla.splu(a)
    factor = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(steps):
        u = lu.solve(b @ u)
    out = np.zeros(solver.space.n)
    out[free] = u
    return (time.perf_counter() - start) / steps, factor, out


def bench_item(dim, dofs, preconditioner, args, copy_gbs):
    solver, setup = build(dim, dofs, preconditioner, args)
    row = {"dim": dim, "preconditioner": preconditioner, "dofs": solver.space.n,
           "nnz": solver.assembler.pattern.nnz, "setup_s": setup}
    for graph in (False, True):
        solver.set_initial(mode)
        seconds, iterations = time_steps(solver, graph, args)
        row["graph_ms" if graph else "eager_ms"] = seconds * 1e3
        row["iterations"] = iterations
    row["graph_speedup"] = row["eager_ms"] / row["graph_ms"]
    if preconditioner == "jacobi":
        gbs = step_bytes(solver, row["iterations"]) / (row["graph_ms"] * 1e-3) / 1e9
        row.update(graph_gbs=gbs, copy_fraction=gbs / copy_gbs if copy_gbs else None)
    if solver.space.n <= args.cpu_max_dofs:
        steps = (1 + args.replays) * args.steps_per_graph
        per_step, factor, reference = scipy_steps(solver, steps)
        row.update(scipy_ms=per_step * 1e3, scipy_factor_s=factor,
                   check=float(abs(solver.values() - reference).max() / abs(reference).max()))
    return row


def run(args):
    _, copy_gbs, report = bench_fem.new_report(args, dt=args.dt, theta=THETA,
                                               steps_per_graph=args.steps_per_graph)
    start = time.perf_counter()
    for dofs in (float(d) for d in DOFS.get(args.dofs, args.dofs).split(",")):
        for preconditioner in ("jacobi", "amg"):
            if preconditioner == "amg" and dofs > args.amg_max_dofs:
                continue
            row = bench_item(args.dim, dofs, preconditioner, args, copy_gbs)
            report["rows"].append(row)
            print(json.dumps(row), flush=True)
    report["wall_seconds"] = time.perf_counter() - start
    return report


COLUMNS = [("dofs", "{}"), ("preconditioner", "{}"), ("iterations", "{}"),
           ("graph_ms", "{:.3f}"), ("eager_ms", "{:.3f}"), ("graph_speedup", "{:.1f}"),
           ("graph_gbs", "{:.0f}"), ("copy_fraction", "{:.1%}"), ("scipy_ms", "{:.2f}"),
           ("scipy_factor_s", "{:.2f}"), ("check", "{:.1e}")]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cuda", choices=("cuda", "host"))
    parser.add_argument("--dofs", default="default",
                        help="comma-separated dof counts, or 'default' / 'small'")
    parser.add_argument("--dim", type=int, default=2, choices=(2, 3))
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument("--steps-per-graph", type=int, default=10)
    parser.add_argument("--replays", type=int, default=5)
    parser.add_argument("--amg-max-dofs", type=float, default=3e6)
    parser.add_argument("--cpu-max-dofs", type=float, default=1.1e6,
                        help="skip the SciPy steps above this many dofs")
    parser.add_argument("--json", default="bench_heat.json")
    return parser.parse_args(argv)


def main(argv=None):
    return benchrun.main("bench_heat", parse_args(argv), "--backend host --dofs small", run,
                         lambda report: bench_fem.table(report, COLUMNS))


if __name__ == "__main__":
    sys.exit(main())
