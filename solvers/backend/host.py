"""The host backend: NumPy arrays, and the raw_kernels/ sources compiled by the system C++
compiler with OpenMP into a shared library that ctypes calls.

For every kernel a launcher is generated that runs the grid's blocks in an OpenMP loop; a
KERNEL is called once per thread of the block, a BLOCK_KERNEL once per block (its PHASE blocks
loop over the threads). Libraries are cached on disk by a hash of everything that went into them.
"""

import contextlib
import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import time
from functools import cache
from pathlib import Path

import numpy as np
import scipy.sparse

from .base import Backend, BackendError
from .host_threads import LaunchThreads, configure
from .library_cache import install, verified
from .memory import allocation_error, host_memory

# -ffp-contract=off: no a * b + c becomes an FMA unless the source writes fma(). Left to the
# compiler, the choice depends on how a function is inlined, so two kernels that do the same
# operations (the Euler march and tile) could round differently; the host backend is the
# IEEE reference.
CXX_FLAGS = ["-O3", "-march=native", "-fno-math-errno", "-ffp-contract=off", "-fopenmp", "-fPIC",
             "-shared", "-std=c++17", "-x", "c++"]

_SCALAR_CTYPES = {np.dtype(np.int32): ctypes.c_int32, np.dtype(np.float32): ctypes.c_float,
                  np.dtype(np.float64): ctypes.c_double}


def cache_dir():
    root = os.environ.get("SOLVERS_CACHE_DIR") or Path.home() / ".cache" / "solvers"
    return Path(root)


def compiler():
    return os.environ.get("CXX", "g++")


@cache
def compiler_version():
    cxx = compiler()
    if shutil.which(cxx) is None:
        raise BackendError(f"host backend needs a C++ compiler with OpenMP: '{cxx}' not found "
                           "(install g++ or set CXX)")
    out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else cxx


@cache
def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def launcher_source(signatures):
    """C++ launchers with one C signature: (grid[3], block[3], void* args[], int threads)."""
    parts = ["#include <omp.h>", "static int solvers_last_team = 0;",
             'extern "C" int solvers_last_threads() { return solvers_last_team; }']
    for sig in signatures:
        args = ", ".join(f"*({p.c_type()}*)args[{k}]" for k, p in enumerate(sig.params))
        call = f"{sig.name}({args});"
        body = call if sig.block else (
            "const long nthreads = (long)block[0] * block[1] * block[2];\n            "
            f"for (unsigned t = 0; t < nthreads; ++t) {{ set_thread_index(t); {call} }}")
        # `threads` from host_threads.LaunchThreads (1: the calling thread alone); blocks go
        # one at a time to whichever thread is running.
        parts.append(f"""
extern "C" void launch_{sig.name}(const unsigned* grid, const unsigned* block, void** args,
                                  int threads)
{{
    const long nblocks = (long)grid[0] * grid[1] * grid[2];
#pragma omp parallel num_threads(threads > 1 ? threads : 1) if (threads > 1)
    {{
        if (omp_get_thread_num() == 0) solvers_last_team = omp_get_num_threads();
#pragma omp for schedule(dynamic, 1)
        for (long b = 0; b < nblocks; ++b) {{
            gridDim = {{grid[0], grid[1], grid[2]}};
            blockDim = {{block[0], block[1], block[2]}};
            blockIdx = {{(unsigned)(b % grid[0]), (unsigned)((b / grid[0]) % grid[1]),
                         (unsigned)(b / ((long)grid[0] * grid[1]))}};
            {body}
        }}
    }}
}}""")
    return "\n".join(parts) + "\n"


