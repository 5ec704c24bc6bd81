"""Schafer-Turek 2D-1 (Re = 20, steady) at several resolutions: drag and lift coefficients, the
pressure difference between the cylinder's front and back points and the recirculation length,
each against the reference, with the observed order between successive grids and a Richardson
extrapolation of the finest two (second order assumed) -- whether the immersed boundary's error
falls with h, and towards the reference or elsewhere (issue 21).

The case is cases/cylinder.toml as tests/test_cases_incompressible.py sets it for 2D-1: Um = 0.3
(mean 0.2, Re = 20), n cells across the channel (D = n / 4.1 cells) and 11 n / 2 along it, from
the inflow's Poiseuille flow to --end (steady: the change over the last time unit is reported).
Pressure difference: the cell pressures along y = 0.2, bilinear across y, extrapolated to the
surface (x = 0.15 and 0.25) by a quadratic through the three nearest fluid cells each side.
Recirculation length: where u on the axis y = 0.2 behind the cylinder turns positive (linear
between faces), less x = 0.25.

--shift q moves the body along x by q quarter cells of x (0.4 / n): where it sits across its
cells, which the lift depends on at <= 43 cells across D (docs/immersed_lift.md section 7).
References: solvers/verification/schafer_turek.py (Schafer & Turek 1996 give the intervals
5.57-5.59, 0.0104-0.0110, 0.1172-0.1176 and 0.0842-0.0852; John & Matthies 2001 computed the
first three on fine finite-element grids).

    python scripts/schafer_turek_convergence.py [--n 80,160,320] [--end 8] [--shift 0]
        [--json out.json]
    python scripts/schafer_turek_convergence.py --backend host --n 40 --end 1   # CPU smoke test
"""

import argparse
import math
import tempfile
import time
from pathlib import Path

import benchrun
import numpy as np

from solvers import load_case
from solvers.verification.schafer_turek import STEADY as REFERENCE

CASE = Path(__file__).resolve().parents[1] / "cases" / "cylinder.toml"
QUANTITIES = tuple(REFERENCE)


def body(n, shift):
    """The cylinder's signed distance with its centre moved along x by `shift` quarter cells of
    the 11 n / 2 cells of 2.2 along x."""
    return f"sqrt((x - {0.2 + shift * (0.4 / n) / 4!r})**2 + (y - 0.2)**2) - 0.05"


def axis_pressure(p, dx, dy, x):
    """Pressure at (x, 0.2) on the surface from the cell pressures p [i, j]: bilinear across y,
    quadratic along x through the three fluid cells nearest x on the side away from the body."""
    centres = (np.arange(p.shape[0]) + 0.5) * dx
    j = int(0.2 / dy - 0.5)
    w = 0.2 / dy - 0.5 - j
    row = (1 - w) * p[:, j] + w * p[:, j + 1]
    side = np.flatnonzero(centres < x)[-3:] if x < 0.2 else np.flatnonzero(centres > x)[:3]
    return float(np.polyval(np.polyfit(centres[side], row[side], 2), x))


def recirculation_length(u, dx, dy):
    """Where u on y = 0.2 behind the cylinder (x > 0.25) last is negative, to where it turns
    positive, less 0.25."""
    j = int(0.2 / dy - 0.5)
    w = 0.2 / dy - 0.5 - j
    axis = (1 - w) * u[:, j] + w * u[:, j + 1]  # u on x faces i dx
    faces = np.arange(u.shape[0]) * dx
    behind = np.flatnonzero((faces > 0.25) & (axis < 0))
    if len(behind) == 0:
        return 0.0
    k = behind[-1]
    return float(faces[k] - axis[k] * dx / (axis[k + 1] - axis[k]) - 0.25)


def solve(n, args, out):
    """One resolution: its quantities, steadiness and time."""
    run = load_case(CASE, **{
        "mesh.nx": 11 * n // 2, "mesh.ny": n, "time.end": args.end, "output.interval": 0.0,
        "initial.constants": {"Um": 0.3, "H": 0.41}, "initial.u": "4 * Um * y * (H - y) / H**2",
        "physics.reference_velocity": 0.2, "run.backend": args.backend,
        "run.precision": args.precision, "run.steps_per_graph": 100, "output.dir": str(out),
        "output.plot": False, "obstacle.distance": body(n, args.shift)})
    start = time.perf_counter()
    run.run()
    seconds = time.perf_counter() - start
    solver = run.solver
    drag, lift = solver.coefficients()
    t = np.array(solver.series["t"])
    before = max(0, int(np.searchsorted(t, t[-1] - 1.0)) - 1)  # one time unit before the end
    u, _ = solver.face_velocities()
    p = solver.pressure_field()
    dx, dy = 2.2 / p.shape[0], 0.41 / p.shape[1]
    return {"n": n, "shift": args.shift, "cells_across_d": 0.1 / dy, "steps": len(t),
            "seconds": seconds,
            "drag": float(drag[-1]), "lift": float(lift[-1]),
            "pressure_difference": axis_pressure(p, dx, dy, 0.15) - axis_pressure(p, dx, dy, 0.25),
            "recirculation_length": recirculation_length(u, dx, dy),
            "lift_change_last_unit": float(lift[-1] - lift[before]),
            "drag_change_last_unit": float(drag[-1] - drag[before])}


