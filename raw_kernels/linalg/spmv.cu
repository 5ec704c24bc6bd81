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
// Summation orders: csr_spmv, sell_spmv and csr_spmv_split (on rows of at most CSR_LONG_ROW
// entries) add a row's entries one by one in CSR order, so they give identical bits;
// csr_spmv_vector adds `lanes` strided partial sums by a pairwise tree, and so does
// csr_spmv_split on longer rows, with 32 lanes.
//
// Compile-time, from solvers/linalg/csr.py: CSR_VECTOR_THREADS, the threads of a
// csr_spmv_vector or csr_spmv_split block (BLOCK_THREADS there, a multiple of 32), and
// CSR_LONG_ROW, the longest row csr_spmv_split sums with one thread.
#include "prelude.h"

#ifndef CSR_VECTOR_THREADS
#error "CSR_VECTOR_THREADS (threads of a csr_spmv_vector block) must be defined"
#endif
#ifndef CSR_LONG_ROW
#error "CSR_LONG_ROW (the longest row csr_spmv_split sums with one thread) must be defined"
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

// ---- Row splitting: one thread a short row, 32 threads a long row -------------------------
// A launch's first short_blocks blocks take the short rows (csr_spmv_split: one thread a row,
// as csr_spmv, skipping rows longer than CSR_LONG_ROW; sell_spmv_split: the SELL slices of the
// short rows, as sell_spmv); the blocks after them take the long rows, listed ascending in
// long_rows, one a warp-sized group of 32 threads whose strided partial sums are added
// pairwise. On rows of mixed lengths no thread waits on a long row's chain of dependent loads.

// Long rows: group g = threadIdx.x / 32 of long-row block `block` sums long row slot =
// block * (blockDim.x / 32) + g into y[long_rows[slot]]. Its entries are ptr[r] .. ptr[r + 1]
// - 1 of columns and values, r = long_rows[slot] (the matrix's own CSR) or r = slot
// (`compact`: CSR arrays of the long rows alone).
template <typename acc>
DEVICE void long_rows_sum(int block, const int* __restrict__ long_rows, int long_count,
                          int compact, const int* __restrict__ ptr,
                          const int* __restrict__ columns, const real* __restrict__ values,
                          const real* __restrict__ x, real* __restrict__ y, acc* s)
{
    PHASE {
        const int slot = block * (int)(blockDim.x / 32) + (int)(threadIdx.x / 32);
        acc sum = acc(0);
        if (slot < long_count) {
            const int r = compact ? slot : long_rows[slot];
            for (int k = ptr[r] + (int)(threadIdx.x % 32); k < ptr[r + 1]; k += 32)
                sum = fma_acc((acc)values[k], (acc)x[columns[k]], sum);
        }
        s[threadIdx.x] = sum;
    }
    for (unsigned half = 16; half > 0; half >>= 1) {
        __syncthreads();
        PHASE {
            const unsigned t = threadIdx.x;
            if (t % 32 < half) s[t] = s[t] + s[t + half];
        }
    }
    __syncthreads();
    PHASE {
        const int slot = block * (int)(blockDim.x / 32) + (int)(threadIdx.x / 32);
        if (threadIdx.x % 32 == 0 && slot < long_count) y[long_rows[slot]] = (real)s[threadIdx.x];
    }
}

template <typename acc>
DEVICE void csr_split_rows(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                           const real* __restrict__ values, const real* __restrict__ x,
                           real* __restrict__ y, int n, const int* __restrict__ long_rows,
                           int long_count, int short_blocks, acc* s)
{
    // Short rows, one thread each.
    if ((int)blockIdx.x < short_blocks) {
        PHASE {
            const int row = (int)(blockIdx.x * blockDim.x + threadIdx.x);
            if (row < n && row_ptr[row + 1] - row_ptr[row] <= CSR_LONG_ROW) {
                acc sum = acc(0);
                for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
                    sum = fma_acc((acc)values[k], (acc)x[columns[k]], sum);
                y[row] = (real)sum;
            }
        }
        return;
    }
    long_rows_sum<acc>((int)blockIdx.x - short_blocks, long_rows, long_count, 0, row_ptr,
                       columns, values, x, y, s);
}

