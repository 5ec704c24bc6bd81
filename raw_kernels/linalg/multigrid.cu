// Geometric multigrid V-cycle for the cell-centred finite-volume Laplacian of stencil.cu
// (A u = -div(k grad u), 2D 5-point / 3D 7-point, unknown (i, j, k) at i + nx * (j + ny * k)).
// The driver is solvers/linalg/multigrid.py; every level is a StencilLaplacian whose kernel
// arguments (inverse coefficients, axis weights, Dirichlet mask) these kernels take unchanged.
//
// Compile-time: DIM (2 or 3) and VARIABLE (0: constant k folded into the weights, 1: inverse
// coefficient per cell), exactly as stencil.cu. Rows are evaluated the way stencil.cu does,
// as sums of w k_f (x_c - x_n), so a residual near convergence keeps its relative accuracy.
//
// Kernels (levels l = 0 finest ... L-1 coarsest; D the diagonal of A):
//   mg_smooth_first        x = beta D^-1 b                      (first step from x = 0)
//   mg_smooth              y = s x + alpha (x - y) + beta D^-1 (b - A x)
//                          one Jacobi (alpha = 0) or Chebyshev step; y holds the previous
//                          iterate on entry and is updated in place (read only when alpha != 0)
//   mg_residual_restrict   b_c = R (b - A x) with R = 2^-d P^T, fused: a block computes the
//                          fine residuals of its tile (plus a one-cell halo) into shared memory,
//                          then restricts them
//   mg_prolong_add         x += P x_c, P the bilinear / trilinear cell-centred interpolation
//   mg_coarse_solve        all the Chebyshev steps of the coarsest-level solve in one block,
//                          with the iterates in shared memory (grids of <= COARSE_MAX cells)
//
// Prolongation P, per axis (fine cell f = 2I or 2I + 1 of coarse cell I): 3/4 of its own coarse
// cell plus 1/4 of the coarse neighbour on its side (I - 1 for 2I, I + 1 for 2I + 1). Beyond a
// boundary the neighbour is the ghost value s x_c[I], s = -1 on a Dirichlet side (zero on the
// face) and +1 on a Neumann side (zero gradient), the same ghost rule as the operator's. The
// restriction is the exact transpose of that map times 2^-d, so the V-cycle (same smoothing
// polynomial before and after the coarse correction) is a symmetric operator. The rows and the
// per-axis transfer weights are multigrid_rows.h's, which a decomposed grid's blocks share.
#include "prelude.h"

#include "stencil_coef.h"
#include "multigrid_rows.h"

// Launch constants, from the driver (solvers/linalg/multigrid.py):
//   COARSE_MAX  most cells mg_coarse_solve holds in shared memory
//   TX, TY, TZ  the residual tile of mg_residual_restrict: (TX, TY, TZ) coarse cells, one per
//               thread, whose restriction reads (2 TX + 2) x (2 TY + 2) (x (2 TZ + 2)) fine
//               cells (TZ = 1 in 2D)
#ifndef COARSE_MAX
#error "COARSE_MAX (most cells of the coarsest grid mg_coarse_solve holds) must be defined"
#endif
#if !defined(TX) || !defined(TY) || !defined(TZ)
#error "TX, TY and TZ (the residual tile of mg_residual_restrict) must be defined"
#endif
#if DIM == 2
#define FZ 1
#else
#define FZ (2 * TZ + 2)
#endif
#define FX (2 * TX + 2)
#define FY (2 * TY + 2)

// Row (i, j, k) of the whole grid: (A x)_c into *ax and A_cc into *diag (multigrid_rows.h).
DEVICE void row(const real* __restrict__ x, const real* __restrict__ inv_coef, int i, int j,
                int k, int nx, int ny, int nz, real wx, real wy, real wz, int dirichlet, real* ax,
                real* diag)
{
    stencil_row(x, inv_coef, i + nx * (j + ny * k), nx, nx * ny,
                inner_faces(i, j, k, nx, ny, nz, ALL_WALLS), wx, wy, wz, dirichlet, ax, diag);
}

