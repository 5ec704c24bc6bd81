"""The host backend's OpenMP threads on a busy machine: a few shipped cases (small overrides)
run with one thread, with the default threads, and with the default threads and one thread
while a competing CPU load runs (busy-looping processes started here, one a core unless
--load says otherwise, stopped after each measurement and bounded in time).

    python scripts/host_threads_under_load.py [--rounds 3] [--json host_threads_under_load.json]
    python scripts/host_threads_under_load.py --cases poisson --rounds 1 --json x.json  # quick

Each measurement is a fresh Python process (OpenMP reads its settings once, at start): it loads
and runs the case once untimed (the kernel compile), then times --repeats loads and runs of it
(building the solver, AMG setup included, and running to the end, writing no files). The four
measurements of a case are taken in turn, --rounds times, so that a change in the machine's
other load falls on all of them alike; the table gives the median of each. "1 thread" sets
OMP_NUM_THREADS=1 (which also makes NumPy's BLAS serial); "default" clears OMP_NUM_THREADS,
SOLVERS_HOST_THREADS, OMP_WAIT_POLICY, GOMP_SPINCOUNT and OPENBLAS_NUM_THREADS, so that the
backend's own policy applies (solvers/backend/host_threads.py). The ratio that matters is the
default under load against 1 thread under load: a busy machine should never make the default
much slower than one thread.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = {
    "poisson": ("cases/poisson_square.toml", {}),
    "heat": ("cases/heat_plate.toml", {"time.end": 0.1}),
    "sod": ("cases/sod.toml", {"time.end": 0.1}),
    "kelvin_helmholtz": ("cases/kelvin_helmholtz.toml",
                         {"mesh.nx": 256, "mesh.ny": 256, "time.end": 0.02}),
}
CLEARED = ("OMP_NUM_THREADS", "SOLVERS_HOST_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
           "OPENBLAS_NUM_THREADS", "OMP_DYNAMIC", "OMP_PROC_BIND")
SETTINGS = {"1 thread": {"OMP_NUM_THREADS": "1"}, "default": {}}


def worker(case, overrides, repeats):
    """In the measuring process: one untimed run, then `repeats` timed ones; prints JSON."""
    import solvers
    from solvers.backend import get_backend

    def once():
        start = time.perf_counter()
        run = solvers.load_case(str(ROOT / case), run={"backend": "host"}, **overrides)
        run.run(write=False)
        return time.perf_counter() - start

    once()
    times = [once() for _ in range(repeats)]
    backend = get_backend("host")
    print(json.dumps({"seconds": times, "describe": backend.describe()}))


def busy(seconds):
    """A competing load: one process spinning for at most `seconds`."""
    code = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass\n"
    return subprocess.Popen([sys.executable, "-c", code])


def measure(name, setting, loaded, args):
    case, overrides = CASES[name]
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env.update(SETTINGS[setting])
    command = [sys.executable, __file__, "--worker", case, json.dumps(overrides),
               str(args.repeats)]
    load = [busy(args.load_seconds) for _ in range(args.load if loaded else 0)]
    try:
        before = os.getloadavg()[0]
        out = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT,
                             timeout=args.load_seconds, check=False)
    finally:
        for process in load:
            process.kill()
            process.wait()
    if out.returncode != 0:
        raise RuntimeError(f"{name} ({setting}) failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return {"case": name, "setting": setting, "loaded": loaded, "load_processes": len(load),
            "seconds": result["seconds"], "loadavg_before": before,
            "device": result["describe"]["device"]}


def medians(rows):
    """{(case, setting, loaded): median seconds over every round's runs}."""
    runs = {}
    for row in rows:
        runs.setdefault((row["case"], row["setting"], row["loaded"]), []).extend(row["seconds"])
    return {key: statistics.median(seconds) for key, seconds in runs.items()}


def table(rows):
    by = medians(rows)
    lines = ["| case | 1 thread idle s | default idle s | 1 thread under load s | "
             "default under load s | default / 1 thread, under load | "
             "default under load / 1 thread idle | load average before idle runs |",
             "|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["case"] for r in rows):
        one, default = by[name, "1 thread", False], by[name, "default", False]
        one_loaded, loaded = by[name, "1 thread", True], by[name, "default", True]
        before = [r["loadavg_before"] for r in rows if r["case"] == name and not r["loaded"]]
        lines.append(f"| {name} | {one:.3f} | {default:.3f} | {one_loaded:.3f} | "
                     f"{loaded:.3f} | {loaded / one_loaded:.2f}x | {loaded / one:.2f}x | "
                     f"{min(before):.1f}-{max(before):.1f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2, help="timed runs a measurement")
    parser.add_argument("--load", type=int, default=os.cpu_count(),
                        help="busy-looping processes of the competing load (default: one a core)")
    parser.add_argument("--load-seconds", type=float, default=300,
                        help="the most a loaded measurement (and its load) may last")
    parser.add_argument("--json", default="host_threads_under_load.json")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        case, overrides, repeats = args.worker
        worker(case, json.loads(overrides), int(repeats))
        return 0
    start = time.perf_counter()
    rows = []
    for name in args.cases.split(","):
        for _ in range(args.rounds):
            for loaded in (False, True):
                for setting in SETTINGS:
                    rows.append(measure(name, setting, loaded, args))
                    times = " ".join(f"{t:.3f}" for t in rows[-1]["seconds"])
                    print(f"{name:18s} {setting:9s} {'loaded' if loaded else 'idle':6s} "
                          f"{times} s", flush=True)
    report = {"machine": {"cpus": os.cpu_count(), "cpu": platform.processor(),
                          "platform": platform.platform()},
              "cases": {name: {"case": CASES[name][0], "overrides": CASES[name][1]}
                        for name in args.cases.split(",")},
              "load_processes": args.load, "rounds": args.rounds, "repeats": args.repeats,
              "medians": [{"case": c, "setting": s, "loaded": loaded, "median_s": m}
                          for (c, s, loaded), m in medians(rows).items()],
              "rows": rows,
              "wall_seconds": time.perf_counter() - start}
    Path(args.json).write_text(json.dumps(report, indent=2))
    print(table(rows))
    print(f"full results: {args.json} ({report['wall_seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
