"""Incompressible Navier-Stokes benchmark on one card: the lid-driven cavity (Re = 100 by
default) on n x n MAC cells, per size

  - time per step replayed from CUDA graphs and launched eagerly (multigrid-preconditioned CG
    for the pressure), and with Jacobi-preconditioned CG instead (graphs),
  - the share of a step spent in the pressure solve (a step's graph without the solve timed
    against the whole step) and the pressure iterations per step,
  - achieved GB/s of the rest of the step (predictor, divergence, correction: BYTES_PER_CELL
    below) against the measured copy bandwidth (scripts/ceilings.py),
  - time to the steady state (relative change below 1e-3 per unit time) from rest, where it
    takes at most --steady-max-steps steps; beyond, the steps it needs (t_steady / dt, from the
    largest size run) times the measured time per step, marked as an estimate: the explicit
    diffusion limit dt ~ h^2 / nu makes the steps grow as n^2.

    python scripts/bench_incompressible.py [--sizes 128,256,512,1024,2048] [--json out.json]
    python scripts/bench_incompressible.py --backend host --sizes 16,32   # CPU smoke test

A table is printed last; full numbers go to --json.
"""

import argparse
import json
import statistics
import sys
import time

import benchrun
import ceilings
import devicetime
import numpy as np

from solvers.backend import get_backend
from solvers.backend.stepper import Stepper
from solvers.fv.incompressible.solver import IncompressibleSolver
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation

CAVITY = {"x_lo": "wall", "x_hi": "wall", "y_lo": "wall", "y_hi": {"wall": 1.0}}
STEADY_TOLERANCE = 1e-3
WARM_STEPS = 200  # steps from rest before timing: the lid's boundary layer has formed
# Bytes a cell moves per step outside the pressure solve (fp32 words): the predictor reads
# u, v (each value about 5 times, from cache) and N_old, writes u*, N; the divergence reads u*,
# p and writes b, x; the correction reads u*, x, u, u_ref and writes u, p: 23 words, 92 bytes.
WORDS_PER_CELL = 23


def cavity(n, backend, re, preconditioner, steady_tolerance=0.0):
    grid = StructuredGrid(n, x=(0.0, 1.0), ny=n, y=(0.0, 1.0))
    return IncompressibleSolver(grid, CAVITY, nu=1.0 / re, backend=backend,
                                pressure_preconditioner=preconditioner,
                                steady_tolerance=steady_tolerance)


def step_without_solve(solver):
    """A step's launches except the pressure solve (for timing only: it does not project)."""
    def step():
        solver.clock.finish_dt()
        solver._scale()
        for launch in solver._fill[1]:
            launch()
        solver._predict()
        solver._divergence()
        solver._correct()
        solver._finish()
    return step


def per_step(backend, step, k, repeats, graph=True):
    """Median seconds per step of k steps replayed (or launched eagerly), over repeats."""
    stepper = Stepper(backend, step, steps_per_graph=k, graph=graph)
    stepper.advance()  # compile, warm up, capture
    stepper.advance()
    return statistics.median(devicetime.seconds(backend, stepper.advance)
                             for _ in range(repeats)) / k


def warmed(n, backend, re, preconditioner, start=None):
    """A cavity after WARM_STEPS steps from rest, or from the state of `start` (a solver)."""
    solver = cavity(n, backend, re, preconditioner)
    if start is not None:
        solver.set_state(*start.face_velocities(), p=start.pressure_field())
    solver.clock.set(t_stop=1e300)
    if start is None:
        Stepper(backend, solver.step, steps_per_graph=WARM_STEPS, graph=False).advance()
    return solver