def convergence(rows):
    """Per quantity: the observed orders between successive grids (each halving h) and the
    Richardson extrapolation of the finest two (second order)."""
    out = {}
    for q in QUANTITIES:
        values = [r[q] for r in rows]
        steps = np.diff(values)
        orders = [math.log2(abs(a / b)) if b != 0 and a != 0 else None
                  for a, b in zip(steps[:-1], steps[1:])]
        extrapolated = values[-1] + (values[-1] - values[-2]) / 3 if len(values) > 1 else None
        out[q] = {"orders": orders, "extrapolated": extrapolated,
                  "extrapolated_error": None if extrapolated is None
                  else extrapolated / REFERENCE[q] - 1}
    return out


def grids(args, solve, reference, **settings):
    """A Schafer-Turek script's report: its settings and a row per grid of args.n, solve(n,
    args, folder) each, printed as it comes."""
    report = {"backend": args.backend, "precision": args.precision, "end": args.end,
              "shift": args.shift, **settings, "reference": reference, "rows": [],
              "versions": benchrun.versions(args.backend == "cuda")}
    with tempfile.TemporaryDirectory(prefix="schafer_turek-") as out:
        for n in (int(v) for v in args.n.split(",")):
            row = solve(n, args, out)
            report["rows"].append(row)
            print({k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()},
                  flush=True)
    return report


def bench(args):
    start = time.perf_counter()
    report = grids(args, solve, REFERENCE)
    report["convergence"] = convergence(report["rows"])
    report["wall_seconds"] = time.perf_counter() - start
    return report


def table(report):
    lines = [f"Schafer-Turek 2D-1 on {report['backend']} ({report['precision']}), to t = "
             f"{report['end']:g}, the body {report['shift']:g} quarter cells along x",
             f"{'n':>5} {'D/h':>6} {'drag':>9} {'lift':>10} {'dp':>9} {'La':>8} "
             f"{'lift change':>12} {'s':>7}"]
    for r in report["rows"]:
        lines.append(f"{r['n']:>5} {r['cells_across_d']:>6.1f} {r['drag']:>9.5f} "
                     f"{r['lift']:>10.6f} {r['pressure_difference']:>9.5f} "
                     f"{r['recirculation_length']:>8.5f} {r['lift_change_last_unit']:>12.2e} "
                     f"{r['seconds']:>7.1f}")
    ref = report["reference"]
    lines.append(f"{'ref':>5} {'':>6} {ref['drag']:>9.5f} {ref['lift']:>10.6f} "
                 f"{ref['pressure_difference']:>9.5f} {ref['recirculation_length']:>8.5f}")
    for q, c in report["convergence"].items():
        orders = ", ".join("-" if o is None else f"{o:.2f}" for o in c["orders"]) or "-"
        extra = "-" if c["extrapolated"] is None else (
            f"{c['extrapolated']:.6g} ({100 * c['extrapolated_error']:+.2f} % of the reference)")
        lines.append(f"{q}: observed orders {orders}; extrapolated {extra}")
    return "\n".join(lines)


def arguments(doc, n, json):
    """The options of a Schafer-Turek script: backend, grids (`n` by default), end time, body
    shift, precision, JSON file (`json` by default)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    p.add_argument("--n", default=n, help="cells across the channel, comma-separated")
    p.add_argument("--end", type=float, default=8.0)
    p.add_argument("--precision", choices=("fp32", "fp64"), default="fp32")
    p.add_argument("--shift", type=float, default=0.0,
                   help="the body moved along x by this many quarter cells")
    p.add_argument("--json", default=json)
    return p


def parse_args(argv):
    return arguments(__doc__, "80,160,320", "schafer_turek_convergence.json").parse_args(argv)


def main(argv=None):
    return benchrun.main("schafer_turek_convergence", parse_args(argv),
                         "--backend host --n 40 --end 1", bench, table)


if __name__ == "__main__":
    raise SystemExit(main())
