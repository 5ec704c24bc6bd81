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
// polynomial before and after the coarse correction) is a symmetric operator.
#include "prelude.h"

#include "stencil_coef.h"

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

// One face of cell c (value xc, inverse coefficient rc) through neighbour n when `inside`, else
// through boundary side `side`: adds w k_f (xc - x_n) to *ax and w k_f to *diag.
DEVICE void add_face(bool inside, const real* __restrict__ x, const real* __restrict__ inv_coef,
                     int n, real xc, real rc, real w, int dirichlet, int side, real* ax,
                     real* diag)
{
    (void)inv_coef;  // unused when VARIABLE == 0
    if (inside) {
        const real a = w * face_coef(rc, INV_COEF(n));
        *ax += a * (xc - x[n]);
        *diag += a;
    } else if ((dirichlet >> side) & 1) {
        const real a = R(2) * w * wall_coef(rc);
        *ax += a * xc;
        *diag += a;
    }
}

// Row c = (i, j, k) of A: (A x)_c into *ax and A_cc into *diag.
DEVICE void row(const real* __restrict__ x, const real* __restrict__ inv_coef, int i, int j,
                int k, int nx, int ny, int nz, real wx, real wy, real wz, int dirichlet, real* ax,
                real* diag)
{
    const int c = i + nx * (j + ny * k);
    const real xc = x[c], rc = INV_COEF(c);
    *ax = R(0);
    *diag = R(0);
    add_face(i > 0, x, inv_coef, c - 1, xc, rc, wx, dirichlet, 0, ax, diag);
    add_face(i < nx - 1, x, inv_coef, c + 1, xc, rc, wx, dirichlet, 1, ax, diag);
    add_face(j > 0, x, inv_coef, c - nx, xc, rc, wy, dirichlet, 2, ax, diag);
    add_face(j < ny - 1, x, inv_coef, c + nx, xc, rc, wy, dirichlet, 3, ax, diag);
#if DIM == 3
    add_face(k > 0, x, inv_coef, c - nx * ny, xc, rc, wz, dirichlet, 4, ax, diag);
    add_face(k < nz - 1, x, inv_coef, c + nx * ny, xc, rc, wz, dirichlet, 5, ax, diag);
#else
    (void)nz;
    (void)wz;
#endif
}

// A_cc alone (no neighbour values): the face weights of cell (i, j, k).
DEVICE real diagonal(const real* __restrict__ inv_coef, int i, int j, int k, int nx, int ny,
                     int nz, real wx, real wy, real wz, int dirichlet)
{
    (void)inv_coef;
    const int c = i + nx * (j + ny * k);
    (void)c;  // unused when VARIABLE == 0
    const real rc = INV_COEF(c);
    const real wall = R(2) * wall_coef(rc);
    real d = R(0);
    d += i > 0 ? wx * face_coef(rc, INV_COEF(c - 1)) : ((dirichlet & 1) ? wx * wall : R(0));
    d += i < nx - 1 ? wx * face_coef(rc, INV_COEF(c + 1)) : ((dirichlet & 2) ? wx * wall : R(0));
    d += j > 0 ? wy * face_coef(rc, INV_COEF(c - nx)) : ((dirichlet & 4) ? wy * wall : R(0));
    d += j < ny - 1 ? wy * face_coef(rc, INV_COEF(c + nx)) : ((dirichlet & 8) ? wy * wall : R(0));
#if DIM == 3
    d += k > 0 ? wz * face_coef(rc, INV_COEF(c - nx * ny)) : ((dirichlet & 16) ? wz * wall : R(0));
    d += k < nz - 1 ? wz * face_coef(rc, INV_COEF(c + nx * ny))
                    : ((dirichlet & 32) ? wz * wall : R(0));
#else
    (void)nz;
    (void)wz;
#endif
    return d;
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

// Per axis, the four fine cells 2I - 1 ... 2I + 2 that coarse cell I restricts from, as indices
// into a tile whose first fine cell is 2 I0 - 1, with weights (1, 3, 3, 1) / 8; a cell beyond
// the boundary is the mirror of the cell inside it with weight s / 8 (the transpose of P's
// ghost rule). lo_side / hi_side: the boundary bits of the axis.
DEVICE void restrict_axis(int I, int I0, int nc, int dirichlet, int lo_side, int hi_side,
                          int* index, real* weight)
{
    const int f = 2 * (I - I0);  // tile index of fine cell 2I - 1
    index[0] = f;
    index[1] = f + 1;
    index[2] = f + 2;
    index[3] = f + 3;
    weight[0] = R(0.125);
    weight[1] = R(0.375);
    weight[2] = R(0.375);
    weight[3] = R(0.125);
    if (I == 0) {
        index[0] = f + 1;
        weight[0] = ((dirichlet >> lo_side) & 1) ? R(-0.125) : R(0.125);
    }
    if (I == nc - 1) {
        index[3] = f + 2;
        weight[3] = ((dirichlet >> hi_side) & 1) ? R(-0.125) : R(0.125);
    }
}

// The weighted sum over N x N (x N in 3D) points of v: sum over c, b, a of
// wz[c] wy[b] wx[a] v[ix[a] + sx (iy[b] + sy iz[c])], each axis's indices and weights from
// restrict_axis (N = 4) or prolong_axis (N = 2). In 2D only iz[0] and wz[0] are read.
template <int N>
DEVICE real tensor_sum(const real* v, int sx, int sy, const int* ix, const real* wx,
                       const int* iy, const real* wy, const int* iz, const real* wz)
{
#if DIM == 3
    const int nz_terms = N;
#else
    const int nz_terms = 1;
#endif
    real sum = R(0);
    for (int c = 0; c < nz_terms; ++c) {
        for (int b = 0; b < N; ++b) {
            real line = R(0);
            const int base = sx * (iy[b] + sy * iz[c]);
            for (int a = 0; a < N; ++a) line += wx[a] * v[base + ix[a]];
            sum += wz[c] * wy[b] * line;
        }
    }
    return sum;
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
                    restrict_axis(I, I0, ncx, dirichlet, 0, 1, ix, wtx);
                    restrict_axis(J, J0, ncy, dirichlet, 2, 3, iy, wty);
#if DIM == 3
                    restrict_axis(K, K0, ncz, dirichlet, 4, 5, iz, wtz);
#endif
                    bc[I + ncx * (J + ncy * K)] =
                        tensor_sum<4>(tile, FX, FY, ix, wtx, iy, wty, iz, wtz);
                }
            }
        }
    }
}

// Per axis, the two coarse cells fine cell f interpolates from, with weights 3/4 and 1/4; at a
// boundary the outer one is the ghost s x_c[I] (s = -1 Dirichlet, +1 Neumann).
DEVICE void prolong_axis(int f, int nc, int dirichlet, int lo_side, int hi_side, int* index,
                         real* weight)
{
    const int I = f >> 1;
    const int other = (f & 1) ? I + 1 : I - 1;
    index[0] = I;
    weight[0] = R(0.75);
    if (other >= 0 && other < nc) {
        index[1] = other;
        weight[1] = R(0.25);
    } else {
        const int side = (f & 1) ? hi_side : lo_side;
        index[1] = I;
        weight[1] = ((dirichlet >> side) & 1) ? R(-0.25) : R(0.25);
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
        prolong_axis(i, ncx, dirichlet, 0, 1, ix, wtx);
        prolong_axis(j, ncy, dirichlet, 2, 3, iy, wty);
#if DIM == 3
        prolong_axis(k, nz / 2, dirichlet, 4, 5, iz, wtz);
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
