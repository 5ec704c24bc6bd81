"""The CUDA backend: CuPy arrays, kernels compiled by NVRTC through cupy.RawModule (CuPy keeps
them in its on-disk kernel cache), and graphs captured from one non-blocking stream."""

import contextlib
import os

from .base import Backend, BackendError
from .cuda_loop import ConditionalLoops, unavailable_reason
from .host import cache_dir
from .memory import allocation_error
from .mpi import LOCAL_RANK_VARIABLE

# Division and square root in float are the approximate instructions (at most 2 ulp instead
# of IEEE round-to-nearest): a few instructions in place of a long IEEE sequence, which counts
# in kernels bound by instruction issue such as the Euler stages (measurement:
# docs/performance.md); the Euler kernel also calls prelude.h's single-instruction approx_*
# explicitly. Double precision is unaffected; the host backend computes IEEE results.
NVRTC_FLAGS = ("-std=c++17", "--prec-div=false", "--prec-sqrt=false")


def import_cupy():
    try:
        import cupy
    except ImportError as error:
        raise BackendError("the cuda backend needs CuPy: pip install 'solvers-gpu[cuda12]' "
                           f"or 'solvers-gpu[cuda13]' ({error})") from None
    return cupy


def cuda_available():
    try:
        return import_cupy().cuda.is_available()
    except BackendError:
        return False


class CudaLaunch:
    def __init__(self, backend, function, grid, block, args):
        self.backend = backend
        self.function = function
        self.grid = grid
        self.block = block
        self.args = tuple(args)

    def __call__(self):
        with self.backend.stream:
            self.function(self.grid, self.block, self.args)


class CudaCall:
    """function(stream handle) run in order with the launches (it puts work on the stream)."""

    def __init__(self, backend, function):
        self.backend = backend
        self.function = function

    def __call__(self):
        self.function(self.backend.stream.ptr)


class CudaMarker:
    """An event on the backend's stream: record() marks the work launched so far."""

    def __init__(self, event, stream):
        self.event = event
        self.stream = stream

    def record(self):
        self.event.record(self.stream)

    def wait(self):
        self.event.synchronize()


class CudaGraph:
    def __init__(self, graph, stream):
        self.graph = graph
        self.stream = stream

    def replay(self):
        self.graph.launch(self.stream)


class CudaBackend(Backend):
    name = "cuda"

    def __init__(self):
        super().__init__()
        cupy = import_cupy()
        if not cupy.cuda.is_available():
            raise BackendError("backend 'cuda' was asked for but CuPy finds no usable CUDA GPU "
                               "(use --backend host or auto to run on the CPU)")
        self.cupy = cupy
        # A rank of a decomposed run: its GPU by its index among the machine's ranks.
        local = os.environ.get(LOCAL_RANK_VARIABLE, "")
        if local.isdigit():
            cupy.cuda.Device(int(local) % cupy.cuda.runtime.getDeviceCount()).use()
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self._loops_unavailable = unavailable_reason(cupy)
        self._loops = None if self._loops_unavailable else ConditionalLoops(self, cache_dir())

    def is_array(self, obj):
        return isinstance(obj, self.cupy.ndarray)

    def _empty(self, shape, dtype):
        with self.stream:
            try:
                return self.cupy.empty(shape, dtype)
            except self.cupy.cuda.memory.OutOfMemoryError:
                # One line: what the array needs, what the run holds, what the card has.
                free, total = self.cupy.cuda.runtime.memGetInfo()
                held = self.cupy.get_default_memory_pool().used_bytes()
                raise allocation_error(f"the GPU ({self.describe()['device']})", shape, dtype,
                                       free, total, held) from None

    def _to_host(self, array):
        return array.get(stream=self.stream)

    def _write(self, array, host_values):
        array.set(host_values, stream=self.stream)

    def _fill(self, array, value):
        with self.stream:
            array.fill(value)

    def _pinned(self, shape, dtype):
        import cupyx

        return cupyx.empty_pinned(shape, dtype)

    def _bind_copy(self, dst, src):
        runtime = self.cupy.cuda.runtime

        def pointer(array):
            return array.data.ptr if self.is_array(array) else array.ctypes.data

        return self.bind_call(lambda stream: runtime.memcpyAsync(
            pointer(dst), pointer(src), src.nbytes, runtime.memcpyDefault, stream))

    def bind_call(self, function):
        return CudaCall(self, function)

    def marker(self):
        event = self.cupy.cuda.Event(disable_timing=True)
        return CudaMarker(event, self.stream)

    def _compile(self, name, source, signatures, flags):
        try:
            module = self.cupy.RawModule(code=source, options=NVRTC_FLAGS + tuple(flags))
            return {sig.name: module.get_function(sig.name) for sig in signatures}
        except self.cupy.cuda.compiler.CompileException as error:
            message = f"NVRTC compile of {name} failed:\n{error}"
            raise BackendError(message) from None

    def bind_launch(self, kernel, grid, block, args):
        return CudaLaunch(self, kernel.function, grid, block, args)

    @contextlib.contextmanager
    def _array_work(self):
        import cupyx.scipy.sparse
        with self.stream:
            yield self.cupy, cupyx.scipy.sparse

    def _capture(self, step):
        with self.stream:
            self.stream.begin_capture()
            try:
                step()
            finally:
                graph = self.stream.end_capture()
        return CudaGraph(graph, self.stream)

    def device_loops(self):
        if self._loops is not None:
            self._loops.prepare()  # compile and load outside any capture
        return self._loops_unavailable

    def _capture_loop(self, body, flag):
        self._loops.add_while(body, flag)

    def synchronize(self):
        self.stream.synchronize()

    def describe(self):
        runtime = self.cupy.cuda.runtime
        props = runtime.getDeviceProperties(self.cupy.cuda.Device().id)
        name = props["name"]
        name = name.decode() if isinstance(name, bytes) else name
        return {"backend": "cuda", "device": name,
                "compute_capability": f"{props['major']}.{props['minor']}",
                "cuda_runtime": runtime.runtimeGetVersion(),
                "cuda_driver": runtime.driverGetVersion(),
                "cupy": self.cupy.__version__}
