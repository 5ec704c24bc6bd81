"""The devices and baseline libraries of scripts/bench_linalg.py: timing and memory on the cuda
or host backend, and the baselines' array libraries (CuPy + cupyx on the card, NumPy + SciPy on
the CPU) behind one interface."""

import importlib
import inspect
import time

import devicetime
import numpy as np
import scipy.sparse as sp

from solvers.backend import get_backend


class Device:
    """What differs between the cuda and host runs: timing, synchronization, memory."""

    def __init__(self, backend_name):
        self.backend = get_backend(backend_name)
        self.cuda = backend_name == "cuda"
        self.cupy = importlib.import_module("cupy") if self.cuda else None

    def seconds(self, fn, stream=None):
        return devicetime.seconds(self.backend, fn, stream)

    def median(self, fn, repeats, stream=None):
        return devicetime.median(self.backend, fn, repeats, stream)

    def synchronize(self):
        """Wait for every stream (the backend's is non-blocking: it does not wait for CuPy's)."""
        if self.cuda:
            self.cupy.cuda.Device().synchronize()

    def wall(self, fn):
        """(host seconds, result) of fn() from an idle device to an idle device."""
        self.synchronize()
        start = time.perf_counter()
        result = fn()
        self.synchronize()
        return time.perf_counter() - start, result

    def free(self):
        if self.cuda:
            self.synchronize()
            self.cupy.get_default_memory_pool().free_all_blocks()

    def l2_bytes(self):
        if not self.cuda:
            return None
        device = self.cupy.cuda.Device()
        size = device.attributes.get("L2CacheSize")
        if size is None:
            size = self.cupy.cuda.runtime.getDeviceProperties(device.id).get("l2CacheSize")
        return int(size or 0) or None


class Library:
    """A baseline's array library: CuPy + cupyx (cuSPARSE, cuBLAS) on the card, or NumPy +
    SciPy on the CPU. Both run the same functions below."""

    def __init__(self, gpu):
        self.gpu = gpu
        if gpu:
            self.xp = importlib.import_module("cupy")
            self.sparse = importlib.import_module("cupyx.scipy.sparse")
            self.cusparse = importlib.import_module("cupyx.cusparse")
            self.name = "cupyx"
        else:
            self.xp, self.sparse, self.cusparse, self.name = np, sp, None, "scipy"
        self.linalg, self.missing = None, None
        try:  # cupyx's solvers need cuBLAS on top of cuSPARSE
            self.linalg = importlib.import_module(f"{self.sparse.__name__}.linalg")
        except Exception as error:  # ImportError, or a CUDA library that fails to load
            self.missing = f"{self.name} cg skipped: {type(error).__name__}: {error}"
            return
        # SciPy >= 1.12 and CuPy >= 14 call the tolerance rtol; older versions tol.
        parameters = inspect.signature(self.linalg.cg).parameters
        self.rtol_name = "rtol" if "rtol" in parameters else "tol"

    @classmethod
    def load(cls, gpu):
        """(Library, notes): None for a library that cannot be imported, and why."""
        try:
            lib = cls(gpu)
        except Exception as error:  # ImportError, or a CUDA library that fails to load
            return None, [f"cupyx baselines skipped: {type(error).__name__}: {error}"]
        return lib, [lib.missing] if lib.missing else []

    def stream(self):
        return self.xp.cuda.get_current_stream() if self.gpu else None

    def matrix(self, a64, dtype):
        """The matrix in the library's CSR, with int32 indices like ours (cupyx keeps the index
        type it is given, and cuSPARSE is slower with int64)."""
        host = sp.csr_matrix((a64.data.astype(dtype), a64.indices.astype(np.int32),
                              a64.indptr.astype(np.int32)), shape=a64.shape)
        return self.sparse.csr_matrix(host)

    def array(self, host):
        return self.xp.asarray(host)

    def to_host(self, array):
        return array.get() if self.gpu else np.asarray(array)

    def jacobi(self, diagonal, dtype):
        inverse = self.array((1.0 / diagonal).astype(dtype))
        return self.linalg.LinearOperator((diagonal.size,) * 2, matvec=lambda r: inverse * r,
                                          dtype=dtype)

    def cg(self, a, b, rtol, maxiter, m, callback=None):
        return self.linalg.cg(a, b, maxiter=maxiter, M=m, callback=callback,
                              **{self.rtol_name: rtol})
