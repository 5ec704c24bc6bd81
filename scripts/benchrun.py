"""What every benchmark script does around its measurements: refuse to start on cuda without a
GPU, turn a backend error into one line and exit status 2, write the full report as JSON, and
print the table."""

import json
import platform
import sys
from importlib import metadata
from pathlib import Path

import devicetime
import numpy as np
import scipy

from solvers._metadata import DISTRIBUTION
from solvers.backend import BackendError


def main(name, args, smoke_test, bench, table, passed=lambda report: True):
    """Run bench(args) and report it; `smoke_test` is the option line that runs the script on
    the CPU. Returns the exit status: 0, 1 where passed(report) is false, 2 on a backend error."""
    if args.backend == "cuda":
        devicetime.require_gpu(name, smoke_test)
    try:
        report = bench(args)
    except BackendError as error:
        print(f"{name}: {error}", file=sys.stderr)
        return 2
    Path(args.json).write_text(json.dumps(report, indent=2, default=json_default))
    print(table(report))
    print(f"full results: {args.json} ({report['wall_seconds']:.0f} s)")
    return 0 if passed(report) else 1


def json_default(value):
    """NumPy scalars as Python numbers; anything else as its text."""
    return value.item() if hasattr(value, "item") else str(value)


def versions(cuda):
    """What a benchmark ran with: Python, NumPy, SciPy, this package, and on cuda CuPy and
    NVRTC."""
    out = {"python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__}
    try:
        out["solvers"] = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        out["solvers"] = None
    if cuda:
        import cupy
        out["cupy"] = cupy.__version__
        out["nvrtc"] = ".".join(map(str, cupy.cuda.nvrtc.getVersion()))
    return out