// A_cc alone (no neighbour values) of cell (i, j, k).
DEVICE real diagonal(const real* __restrict__ inv_coef, int i, int j, int k, int nx, int ny,
                     int nz, real wx, real wy, real wz, int dirichlet)
{
    return stencil_diagonal(inv_coef, i + nx * (j + ny * k), nx, nx * ny,
                            inner_faces(i, j, k, nx, ny, nz, ALL_WALLS), wx, wy, wz, dirichlet);
}

// Pointwise kernels use stencil.cu's launch: a 2D block per (i, j) tile, one z layer per block
// z, grid-stride loops over j and k.
#define FOR_CELLS(nx, ny, nz)                                                                 \
    const int i = blockIdx.x * blockDim.x + threadIdx.x;                                      \
    if (i >= nx) return;                                                                      \
    for (int k = blockIdx.z; k < nz; k += gridDim.z)                                          \
        for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < ny; j += blockDim.y * gridDim.y)

KERNEL void mg_smooth_first(const real* __restrict__ b, real* __restrict__ x,
                            const real* __restrict__ inv_coef, int nx, int ny, int nz, real wx,
                            real wy, real wz, int dirichlet, real beta)
{
    FOR_CELLS(nx, ny, nz) {
        const int c = i + nx * (j + ny * k);
        x[c] = beta * b[c] / diagonal(inv_coef, i, j, k, nx, ny, nz, wx, wy, wz, dirichlet);
    }
}

KERNEL void mg_smooth(const real* __restrict__ x, real* __restrict__ y, const real* __restrict__ b,
                      const real* __restrict__ inv_coef, int nx, int ny, int nz, real wx, real wy,
                      real wz, int dirichlet, real scale, real alpha, real beta)
{
    FOR_CELLS(nx, ny, nz) {
        const int c = i + nx * (j + ny * k);
        real ax, diag;
        row(x, inv_coef, i, j, k, nx, ny, nz, wx, wy, wz, dirichlet, &ax, &diag);
        const real xc = x[c];
        real next = scale * xc + beta * (b[c] - ax) / diag;
        if (alpha != R(0)) next += alpha * (xc - y[c]);
        y[c] = next;
    }
}

// b_c = 2^-d P^T (b - A x). nx, ny, nz: the fine grid (even along each coarsened axis).
// Launch: blocks of (TX, TY, TZ) threads, one tile per block: grid.x = ceil(ncx / TX), grid.y
// and grid.z any (tiles loop with grid strides).
BLOCK_KERNEL void mg_residual_restrict(const real* __restrict__ x, const real* __restrict__ b,
                                       const real* __restrict__ inv_coef, real* __restrict__ bc,
                                       int nx, int ny, int nz, real wx, real wy, real wz,
                                       int dirichlet)
{
    __shared__ real tile[FX * FY * FZ];
    const int ncx = nx / 2, ncy = ny / 2;
#if DIM == 3
    const int ncz = nz / 2;
#else
    const int ncz = 1;
#endif
    const int nty = (ncy + TY - 1) / TY, ntz = (ncz + TZ - 1) / TZ;
    const int I0 = blockIdx.x * TX;
    for (int tz = blockIdx.z; tz < ntz; tz += gridDim.z) {
        for (int ty = blockIdx.y; ty < nty; ty += gridDim.y) {
            const int J0 = ty * TY, K0 = tz * TZ;
            __syncthreads();  // the previous tile is restricted before it is overwritten
            // Fine residuals of the tile and its halo (0 outside the grid: never read).
            PHASE {
                const int nthreads = blockDim.x * blockDim.y * blockDim.z;
                const int t0 = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
                for (int t = t0; t < FX * FY * FZ; t += nthreads) {
                    const int fi = 2 * I0 - 1 + t % FX;
                    const int fj = 2 * J0 - 1 + (t / FX) % FY;
#if DIM == 3
                    const int fk = 2 * K0 - 1 + t / (FX * FY);
#else
                    const int fk = 0;
#endif
                    real value = R(0);
                    if (fi >= 0 && fi < nx && fj >= 0 && fj < ny && fk >= 0 && fk < nz) {
                        real ax, diag;
                        row(x, inv_coef, fi, fj, fk, nx, ny, nz, wx, wy, wz, dirichlet, &ax,
                            &diag);
                        value = b[fi + nx * (fj + ny * fk)] - ax;
                    }
                    tile[t] = value;
                }
            }
            __syncthreads();
            PHASE {
                const int I = I0 + threadIdx.x, J = J0 + threadIdx.y, K = K0 + threadIdx.z;
                if (I < ncx && J < ncy && K < ncz) {
                    int ix[4], iy[4], iz[4] = {0};
                    real wtx[4], wty[4], wtz[4] = {R(1)};
                    restrict_axis(I, I0, ncx, ALL_WALLS, dirichlet, 0, 1, ix, wtx);
                    restrict_axis(J, J0, ncy, ALL_WALLS, dirichlet, 2, 3, iy, wty);
#if DIM == 3
                    restrict_axis(K, K0, ncz, ALL_WALLS, dirichlet, 4, 5, iz, wtz);
#endif
                    bc[I + ncx * (J + ncy * K)] =
                        tensor_sum<4>(tile, FX, FY, ix, wtx, iy, wty, iz, wtz);
                }
            }
        }
    }
}

