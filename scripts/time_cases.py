"""The run time of every shipped case, as a user runs it: `solvers run CASE` in a fresh process
(kernel compilation from a warm cache, output files and the plot included), on one backend.

    python scripts/time_cases.py [--backend cuda] [--limit 120] [--cases sod,cavity_re100]
                                 [--json case_times.json]

A case still running after --limit seconds is stopped (SIGINT, as a user's Ctrl-C) and reported
as longer than the limit. The table lists each case's wall time and exit status; the JSON
holds the same with the card and versions. The times go into each case's `# Run time:` line.
"""

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchrun

CASES = Path(__file__).resolve().parents[1] / "cases"


def run_case(path, backend, limit, out):
    """(wall seconds, exit status, whether it hit the limit) of one `solvers run`."""
    command = [sys.executable, "-m", "solvers", "run", str(path), "--backend", backend,
               "--out", str(out), "--quiet"]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    try:
        _, error = process.communicate(timeout=limit)
        stopped = False
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        _, error = process.communicate()
        stopped = True
    return time.perf_counter() - start, process.returncode, stopped, error.strip()[-300:]


def bench(args):
    start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        # One case after another, each in its own process and output folder.
        chosen = set(args.cases.split(",")) if args.cases else None
        for path in sorted(CASES.glob("*.toml")):
            if chosen is not None and path.stem not in chosen:
                continue
            seconds, status, stopped, error = run_case(path, args.backend, args.limit,
                                                       Path(folder) / path.stem)
            rows.append({"case": path.stem, "seconds": round(seconds, 2), "status": status,
                         "stopped_at_limit": stopped, "stderr": error})
            print(f"{path.stem:24s} {seconds:8.1f} s  exit {status}"
                  + (f"  (stopped at the {args.limit:g} s limit)" if stopped else ""),
                  flush=True)
    return {"backend": args.backend, "limit_seconds": args.limit, "cases": rows,
            "versions": benchrun.versions(args.backend == "cuda"),
            "wall_seconds": time.perf_counter() - start}


def table(report):
    lines = [f"{'case':24s} {'wall':>10s}  status"]
    for row in report["cases"]:
        wall = (f"> {report['limit_seconds']:g} s" if row["stopped_at_limit"]
                else f"{row['seconds']:.1f} s")
        lines.append(f"{row['case']:24s} {wall:>10s}  exit {row['status']}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cuda", choices=("cuda", "host"))
    parser.add_argument("--limit", type=float, default=120.0, help="seconds a case may run")
    parser.add_argument("--cases", default="",
                        help="comma-separated case names (file stems) to time; default all")
    parser.add_argument("--json", default="case_times.json")
    args = parser.parse_args()
    return benchrun.main("time_cases", args, "--backend host --limit 5", bench, table)


if __name__ == "__main__":
    sys.exit(main())