BLOCK_KERNEL void csr_spmv_split(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                                 const real* __restrict__ values, const real* __restrict__ x,
                                 real* __restrict__ y, int n, const int* __restrict__ long_rows,
                                 int long_count, int short_blocks)
{
    __shared__ real s[CSR_VECTOR_THREADS];
    csr_split_rows<real>(row_ptr, columns, values, x, y, n, long_rows, long_count, short_blocks,
                         s);
}

REDUCTION BLOCK_KERNEL void csr_spmv_split_acc64(const int* __restrict__ row_ptr,
                                                 const int* __restrict__ columns,
                                                 const real* __restrict__ values,
                                                 const real* __restrict__ x,
                                                 real* __restrict__ y, int n,
                                                 const int* __restrict__ long_rows,
                                                 int long_count, int short_blocks)
{
    __shared__ double s[CSR_VECTOR_THREADS];
    csr_split_rows<double>(row_ptr, columns, values, x, y, n, long_rows, long_count,
                           short_blocks, s);
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

// SELL slices of the short rows (positions 0 .. short_rows - 1), then the long rows from their
// own CSR arrays (long_ptr, long_columns, long_values).
template <typename acc>
DEVICE void sell_split_rows(const int* __restrict__ slice_ptr, const int* __restrict__ row_length,
                            const int* __restrict__ row_order, const int* __restrict__ columns,
                            const real* __restrict__ values, const real* __restrict__ x,
                            real* __restrict__ y, int short_rows, int c,
                            const int* __restrict__ long_rows, int long_count,
                            const int* __restrict__ long_ptr,
                            const int* __restrict__ long_columns,
                            const real* __restrict__ long_values, int short_blocks, acc* s)
{
    if ((int)blockIdx.x < short_blocks) {
        PHASE {
            sell_row<acc>(slice_ptr, row_length, row_order, columns, values, x, y, short_rows, c);
        }
        return;
    }
    long_rows_sum<acc>((int)blockIdx.x - short_blocks, long_rows, long_count, 1, long_ptr,
                       long_columns, long_values, x, y, s);
}

BLOCK_KERNEL void sell_spmv_split(const int* __restrict__ slice_ptr,
                                  const int* __restrict__ row_length,
                                  const int* __restrict__ row_order,
                                  const int* __restrict__ columns,
                                  const real* __restrict__ values, const real* __restrict__ x,
                                  real* __restrict__ y, int short_rows, int c,
                                  const int* __restrict__ long_rows, int long_count,
                                  const int* __restrict__ long_ptr,
                                  const int* __restrict__ long_columns,
                                  const real* __restrict__ long_values, int short_blocks)
{
    __shared__ real s[CSR_VECTOR_THREADS];
    sell_split_rows<real>(slice_ptr, row_length, row_order, columns, values, x, y, short_rows, c,
                          long_rows, long_count, long_ptr, long_columns, long_values,
                          short_blocks, s);
}

REDUCTION BLOCK_KERNEL void sell_spmv_split_acc64(const int* __restrict__ slice_ptr,
                                                  const int* __restrict__ row_length,
                                                  const int* __restrict__ row_order,
                                                  const int* __restrict__ columns,
                                                  const real* __restrict__ values,
                                                  const real* __restrict__ x,
                                                  real* __restrict__ y, int short_rows, int c,
                                                  const int* __restrict__ long_rows,
                                                  int long_count,
                                                  const int* __restrict__ long_ptr,
                                                  const int* __restrict__ long_columns,
                                                  const real* __restrict__ long_values,
                                                  int short_blocks)
{
    __shared__ double s[CSR_VECTOR_THREADS];
    sell_split_rows<double>(slice_ptr, row_length, row_order, columns, values, x, y,
                            short_rows, c, long_rows, long_count, long_ptr, long_columns,
                            long_values, short_blocks, s);
}
