// The implicit viscous stage of the incompressible MAC solver (driver:
// solvers/fv/incompressible/viscous.py, launched by solver.py between ins_predict and
// ins_divergence when the viscous term is implicit).
//
// The increment d = u* - u^n of both velocity components solves (I - s L) d = b, where
// b = dt (AB2 advection + nu L u^n - grad p^n + f) comes from ins_predict, L is the 5-point
// Laplacian of each component on its own faces and s = theta nu dt (theta = 1/2: Crank-Nicolson,
// 1: backward Euler), with dt read on the device. d lives in the packed face vector of mac.h.
// The boundary conditions of d are those of the velocity made homogeneous (the boundary values
// of the new time are already in u^n when the step predicts):
//   along a face's own axis: boundary faces are fixed (d = 0) and their rows are the identity;
//     an outflow face copies the face inside it (d_n = d_{n-1}); the periodic copy face n is
//     an identity row too, and face n-1 sees face 0 beyond it;
//   across: ghosts are odd about a wall or inflow side (-d), even about a slip or outflow side
//     (d), periodic partners on a periodic side.
// Every coupling is -s / h^2 both ways, so I - s L is symmetric positive definite and CG
// solves it.
//
// Compile-time, from the driver: G, BX, BY (the face block of the incompressible kernels),
// OBSTACLE.
#include "prelude.h"
#include "mac.h"

#if !defined(BX) || !defined(BY)
#error "BX and BY (the threads of a face block along x and y) must be defined"
#endif

struct Sides {
    int k_lo, k_hi, m_lo, m_hi;  // kinds along the face's own axis, then across it
};

// Row r of y = (I - s L) d for a face at index k (0..n) along its own axis (stride sk in the
// packed vector) and m (0..lines-1) across it (stride sm), with weights wk = 1 / h_k^2 and
// wm = 1 / h_m^2.
DEVICE real helmholtz_row(const real* __restrict__ d, int r, int k, int n, int sk, int m,
                          int lines, int sm, const Sides& b, real wk, real wm, real s)
{
    const real c = d[r];
    if (boundary_face(k, n, b.k_lo, b.k_hi) || periodic_copy(k, n, b.k_hi)) return c;
    // Along the own axis: the faces k - 1 and k + 1, or what stands for them.
    real lo, hi;
    if (k > 0) lo = k - 1 > 0 || b.k_lo == BC_PERIODIC ? d[r - sk]
                                                       : (b.k_lo == BC_OUTFLOW ? c : R(0));
    else lo = d[r + (n - 1) * sk];  // periodic: face -1 is face n - 1
    if (k + 1 < n) hi = d[r + sk];
    else if (b.k_hi == BC_PERIODIC) hi = d[r - k * sk];  // face n is face 0
    else hi = b.k_hi == BC_OUTFLOW ? c : R(0);
    // Across: the neighbouring lines m - 1 and m + 1, or the ghosts of the side.
    real south, north;
    if (m > 0) south = d[r - sm];
    else if (b.m_lo == BC_PERIODIC) south = d[r + (lines - 1) * sm];
    else south = b.m_lo == BC_WALL || b.m_lo == BC_INFLOW ? -c : c;
    if (m + 1 < lines) north = d[r + sm];
    else if (b.m_hi == BC_PERIODIC) north = d[r - m * sm];
    else north = b.m_hi == BC_WALL || b.m_hi == BC_INFLOW ? -c : c;
    return c - s * ((lo - R(2) * c + hi) * wk + (south - R(2) * c + north) * wm);
}

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
        const Sides b = {kx_lo, kx_hi, ky_lo, ky_hi};
        const int i = r % (nx + 1), j = r / (nx + 1);
        y[r] = helmholtz_row(d, r, i, nx, 1, j, ny, nx + 1, b, wx, wy, s);
    } else {
        const Sides b = {ky_lo, ky_hi, kx_lo, kx_hi};
        const int i = (r - n_u) % nx, j = (r - n_u) / nx;
        y[r] = helmholtz_row(d, r, j, ny, nx, i, nx, 1, b, wy, wx, s);
    }
}

// u* = u^n + d on the predicted faces (ins_predict left the boundary faces' u*), the periodic
// copy face taking face 0's increment; with OBSTACLE, faces inside the body (mask 1) are set
// to rest after the solve. One thread per (i, j) for i <= nx, j <= ny, as ins_predict.
KERNEL void ins_viscous_increment(real* __restrict__ us, real* __restrict__ vs,
                                  const real* __restrict__ u, const real* __restrict__ v,
                                  const real* __restrict__ d, const real* __restrict__ mask_u,
                                  const real* __restrict__ mask_v, int nx, int ny, int kx_lo,
                                  int kx_hi, int ky_lo, int ky_hi)
{
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
#if !OBSTACLE
    (void)mask_u;
    (void)mask_v;
#endif
    if (i <= nx && j < ny && !boundary_face(i, nx, kx_lo, kx_hi)) {
        const int c = iu(f, i, j);
        real value = u[c] + d[packed_u(nx, periodic_copy(i, nx, kx_hi) ? 0 : i, j)];
#if OBSTACLE
        if (mask_u[i + (nx + 1) * j] != R(0)) value = R(0);
#endif
        us[c] = value;
    }
    if (i < nx && j <= ny && !boundary_face(j, ny, ky_lo, ky_hi)) {
        const int c = iv(f, i, j);
        real value = v[c] + d[packed_v(nx, ny, i, periodic_copy(j, ny, ky_hi) ? 0 : j)];
#if OBSTACLE
        if (mask_v[i + nx * j] != R(0)) value = R(0);
#endif
        vs[c] = value;
    }
}
