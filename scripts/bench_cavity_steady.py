"""Time to the steady state of the lid-driven cavity on one card, per viscous scheme: the run
from rest until the velocity's relative change per unit time is below 1e-3 (the solver's
steady test), timed whole (compile and capture included), with its steps, simulated time, mean
viscous and pressure iterations a step, and the centreline velocities against Ghia, Ghia &
Shin (1982). The explicit scheme's dt ~ h^2 / nu makes it take millions of steps on fine grids:
past --explicit-max-steps it runs that many steps and its time is estimated as (steps to the
steady time of the first implicit run) x (its measured time a step), marked "est".

    python scripts/bench_cavity_steady.py [--n 1024] [--re 100,1000]
        [--schemes explicit:0.5,implicit:0.5,backward_euler:0.5] [--json out.json]
    python scripts/bench_cavity_steady.py --backend host --n 32 --re 100   # CPU smoke test

A table is printed last; full numbers go to --json.
"""

import argparse
import sys
import time

import benchrun
import numpy as np

from solvers.backend import get_backend
from solvers.fv.incompressible.fields import centreline_profiles
from solvers.fv.incompressible.solver import IncompressibleSolver
from solvers.mesh import StructuredGrid
from solvers.run.simulation import RunError, Simulation
from solvers.verification.ghia_cavity import at_table_points, centreline_errors

CAVITY = {"x_lo": "wall", "x_hi": "wall", "y_lo": "wall", "y_hi": {"wall": 1.0}}
STEADY_TOLERANCE = 1e-3
END_TIME = 1e4  # the steady test ends the runs long before


def cavity(n, backend, re, viscous, cfl, advection):
    grid = StructuredGrid(n, x=(0.0, 1.0), ny=n, y=(0.0, 1.0))
    return IncompressibleSolver(grid, CAVITY, nu=1.0 / re, viscous=viscous, cfl=cfl,
                                advection=advection, backend=backend,
                                steady_tolerance=STEADY_TOLERANCE)


def steady_run(args, backend, re, viscous, cfl, max_steps):
    """One run from rest to the steady state (or to max_steps: then not steady)."""
    solver = cavity(args.n, backend, re, viscous, cfl, args.advection)
    simulation = Simulation(solver, END_TIME, steps_per_graph=args.steps_per_graph,
                            max_steps=max_steps)
    start = time.perf_counter()
    try:
        simulation.run()
        steady = simulation.stopped == "steady state reached"
    except RunError:  # max_steps reached
        steady = False
    backend.synchronize()
    wall = time.perf_counter() - start
    solver.observe()
    series = solver.series
    row = {"re": re, "viscous": viscous, "cfl": cfl, "steady": steady, "wall_s": wall,
           "steps": len(series["t"]), "t": series["t"][-1] if series["t"] else 0.0,
           "step_s": wall / max(1, len(series["t"])), "dt_last": series["dt"][-1],
           "viscous_iterations": float(np.mean(series["viscous_iterations"])),
           "pressure_iterations": float(np.mean(series["pressure_iterations"])),
           **{k: v for k, v in solver.pressure_report().items() if k != "method"}}
    if re in (100, 1000):
        profiles = centreline_profiles(solver.grid, *solver.face_velocities())
        lines = profiles["u_vertical_centreline"], profiles["v_horizontal_centreline"]
        row["ghia_u"], row["ghia_v"] = centreline_errors(int(re), *lines)
        row["u_at_table"], row["v_at_table"] = (a.tolist() for a in at_table_points(*lines))
    return row


def run(args):
    start = time.perf_counter()
    backend = get_backend(args.backend)
    report = {"card": backend.describe(), "n": args.n, "advection": args.advection,
              "runs": []}
    for re in (float(r) for r in args.re.split(",")):
        re = int(re) if re.is_integer() else re
        steady_t = None
        for scheme in args.schemes.split(","):
            viscous, cfl = scheme.split(":")
            explicit = viscous == "explicit"
            row = steady_run(args, backend, re, viscous, float(cfl),
                             args.explicit_max_steps if explicit else None)
            if row["steady"] and steady_t is None:
                steady_t = row["t"]
            if not row["steady"] and steady_t:
                # Estimate: the steps to the implicit run's steady time at this dt.
                steps = steady_t / row["dt_last"]
                row.update({"estimated_steps": int(steps),
                            "estimated_wall_s": steps * row["step_s"]})
            report["runs"].append(row)
            print(row, flush=True)
    report["wall_seconds"] = time.perf_counter() - start
    return report


def table(report):
    lines = [f"\ncavity {report['n']}^2 ({report['advection']}) to a relative change of "
             f"{STEADY_TOLERANCE:g} per unit time on "
             f"{report['card'].get('device', report['card'])}",
             f"{'Re':>6} {'viscous':>15} {'cfl':>5} {'steps':>9} {'t':>8} {'ms/step':>8} "
             f"{'visc it':>8} {'p it':>6} {'wall s':>12} {'Ghia u':>7} {'Ghia v':>7}"]
    for r in report["runs"]:
        wall = (f"{r['wall_s']:.1f}" if r["steady"] else
                f"{r['estimated_wall_s']:.0f} (est)" if "estimated_wall_s" in r else
                f">{r['wall_s']:.0f}")
        steps = r.get("estimated_steps", r["steps"])
        ghia = (f"{r['ghia_u']:>7.4f} {r['ghia_v']:>7.4f}" if r["steady"] and "ghia_u" in r
                else f"{'-':>7} {'-':>7}")
        lines.append(f"{r['re']:>6} {r['viscous']:>15} {r['cfl']:>5.2f} {steps:>9} "
                     f"{r['t']:>8.2f} {r['step_s'] * 1e3:>8.3f} {r['viscous_iterations']:>8.1f} "
                     f"{r['pressure_iterations']:>6.1f} {wall:>12} {ghia}")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--re", default="100,1000")
    p.add_argument("--advection", choices=("central", "quick"), default="central")
    p.add_argument("--schemes", default="implicit:0.5,backward_euler:0.5,explicit:0.5",
                   help="viscous:cfl pairs, run in this order (an explicit one is estimated "
                   "from the first steady implicit run's time)")
    p.add_argument("--explicit-max-steps", type=int, default=3000)
    p.add_argument("--steps-per-graph", type=int, default=50)
    p.add_argument("--json", default="bench_cavity_steady.json")
    return p.parse_args(argv)


def main(argv=None):
    return benchrun.main("bench_cavity_steady", parse_args(argv),
                         "--backend host --n 32 --re 100", run, table)


if __name__ == "__main__":
    sys.exit(main())
