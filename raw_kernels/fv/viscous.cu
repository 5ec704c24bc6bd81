// The implicit viscous stage of the incompressible MAC solver (driver:
// solvers/fv/incompressible/viscous.py, launched by solver.py between ins_predict and
// ins_divergence when the viscous term is implicit).
//
// The increment d = u* - u^n of both velocity components solves (I - s L) d = b, where
// b = dt (AB2 advection + nu L u^n - grad p^n + f) comes from ins_predict, L is the 5-point
// Laplacian of each component on its own faces (rows and boundary rules: viscous_rows.h) and
// s = theta nu dt (theta = 1/2: Crank-Nicolson, 1: backward Euler), with dt read on the
// device. d lives in the packed face vector of mac.h.
//
// Compile-time, from the driver: G, BX, BY (the face block of the incompressible kernels).
#include "prelude.h"
#include "mac.h"
#include "viscous_rows.h"

#if !defined(BX) || !defined(BY)
#error "BX and BY (the threads of a face block along x and y) must be defined"
#endif

// y = (I - s L) d over the packed vector, one thread a row; s = theta_nu * dt[0].
KERNEL void viscous_helmholtz(const real* __restrict__ d, real* __restrict__ y,
                              const real* __restrict__ dt, real theta_nu, int nx, int ny,
                              real wx, real wy, int kx_lo, int kx_hi, int ky_lo, int ky_hi)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    const int n_u = (nx + 1) * ny;
    if (r >= n_u + nx * (ny + 1)) return;
    const real s = theta_nu * dt[0];
    if (r < n_u) {
        const int i = r % (nx + 1), j = r / (nx + 1);
        const real c = d[r];
        y[r] = identity_row(i, nx, kx_lo, kx_hi) ? c : c - s * (
            wx * second_along(d, r, i, nx, 1, kx_lo, kx_hi, c)
            + wy * second_across(d, r, j, ny, nx + 1, ky_lo, ky_hi, c));
    } else {
        const int i = (r - n_u) % nx, j = (r - n_u) / nx;
        const real c = d[r];
        y[r] = identity_row(j, ny, ky_lo, ky_hi) ? c : c - s * (
            wy * second_along(d, r, j, ny, nx, ky_lo, ky_hi, c)
            + wx * second_across(d, r, i, nx, 1, kx_lo, kx_hi, c));
    }
}

// u* = u^n + d on the predicted faces (ins_predict left the boundary faces' u*), the periodic
// copy face taking face 0's increment. One thread per (i, j) for i <= nx, j <= ny, as
// ins_predict.
KERNEL void ins_viscous_increment(real* __restrict__ us, real* __restrict__ vs,
                                  const real* __restrict__ u, const real* __restrict__ v,
                                  const real* __restrict__ d, int nx, int ny, int kx_lo,
                                  int kx_hi, int ky_lo, int ky_hi)
{
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
    if (i <= nx && j < ny && !boundary_face(i, nx, kx_lo, kx_hi)) {
        const int c = iu(f, i, j);
        us[c] = u[c] + d[packed_u(nx, periodic_copy(i, nx, kx_hi) ? 0 : i, j)];
    }
    if (i < nx && j <= ny && !boundary_face(j, ny, ky_lo, ky_hi)) {
        const int c = iv(f, i, j);
        vs[c] = v[c] + d[packed_v(nx, ny, i, periodic_copy(j, ny, ky_hi) ? 0 : j)];
    }
}
