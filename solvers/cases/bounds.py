"""Bounds that keep hostile case input to one-line errors: sizes, times and snapshot counts
checked before anything is allocated, and a solver's own refusals of its settings turned into
CaseErrors that name the key.

Rules (docs/case-files.md, "Limits"):
- a mesh has at most MAX_CELLS cells (the kernels index with int32) and needs no more than the
  machine's memory, estimated as cells x the adapter's BYTES_PER_CELL (an order of magnitude,
  measured on the host at fp64);
- a run writes at most MAX_SNAPSHOTS snapshots (time.end / output.interval);
- every number is finite (the schema), and an end time the fp64 clock cannot reach is refused:
  (end - t) / dt > MAX_CLOCK_STEPS, statically where dt is given (heat), else after the first
  graph replay, when dt is known (solvers/run/simulation.py).
"""

import contextlib
import os
import re

from ..mesh.unstructured import MeshError
from .schema import CaseError

MAX_CELLS = 2**31 - 1
MAX_SNAPSHOTS = 10_000
MAX_CLOCK_STEPS = 2**52  # beyond this many steps of dt, t + dt rounds to t in fp64
DEFAULT_BYTES_PER_CELL = 1000


def memory_bytes():
    """The machine's physical memory (the bound of any one run's arrays)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**40


def _size(count):
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count:.3g} bytes"


def check_cells(case, key, cells, what="cells"):
    """A CaseError at [mesh] key unless `cells` cells fit the int32 indices and the memory."""
    per_cell = getattr(case.adapter, "BYTES_PER_CELL", DEFAULT_BYTES_PER_CELL)
    if cells > MAX_CELLS:
        raise case.error("mesh", key, f"{cells:.3g} {what}: more than the {MAX_CELLS} the "
                         "kernels can index")
    need, have = cells * per_cell, memory_bytes()
    if need > have:
        raise case.error("mesh", key, f"{cells:.3g} {what} need about {_size(need)} "
                         f"({per_cell} bytes each), more than this machine's {_size(have)}")


def check_times(case):
    """The snapshot count of time.end and output.interval is at most MAX_SNAPSHOTS."""
    time, output = case.data.get("time"), case.data["output"]
    if time is None or not output["interval"] > 0:
        return
    count = time["end"] / output["interval"]
    if count > MAX_SNAPSHOTS:
        raise case.error("output", "interval", f"{count:.3g} snapshots to the end time "
                         f"{time['end']:g}: at most {MAX_SNAPSHOTS} (raise the interval)")


def check_clock_steps(case, dt):
    """With a fixed step dt, the end time must be reachable by the fp64 clock."""
    end = case.data["time"]["end"]
    if end / dt > MAX_CLOCK_STEPS:
        raise case.error("time", "end", f"{end:g} is out of reach: {end / dt:.3g} steps of "
                         f"{dt:g}, more than the 2^52 that advance an fp64 clock")


def _key_named(case, message):
    """(section, key) of the first key of the case whose name the message names, or None."""
    for section, keys in case.data.items():
        for key in keys:
            if len(key) > 1 and re.search(rf"(?<![\w.]){re.escape(key)}(?![\w(])", message):
                return section, key
    return None


@contextlib.contextmanager
def solver_errors(case):
    """Building a solver: its ValueError, ArithmeticError or MeshError (a setting it refuses)
    becomes a one-line CaseError naming the key its message names (else the file)."""
    try:
        yield
    except CaseError:
        raise
    except (ValueError, ArithmeticError, MeshError) as error:
        message = " ".join(str(error).split()) or type(error).__name__
        named = _key_named(case, message)
        if named is None:
            raise CaseError(f"{case.path}: {message}") from None
        raise case.error(*named, message) from None