def bench_size(n, backend, args, copy_gbs):
    row = {"n": n, "cells": n * n}
    solver = warmed(n, backend, args.re, "multigrid")
    k, repeats = args.steps_per_graph, args.repeats
    row["graph_s"] = per_step(backend, solver.step, k, repeats)
    row["eager_s"] = per_step(backend, solver.step, k, max(1, repeats // 2), graph=False)
    solver.observe()
    row["pressure_iterations"] = float(np.mean(solver.series["pressure_iterations"][-k:]))
    row["unconverged_solves"] = solver.pressure_report()["unconverged_solves"]
    row["dt"] = solver.clock.read().dt
    if n <= args.jacobi_max_size:
        # Jacobi-CG needs O(n) iterations a step: fewer steps timed, from the same flow.
        jacobi = warmed(n, backend, args.re, "jacobi", start=solver)
        row["jacobi_graph_s"] = per_step(backend, jacobi.step, max(1, k // 10), 2)
        jacobi.observe()
        row["jacobi_iterations"] = float(np.mean(jacobi.series["pressure_iterations"][-1:]))
        del jacobi
    # Last, as it leaves the state unprojected: the step without its pressure solve.
    row["no_solve_s"] = per_step(backend, step_without_solve(solver), k, repeats)
    row["pressure_share"] = max(0.0, 1.0 - row["no_solve_s"] / row["graph_s"])
    row["rest_gbs"] = WORDS_PER_CELL * 4 * n * n / row["no_solve_s"] / 1e9
    row["rest_of_copy"] = row["rest_gbs"] / copy_gbs
    return row


def time_to_steady(n, backend, args):
    solver = cavity(n, backend, args.re, "multigrid", STEADY_TOLERANCE)
    simulation = Simulation(solver, 1e4, steps_per_graph=args.steps_per_graph,
                            max_steps=args.steady_max_steps)
    start = time.perf_counter()
    result = simulation.run()
    return {"steady_wall_s": time.perf_counter() - start, "steady_steps": result.steps,
            "steady_t": result.t, "steady_measured": True}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    p.add_argument("--sizes", default="128,256,512,1024,2048")
    p.add_argument("--re", type=float, default=100.0)
    p.add_argument("--steps-per-graph", type=int, default=20)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--jacobi-max-size", type=int, default=1024,
                   help="largest n timed with Jacobi-CG (its iterations grow as n)")
    p.add_argument("--steady-max-steps", type=int, default=100000,
                   help="measure the time to steady state up to this many steps, else estimate")
    p.add_argument("--json", default="bench_incompressible.json")
    return p.parse_args(argv)


def run(args):
    start = time.perf_counter()
    backend = get_backend(args.backend)
    ceil = ceilings.measure(args.backend)
    copy_gbs = ceil["copy"]["gbs"]
    report = {"card": backend.describe(), "ceilings": ceil, "re": args.re, "sizes": []}
    steady_t = None
    for n in (int(s) for s in args.sizes.split(",")):
        row = bench_size(n, backend, args, copy_gbs)
        needed = int((steady_t or 0) / row["dt"]) if steady_t else None
        if needed is None or needed <= args.steady_max_steps:
            try:
                row.update(time_to_steady(n, backend, args))
                steady_t = row["steady_t"]
            except RuntimeError as error:  # max_steps reached: estimate below instead
                print(f"n={n}: {error}", file=sys.stderr)
        if "steady_wall_s" not in row and steady_t:
            row.update({"steady_steps": int(steady_t / row["dt"]), "steady_measured": False,
                        "steady_wall_s": steady_t / row["dt"] * row["graph_s"]})
        report["sizes"].append(row)
        print(json.dumps(row), flush=True)
    report["wall_seconds"] = time.perf_counter() - start
    return report


def table(report):
    lines = [f"\ncavity Re={report['re']:g} on {report['card'].get('device', report['card'])}, "
             f"copy {report['ceilings']['copy']['gbs']:.0f} GB/s",
             f"{'n':>6} {'graph ms':>9} {'eager ms':>9} {'x':>5} {'jacobi ms':>10} {'MG it':>6} "
             f"{'Jac it':>7} {'p share':>8} {'rest GB/s':>10} {'%copy':>6} {'steps':>8} "
             f"{'t_steady s':>11}"]
    for r in report["sizes"]:
        steady = (f"{r['steady_wall_s']:.3g}{'' if r['steady_measured'] else ' (est)'}"
                  if "steady_wall_s" in r else "-")
        jacobi = (f"{r['jacobi_graph_s'] * 1e3:>10.3f} {r['pressure_iterations']:>6.1f} "
                  f"{r['jacobi_iterations']:>7.1f}" if "jacobi_graph_s" in r else
                  f"{'-':>10} {r['pressure_iterations']:>6.1f} {'-':>7}")
        lines.append(f"{r['n']:>6} {r['graph_s'] * 1e3:>9.3f} {r['eager_s'] * 1e3:>9.3f} "
                     f"{r['eager_s'] / r['graph_s']:>5.1f} {jacobi} "
                     f"{r['pressure_share']:>8.0%} {r['rest_gbs']:>10.1f} "
                     f"{r['rest_of_copy']:>6.0%} {r.get('steady_steps', 0):>8} {steady:>11}")
    return "\n".join(lines)


def main(argv=None):
    return benchrun.main("bench_incompressible", parse_args(argv),
                         "--backend host --sizes 16,32", run, table)


if __name__ == "__main__":
    sys.exit(main())
