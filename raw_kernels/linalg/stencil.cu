// Matrix-free cell-centred finite-volume Laplacian, y = A x with A u = -div(k grad u), on a
// uniform 2D (5-point) or 3D (7-point) grid. Unknown (i, j, k) is x[i + nx * (j + ny * k)].
//
// Compile-time:
//   DIM       2 or 3
//   VARIABLE  0: constant k, folded into the axis weights by the host
//             1: k per cell, passed as its inverse r = 1 / k; the coefficient of the face
//                between cells a and b is the harmonic mean 2 k_a k_b / (k_a + k_b), computed
//                as 2 / (r_a + r_b) (no overflow for large k, symmetric in a and b to the bit)
//
// Row c of A: the sum over the faces of cell c of w k_f (x_c - x_n), where w = 1 / h^2 of the
// face's axis (constant k: w = k / h^2 and k_f = 1). A boundary face is homogeneous Dirichlet
// (the ghost value is -x_c, so the face adds 2 w k_c x_c) or Neumann (zero flux, adds nothing);
// bit s of `dirichlet` marks side s Dirichlet: 0 x_lo, 1 x_hi, 2 y_lo, 3 y_hi, 4 z_lo, 5 z_hi.
//
// Launch: a 2D block of STENCIL_THREADS threads, one thread per (i, j), one z layer per block
// z; y and z loop with grid strides so that any ny and nz fit CUDA's limits on gridDim.y and
// gridDim.z (65535).
//
// Launch constants, from the driver (solvers/linalg/stencil.py):
//   STENCIL_THREADS  threads of a block (its BLOCK), a power of two
//   STENCIL_LAYERS   z layers a thread walks: 1 in 2D (the driver's grid z is nz / layers)
#include "prelude.h"
#include "reduce.h"
#include "stencil_coef.h"
#include "stencil_launch.h"

// The same through neighbour n, loaded here when `inside`.
DEVICE real face_term_at(bool inside, const real* __restrict__ x,
                         const real* __restrict__ inv_coef, int n, real xc, real rc, real w,
                         int dirichlet, int side)
{
    (void)inv_coef;  // unused when VARIABLE == 0
    return inside ? face_term(true, x[n], INV_COEF(n), xc, rc, w, dirichlet, side)
                  : face_term(false, R(0), R(1), xc, rc, w, dirichlet, side);
}

// y = A x; with `with_dot` also dot[0] = x.y (accumulated in double, per block, then added
// in a fixed order by the last block: the same bits every run), which saves conjugate
// gradients a pass over both vectors. partials holds a double per block.
// In 3D each thread walks STENCIL_LAYERS consecutive z layers of its (i, j) column, keeping
// the values below, at and above the cell in registers: 5 loads a cell instead of 7, and
// several independent cells per thread.
REDUCTION BLOCK_KERNEL void stencil_apply(const real* __restrict__ x, real* __restrict__ y,
                                          const real* __restrict__ inv_coef, int nx, int ny,
                                          int nz, real wx, real wy, real wz, int dirichlet,
                                          int with_dot, double* partials,
                                          double* __restrict__ dot, int* __restrict__ tickets)
{
    __shared__ double s[STENCIL_THREADS];
    __shared__ int last;
#if DIM == 2
    (void)wz;
#endif
    PHASE {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        const int sx = 1, sy = nx, sz = nx * ny;
        double xy = 0.0;
        for (int k0 = blockIdx.z * STENCIL_LAYERS; k0 < nz && i < nx;
             k0 += gridDim.z * STENCIL_LAYERS) {
            const int k1 = k0 + STENCIL_LAYERS < nz ? k0 + STENCIL_LAYERS : nz;
            for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < ny;
                 j += blockDim.y * gridDim.y) {
                int c = i + nx * (j + ny * k0);
                real xc = x[c], rc = INV_COEF(c);
#if DIM == 3
                real below = k0 > 0 ? x[c - sz] : R(0);
                real r_below = k0 > 0 ? INV_COEF(c - sz) : R(1);
#else
                (void)sz;
#endif
                for (int k = k0; k < k1; ++k, c += sz) {
                    real acc = face_term_at(i > 0, x, inv_coef, c - sx, xc, rc, wx, dirichlet, 0);
                    acc += face_term_at(i < nx - 1, x, inv_coef, c + sx, xc, rc, wx, dirichlet, 1);
                    acc += face_term_at(j > 0, x, inv_coef, c - sy, xc, rc, wy, dirichlet, 2);
                    acc += face_term_at(j < ny - 1, x, inv_coef, c + sy, xc, rc, wy, dirichlet, 3);
#if DIM == 3
                    const real above = k < nz - 1 ? x[c + sz] : R(0);
                    const real r_above = k < nz - 1 ? INV_COEF(c + sz) : R(1);
                    acc += face_term(k > 0, below, r_below, xc, rc, wz, dirichlet, 4);
                    acc += face_term(k < nz - 1, above, r_above, xc, rc, wz, dirichlet, 5);
#endif
                    y[c] = acc;
                    if (with_dot) xy += (double)xc * (double)acc;
#if DIM == 3
                    below = xc;
                    r_below = rc;
                    xc = above;
                    rc = r_above;
#endif
                }
            }
        }
        s[threadIdx.y * blockDim.x + threadIdx.x] = xy;
    }
    if (!with_dot) return;
    block_sum(s);
    const int blocks = (int)(gridDim.x * gridDim.y * gridDim.z);
    PHASE {
        if (threadIdx.x == 0 && threadIdx.y == 0)
            partials[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = s[0];
    }
    if (!last_block_arrived(tickets, &last)) return;
    sum_in_order(partials, blocks, s);
    PHASE {
        if (threadIdx.x == 0 && threadIdx.y == 0) dot[0] = s[0];
    }
}
