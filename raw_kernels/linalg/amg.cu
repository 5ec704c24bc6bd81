// Algebraic multigrid V-cycle kernels on CSR levels: damped-Jacobi smoothing, residual,
// transfers by (rectangular) CSR products, and the coarsest solve by a dense inverse.
// Driven by solvers/linalg/amg.py.
//
// A level's matrix is CSR (int32 row_ptr and columns, `real` values); P (fine x coarse) and
// R = P^T (coarse x fine) are CSR too, so one row product serves square and rectangular
// matrices. One thread per row; each row's products are added in CSR order with explicit
// fused multiply-adds, so the results have the same bits on every run and on both backends.
// wdinv holds omega_l / A_ii per row (the level's damping folded into the inverse diagonal).
#include "prelude.h"

DEVICE float amg_fma(float a, float b, float acc) { return fmaf(a, b, acc); }
DEVICE double amg_fma(double a, double b, double acc) { return fma(a, b, acc); }

// (A x)_row for a CSR matrix.
DEVICE real amg_row(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                    const real* __restrict__ values, const real* __restrict__ x, int row)
{
    real sum = R(0);
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
        sum = amg_fma(values[k], x[columns[k]], sum);
    return sum;
}

#define AMG_ROW(n)                                                \
    const int row = (int)(blockIdx.x * blockDim.x + threadIdx.x); \
    if (row >= n) return

// First Jacobi step from x = 0: x = wdinv b.
KERNEL void amg_jacobi_first(const real* __restrict__ wdinv, const real* __restrict__ b,
                             real* __restrict__ x, int n)
{
    AMG_ROW(n);
    x[row] = wdinv[row] * b[row];
}

// One damped Jacobi step: y = x + wdinv (b - A x).
KERNEL void amg_jacobi(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                       const real* __restrict__ values, const real* __restrict__ wdinv,
                       const real* __restrict__ b, const real* __restrict__ x,
                       real* __restrict__ y, int n)
{
    AMG_ROW(n);
    const real ax = amg_row(row_ptr, columns, values, x, row);
    y[row] = amg_fma(wdinv[row], b[row] - ax, x[row]);
}

// r = b - A x.
KERNEL void amg_residual(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                         const real* __restrict__ values, const real* __restrict__ b,
                         const real* __restrict__ x, real* __restrict__ r, int n)
{
    AMG_ROW(n);
    r[row] = b[row] - amg_row(row_ptr, columns, values, x, row);
}

// y = M x for an n-row CSR matrix M of any width (the restriction R = P^T).
KERNEL void amg_spmv(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                     const real* __restrict__ values, const real* __restrict__ x,
                     real* __restrict__ y, int n)
{
    AMG_ROW(n);
    y[row] = amg_row(row_ptr, columns, values, x, row);
}

// y += M x for an n-row CSR matrix M of any width (the prolongation P).
KERNEL void amg_spmv_add(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                         const real* __restrict__ values, const real* __restrict__ x,
                         real* __restrict__ y, int n)
{
    AMG_ROW(n);
    y[row] += amg_row(row_ptr, columns, values, x, row);
}

// x = B b for a symmetric dense n x n matrix B (the coarsest inverse): thread i reads column i,
// B[k n + i] for k = 0 .. n-1, so neighbouring threads read neighbouring addresses.
KERNEL void amg_dense_symv(const real* __restrict__ inverse, const real* __restrict__ b,
                           real* __restrict__ x, int n)
{
    AMG_ROW(n);
    real sum = R(0);
    for (int k = 0; k < n; ++k) sum = amg_fma(inverse[(long long)k * n + row], b[k], sum);
    x[row] = sum;
}
