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
// On a decomposed grid's block (solvers/fv/incompressible/block_viscous.py) the operator reads
// d from copies du, dv padded as u and v (mac.h's G ghost layers), whose ghosts beyond the halo
// sides hold the neighbouring blocks' faces; a copied face (mac_lines.h) has a zero row there.
//
// Compile-time, from the driver: G, BX, BY (the face block of the incompressible kernels).
#include "prelude.h"
#include "mac.h"
#include "viscous_rows.h"

#if !defined(BX) || !defined(BY)
#error "BX and BY (the threads of a face block along x and y) must be defined"
#endif

// The operator's constants: s = theta_nu * dt, the weights 1/h^2, the cells and the sides'
// kinds.
struct Helmholtz {
    real s, w[2];
    int n[2], kinds[4];
};

// (I - s L) d at face (i, j) of component a (0: u, 1: v), d[r] its value and sr the stride of
// d's rows (viscous_rows.h's helmholtz_row).
DEVICE real helmholtz_at(const real* __restrict__ d, int r, int sr, int a, int i, int j,
                         const Helmholtz& h)
{
    const int pos[2] = {i, j}, stride[2] = {1, sr};
    return helmholtz_row(d, r, stride, a, pos, h.n, h.kinds, h.w, h.s, 2);
}

// y = (I - s L) d over the packed vector, one thread a row; s = theta_nu * dt[0].
KERNEL void viscous_helmholtz(const real* __restrict__ d, real* __restrict__ y,
                              const real* __restrict__ dt, real theta_nu, int nx, int ny,
                              real wx, real wy, int kx_lo, int kx_hi, int ky_lo, int ky_hi)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    const int n_u = (nx + 1) * ny;
    if (r >= n_u + nx * (ny + 1)) return;
    const Helmholtz h = {theta_nu * dt[0], {wx, wy}, {nx, ny}, {kx_lo, kx_hi, ky_lo, ky_hi}};
    if (r < n_u) y[r] = helmholtz_at(d, r, nx + 1, 0, r % (nx + 1), r / (nx + 1), h);
    else y[r] = helmholtz_at(d, r, nx, 1, (r - n_u) % nx, (r - n_u) / nx, h);
}

// A block's y = (I - s L) d into the packed vector y, d read from the padded du and dv (their
// ghosts exchanged); the row of a copied face is zero. One thread a row of y.
KERNEL void viscous_block_helmholtz(const real* __restrict__ du, const real* __restrict__ dv,
                                    real* __restrict__ y, const real* __restrict__ dt,
                                    real theta_nu, int nx, int ny, real wx, real wy, int kx_lo,
                                    int kx_hi, int ky_lo, int ky_hi)
{
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    const int n_u = (nx + 1) * ny;
    if (r >= n_u + nx * (ny + 1)) return;
    const Helmholtz h = {theta_nu * dt[0], {wx, wy}, {nx, ny}, {kx_lo, kx_hi, ky_lo, ky_hi}};
    if (r < n_u) {
        const int i = r % (nx + 1), j = r / (nx + 1);
        y[r] = copied_face(i, nx, kx_hi) ? R(0) : helmholtz_at(du, iu(f, i, j), f.su, 0, i, j, h);
    } else {
        const int i = (r - n_u) % nx, j = (r - n_u) / nx;
        y[r] = copied_face(j, ny, ky_hi) ? R(0) : helmholtz_at(dv, iv(f, i, j), f.sv, 1, i, j, h);
    }
}

// Copies between the packed vector d and a block's padded du, dv: into them (to_padded) or
// out of them. One thread a row of d.
KERNEL void viscous_pad(real* __restrict__ d, real* __restrict__ du, real* __restrict__ dv,
                        int nx, int ny, int to_padded)
{
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    const int n_u = (nx + 1) * ny;
    if (r >= n_u + nx * (ny + 1)) return;
    real* padded = r < n_u ? du + iu(f, r % (nx + 1), r / (nx + 1))
                           : dv + iv(f, (r - n_u) % nx, (r - n_u) / nx);
    if (to_padded) *padded = d[r];
    else d[r] = *padded;
}

// u* = u^n + d on the predicted faces (ins_predict left the boundary faces' u*), the periodic
// copy face taking face 0's increment (a block's halo copy face: d holds the next block's
// face 0 there, copied out of the padded du, dv). One thread per (i, j) for i <= nx, j <= ny,
// as ins_predict.
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
