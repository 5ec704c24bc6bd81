"""Device time of a piece of work, for the benchmark scripts: CUDA events on the backend's
stream on cuda; the host backend runs synchronously, so there the host clock is the device's."""

import statistics
import sys
import time


def require_gpu(script, smoke_test):
    """Exit with status 2 and one line when CuPy sees no GPU."""
    try:
        import cupy
        ok = cupy.cuda.is_available()
    except Exception:  # ImportError, or a CUDA library that fails to load
        ok = False
    if not ok:
        print(f"{script}: no CUDA GPU available (cupy.cuda.is_available() is False); "
              f"use {smoke_test} for a CPU smoke test", file=sys.stderr)
        sys.exit(2)


def seconds(backend, fn, stream=None):
    """Seconds fn() keeps the device busy (events recorded on `stream`, default the backend's)."""
    if backend.name != "cuda":
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    cupy = backend.cupy
    stream = stream or backend.stream
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record(stream)
    fn()
    end.record(stream)
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end) / 1e3


def median(backend, fn, repeats, stream=None):
    return statistics.median(seconds(backend, fn, stream) for _ in range(repeats))