def build_library(name, text, flags):
    """Compile `text` to a shared library in the cache (once) and return its path."""
    command = [compiler(), *CXX_FLAGS, *flags]
    key = hashlib.sha256("\n".join([text, *command, compiler_version(), cpu_name()]).encode())
    stem = Path(name).stem
    path = cache_dir() / "host" / f"{stem}-{key.hexdigest()[:24]}.so"
    if verified(path):  # a damaged entry (a truncated library dies of SIGBUS) is rebuilt
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        src = Path(tmp) / f"{stem}.cpp"
        src.write_text(text)
        out = Path(tmp) / path.name
        result = subprocess.run([*command, str(src), "-o", str(out)],
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise BackendError(f"host compile of {name} failed:\n{result.stderr}")
        install(out, path)  # atomic: a concurrent run sees the whole library or none
    return path


class HostLaunch:
    """A kernel launch with its ctypes arguments built once, on the threads `threads` picks."""

    def __init__(self, backend, function, grid, block, args, threads):
        self.backend = backend
        self.function = function
        self.threads = threads
        self.grid = (ctypes.c_uint * 3)(*grid)
        self.block = (ctypes.c_uint * 3)(*block)
        self.keep_alive = list(args)
        holders = []
        for arg in args:
            if isinstance(arg, np.ndarray):
                holders.append(ctypes.c_void_p(arg.ctypes.data))
            else:
                holders.append(_SCALAR_CTYPES[arg.dtype](arg))
        self.holders = holders
        self.argv = (ctypes.c_void_p * max(1, len(holders)))(
            *[ctypes.addressof(h) for h in holders])

    def run(self):
        threads, timed = self.threads.next_run()
        if not timed:
            self.function(self.grid, self.block, self.argv, threads)
            return
        start = time.perf_counter()
        self.function(self.grid, self.block, self.argv, threads)
        self.threads.measured(threads, time.perf_counter() - start)

    def __call__(self):
        if self.backend.recording is not None:
            self.backend.recording.append(self)
        else:
            self.run()


class HostCall:
    """A host function run in order with the launches (recorded into a captured step)."""

    def __init__(self, backend, function):
        self.backend = backend
        self.function = function

    def run(self):
        self.function(None)

    def __call__(self):
        if self.backend.recording is not None:
            self.backend.recording.append(self)
        else:
            self.run()


class HostMarker:
    """The host's launches run when called: their work is done when record() comes."""

    def record(self):
        pass

    def wait(self):
        pass


class HostGraph:
    """The launches of a captured step, replayed in order."""

    def __init__(self, launches):
        self.launches = tuple(launches)

    def replay(self):
        for launch in self.launches:
            launch.run()


class HostLoop:
    """A captured loop: its body's launches, run until flag[0] is nonzero (at least once)."""

    def __init__(self, launches, flag):
        self.launches = tuple(launches)
        self.flag = flag

    def run(self):
        while True:
            for launch in self.launches:
                launch.run()
            if self.flag[0] != 0:
                return


class HostBackend(Backend):
    name = "host"

    def __init__(self):
        super().__init__()
        compiler_version()  # fail early, with a clear message, if there is no compiler
        self.team = configure()  # threads and wait policy, before OpenMP starts (host_threads)
        self.recording = None
        self._libraries = []
        self._launch_threads = {}  # (kernel function, grid, block): LaunchThreads

    def is_array(self, obj):
        return isinstance(obj, np.ndarray)

    def _empty(self, shape, dtype):
        try:
            return np.empty(shape, dtype)
        except (MemoryError, ValueError) as error:
            if isinstance(error, ValueError) and "too big" not in str(error):
                raise
            raise allocation_error("the host", shape, dtype, *host_memory()) from None

    def _to_host(self, array):
        return np.array(array, copy=True)

    def _write(self, array, host_values):
        np.copyto(array, host_values)

    def _fill(self, array, value):
        array.fill(value)

    def _pinned(self, shape, dtype):
        return self._empty(shape, dtype)

    def _bind_copy(self, dst, src):
        return self.bind_call(lambda _: np.copyto(dst, src))

    def bind_call(self, function):
        return HostCall(self, function)

    def marker(self):
        return HostMarker()

    def _compile(self, name, source, signatures, flags):
        text = source + "\n" + launcher_source(signatures)
        library = ctypes.CDLL(str(build_library(name, text, flags)))
        self._libraries.append(library)
        functions = {}
        for sig in signatures:
            function = getattr(library, f"launch_{sig.name}")
            function.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint),
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
            function.restype = None
            functions[sig.name] = function
        return functions

    def bind_launch(self, kernel, grid, block, args):
        key = (id(kernel.function), grid, block)
        if key not in self._launch_threads:
            self._launch_threads[key] = LaunchThreads(self.team, grid[0] * grid[1] * grid[2],
                                                      block[0] * block[1] * block[2])
        return HostLaunch(self, kernel.function, grid, block, args, self._launch_threads[key])

    @contextlib.contextmanager
    def _array_work(self):
        yield np, scipy.sparse

    def _capture(self, step):
        self.recording = []
        try:
            step()
            return HostGraph(self.recording)
        finally:
            self.recording = None

    def _capture_loop(self, body, flag):
        outer, self.recording = self.recording, []
        try:
            body()
            loop = HostLoop(self.recording, flag)
        finally:
            self.recording = outer
        outer.append(loop)

    def synchronize(self):
        pass

    def threads(self):
        return self.team

    def describe(self):
        return {"backend": "host", "device": f"{cpu_name()} ({self.threads()} OpenMP threads)",
                "compiler": compiler_version()}
