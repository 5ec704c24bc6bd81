"""The two ceilings of METHOD.md, measured on the card: device memory bandwidth (a large
device-to-device copy, bytes read plus bytes written) and the FP32 / FP64 FMA rate.

    python scripts/ceilings.py          # prints the numbers as JSON

Each number is the median of repeated launches timed with CUDA events, after a warm-up.
"""

import json
import statistics
import time

import numpy as np

# A long chain of dependent FMAs on NCHAIN independent registers per thread: enough
# independent work per thread to hide the FMA latency, no memory traffic inside the loop.
FMA_SOURCE = r"""
#if REAL_BITS == 32
typedef float real;
#define FMA fmaf
#else
typedef double real;
#define FMA fma
#endif
#define NCHAIN 8
#define UNROLL 64

extern "C" __global__ void fma_chain(real* out, real a, real b, int iters)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    real x[NCHAIN];
#pragma unroll
    for (int k = 0; k < NCHAIN; ++k) x[k] = (real)(tid % 1024 + k) * (real)1e-3;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int r = 0; r < UNROLL; ++r) {
#pragma unroll
            for (int k = 0; k < NCHAIN; ++k) x[k] = FMA(x[k], a, b);
        }
    }
    real s = 0;
#pragma unroll
    for (int k = 0; k < NCHAIN; ++k) s += x[k];
    out[tid] = s;  // keeps the chains alive
}
"""
FMA_NCHAIN, FMA_UNROLL = 8, 64
FMA_BLOCK = 256


def _median_seconds(cupy, launch, repeats, stream=None):
    """Median wall time of launch() on the device, by CUDA events, after one warm-up."""
    stream = stream or cupy.cuda.get_current_stream()
    launch()
    stream.synchronize()
    times = []
    for _ in range(repeats):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        launch()
        end.record(stream)
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(times)


def copy_bandwidth(nbytes=1 << 30, repeats=20):
    """Device-to-device copy in GB/s (1e9 bytes/s, read + written): cudaMemcpyAsync and a
    CuPy elementwise copy kernel; `gbs` is the better of the two."""
    import cupy

    n = nbytes // 4
    memcpy, kernel = _copy_seconds(cupy, n, repeats)
    cupy.get_default_memory_pool().free_all_blocks()
    moved = 2 * n * 4
    return {"memcpy_gbs": moved / memcpy / 1e9, "kernel_gbs": moved / kernel / 1e9,
            "gbs": moved / min(memcpy, kernel) / 1e9, "buffer_bytes": n * 4}


def _copy_seconds(cupy, n, repeats):
    src = cupy.random.random(n, dtype=cupy.float32)  # never time on zeros
    dst = cupy.empty_like(src)
    stream = cupy.cuda.get_current_stream()
    memcpy = _median_seconds(
        cupy, lambda: dst.data.copy_from_device_async(src.data, n * 4, stream), repeats)
    copy_kernel = cupy.ElementwiseKernel("T x", "T y", "y = x", "solvers_bench_copy")
    dst.fill(-1)
    kernel = _median_seconds(cupy, lambda: copy_kernel(src, dst), repeats)
    if not bool(cupy.array_equal(src, dst)):
        raise RuntimeError("copy bandwidth: the copy is wrong")
    return memcpy, kernel


def fma_throughput(precision="fp32", seconds=0.05, repeats=10):
    """FMA rate in GFLOP/s (an FMA counts 2 FLOPs) for precision 'fp32' or 'fp64'."""
    import cupy

    bits = 32 if precision == "fp32" else 64
    dtype = np.float32 if bits == 32 else np.float64
    module = cupy.RawModule(code=FMA_SOURCE, options=("-std=c++17", f"-DREAL_BITS={bits}"))
    kernel = module.get_function("fma_chain")
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    blocks = sms * 32  # 8192 threads per SM: several full waves at any occupancy
    out = cupy.empty(blocks * FMA_BLOCK, dtype)
    # x -> 0.999 x + 0.001 stays near 1: no overflow, no denormals.
    a, b = dtype(0.999), dtype(0.001)

    def launch(iters):
        return lambda: kernel((blocks,), (FMA_BLOCK,), (out, a, b, np.int32(iters)))

    # Calibrate the loop count so that one launch takes about `seconds`.
    probe = 64
    t = _median_seconds(cupy, launch(probe), 3)
    iters = max(probe, int(probe * seconds / max(t, 1e-6)))
    t = _median_seconds(cupy, launch(iters), repeats)
    if not bool(cupy.isfinite(out).all()):
        raise RuntimeError("fma throughput: non-finite result")
    flops = 2.0 * FMA_NCHAIN * FMA_UNROLL * iters * blocks * FMA_BLOCK
    return {"gflops": flops / t / 1e9, "iters": iters, "threads": blocks * FMA_BLOCK}


def host_copy_bandwidth(nbytes=1 << 28, repeats=10):
    """The host backend's ceiling: a NumPy copy in GB/s (read + written)."""
    src = np.random.default_rng().random(nbytes // 8)
    dst = np.empty_like(src)
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - start)
    return {"gbs": 2 * src.nbytes / statistics.median(times[1:]) / 1e9,
            "buffer_bytes": src.nbytes}


def measure(backend_name="cuda"):
    """All ceilings for one backend: {'copy': {...}, 'fp32': {...} | None, 'fp64': ...}."""
    if backend_name != "cuda":
        return {"copy": host_copy_bandwidth(), "fp32": None, "fp64": None}
    return {"copy": copy_bandwidth(), "fp32": fma_throughput("fp32"),
            "fp64": fma_throughput("fp64")}


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
