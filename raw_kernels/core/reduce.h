// Block-wide reductions written in the dialect (see prelude.h), over the threads of a 1D or 2D
// block in linear order; their number must be a power of two.
#pragma once

// Maximum of s[0 .. threads) left in s[0]. Every thread of the block must call it. The first
// 32 threads fold the block's values into 32, then one thread folds those: two barriers and
// work in one warp, where a halving tree costs every warp a step per level. A maximum is exact,
// so the order of the folds does not change the result.
DEVICE void block_max(real* s)
{
    __syncthreads();
    PHASE {
        const unsigned t = threadIdx.y * blockDim.x + threadIdx.x, n = blockDim.x * blockDim.y;
        if (t < 32) {
            real m = s[t];
            for (unsigned k = t + 32; k < n; k += 32) m = fmax(m, s[k]);
            s[t] = m;
        }
    }
    __syncthreads();
    PHASE {
        const unsigned n = blockDim.x * blockDim.y;
        if (threadIdx.x == 0 && threadIdx.y == 0) {
            real m = s[0];
            for (unsigned k = 1; k < 32 && k < n; ++k) m = fmax(m, s[k]);
            s[0] = m;
        }
    }
    __syncthreads();
}

// Sum of s[0 .. threads) left in s[0], added in a fixed tree order (the same bits every run),
// in the type of s (double for the dot products, `real` where FP64 is not allowed).
template <typename T>
DEVICE void block_sum(T* s)
{
    for (unsigned half = blockDim.x * blockDim.y / 2; half > 0; half >>= 1) {
        __syncthreads();
        PHASE {
            const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
            if (t < half) s[t] += s[t + half];
        }
    }
    __syncthreads();
}

// Whether this block is the last of its launch to get here: every block calls it (all its
// threads) after writing its partial sums, and the last one can then read every block's
// partials and finish the reduction, with no launch of its own. Only the choice of that block
// depends on timing, never the order of a sum. `counter` is 0 before the launch and again
// after it; `flag` is a __shared__ int.
DEVICE bool last_block_arrived(int* counter, int* flag)
{
    PHASE {
        if (threadIdx.x == 0 && threadIdx.y == 0) {
            const int blocks = (int)(gridDim.x * gridDim.y * gridDim.z);
            flag[0] = take_ticket(counter) == blocks - 1;
            if (flag[0]) counter[0] = 0;
        }
    }
    __syncthreads();
    return flag[0] != 0;
}

// Sum of values[0 .. count) left in s[0] (s: a __shared__ double per thread), in an order fixed
// by count and the block size alone: each thread adds a strided share, then the block tree.
// The reads are volatile: the last block of a launch reads what the other blocks just wrote.
DEVICE void sum_in_order(const double* values, int count, double* s)
{
    PHASE {
        const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
        double sum = 0.0;
        for (int k = (int)t; k < count; k += (int)(blockDim.x * blockDim.y))
            sum += ((volatile const double*)values)[k];
        s[t] = sum;
    }
    block_sum(s);
}
