"""Backends: `cuda` (CuPy, NVRTC, CUDA graphs) and `host` (NumPy, C++/OpenMP), one interface."""

import contextlib
import sys

from .base import Backend, BackendError, CaptureError, Kernel
from .cuda import cuda_available

NAMES = ("auto", "cuda", "host")
_instances = {}
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


def get_backend(name="auto", notify=None):
    """The backend called `name`, created once per process (a Backend is returned as it is).
    `auto` takes cuda when CuPy sees a GPU, else host with a one-line notice on stderr (notify
    None: unless within `notices(False)`). Asking for cuda without a GPU is an error."""
    if notify is None:
        notify = _notices[0]
    if isinstance(name, Backend):
        return name
    if name not in NAMES:
        raise BackendError(f"unknown backend '{name}': expected one of {', '.join(NAMES)}")
    if name == "auto":
        name = "cuda" if cuda_available() else "host"
        if name == "host" and notify and "host" not in _instances:
            print("solvers: no CUDA GPU found, running on the host backend (C++/OpenMP)",
                  file=sys.stderr)
    if name not in _instances:
        if name == "cuda":
            from .cuda import CudaBackend
            _instances[name] = CudaBackend()
        else:
            from .host import HostBackend
            _instances[name] = HostBackend()
    return _instances[name]


__all__ = ["Backend", "BackendError", "CaptureError", "Kernel", "get_backend", "notices",
           "NAMES"]
