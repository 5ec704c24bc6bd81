"""The interface both backends implement, and the parts they share.

A backend owns device memory, compiles kernel sources (raw_kernels/) into modules, binds
kernels to their launch arguments, and captures a sequence of bound launches into a graph that
can be replayed. While capturing, allocating memory or reading device data back to the host is
an error on every backend, so a step that would break CUDA stream capture fails in CI too.
"""

from pathlib import Path

import numpy as np

from .source import define_flags, load_source, parse_signatures, source_name


class BackendError(RuntimeError):
    """A backend cannot be used or cannot do what was asked (the message says why)."""


class CaptureError(RuntimeError):
    """Something inside a captured step that a CUDA graph cannot contain."""


def real_bits(dtype):
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"precision dtype must be float32 or float64, not {dtype}")
    return 32 if dtype == np.float32 else 64


class Kernel:
    """One compiled kernel; `bind` checks arguments against the parsed signature once."""

    def __init__(self, backend, signature, real_dtype, function):
        self.backend = backend
        self.signature = signature
        self.real_dtype = np.dtype(real_dtype)
        self.function = function

    @property
    def name(self):
        return self.signature.name

    def bind(self, grid, block, *args):
        """A launch of this kernel with fixed grid, block and arguments, as a callable."""
        params = self.signature.params
        if len(args) != len(params):
            raise TypeError(f"kernel {self.name} takes {len(params)} arguments, got {len(args)}")
        converted = []
        for param, arg in zip(params, args):
            dtype = param.dtype(self.real_dtype)
            if param.pointer:
                if not self.backend.is_array(arg) or arg.dtype != dtype:
                    got = f"{type(arg).__name__} of {getattr(arg, 'dtype', '?')}"
                    raise TypeError(f"kernel {self.name} argument '{param.name}' expects a "
                                    f"{self.backend.name} array of {dtype}, got {got}")
                if not arg.flags.c_contiguous:
                    raise TypeError(f"kernel {self.name} argument '{param.name}' is not contiguous")
                converted.append(arg)
            else:
                converted.append(dtype.type(arg))
        return self.backend.bind_launch(self, _dim3(grid), _dim3(block), converted)

    def __call__(self, grid, block, *args):
        self.bind(grid, block, *args)()


def _dim3(value):
    value = tuple(int(v) for v in (value if isinstance(value, (tuple, list)) else (value,)))
    if not 1 <= len(value) <= 3 or min(value) < 1:
        raise ValueError(f"launch dimensions must be 1 to 3 positive integers, got {value}")
    return value + (1,) * (3 - len(value))


class Module:
    """The kernels of one source file compiled with one set of defines."""

    def __init__(self, kernels):
        self._kernels = {kernel.name: kernel for kernel in kernels}

    def __getattr__(self, name):
        try:
            return self._kernels[name]
        except KeyError:
            raise AttributeError(f"no kernel named {name}") from None


