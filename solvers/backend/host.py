"""The host backend: NumPy arrays, and the raw_kernels/ sources compiled by the system C++
compiler with OpenMP into a shared library that ctypes calls.

For every kernel a launcher is generated that runs the grid's blocks in an OpenMP loop; a
KERNEL is called once per thread of the block, a BLOCK_KERNEL once per block (its PHASE blocks
loop over the threads). Libraries are cached on disk by a hash of everything that went into them.
"""

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import numpy as np

from .base import Backend, BackendError

# -ffp-contract=off: no a * b + c becomes an FMA unless the source writes fma(). Left to the
# compiler, the choice depends on how a function is inlined, so two kernels that do the same
# operations (the Euler march and tile) could round differently; the host backend is the
# IEEE reference.
CXX_FLAGS = ["-O3", "-march=native", "-fno-math-errno", "-ffp-contract=off", "-fopenmp", "-fPIC",
             "-shared", "-std=c++17", "-x", "c++"]

PARALLEL_MIN_WORK = 16384  # work items (threads) below which a launch runs serially

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
    """C++ launchers with one C signature: (grid[3], block[3], void* args[])."""
    parts = ["#include <omp.h>",
             'extern "C" int solvers_omp_threads() { return omp_get_max_threads(); }']
    for sig in signatures:
        args = ", ".join(f"*({p.c_type()}*)args[{k}]" for k, p in enumerate(sig.params))
        call = f"{sig.name}({args});"
        body = call if sig.block else (
            f"for (unsigned t = 0; t < nthreads; ++t) {{ set_thread_index(t); {call} }}")
        # Small launches run on the calling thread: waking a thread team costs more than them.
        parts.append(f"""
extern "C" void launch_{sig.name}(const unsigned* grid, const unsigned* block, void** args)
{{
    const long nblocks = (long)grid[0] * grid[1] * grid[2];
    const long nthreads = (long)block[0] * block[1] * block[2];
#pragma omp parallel for schedule(static) if (nblocks * nthreads >= {PARALLEL_MIN_WORK})
    for (long b = 0; b < nblocks; ++b) {{
        gridDim = {{grid[0], grid[1], grid[2]}};
        blockDim = {{block[0], block[1], block[2]}};
        blockIdx = {{(unsigned)(b % grid[0]), (unsigned)((b / grid[0]) % grid[1]),
                     (unsigned)(b / ((long)grid[0] * grid[1]))}};
        {body}
    }}
}}""")
    return "\n".join(parts) + "\n"


def build_library(name, text, flags):
    """Compile `text` to a shared library in the cache (once) and return its path."""
    command = [compiler(), *CXX_FLAGS, *flags]
    key = hashlib.sha256("\n".join([text, *command, compiler_version(), cpu_name()]).encode())
    stem = Path(name).stem
    path = cache_dir() / "host" / f"{stem}-{key.hexdigest()[:24]}.so"
    if path.exists():
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
        os.replace(out, path)  # atomic: a concurrent run sees the whole library or none
    return path


class HostLaunch:
    """A kernel launch with its ctypes arguments built once."""

    def __init__(self, backend, function, grid, block, args):
        self.backend = backend
        self.function = function
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
        self.function(self.grid, self.block, self.argv)

    def __call__(self):
        if self.backend.recording is not None:
            self.backend.recording.append(self)
        else:
            self.run()


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
        self.recording = None
        self._libraries = []

    def is_array(self, obj):
        return isinstance(obj, np.ndarray)

    def _empty(self, shape, dtype):
        return np.empty(shape, dtype)

    def _to_host(self, array):
        return np.array(array, copy=True)

    def _write(self, array, host_values):
        np.copyto(array, host_values)

    def _fill(self, array, value):
        array.fill(value)

    def _compile(self, name, source, signatures, flags):
        text = source + "\n" + launcher_source(signatures)
        library = ctypes.CDLL(str(build_library(name, text, flags)))
        self._libraries.append(library)
        functions = {}
        for sig in signatures:
            function = getattr(library, f"launch_{sig.name}")
            function.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint),
                                 ctypes.POINTER(ctypes.c_void_p)]
            function.restype = None
            functions[sig.name] = function
        return functions

    def bind_launch(self, kernel, grid, block, args):
        return HostLaunch(self, kernel.function, grid, block, args)

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
        if not self._libraries:
            return os.cpu_count()
        return int(self._libraries[0].solvers_omp_threads())

    def describe(self):
        return {"backend": "host", "device": f"{cpu_name()} ({self.threads()} OpenMP threads)",
                "compiler": compiler_version()}
