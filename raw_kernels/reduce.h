// Block-wide reductions written in the dialect (see prelude.h). blockDim.x must be a power of two.
#pragma once

// Maximum of s[0 .. blockDim.x) left in s[0]. Every thread of the block must call it.
DEVICE void block_max(real* s)
{
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
        __syncthreads();
        PHASE {
            if (threadIdx.x < half) s[threadIdx.x] = fmax(s[threadIdx.x], s[threadIdx.x + half]);
        }
    }
    __syncthreads();
}
