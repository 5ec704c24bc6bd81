// The Laplacian of stencil.cu and the multigrid cycle of multigrid.cu on one rank's block of a
// decomposed grid (drivers: solvers/linalg/block_stencil.py, distributed_multigrid.py). Every
// array is padded by a one-cell halo (layout in raw_kernels/core/halo.cu) that the host fills
// from the neighbouring blocks before a kernel reads it: across the block's sides towards other
// blocks a row reads its neighbour from the halo, across `walls` (bits of the sides that are
// the whole grid's boundary) it takes the boundary rule, exactly as on a whole grid
// (multigrid_rows.h), so a row has the single-rank row's terms in the same order.
//
// Compile-time: DIM (2 or 3) and VARIABLE (0: constant k folded into the weights, 1: inverse
// coefficient per cell, padded like the vectors, its halo holding the neighbours' cells).
// Arguments after the arrays: the block's cells nx, ny, nz, the axis weights, the Dirichlet
// side bits of the grid and the block's walls.
//
//   block_apply         y = A x (y packed, i + nx (j + ny k), or padded)
//   block_residual      r = b - A x
//   block_smooth_first  x = beta D^-1 b (the first smoothing step from x = 0)
//   block_smooth        y = s x + alpha (x - y) + beta D^-1 (b - A x)   (mg_smooth's step)
//   block_restrict      b_c = 2^-d P^T r, r's halo filled (edges and corners included); the
//                       block's cells, nx ny nz, are the fine ones (even counts)
//   block_prolong_add   x += P x_c, x_c's halo filled
// The three that read x's neighbours (apply, residual, smooth) run over a box of the block's
// cells, its first cell (i0, j0, k0) and counts (ni, nj, nk) the last arguments: the cells that
// read no halo while the halo travels, the others once it has arrived.
// Launch: one thread per (i, j) of the block or box, one z layer per block z, grid-stride loops
// over j and k (block_restrict: per coarse cell).
#include "prelude.h"

#include "stencil_coef.h"
#include "multigrid_rows.h"

#if DIM == 3
#define OZ 1
#else
#define OZ 0
#endif

// Index of cell (i, j, k) of an nx x ny (x nz) block in its padded array.
DEVICE int padded(int i, int j, int k, int nx, int ny)
{
    return (i + 1) + (nx + 2) * ((j + 1) + (ny + 2) * (k + OZ));
}

#define FOR_BOX_CELLS(i0, j0, k0, ni, nj, nk)                                                 \
    const int i = i0 + blockIdx.x * blockDim.x + threadIdx.x;                                 \
    if (i >= i0 + ni) return;                                                                 \
    for (int k = k0 + blockIdx.z; k < k0 + nk; k += gridDim.z)                                \
        for (int j = j0 + blockIdx.y * blockDim.y + threadIdx.y; j < j0 + nj;                 \
             j += blockDim.y * gridDim.y)

#define FOR_BLOCK_CELLS(nx, ny, nz) FOR_BOX_CELLS(0, 0, 0, nx, ny, nz)

// Row of block cell (i, j, k) at padded index c: (A x)_c and A_cc.
DEVICE void block_row(const real* __restrict__ x, const real* __restrict__ inv_coef, int c,
                      int i, int j, int k, int nx, int ny, int nz, real wx, real wy, real wz,
                      int dirichlet, int walls, real* ax, real* diag)
{
    stencil_row(x, inv_coef, c, nx + 2, (nx + 2) * (ny + 2),
                inner_faces(i, j, k, nx, ny, nz, walls), wx, wy, wz, dirichlet, ax, diag);
}

KERNEL void block_apply(const real* __restrict__ x, real* __restrict__ y,
                        const real* __restrict__ inv_coef, int nx, int ny, int nz, real wx,
                        real wy, real wz, int dirichlet, int walls, int packed, int i0,
                        int j0, int k0, int ni, int nj, int nk)
{
    FOR_BOX_CELLS(i0, j0, k0, ni, nj, nk) {
        const int c = padded(i, j, k, nx, ny);
        real ax, diag;
        block_row(x, inv_coef, c, i, j, k, nx, ny, nz, wx, wy, wz, dirichlet, walls, &ax, &diag);
        y[packed ? i + nx * (j + ny * k) : c] = ax;
    }
}

