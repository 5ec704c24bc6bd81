// Linear-system kernels of the finite-element solvers (solvers/fe/system.py): Dirichlet
// conditions applied symmetrically to an assembled CSR matrix and its right-hand side, and
// linear combinations of matrices on one pattern. One thread per row or nonzero, no atomics.
//
// Dirichlet, with D the constrained dofs (mask[i] != 0) and g their values: the matrix keeps
// A_FF and the diagonal of A_DD, every other entry of a row or column in D becomes 0, so it
// stays symmetric (and positive definite: CG applies); the right-hand side becomes
// b_F - A_FD g_D on free rows and A_ii g_i on constrained ones, so the solution has u_D = g.
// The lifting reads the unconstrained matrix `full`, kept apart so that a new g or b (a time
// step) needs no reassembly.
#include "prelude.h"

// values = full with the rows and columns of constrained dofs zeroed except the diagonal.
KERNEL void fe_dirichlet_matrix(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                                const int* __restrict__ mask, const real* __restrict__ full,
                                real* __restrict__ values, int n)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const bool constrained_row = mask[row] != 0;
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) {
        const int col = columns[k];
        const bool keep = col == row || (!constrained_row && mask[col] == 0);
        values[k] = keep ? full[k] : R(0);
    }
}

// b = A_ii g_i on constrained rows, b - A_FD g_D on free rows (b updated in place).
KERNEL void fe_dirichlet_rhs(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                             const int* __restrict__ mask, const real* __restrict__ full,
                             const real* __restrict__ g, real* __restrict__ b, int n)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const bool constrained_row = mask[row] != 0;
    real lift = R(0);
    real diagonal = R(0);
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) {
        const int col = columns[k];
        if (col == row) diagonal = full[k];
        else if (mask[col] != 0) lift += full[k] * g[col];
    }
    b[row] = constrained_row ? diagonal * g[row] : b[row] - lift;
}

// out = a x + c y, elementwise over n values (matrices on one pattern, or vectors); out may
// be x or y (no __restrict__ on them).
KERNEL void fe_axpby(real* out, real a, const real* x, real c, const real* y, int n)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    out[t] = a * x[t] + c * y[t];
}
