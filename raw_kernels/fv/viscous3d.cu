// The implicit viscous stage of the 3D incompressible MAC solver (driver:
// solvers/fv/incompressible3d/solver.py with solvers/fv/incompressible/viscous.py): the 2D
// stage (viscous.cu) with a third axis. The increment d = u* - u^n of the three components
// solves (I - s L) d = b, b from ins3_predict, L each component's 7-point Laplacian on its own
// faces (rows and boundary rules: viscous_rows.h), s = theta nu dt with dt read on the device;
// d lives in the packed face vector of mac3.h.
//
// Compile-time, from the driver: G, BX, BY, BZ (the face block of incompressible3d.cu).
#include "prelude.h"
#include "mac3.h"
#include "viscous_rows.h"

#if !defined(BX) || !defined(BY) || !defined(BZ)
#error "BX, BY and BZ (the threads of a face block along x, y and z) must be defined"
#endif

// y = (I - s L) d over the packed vector, one thread a face (i, j, k) of each component:
// threads over (nx + 1, ny + 1, nz + 1) as ins3_predict; s = theta_nu * dt[0]; w: 1 / h^2 per
// axis; kinds: the six sides' boundary kinds.
KERNEL void viscous_helmholtz(const real* __restrict__ d, real* __restrict__ y,
                              const real* __restrict__ dt, real theta_nu, int nx, int ny, int nz,
                              real wx, real wy, real wz, int kx_lo, int kx_hi, int ky_lo,
                              int ky_hi, int kz_lo, int kz_hi)
{
    const Mac3 m = mac3(nx, ny, nz);
    const int pos[3] = {(int)(blockIdx.x * BX + threadIdx.x), (int)(blockIdx.y * BY + threadIdx.y),
                        (int)(blockIdx.z * BZ + threadIdx.z)};
    const int kinds[6] = {kx_lo, kx_hi, ky_lo, ky_hi, kz_lo, kz_hi};
    const real w[3] = {wx, wy, wz};
    const real s = theta_nu * dt[0];
    for (int a = 0; a < 3; ++a) {
        if (!has_face(m, a, pos)) continue;
        int stride[3];
        const int r = packed3(m, a, pos, stride);
        const real c = d[r];
        if (identity_row(pos[a], m.n[a], kinds[2 * a], kinds[2 * a + 1])) {
            y[r] = c;
            continue;
        }
        real lap = w[a] * second_along(d, r, pos[a], m.n[a], stride[a], kinds[2 * a],
                                       kinds[2 * a + 1], c);
        for (int e = 0; e < 3; ++e)
            if (e != a)
                lap += w[e] * second_across(d, r, pos[e], m.n[e], stride[e], kinds[2 * e],
                                            kinds[2 * e + 1], c);
        y[r] = c - s * lap;
    }
}

// u* = u^n + d on the predicted faces (ins3_predict left the boundary faces' u*), the periodic
// copy face taking face 0's increment. Threads as ins3_predict.
KERNEL void ins3_viscous_increment(real* __restrict__ us, real* __restrict__ vs,
                                   real* __restrict__ ws, const real* __restrict__ u,
                                   const real* __restrict__ v, const real* __restrict__ w,
                                   const real* __restrict__ d, int nx, int ny, int nz, int kx_lo,
                                   int kx_hi, int ky_lo, int ky_hi, int kz_lo, int kz_hi)
{
    const Mac3 m = mac3(nx, ny, nz);
    const int pos[3] = {(int)(blockIdx.x * BX + threadIdx.x), (int)(blockIdx.y * BY + threadIdx.y),
                        (int)(blockIdx.z * BZ + threadIdx.z)};
    const int kinds[6] = {kx_lo, kx_hi, ky_lo, ky_hi, kz_lo, kz_hi};
    real* q_star[3] = {us, vs, ws};
    const real* q[3] = {u, v, w};
    for (int a = 0; a < 3; ++a) {
        if (!has_face(m, a, pos) || boundary_face(pos[a], m.n[a], kinds[2 * a], kinds[2 * a + 1]))
            continue;
        int from[3] = {pos[0], pos[1], pos[2]}, stride[3];
        if (periodic_copy(pos[a], m.n[a], kinds[2 * a + 1])) from[a] = 0;
        const int c = face_index(m, a, pos);
        q_star[a][c] = q[a][c] + d[packed3(m, a, from, stride)];
    }
}
