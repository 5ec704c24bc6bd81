"""Device-side loops for the cuda backend: a CUDA conditional WHILE graph node (CUDA >= 12.4),
built through cuda-bindings while CuPy captures a step.

The node is added to the graph being captured on the backend's stream; the loop body is
captured into the node's child graph from a second stream, followed by one tiny kernel
(raw_kernels/core/graph_loop.cu) that sets the node's condition from a flag in device memory.
One replay of the outer graph then runs the loop to its end with no host round trip.
"""

import hashlib
import os

import numpy as np

from .base import BackendError
from .library_cache import install, verified
from .source import load_source, source_name

CONDITIONAL_NODES_DRIVER = 12040  # CUDA 12.4: the first driver with conditional WHILE nodes
SOURCE = "core/graph_loop.cu"
CONDITION_KERNEL = "set_loop_condition"
NVRTC_OPTIONS = ("-std=c++17",)  # and --gpu-architecture


def cuda_only_kernels():
    """The CUDA-only source this module compiles (outside the kernel dialect: no host build,
    no defines, no REAL_BITS), with the kernels it must hold: for the NVRTC compile check."""
    yield SOURCE, {CONDITION_KERNEL}


def driver_module():
    try:
        from cuda.bindings import driver
    except ImportError:
        return None
    return driver


def unavailable_reason(cupy):
    """None where conditional WHILE nodes can be built, else why not (one line)."""
    if driver_module() is None:
        return "cuda-bindings is not installed (pip install 'solvers-gpu[cuda12]' or '[cuda13]')"
    version = cupy.cuda.runtime.driverGetVersion()
    if version < CONDITIONAL_NODES_DRIVER:
        return (f"the CUDA driver supports CUDA {version // 1000}.{version % 1000 // 10}; "
                "conditional graph nodes need 12.4")
    return None


def _versioned(driver, name, suffix):
    """cuda-bindings 12 keeps the edge-data signatures under a suffix; 13 under the name."""
    return getattr(driver, name + suffix, None) or getattr(driver, name)


class ConditionalLoops:
    """Adds WHILE nodes to the cuda backend's captures."""

    def __init__(self, backend, cache):
        self.backend = backend
        self.cupy = backend.cupy
        self.driver = driver_module()
        self.cache = cache
        self._condition = None
        self._streams = []  # body streams, alive as long as the graphs captured from them

    def _check(self, result):
        error, *values = result
        if error != self.driver.CUresult.CUDA_SUCCESS:
            raise BackendError(f"CUDA driver call for a graph loop failed: {error}")
        return values[0] if len(values) == 1 else values

    def prepare(self):
        """Compile and load set_loop_condition (PTX from NVRTC, loaded through the driver JIT)
        before a capture needs it."""
        if self._condition is None:
            source = load_source(SOURCE)
            arch = f"compute_{self.cupy.cuda.Device().compute_capability}"
            key = hashlib.sha256(f"{arch}\n{source}".encode()).hexdigest()[:16]
            path = self.cache / f"graph_loop-{key}.ptx"
            if not verified(path, magic=None):  # a damaged entry is rebuilt
                path.parent.mkdir(parents=True, exist_ok=True)
                temporary = path.with_suffix(f".tmp-{os.getpid()}")
                temporary.write_text(self._ptx(source, arch))
                install(temporary, path, magic=None)
            module = self.cupy.RawModule(path=str(path))
            self._condition = module.get_function(CONDITION_KERNEL)

    def _ptx(self, source, arch):
        nvrtc = self.cupy.cuda.nvrtc
        program = nvrtc.createProgram(source, SOURCE, [], [])
        try:
            nvrtc.compileProgram(program, [f"--gpu-architecture={arch}", *NVRTC_OPTIONS])
        except nvrtc.NVRTCError:
            raise BackendError(f"NVRTC compile of {source_name(SOURCE)} failed:\n"
                               + nvrtc.getProgramLog(program)) from None
        ptx = nvrtc.getPTX(program)
        return ptx.decode() if isinstance(ptx, bytes) else ptx

    def add_while(self, body, flag):
        """Add `while (flag[0] == 0) body();` (body at least once) to the current capture."""
        driver, outer = self.driver, self.backend.stream
        self.prepare()
        capture_info = _versioned(driver, "cuStreamGetCaptureInfo", "_v3")
        _, _, graph, dependencies, edges, count = self._check(capture_info(outer.ptr))
        context = self._check(driver.cuCtxGetCurrent())
        handle = self._check(driver.cuGraphConditionalHandleCreate(
            graph, context, 1, int(driver.CU_GRAPH_COND_ASSIGN_DEFAULT)))
        params = driver.CUgraphNodeParams()
        params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.handle = handle
        params.conditional.type = driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE
        params.conditional.size = 1
        params.conditional.ctx = context
        add_node = _versioned(driver, "cuGraphAddNode", "_v2")
        node = self._check(add_node(graph, dependencies, edges, count, params))
        body_graph = params.conditional.phGraph_out[0]
        # The outer capture continues after the loop node.
        update = _versioned(driver, "cuStreamUpdateCaptureDependencies", "_v2")
        flags = driver.CUstreamUpdateCaptureDependencies_flags
        self._check(update(outer.ptr, [node], None, 1,
                           int(flags.CU_STREAM_SET_CAPTURE_DEPENDENCIES)))
        inner = self.cupy.cuda.Stream(non_blocking=True)
        self._streams.append(inner)
        self._check(driver.cuStreamBeginCaptureToGraph(
            inner.ptr, body_graph, None, None, 0,
            driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED))
        self.backend.stream = inner
        try:
            body()
            with inner:
                self._condition((1,), (1,), (np.uint64(int(handle)), flag))
        finally:
            self.backend.stream = outer
            self._check(driver.cuStreamEndCapture(inner.ptr))
