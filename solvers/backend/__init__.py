"""Backends: `cuda` (CuPy, NVRTC, CUDA graphs) and `host` (NumPy, C++/OpenMP), one interface."""

import contextlib
import sys
import threading

from .base import Backend, BackendError, CaptureError, Kernel
from .cuda import cuda_available

NAMES = ("auto", "cuda", "host")
_instances = {}
_own = threading.local()  # a thread's own backends, where own_backends() asked for them
_notices = [True]  # whether `auto` may print its notice; the CLI's --quiet clears it


@contextlib.contextmanager
def notices(enabled):
    """Within the block, `get_backend` prints its notice only if `enabled` (unless told by
    its notify argument)."""
    previous, _notices[0] = _notices[0], bool(enabled)
    try:
        yield
    finally:
        _notices[0] = previous


def own_backends():
    """From now on this thread gets backends of its own from get_backend: on a GPU its own CUDA
    stream, so that runs in several threads of one process overlap on the card (a sweep's
    streams mode)."""
    _own.instances = {}


def get_backend(name="auto", notify=None):
    """The backend called `name`, created once per process, or once per thread in a thread
    that called own_backends() (a Backend is returned as it is).
    `auto` takes cuda when CuPy sees a GPU, else host with a one-line notice on stderr (notify
    None: unless within `notices(False)`). Asking for cuda without a GPU is an error."""
    if notify is None:
        notify = _notices[0]
    instances = getattr(_own, "instances", _instances)
    if isinstance(name, Backend):
        return name
    if name not in NAMES:
        raise BackendError(f"unknown backend '{name}': expected one of {', '.join(NAMES)}")
    if name == "auto":
        name = "cuda" if cuda_available() else "host"
        if name == "host" and notify and "host" not in instances:
            print("solvers: no CUDA GPU found, running on the host backend (C++/OpenMP)",
                  file=sys.stderr)
    if name not in instances:
        if name == "cuda":
            from .cuda import CudaBackend
            instances[name] = CudaBackend()
        else:
            from .host import HostBackend
            instances[name] = HostBackend()
    return instances[name]


__all__ = ["Backend", "BackendError", "CaptureError", "Kernel", "get_backend", "notices",
           "own_backends", "NAMES"]
