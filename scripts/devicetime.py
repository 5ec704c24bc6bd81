"""Device time of a piece of work, for the benchmark scripts: CUDA events on the backend's
stream on cuda; the host backend runs synchronously, so there the host clock is the device's."""

import statistics
import time


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
