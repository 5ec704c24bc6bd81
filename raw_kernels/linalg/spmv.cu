// Sparse matrix-vector products y = A x, for a square A in CSR or SELL-C-sigma storage.
// Driven by solvers/linalg/csr.py and solvers/linalg/sell.py.
//
// Values are `real`, indices int32. Every kernel comes twice from one template: accumulating
// in `real`, and with the suffix _acc64 accumulating in double (marked REDUCTION: it is the
// only FP64 arithmetic allowed in an fp32 build). No atomics, and every product is added with
// an explicit fused multiply-add, so a row's sum is fixed by its summation order alone: the
// same bits on every run, on the host and on the GPU (where the compiler would otherwise
// contract a*b+c into an FMA and the host compiler would not).
//
// Summation orders: csr_spmv and sell_spmv add a row's entries one by one in CSR order, so they
// give identical bits; csr_spmv_vector adds `lanes` strided partial sums by a pairwise tree.
//
// Compile-time, from solvers/linalg/csr.py: CSR_VECTOR_THREADS, the threads of a
// csr_spmv_vector block (lanes x rows per block; BLOCK_THREADS there).
#include "prelude.h"

#ifndef CSR_VECTOR_THREADS
#error "CSR_VECTOR_THREADS (threads of a csr_spmv_vector block) must be defined"
#endif

// acc + a * b, rounded once, in float or double.
DEVICE float fma_acc(float a, float b, float acc) { return fmaf(a, b, acc); }
DEVICE double fma_acc(double a, double b, double acc) { return fma(a, b, acc); }

// ---- CSR, one thread per row -------------------------------------------------------------

template <typename acc>
DEVICE void csr_row(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                    const real* __restrict__ values, const real* __restrict__ x,
                    real* __restrict__ y, int n)
{
    const unsigned row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= (unsigned)n) return;
    acc sum = acc(0);
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
        sum = fma_acc((acc)values[k], (acc)x[columns[k]], sum);
    y[row] = (real)sum;
}

KERNEL void csr_spmv(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                     const real* __restrict__ values, const real* __restrict__ x,
                     real* __restrict__ y, int n)
{
    csr_row<real>(row_ptr, columns, values, x, y, n);
}

REDUCTION KERNEL void csr_spmv_acc64(const int* __restrict__ row_ptr,
                                     const int* __restrict__ columns,
                                     const real* __restrict__ values, const real* __restrict__ x,
                                     real* __restrict__ y, int n)
{
    csr_row<double>(row_ptr, columns, values, x, y, n);
}

// ---- CSR, `lanes` = blockDim.x threads per row (a power of two), blockDim.y rows a block ----
// Lane l sums entries l, l + lanes, ... of its row; the lanes' sums are then added pairwise in
// shared memory s[CSR_VECTOR_THREADS] (one slot per thread). For long rows, where one thread a
// row would leave most of a warp idle.

template <typename acc>
DEVICE void csr_rows_vector(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                            const real* __restrict__ values, const real* __restrict__ x,
                            real* __restrict__ y, int n, acc* s)
{
    // Each lane's strided partial sum.
    PHASE {
        const int row = (int)(blockIdx.x * blockDim.y + threadIdx.y);
        acc sum = acc(0);
        if (row < n) {
            for (int k = row_ptr[row] + (int)threadIdx.x; k < row_ptr[row + 1];
                 k += (int)blockDim.x)
                sum = fma_acc((acc)values[k], (acc)x[columns[k]], sum);
        }
        s[threadIdx.y * blockDim.x + threadIdx.x] = sum;
    }
    // Pairwise sum over the lanes of each row: lane l takes lane l + half.
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
        __syncthreads();
        PHASE {
            const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
            if (threadIdx.x < half) s[t] = s[t] + s[t + half];
        }
    }
    __syncthreads();
    PHASE {
        const int row = (int)(blockIdx.x * blockDim.y + threadIdx.y);
        if (threadIdx.x == 0 && row < n) y[row] = (real)s[threadIdx.y * blockDim.x];
    }
}

BLOCK_KERNEL void csr_spmv_vector(const int* __restrict__ row_ptr,
                                  const int* __restrict__ columns,
                                  const real* __restrict__ values, const real* __restrict__ x,
                                  real* __restrict__ y, int n)
{
    __shared__ real s[CSR_VECTOR_THREADS];
    csr_rows_vector<real>(row_ptr, columns, values, x, y, n, s);
}

REDUCTION BLOCK_KERNEL void csr_spmv_vector_acc64(const int* __restrict__ row_ptr,
                                                  const int* __restrict__ columns,
                                                  const real* __restrict__ values,
                                                  const real* __restrict__ x,
                                                  real* __restrict__ y, int n)
{
    __shared__ double s[CSR_VECTOR_THREADS];
    csr_rows_vector<double>(row_ptr, columns, values, x, y, n, s);
}

// ---- SELL-C-sigma, one thread per row ------------------------------------------------------
// Rows are reordered (sorted by length within windows of sigma rows); position p holds row
// row_order[p] and lies in slice p / c at lane p % c. A slice stores its rows column-major from
// slice_ptr[slice]: entry j of lane i at slice_ptr[slice] + j * c + i, so neighbouring threads
// read neighbouring addresses. Padding (value 0, a valid column) fills each slice to its longest
// row; the loop stops at row_length[p], so padding is never read and the sum equals csr_spmv's.

template <typename acc>
DEVICE void sell_row(const int* __restrict__ slice_ptr, const int* __restrict__ row_length,
                     const int* __restrict__ row_order, const int* __restrict__ columns,
                     const real* __restrict__ values, const real* __restrict__ x,
                     real* __restrict__ y, int n, int c)
{
    const unsigned p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= (unsigned)n) return;
    const int lane = (int)p % c;
    const int start = slice_ptr[(int)p / c] + lane;
    const int end = start + row_length[p] * c;
    acc sum = acc(0);
    for (int k = start; k < end; k += c)
        sum = fma_acc((acc)values[k], (acc)x[columns[k]], sum);
    y[row_order[p]] = (real)sum;
}

KERNEL void sell_spmv(const int* __restrict__ slice_ptr, const int* __restrict__ row_length,
                      const int* __restrict__ row_order, const int* __restrict__ columns,
                      const real* __restrict__ values, const real* __restrict__ x,
                      real* __restrict__ y, int n, int c)
{
    sell_row<real>(slice_ptr, row_length, row_order, columns, values, x, y, n, c);
}

REDUCTION KERNEL void sell_spmv_acc64(const int* __restrict__ slice_ptr,
                                      const int* __restrict__ row_length,
                                      const int* __restrict__ row_order,
                                      const int* __restrict__ columns,
                                      const real* __restrict__ values,
                                      const real* __restrict__ x, real* __restrict__ y, int n,
                                      int c)
{
    sell_row<double>(slice_ptr, row_length, row_order, columns, values, x, y, n, c);
}
