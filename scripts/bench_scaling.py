"""Scaling of decomposed runs (issue 24): the structured Euler solver's step (2D, 3D) and the 3D
Poisson MG-PCG solve on 1..N MPI ranks, weak (a fixed block a rank) and strong (a fixed grid),
side by side in one run.

For each rank count the script starts itself under mpiexec; every rank builds its block of the
grid (one GPU a rank where the machine has enough, else ranks share: on a one-GPU machine the
figures are the decomposition's overhead alone), replays STEPS steps in graphs of 10 and
reports the median time a step over REPEATS timings, with the exchange's path, the bytes a rank
sends a step and the process grid. The Poisson rows time a solve of -lap u = b (Dirichlet, a
random b, fp32, to rtol 1e-6) by CG with the distributed multigrid, with its iterations.
Reference rows: the whole grid on one rank, and one rank's block alone. Efficiency: weak
t(block alone) / t(N); strong t(1) / (N t(N)); ranks sharing one device (a GPU, or the host's
cores): t(the same grid on one rank) / t(N), the device doing the same work either way.

--exchange picks the way of the exchanges (backend/collectives.py): auto, nccl (launches inside
the graph: NCCL, on the host backend MPI calls), host (host-staged), or several, comma-separated,
measured side by side (rows with their "exchange"; one rank's reference rows once). Without a
suffix the solvers overlap the exchanges with the interior work where they find it pays
(Decomposition's overlap=None: the Euler step when a swap sends 1 MiB or more, the Poisson solve
on levels of 2^20 cells or more); "_serial" (host_serial, say) never overlaps (overlap=False,
BlockLaplacian's overlap=None) and "_overlap" always does (overlap=True; BlockLaplacian's
overlap=0: every level), to measure what the overlap saves or costs.

    python scripts/bench_scaling.py [--ranks 1,2] [--size2d 4096] [--size3d 256] [--poisson 128]
    python scripts/bench_scaling.py --ranks 1,2,4 --exchange nccl,host --workloads poisson3d
    python scripts/bench_scaling.py --ranks 2 --exchange host,host_serial,host_overlap
    python scripts/bench_scaling.py --backend host --ranks 1,2 --size2d 64 --size3d 16 \
        --poisson 16 --steps 10
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import benchrun
import numpy as np

from solvers.backend.mpi import max_op, mpiexec

ROOT = Path(__file__).resolve().parents[1]
STEPS_PER_GRAPH = 10


# -- one rank's part (run under mpiexec) ----------------------------------------------------
def grid_of(ndim, n):
    from solvers.mesh import StructuredGrid

    axes = {"nx": n[0], "x": (0.0, 1.0), "ny": n[1], "y": (0.0, 1.0)}
    if ndim == 3:
        axes.update(nz=n[2], z=(0.0, 1.0))
    return StructuredGrid(**axes)


def shares_device(comm, backend):
    """Whether some ranks of comm (None: one rank) run on one device (a GPU, or the host)."""
    if comm is None:
        return False
    import socket

    device = backend.cupy.cuda.Device().pci_bus_id if backend.name == "cuda" else "host"
    devices = comm.allgather((socket.gethostname(), device))
    return len(set(devices)) < len(devices)


def exchange_way(exchange):
    """(the collectives' way, Decomposition's overlap) of an --exchange item."""
    for suffix, overlap in (("_serial", False), ("_overlap", True)):
        if exchange.endswith(suffix):
            return exchange.removesuffix(suffix), overlap
    return exchange, None


def poisson_part(args, shape):
    """Time this rank's part of the distributed MG-PCG solve; rank 0 prints one JSON line."""
    from mpi4py import MPI

    from solvers.linalg.block_layout import block_layout
    from solvers.linalg.block_stencil import BlockLaplacian
    from solvers.linalg.distributed_cg import DistributedConjugateGradient
    from solvers.linalg.distributed_multigrid import DistributedMultigrid

    comm = MPI.COMM_WORLD
    layout = block_layout(comm.Get_rank(), comm.Get_size(), shape)
    way, overlap = exchange_way(args.exchange)
    op = BlockLaplacian(comm, layout.block, shape, tuple(1 / n for n in shape),
                        backend=args.backend, precision="fp32", exchange=way,
                        **({} if overlap is None else {"overlap": 0 if overlap else None}))
    cg = DistributedConjugateGradient(op, DistributedMultigrid(op, layout), rtol=1e-6)
    b = op.scatter(np.random.default_rng(0).uniform(-1, 1, shape))
    cg.solve(b)  # compiles
    times = []
    for _ in range(args.repeats):
        comm.Barrier()
        start = time.perf_counter()
        _, info = cg.solve(b)
        times.append(comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
    shared = shares_device(comm if comm.Get_size() > 1 else None, op.backend)
    if comm.Get_rank() == 0:
        print(json.dumps({"step_ms": 1e3 * float(np.median(times)), "cells": int(np.prod(shape)),
                          "iterations": info.iterations, "path": cg.path, "dims": None,
                          "shared": shared,
                          "bytes_sent_per_step": None,
                          "overlapped": op.overlap is not None and op.n >= op.overlap,
                          "device": op.backend.describe()["device"]}), flush=True)


def rank_part(args):
    """Time this rank's steps of args.shape; rank 0 prints one JSON line."""
    from solvers.backend.mpi import world
    from solvers.backend.stepper import Stepper
    from solvers.fv.euler import EulerSolver
    from solvers.mesh.decomposition import Decomposition

    shape = tuple(int(n) for n in args.shape.split("x"))
    if args.workload == "poisson":
        return poisson_part(args, shape)
    comm = world()
    grid = grid_of(len(shape), shape)
    boundary = {side: "periodic" for side in ("x_lo", "x_hi", "y_lo", "y_hi", "z_lo", "z_hi")
                [:2 * grid.ndim]}
    way, overlap = exchange_way(args.exchange)
    decomposition = None if comm is None else Decomposition(comm, exchange=way, overlap=overlap)
    solver = EulerSolver(grid, boundary, time_integrator="ssp_rk2", backend=args.backend,
                         decomposition=decomposition)
    x = grid.centres()
    solver.set_primitive(rho=1 + 0.2 * np.sin(2 * np.pi * x[0]) * np.cos(2 * np.pi * x[1]),
                         vx=0.5, vy=0.3, p=1.0, **({"vz": 0.1} if grid.ndim == 3 else {}))
    stepper = Stepper(solver.backend, solver.step, STEPS_PER_GRAPH,
                      segments=solver.step_segments())
    stepper.advance()  # compiles, captures
    times = []
    for _ in range(args.repeats):
        if comm is not None:
            comm.Barrier()
        solver.backend.synchronize()
        start = time.perf_counter()
        for _ in range(args.steps // STEPS_PER_GRAPH):
            stepper.advance()
        solver.backend.synchronize()
        elapsed = time.perf_counter() - start
        times.append(elapsed if comm is None else comm.allreduce(elapsed, op=max_op()))
    block = solver.parallel
    shared = shares_device(comm, solver.backend)
    sent = 0 if block is None else block.swap_bytes * len(solver.stages)
    if comm is None or comm.Get_rank() == 0:
        print(json.dumps({"step_ms": 1e3 * float(np.median(times)) / args.steps,
                          "cells": grid.ncells, "path": None if block is None else block.path,
                          "dims": None if block is None else block.dims, "shared": shared,
                          "bytes_sent_per_step": int(sent),
                          "overlapped": None if block is None else block.overlap,
                          "device": solver.backend.describe()["device"]}), flush=True)


# -- the driver -------------------------------------------------------------------------------
def launcher(ranks):
    if ranks == 1:
        return []
    command = mpiexec(ranks)
    if command is None:
        raise SystemExit("bench_scaling: no mpiexec (pip install 'solvers[mpi]')")
    return command


def measure(args, ranks, shape, workload, exchange="auto"):
    command = [*launcher(ranks), sys.executable, __file__, "--rank-part", "--shape",
               "x".join(map(str, shape)), "--workload", workload, "--backend", args.backend,
               "--steps", str(args.steps), "--repeats", str(args.repeats),
               "--exchange", exchange]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()[-2000:]}")
    row = json.loads(result.stdout.strip().splitlines()[-1])
    row.update(ranks=ranks, shape=list(shape), exchange=exchange)
    print(f"  {workload} {ranks} rank(s) {'x'.join(map(str, shape))} ({exchange}): "
          f"{row['step_ms']:.3f} ms", flush=True)
    return row


def weak_shape(base, ranks, ndim):
    """A grid of `ranks` blocks of base^ndim cells: the blocks stacked along the axes in turn."""
    shape = [base] * ndim
    factor, axis = ranks, ndim - 1
    while factor > 1:
        shape[axis] *= 2 if factor % 2 == 0 else factor
        factor = factor // 2 if factor % 2 == 0 else 1
        axis = (axis - 1) % ndim
    return shape


def bench(args):
    start = time.perf_counter()
    ranks = [int(r) for r in args.ranks.split(",")]
    report = {"backend": args.backend, "steps": args.steps, "repeats": args.repeats,
              "versions": benchrun.versions(args.backend == "cuda"), "rows": [], "errors": []}
    sizes = {"euler2d": (2, args.size2d), "euler3d": (3, args.size3d),
             "poisson3d": (3, args.poisson)}
    for name in args.workloads.split(","):
        ndim, base = sizes[name]
        try:
            report["rows"] += scaling_rows(args, name[:-2], ndim, base, ranks)
        except RuntimeError as error:  # one workload failing leaves the others' rows
            print(f"  {name}: {error}", flush=True)
            report["errors"].append({"workload": name, "error": str(error)})
    report["wall_seconds"] = time.perf_counter() - start
    return report


def scaling_rows(args, workload, ndim, base, ranks):
    """The weak and strong rows of one workload on each rank count, each way of the
    exchanges (--exchange)."""
    rows, block, whole = [], [base] * ndim, {}
    alone = measure(args, 1, block, workload)
    for mode, exchange in ((m, e) for m in ("weak", "strong") for e in args.exchange.split(",")):
        for n in ranks:
            row = dict(alone if n == 1 else measure(
                args, n, weak_shape(base, n, ndim) if mode == "weak" else block, workload,
                exchange), mode=mode, ndim=ndim, workload=workload)
            # Ranks sharing a device (one GPU, or the host's cores) do the work of one.
            if mode == "weak" and n > 1:
                if tuple(row["shape"]) not in whole:  # measured once for every way
                    whole[tuple(row["shape"])] = measure(args, 1, row["shape"], workload)
                row["whole_on_one_rank_ms"] = whole[tuple(row["shape"])]["step_ms"]
            reference = row.get("whole_on_one_rank_ms", alone["step_ms"]) if row["shared"] \
                else alone["step_ms"]
            row["efficiency"] = reference / row["step_ms"] / (
                n if mode == "strong" and not row["shared"] else 1)
            rows.append(row)
    return rows


def table(report):
    lines = [f"{'work':>9} {'mode':>6} {'ranks':>5} {'grid':>14} {'ms':>9} {'eff':>5} "
             f"{'MB sent':>8}  path (ms: a step; a solve for poisson, its iterations in [])"]
    for r in report["rows"]:
        sent = "-" if r["bytes_sent_per_step"] is None else f"{r['bytes_sent_per_step'] / 1e6:.2f}"
        its = f" [{r['iterations']}]" if "iterations" in r else ""
        its += {True: ", overlapped", False: ", not overlapped"}.get(r.get("overlapped"), "")
        lines.append(f"{r['workload'] + str(r['ndim']) + 'd':>9} {r['mode']:>6} {r['ranks']:>5} "
                     f"{'x'.join(map(str, r['shape'])):>14} {r['step_ms']:>9.3f} "
                     f"{r['efficiency']:>5.2f} {sent:>8}  {r['path'] or 'one rank'}{its}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    p.add_argument("--ranks", default="1,2")
    p.add_argument("--size2d", type=int, default=4096, help="cells a side of a 2D block")
    p.add_argument("--size3d", type=int, default=256, help="cells a side of a 3D block")
    p.add_argument("--poisson", type=int, default=128, help="cells a side of a Poisson block")
    p.add_argument("--workloads", default="euler2d,euler3d,poisson3d")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--exchange", default="auto", help="auto, nccl, host (each maybe with "
                   "_serial: no overlap, or _overlap: always), or several comma-separated "
                   "(backend/collectives.py)")
    p.add_argument("--json", default="bench_scaling.json")
    p.add_argument("--rank-part", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--shape", help=argparse.SUPPRESS)
    p.add_argument("--workload", choices=("euler", "poisson"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rank_part:
        rank_part(args)
        return 0
    return benchrun.main("bench_scaling", args, "--backend host --ranks 1,2 --size2d 64 "
                         "--size3d 16 --poisson 16 --steps 10", bench, table)


if __name__ == "__main__":
    sys.exit(main())
