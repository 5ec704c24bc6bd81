"""Schafer-Turek 2D-2 (Re = 100, periodic vortex shedding) at several resolutions: max drag, max
lift and Strouhal number over the last 2 time units against the reference, and their
extrapolation from the finest two grids at first order (the max lift's error halves with h:
docs/immersed_lift.md section 7).

The case is cases/cylinder.toml with its own settings (from rest, to --end) on n cells across
the channel (D = n / 4.1 cells) and 11 n / 2 along it, the body moved along x by --shift
quarter cells; --cfl overrides the case's. The figures: solvers/verification/schafer_turek.py.

    python scripts/schafer_turek_2d2.py [--n 160,192,224,256,320] [--end 8] [--json out.json]
    python scripts/schafer_turek_2d2.py --backend host --n 32 --end 2.1   # CPU smoke test
"""

import time
from pathlib import Path

import benchrun
from schafer_turek_convergence import arguments, body, grids

from solvers import load_case
from solvers.verification.schafer_turek import PERIODIC, shedding

CASE = Path(__file__).resolve().parents[1] / "cases" / "cylinder.toml"
WINDOW = 2.0  # time units at the end that the figures are taken over (6 periods)


def solve(n, args, out):
    """One resolution: its figures, steps and time."""
    overrides = {"mesh.nx": 11 * n // 2, "mesh.ny": n, "time.end": args.end,
                 "output.interval": 0.0, "run.backend": args.backend,
                 "run.precision": args.precision, "output.dir": str(out), "output.plot": False,
                 "obstacle.distance": body(n, args.shift)}
    if args.cfl is not None:
        overrides["scheme.cfl"] = args.cfl
    run = load_case(CASE, **overrides)
    start = time.perf_counter()
    run.run()
    seconds = time.perf_counter() - start
    drag, lift = run.solver.coefficients()
    t = run.solver.series["t"]
    return {"n": n, "shift": args.shift, "cells_across_d": n / 4.1, "steps": len(t),
            "seconds": seconds, **shedding(t, drag, lift, WINDOW)}


def first_order(rows):
    """Per figure: the finest two grids' values extrapolated to h = 0 at first order, and its
    error against the reference (None with one grid or a figure missing)."""
    out = {}
    for name, reference in PERIODIC.items():
        value = None
        if len(rows) > 1:
            (n1, v1), (n2, v2) = ((r["n"], r[name]) for r in rows[-2:])
            if v1 is not None and v2 is not None and n1 != n2:
                value = (n2 * v2 - n1 * v1) / (n2 - n1)
        out[name] = {"extrapolated": value,
                     "extrapolated_error": None if value is None else value / reference - 1}
    return out


def bench(args):
    start = time.perf_counter()
    report = grids(args, solve, PERIODIC, cfl=args.cfl, window=WINDOW)
    report["extrapolation"] = first_order(report["rows"])
    report["wall_seconds"] = time.perf_counter() - start
    return report


def figure(value, reference, width):
    """A figure and its error against the reference, '-' where there is none."""
    if value is None:
        return f"{'-':>{width + 9}}"
    return f"{value:>{width}.4f} {100 * (value / reference - 1):+6.1f}%"


def table(report):
    ref = report["reference"]
    lines = [f"Schafer-Turek 2D-2 on {report['backend']} ({report['precision']}), to t = "
             f"{report['end']:g}, the last {report['window']:g} time units, the body "
             f"{report['shift']:g} quarter cells along x",
             f"{'n':>5} {'D/h':>6} {'max drag':>16} {'max lift':>16} {'Strouhal':>16} "
             f"{'steps':>7} {'s':>7}"]
    for r in report["rows"]:
        lines.append(f"{r['n']:>5} {r['cells_across_d']:>6.1f} "
                     + " ".join(figure(r[k], ref[k], 7) for k in PERIODIC)
                     + f" {r['steps']:>7} {r['seconds']:>7.1f}")
    lines.append(f"{'ref':>5} {'':>6} " + " ".join(f"{ref[k]:>7.4f}{'':9}" for k in PERIODIC))
    lines.append(f"{'h->0':>5} {'':>6} " + " ".join(
        figure(report["extrapolation"][k]["extrapolated"], ref[k], 7) for k in PERIODIC)
        + "  (first order, the finest two grids)")
    return "\n".join(lines)


def parse_args(argv):
    p = arguments(__doc__, "160,192,224,256,320", "schafer_turek_2d2.json")
    p.add_argument("--cfl", type=float, default=None, help="default: the case's")
    return p.parse_args(argv)


def main(argv=None):
    return benchrun.main("schafer_turek_2d2", parse_args(argv),
                         "--backend host --n 32 --end 2.1", bench, table)


if __name__ == "__main__":
    raise SystemExit(main())
