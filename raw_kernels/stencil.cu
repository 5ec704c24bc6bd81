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
// Launch: a 2D block of threads, one thread per (i, j) (any block shape works; the driver uses
// 32 x 8), one z layer per block z; y and z loop with grid strides so that any ny and nz fit
// CUDA's limits on gridDim.y and gridDim.z (65535).
#include "prelude.h"

#include "stencil_coef.h"

// Contribution of one face of the cell (value xc, inverse coefficient rc) to its row: through
// the neighbour n when `inside`, else through boundary side `side`.
DEVICE real face_term(bool inside, const real* __restrict__ x, const real* __restrict__ inv_coef,
                      int n, real xc, real rc, real w, int dirichlet, int side)
{
    (void)inv_coef;  // unused when VARIABLE == 0
    if (inside) return w * face_coef(rc, INV_COEF(n)) * (xc - x[n]);
    return ((dirichlet >> side) & 1) ? R(2) * w * wall_coef(rc) * xc : R(0);
}

KERNEL void stencil_apply(const real* __restrict__ x, real* __restrict__ y,
                          const real* __restrict__ inv_coef, int nx, int ny, int nz, real wx,
                          real wy, real wz, int dirichlet)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nx) return;
#if DIM == 2
    (void)wz;
#endif
    for (int k = blockIdx.z; k < nz; k += gridDim.z) {
        for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < ny; j += blockDim.y * gridDim.y) {
            const int c = i + nx * (j + ny * k);
            const real xc = x[c], rc = INV_COEF(c);
            const int sx = 1, sy = nx;
            real acc = face_term(i > 0, x, inv_coef, c - sx, xc, rc, wx, dirichlet, 0);
            acc += face_term(i < nx - 1, x, inv_coef, c + sx, xc, rc, wx, dirichlet, 1);
            acc += face_term(j > 0, x, inv_coef, c - sy, xc, rc, wy, dirichlet, 2);
            acc += face_term(j < ny - 1, x, inv_coef, c + sy, xc, rc, wy, dirichlet, 3);
#if DIM == 3
            const int sz = nx * ny;
            acc += face_term(k > 0, x, inv_coef, c - sz, xc, rc, wz, dirichlet, 4);
            acc += face_term(k < nz - 1, x, inv_coef, c + sz, xc, rc, wz, dirichlet, 5);
#endif
            y[c] = acc;
        }
    }
}
