// Block-wide reductions written in the dialect (see prelude.h), over the threads of a 1D or 2D
// block in linear order; their number must be a power of two.
#pragma once

// Maximum of s[0 .. threads) left in s[0]. Every thread of the block must call it.
DEVICE void block_max(real* s)
{
    for (unsigned half = blockDim.x * blockDim.y / 2; half > 0; half >>= 1) {
        __syncthreads();
        PHASE {
            const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
            if (t < half) s[t] = fmax(s[t], s[t + half]);
        }
    }
    __syncthreads();
}

// Sum of s[0 .. threads) left in s[0], added in a fixed tree order (the same bits every run).
DEVICE void block_sum(double* s)
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
