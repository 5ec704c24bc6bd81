"""The one-line error of an allocation that fails: how much the array needs, how much the run
already holds on that memory, and how much the device (or the host) has free of its total."""

import os
from math import prod
from pathlib import Path

import numpy as np

from .base import BackendError

UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def size_text(nbytes):
    """Bytes in the largest binary unit that leaves at least 1, to 3 significant digits."""
    value, unit = float(nbytes), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{int(value)} B" if unit == 0 else f"{value:.3g} {UNITS[unit]}"


def allocation_error(where, shape, dtype, free, total, held=None):
    """A BackendError saying that a `shape` `dtype` array did not fit on `where` ('the GPU
    (NVIDIA H200)', 'the host'), which has `free` of `total` bytes; `held`: bytes the run had
    allocated there already, when known."""
    shape = tuple(int(n) for n in (shape if np.iterable(shape) else (shape,)))
    need = prod(shape) * np.dtype(dtype).itemsize
    run = (f"the run needs at least {size_text(held + need)} ({size_text(held)} allocated "
           "already)" if held else "")
    return BackendError(
        f"out of memory: a {'x'.join(map(str, shape))} {np.dtype(dtype)} array needs "
        f"{size_text(need)}{', ' if run else ''}{run}; {where} has {size_text(free)} free of "
        f"{size_text(total)}")


def host_memory():
    """(available, total) bytes of the host's memory (MemAvailable and MemTotal of
    /proc/meminfo, else what sysconf says)."""
    try:
        info = dict(line.split(":", 1) for line in
                    Path("/proc/meminfo").read_text().splitlines() if ":" in line)
        return (int(info["MemAvailable"].split()[0]) * 1024,
                int(info["MemTotal"].split()[0]) * 1024)
    except (OSError, KeyError, ValueError):
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page