// x += P xc. nx, ny, nz: the fine grid.
KERNEL void mg_prolong_add(const real* __restrict__ xc, real* __restrict__ x, int nx, int ny,
                           int nz, int dirichlet)
{
    const int ncx = nx / 2, ncy = ny / 2;
    FOR_CELLS(nx, ny, nz) {
        int ix[2], iy[2], iz[2] = {0};
        real wtx[2], wty[2], wtz[2] = {R(1)};
        prolong_axis(i, ncx, ALL_WALLS, dirichlet, 0, 1, 0, ix, wtx);
        prolong_axis(j, ncy, ALL_WALLS, dirichlet, 2, 3, 0, iy, wty);
#if DIM == 3
        prolong_axis(k, nz / 2, ALL_WALLS, dirichlet, 4, 5, 0, iz, wtz);
#endif
        x[i + nx * (j + ny * k)] += tensor_sum<2>(xc, ncx, ncy, ix, wtx, iy, wty, iz, wtz);
    }
}

// The coarsest-level solve from x = 0: `steps` Chebyshev (or Jacobi) steps in one block, the
// iterates in shared memory. coef holds (scale, alpha, beta) per step, as for mg_smooth; step 0
// is x = beta D^-1 b. Launch: one block, any number of threads; nx * ny * nz <= COARSE_MAX.
BLOCK_KERNEL void mg_coarse_solve(const real* __restrict__ b, real* __restrict__ x,
                                  const real* __restrict__ inv_coef, int nx, int ny, int nz,
                                  real wx, real wy, real wz, int dirichlet,
                                  const real* __restrict__ coef, int steps)
{
    __shared__ real iterate[2 * COARSE_MAX];  // step m writes half (m & 1)
    for (int m = 0; m < steps; ++m) {
        PHASE {
            const int n = nx * ny * nz;
            const int nthreads = blockDim.x * blockDim.y * blockDim.z;
            const int t0 = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
            const real scale = coef[3 * m], alpha = coef[3 * m + 1], beta = coef[3 * m + 2];
            real* next = iterate + (m & 1) * COARSE_MAX;
            const real* cur = iterate + ((m + 1) & 1) * COARSE_MAX;
            for (int c = t0; c < n; c += nthreads) {
                const int i = c % nx, j = (c / nx) % ny, k = c / (nx * ny);
                if (m == 0) {
                    next[c] = beta * b[c]
                              / diagonal(inv_coef, i, j, k, nx, ny, nz, wx, wy, wz, dirichlet);
                } else {
                    real ax, diag;
                    row(cur, inv_coef, i, j, k, nx, ny, nz, wx, wy, wz, dirichlet, &ax, &diag);
                    real value = scale * cur[c] + beta * (b[c] - ax) / diag;
                    if (alpha != R(0)) value += alpha * (cur[c] - next[c]);
                    next[c] = value;
                }
            }
        }
        __syncthreads();
    }
    PHASE {
        const int n = nx * ny * nz;
        const int nthreads = blockDim.x * blockDim.y * blockDim.z;
        const int t0 = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        const real* last = iterate + ((steps - 1) & 1) * COARSE_MAX;
        for (int c = t0; c < n; c += nthreads) x[c] = last[c];
    }
}
