// The kernel dialect: one source, compiled by NVRTC for the GPU and by the system C++ compiler
// (with OpenMP) for the host. Every .cu file in raw_kernels/ includes this header first.
//
//   KERNEL void f(...)        one thread per work item; on host the launcher loops over threads.
//   BLOCK_KERNEL void f(...)  uses __shared__ memory and __syncthreads(); code between barriers
//                             is written as PHASE { ... } blocks. On host the function runs once
//                             per block and each PHASE loops over the block's threads. No local
//                             variable may live across a barrier (keep it in shared memory), and
//                             no PHASE may `return`.
//   LAUNCH_BOUNDS(t, b)       after KERNEL or BLOCK_KERNEL: __launch_bounds__ on the GPU.
//   THREAD_STATE(type, name)  in a BLOCK_KERNEL, a per-thread variable that does live across
//                             barriers: a register on the GPU, one slot per thread of the block
//                             on the host. Use it as MY(name), inside PHASE blocks only.
//   REDUCTION                 placed before KERNEL or BLOCK_KERNEL: this kernel may use FP64
//                             (accumulators, the time-step controller). All other kernels must not
//                             contain FP64 arithmetic in fp32 builds; a test reads the PTX.
//   REDUCTION_DEVICE          in place of DEVICE: a function that may use FP64 (the clock's
//                             arithmetic in a one-launch step), called from kernels that may
//                             not. On the GPU it stays out of line, a .func of its own in the
//                             PTX, so that the check finds FP64 only there.
//
// REAL_BITS (32 or 64) selects `real`. Write literals as R(0.5), never bare 0.5.

#ifndef REAL_BITS
#define REAL_BITS 32
#endif
#if REAL_BITS == 32
typedef float real;
#else
typedef double real;
#endif
#define R(x) ((real)(x))
#define REDUCTION

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)

#define KERNEL extern "C" __global__
#define BLOCK_KERNEL extern "C" __global__
#define DEVICE __device__ __forceinline__
#define REDUCTION_DEVICE __device__ __noinline__
#define PHASE
#define THREAD_STATE(type, name) type name
#define MY(name) name
// After BLOCK_KERNEL: at most `threads` threads a block, and few enough registers a thread
// that `blocks` blocks fit on one multiprocessor.
#define LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
// A ticket from a counter in global memory, after this thread's earlier writes are visible to
// every block (see last_block_arrived in reduce.h).
DEVICE int take_ticket(int* counter)
{
    __threadfence();
    return atomicAdd(counter, 1);
}
#if REAL_BITS == 32
#define REAL_INF __int_as_float(0x7f800000)
#else
#define REAL_INF __longlong_as_double(0x7ff0000000000000LL)
#endif
// Approximate 1/x, sqrt(x) and 1/sqrt(x): in fp32 one special-function instruction each
// (relative error about 2^-23, subnormals flushed to zero); the exact operations in fp64.
#if REAL_BITS == 32
DEVICE float approx_recip(float x)
{
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
DEVICE float approx_sqrt(float x)
{
    float y;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
DEVICE float approx_rsqrt(float x)
{
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
#else
DEVICE double approx_recip(double x) { return 1.0 / x; }
DEVICE double approx_sqrt(double x) { return sqrt(x); }
DEVICE double approx_rsqrt(double x) { return 1.0 / sqrt(x); }
#endif

#else  // host: plain C++ with OpenMP

#include <cmath>
#include <cfloat>

struct dim3_host { unsigned x, y, z; };
// Per-OpenMP-thread CUDA built-ins; the generated launcher sets them before each call.
static thread_local dim3_host threadIdx, blockIdx, blockDim, gridDim;

#define KERNEL static inline
#define BLOCK_KERNEL static inline
#define DEVICE static inline
#define REDUCTION_DEVICE static inline
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __syncthreads() ((void)0)
#define REAL_INF ((real)INFINITY)

// Blocks run on several OpenMP threads: acquire-release orders each block's writes before its
// ticket and the last block's reads after it.
static inline int take_ticket(int* counter)
{
    return __atomic_fetch_add(counter, 1, __ATOMIC_ACQ_REL);
}

using std::sqrt;
using std::fabs;
using std::fmax;
using std::fmin;
using std::copysign;
using std::fma;

// The approximate operations of the CUDA build are exact here.
static inline real approx_recip(real x) { return R(1) / x; }
static inline real approx_sqrt(real x) { return sqrt(x); }
static inline real approx_rsqrt(real x) { return R(1) / sqrt(x); }

// Linear thread index -> threadIdx, x fastest, as CUDA numbers a block's threads.
static inline bool set_thread_index(unsigned t)
{
    threadIdx.x = t % blockDim.x;
    threadIdx.y = (t / blockDim.x) % blockDim.y;
    threadIdx.z = t / (blockDim.x * blockDim.y);
    return true;
}
#define PHASE                                                                               \
    for (unsigned phase_thread_ = 0; phase_thread_ < blockDim.x * blockDim.y * blockDim.z;  \
         ++phase_thread_)                                                                   \
        if (set_thread_index(phase_thread_))
#define MAX_BLOCK_THREADS 1024
#define THREAD_STATE(type, name) static thread_local type name[MAX_BLOCK_THREADS]
#define MY(name) name[phase_thread_]
#define LAUNCH_BOUNDS(threads, blocks)

#endif
