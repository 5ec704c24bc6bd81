"""3D incompressible Navier-Stokes benchmark on one card, per size n (n^3 MAC cells) and flow:
the viscous Taylor-Green vortex at Re = 1600 (periodic: assembled pressure matrix, algebraic
multigrid) and the cubic lid-driven cavity at Re = 1000 (walls: matrix-free stencil, geometric
multigrid), after WARM_STEPS steps:

  - time per step replayed from CUDA graphs and launched eagerly,
  - the share of a step spent in the pressure solve (a step's graph without the solve timed
    against the whole step) and the pressure iterations per step,
  - achieved GB/s of the rest of the step (boundaries, predictor, divergence, correction,
    finish: WORDS_PER_CELL below) against the measured copy bandwidth (scripts/ceilings.py).

    python scripts/bench_incompressible3d.py [--sizes 64,128,256] [--json out.json]
    python scripts/bench_incompressible3d.py --backend host --sizes 16   # CPU smoke test

A table is printed last; full numbers go to --json.
"""

import argparse
import sys
import time

import benchrun
import ceilings
import numpy as np
from bench_incompressible import per_step, step_without_solve

from solvers.backend import get_backend
from solvers.fv.incompressible3d import IncompressibleSolver3D
from solvers.fv.sides import SIDES_3D
from solvers.mesh import StructuredGrid

WARM_STEPS = 20  # steps before timing (the AB2 history and the pressure guess in place)
# Words (fp32) a cell moves per step outside the pressure solve, three components each: the
# predictor reads u, v, w (neighbours from cache) and N_old, writes u* and N (12); the
# divergence reads u* and p, writes b and x (6); the correction reads u*, x and u_ref, writes
# u and p (11): 29 words, 116 bytes. Ghost fills and the finish kernel are left out (O(n^2)).
WORDS_PER_CELL = 29
FLOWS = ("taylor_green", "cavity")


def solver_of(flow, n, backend, precision):
    """The flow on n^3 cells, its initial state set."""
    if flow == "taylor_green":
        size = 2 * np.pi
        grid = StructuredGrid(n, x=(0, size), ny=n, y=(0, size), nz=n, z=(0, size))
        solver = IncompressibleSolver3D(grid, dict.fromkeys(SIDES_3D, "periodic"),
                                        nu=1 / 1600, backend=backend, precision=precision)
        (ux, uy, uz), (vx, vy, vz), (wx, _, _) = solver.face_coordinates()
        solver.set_state(np.sin(ux) * np.cos(uy) * np.cos(uz),
                         -np.cos(vx) * np.sin(vy) * np.cos(vz), np.zeros_like(wx))
        return solver
    grid = StructuredGrid(n, x=(0, 1), ny=n, y=(0, 1), nz=n, z=(0, 1))
    boundary = {**dict.fromkeys(SIDES_3D, "wall"), "y_hi": {"wall": [1.0, 0.0]}}
    return IncompressibleSolver3D(grid, boundary, nu=1e-3, advection="quick", backend=backend,
                                  precision=precision)


def bench_size(flow, n, backend, args, copy_gbs):
    row = {"flow": flow, "n": n, "cells": n**3}
    start = time.perf_counter()
    solver = solver_of(flow, n, backend, args.precision)
    row["setup_s"] = time.perf_counter() - start
    solver.clock.set(t_stop=1e300)
    k, repeats = args.steps_per_graph, args.repeats
    per_step(backend, solver.step, WARM_STEPS, 1, graph=False)  # warm: AB2, pressure guess
    row["graph_s"] = per_step(backend, solver.step, k, repeats)
    row["eager_s"] = per_step(backend, solver.step, k, max(1, repeats // 2), graph=False)
    solver.observe()
    row["pressure_iterations"] = float(np.mean(solver.series["pressure_iterations"][-k:]))
    row["unconverged_solves"] = solver.pressure_report()["unconverged_solves"]
    row["pressure_method"] = solver.pressure_method
    # Last, as it leaves the state unprojected: the step without its pressure solve.
    row["no_solve_s"] = per_step(backend, step_without_solve(solver), k, repeats)
    row["pressure_share"] = max(0.0, 1.0 - row["no_solve_s"] / row["graph_s"])
    word = np.dtype(solver.dtype).itemsize
    row["rest_gbs"] = WORDS_PER_CELL * word * n**3 / row["no_solve_s"] / 1e9
    row["rest_of_copy"] = row["rest_gbs"] / copy_gbs
    return row


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    p.add_argument("--sizes", default="64,128,256")
    p.add_argument("--flows", default=",".join(FLOWS))
    p.add_argument("--precision", choices=("fp32", "fp64"), default="fp32")
    p.add_argument("--steps-per-graph", type=int, default=10)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", default="bench_incompressible3d.json")
    return p.parse_args(argv)


def run(args):
    start = time.perf_counter()
    backend = get_backend(args.backend)
    ceil = ceilings.measure(args.backend)
    copy_gbs = ceil["copy"]["gbs"]
    report = {"card": backend.describe(), "ceilings": ceil, "precision": args.precision,
              "versions": benchrun.versions(args.backend == "cuda"), "sizes": []}
    for flow in args.flows.split(","):
        if flow not in FLOWS:
            raise SystemExit(f"--flows: unknown flow '{flow}' (expected {', '.join(FLOWS)})")
        for n in (int(s) for s in args.sizes.split(",")):
            row = bench_size(flow, n, backend, args, copy_gbs)
            report["sizes"].append(row)
            print(row, flush=True)
    report["wall_seconds"] = time.perf_counter() - start
    return report


def table(report):
    lines = [f"\n3D incompressible, {report['precision']}, on "
             f"{report['card'].get('device', report['card'])}, copy "
             f"{report['ceilings']['copy']['gbs']:.0f} GB/s",
             f"{'flow':>13} {'n':>5} {'graph ms':>9} {'eager ms':>9} {'x':>5} {'p it':>6} "
             f"{'p share':>8} {'rest GB/s':>10} {'%copy':>6} {'setup s':>8}"]
    for r in report["sizes"]:
        lines.append(f"{r['flow']:>13} {r['n']:>5} {r['graph_s'] * 1e3:>9.3f} "
                     f"{r['eager_s'] * 1e3:>9.3f} {r['eager_s'] / r['graph_s']:>5.1f} "
                     f"{r['pressure_iterations']:>6.1f} {r['pressure_share']:>8.0%} "
                     f"{r['rest_gbs']:>10.1f} {r['rest_of_copy']:>6.0%} {r['setup_s']:>8.2f}")
    return "\n".join(lines)


def main(argv=None):
    return benchrun.main("bench_incompressible3d", parse_args(argv),
                         "--backend host --sizes 16", run, table)


if __name__ == "__main__":
    sys.exit(main())
