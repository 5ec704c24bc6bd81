// Mixed-precision iterative refinement: the residual of an FP64 solution, handed to an FP32
// inner solve, and the FP32 correction added back in FP64; for a refinement captured in a step
// (CapturedRefinement), the device-side verdict and the FP32 copy of a rebuilt matrix. Every
// kernel touches double by design (that is the point of the outer loop), so they are REDUCTION
// kernels; `real` is not used.
//
// Compile-time, from solvers/linalg/refinement.py: PARTIAL_BLOCKS (the most blocks of
// refine_residual, one partial sum each) and THREADS (the threads of a block, a power of two).
#include "prelude.h"
#include "reduce.h"

#ifndef PARTIAL_BLOCKS
#error "PARTIAL_BLOCKS (blocks of refine_residual) must be defined"
#endif
#ifndef THREADS
#error "THREADS (threads of a block) must be defined"
#endif

// r = b - ax in double, handed to the inner solve as float r32 with a zero initial guess x32;
// partial sums of r.r (slot 0) and b.b (slot 1).
REDUCTION BLOCK_KERNEL void refine_residual(const double* __restrict__ b,
                                            const double* __restrict__ ax,
                                            float* __restrict__ r32, float* __restrict__ x32,
                                            int n, double* __restrict__ partials)
{
    __shared__ double s_rr[THREADS];
    __shared__ double s_bb[THREADS];
    PHASE {
        double rr = 0.0, bb = 0.0;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            const double r = b[i] - ax[i];
            r32[i] = (float)r;
            x32[i] = 0.0f;
            rr += r * r;
            bb += b[i] * b[i];
        }
        s_rr[threadIdx.x] = rr;
        s_bb[threadIdx.x] = bb;
    }
    block_sum(s_rr);
    block_sum(s_bb);
    PHASE {
        if (threadIdx.x == 0) {
            partials[blockIdx.x] = s_rr[0];
            partials[PARTIAL_BLOCKS + blockIdx.x] = s_bb[0];
        }
    }
}

// x += d.
REDUCTION KERNEL void refine_correct(double* __restrict__ x, const float* __restrict__ d, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += (double)d[i];
}

// One block, from refine_residual's partials: converged when r.r <= rtol2 b.b (NaN: not). The
// inner solve's absolute floor state[slot] (its atol^2) becomes floor2 b.b, or, once
// converged, infinity, so that its next solve stops at its start (the correction is then 0).
// done[0]: 1 converged, else the inner solve's failure (2 maxiter, 3 breakdown) or `stalled`.
REDUCTION BLOCK_KERNEL void refine_verdict(const double* __restrict__ partials, double rtol2,
                                           double floor2, double* __restrict__ state, int slot,
                                           const int* __restrict__ inner_done, int stalled,
                                           int* __restrict__ done)
{
    __shared__ double s[THREADS];
    sum_in_order(partials, PARTIAL_BLOCKS, s);
    const double rr = s[0];
    sum_in_order(partials + PARTIAL_BLOCKS, PARTIAL_BLOCKS, s);
    const double bb = s[0];
    PHASE {
        if (threadIdx.x == 0) {
            const bool converged = rr <= rtol2 * bb;
            state[slot] = converged ? (double)REAL_INF : floor2 * bb;
            const int inner = inner_done[0];
            done[0] = converged ? 1 : inner == 2 || inner == 3 ? inner : stalled;
        }
    }
}

// dst = (float)src when flag[0] (the FP32 copy of an FP64 matrix's values, after a rebuild).
REDUCTION KERNEL void refine_round(const double* __restrict__ src, float* __restrict__ dst,
                                   const int* __restrict__ flag, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && flag[0] != 0) dst[i] = (float)src[i];
}