class Backend:
    """Common behaviour; subclasses provide memory, compilation, launch and capture."""

    name = "abstract"

    def __init__(self):
        self._capturing = False
        self._modules = {}

    # -- memory ------------------------------------------------------------------------------
    def _no_capture(self, what):
        if self._capturing:
            raise CaptureError(f"{what} inside a captured step: a CUDA graph cannot contain it; "
                               "do it before the capture or between replays")

    def empty(self, shape, dtype):
        self._no_capture("allocating device memory")
        return self._empty(shape, np.dtype(dtype))

    def zeros(self, shape, dtype):
        array = self.empty(shape, dtype)
        self.fill(array, 0)
        return array

    def to_device(self, host_array):
        host_array = np.ascontiguousarray(host_array)
        array = self.empty(host_array.shape, host_array.dtype)
        self.write(array, host_array)
        return array

    def to_host(self, array):
        """A NumPy copy of a device array (waits for the device)."""
        self._no_capture("reading device data on the host")
        return self._to_host(array)

    def write(self, array, host_values):
        """Copy host values into an existing device array."""
        self._no_capture("copying host data to the device")
        self._write(array, np.asarray(host_values, dtype=array.dtype))

    def fill(self, array, value):
        """Set every element (on the device, no host copy)."""
        self._no_capture("filling memory from the host")
        self._fill(array, array.dtype.type(value))

    def pinned(self, shape, dtype):
        """A host array the device copies to and from without waiting (page-locked on cuda),
        for data that crosses to the host inside a step (a halo exchange through MPI)."""
        self._no_capture("allocating host memory")
        return self._pinned(shape, np.dtype(dtype))

    def bind_copy(self, dst, src):
        """A launch copying src into dst (device or pinned arrays of the same size and type), in
        order with the kernels, capturable."""
        if dst.nbytes != src.nbytes or dst.dtype != src.dtype:
            raise ValueError(f"copy of {src.nbytes} bytes of {src.dtype} into {dst.nbytes} "
                             f"bytes of {dst.dtype}")
        return self._bind_copy(dst, src)

    # -- kernels -----------------------------------------------------------------------------
    def module(self, source, real_dtype, defines=None):
        """Compile a kernel source with `real` = real_dtype and the given defines. source: a
        path relative to raw_kernels/ ("fv/euler.cu"), or a pathlib.Path to a file outside the
        package (a script's kernel; its includes resolve as a package source's do)."""
        defines = dict(defines or {})
        defines["REAL_BITS"] = real_bits(real_dtype)
        name = source_name(source)
        key = (str(source.resolve()) if isinstance(source, Path) else source,
               tuple(define_flags(defines)))
        if key not in self._modules:
            text = load_source(source)
            signatures = parse_signatures(text)
            functions = self._compile(name, text, signatures, define_flags(defines))
            kernels = [Kernel(self, sig, real_dtype, functions[sig.name]) for sig in signatures]
            self._modules[key] = Module(kernels)
        return self._modules[key]

    # -- array work ---------------------------------------------------------------------------
    def array_work(self):
        """A context manager for whole-array work on this backend's arrays outside a capture
        (a multigrid setup): it yields (xp, sparse), the array and sparse-matrix modules
        (NumPy and scipy.sparse on host, CuPy and cupyx.scipy.sparse on cuda), and on cuda
        puts that work on the stream the kernels run on, so both keep their order."""
        self._no_capture("whole-array work")
        return self._array_work()

    # -- graphs ------------------------------------------------------------------------------
    def capture(self, step):
        """Record the launches made by `step()` into a graph with a `replay()` method."""
        if self._capturing:
            raise CaptureError("nested capture")
        self._capturing = True
        try:
            return self._capture(step)
        finally:
            self._capturing = False

    def loop_until(self, body, flag, fallback_repeats=None):
        """Run `body()` (launches only) at least once and again until the int32 flag[0] is
        nonzero. Inside a capture the loop runs on the device (a conditional WHILE node on
        cuda), so one replay runs it to the end with no host round trip; where the backend
        cannot (see device_loops) the capture holds `fallback_repeats` copies of the body,
        which must then be no-ops once the flag is set. Outside a capture the host reads the
        flag after each body."""
        if self._capturing:
            if self.device_loops() is None:
                self._capture_loop(body, flag)
            elif fallback_repeats:
                for _ in range(fallback_repeats):
                    body()
            else:
                raise CaptureError(f"a loop inside a captured step: {self.device_loops()}")
            return
        body()
        while self.to_host(flag)[0] == 0:
            body()

    def device_loops(self):
        """None where loop_until can be captured into a graph, else the reason it cannot."""
        return None

    # -- to implement --------------------------------------------------------------------------
    def is_array(self, obj):
        raise NotImplementedError

    def _empty(self, shape, dtype):
        raise NotImplementedError

    def _to_host(self, array):
        raise NotImplementedError

    def _write(self, array, host_values):
        raise NotImplementedError

    def _fill(self, array, value):
        raise NotImplementedError

    def _pinned(self, shape, dtype):
        raise NotImplementedError

    def _bind_copy(self, dst, src):
        raise NotImplementedError

    def marker(self):
        """A point in the order of the launches: record() (between graph replays, from the host)
        marks the work launched so far, wait() blocks the host until that work is done (not
        what was launched after it)."""
        raise NotImplementedError

    def bind_call(self, function):
        """A launch that calls function(stream) in order with the kernels: on cuda with the
        backend's stream (capturable where function only puts work on that stream, as NCCL
        calls do), on the host with None when it runs."""
        raise NotImplementedError

    def _compile(self, name, source, signatures, flags):
        """{kernel name: function} of the expanded source text; name (source_name) is for
        messages and cache file names."""
        raise NotImplementedError

    def bind_launch(self, kernel, grid, block, args):
        raise NotImplementedError

    def _array_work(self):
        raise NotImplementedError

    def _capture(self, step):
        raise NotImplementedError

    def _capture_loop(self, body, flag):
        raise NotImplementedError

    def synchronize(self):
        raise NotImplementedError

    def describe(self):
        """Facts for output files and `solvers info`: {'backend': ..., 'device': ...}."""
        raise NotImplementedError