KERNEL void block_residual(const real* __restrict__ x, const real* __restrict__ b,
                           real* __restrict__ r, const real* __restrict__ inv_coef, int nx,
                           int ny, int nz, real wx, real wy, real wz, int dirichlet, int walls,
                           int i0, int j0, int k0, int ni, int nj, int nk)
{
    FOR_BOX_CELLS(i0, j0, k0, ni, nj, nk) {
        const int c = padded(i, j, k, nx, ny);
        real ax, diag;
        block_row(x, inv_coef, c, i, j, k, nx, ny, nz, wx, wy, wz, dirichlet, walls, &ax, &diag);
        r[c] = b[c] - ax;
    }
}

KERNEL void block_smooth_first(const real* __restrict__ b, real* __restrict__ x,
                               const real* __restrict__ inv_coef, int nx, int ny, int nz,
                               real wx, real wy, real wz, int dirichlet, int walls, real beta)
{
    FOR_BLOCK_CELLS(nx, ny, nz) {
        const int c = padded(i, j, k, nx, ny);
        x[c] = beta * b[c] / stencil_diagonal(inv_coef, c, nx + 2, (nx + 2) * (ny + 2),
                                              inner_faces(i, j, k, nx, ny, nz, walls), wx, wy,
                                              wz, dirichlet);
    }
}

KERNEL void block_smooth(const real* __restrict__ x, real* __restrict__ y,
                         const real* __restrict__ b, const real* __restrict__ inv_coef, int nx,
                         int ny, int nz, real wx, real wy, real wz, int dirichlet, int walls,
                         real scale, real alpha, real beta, int i0, int j0, int k0, int ni,
                         int nj, int nk)
{
    FOR_BOX_CELLS(i0, j0, k0, ni, nj, nk) {
        const int c = padded(i, j, k, nx, ny);
        real ax, diag;
        block_row(x, inv_coef, c, i, j, k, nx, ny, nz, wx, wy, wz, dirichlet, walls, &ax, &diag);
        const real xc = x[c];
        real next = scale * xc + beta * (b[c] - ax) / diag;
        if (alpha != R(0)) next += alpha * (xc - y[c]);
        y[c] = next;
    }
}

// One thread per coarse cell (I, J, K) of the block's nx / 2 x ny / 2 (x nz / 2) coarse cells.
KERNEL void block_restrict(const real* __restrict__ r, real* __restrict__ bc, int nx, int ny,
                           int nz, int dirichlet, int walls)
{
    const int ncx = nx / 2, ncy = ny / 2;
#if DIM == 3
    const int ncz = nz / 2;
#else
    const int ncz = 1;
    (void)nz;
#endif
    const int I = blockIdx.x * blockDim.x + threadIdx.x;
    if (I >= ncx) return;
    for (int K = blockIdx.z; K < ncz; K += gridDim.z) {
        for (int J = blockIdx.y * blockDim.y + threadIdx.y; J < ncy;
             J += blockDim.y * gridDim.y) {
            // Fine cell 2I - 1 is at padded index 2I: restrict_axis with I0 = 0.
            int ix[4], iy[4], iz[4] = {0};
            real wtx[4], wty[4], wtz[4] = {R(1)};
            restrict_axis(I, 0, ncx, walls, dirichlet, 0, 1, ix, wtx);
            restrict_axis(J, 0, ncy, walls, dirichlet, 2, 3, iy, wty);
#if DIM == 3
            restrict_axis(K, 0, ncz, walls, dirichlet, 4, 5, iz, wtz);
#endif
            bc[padded(I, J, K, ncx, ncy)] =
                tensor_sum<4>(r, nx + 2, ny + 2, ix, wtx, iy, wty, iz, wtz);
        }
    }
}

KERNEL void block_prolong_add(const real* __restrict__ xc, real* __restrict__ x, int nx, int ny,
                              int nz, int dirichlet, int walls)
{
    const int ncx = nx / 2, ncy = ny / 2;
    FOR_BLOCK_CELLS(nx, ny, nz) {
        int ix[2], iy[2], iz[2] = {0};
        real wtx[2], wty[2], wtz[2] = {R(1)};
        prolong_axis(i, ncx, walls, dirichlet, 0, 1, 1, ix, wtx);
        prolong_axis(j, ncy, walls, dirichlet, 2, 3, 1, iy, wty);
#if DIM == 3
        prolong_axis(k, nz / 2, walls, dirichlet, 4, 5, 1, iz, wtz);
#endif
        x[padded(i, j, k, nx, ny)] += tensor_sum<2>(xc, ncx + 2, ncy + 2, ix, wtx, iy, wty, iz,
                                                    wtz);
    }
}
