// The implicit viscous stage of the 3D incompressible MAC solver (driver:
// solvers/fv/incompressible3d/solver.py with solvers/fv/incompressible/viscous.py): the 2D
// stage (viscous.cu) with a third axis. The increment d = u* - u^n of the three components
// solves (I - s L) d = b, b from ins3_predict, L each component's 7-point Laplacian on its own
// faces (rows and boundary rules: viscous_rows.h), s = theta nu dt with dt read on the device;
// d lives in the packed face vector of mac3.h.
//
// On a decomposed grid's block (solvers/fv/incompressible/block_viscous.py) the operator reads
// d from copies du, dv, dw padded as u, v, w (mac3.h's G ghost layers), whose ghosts beyond the
// halo sides hold the neighbouring blocks' faces; a copied face (mac_lines.h) has a zero row.
//
// Compile-time, from the driver: G, BX, BY, BZ (the face block of incompressible3d.cu).
#include "prelude.h"
#include "mac3.h"
#include "viscous_rows.h"

#if !defined(BX) || !defined(BY) || !defined(BZ)
#error "BX, BY and BZ (the threads of a face block along x, y and z) must be defined"
#endif

// This thread's position (i, j, k): threads over (nx + 1, ny + 1, nz + 1) as ins3_predict.
DEVICE void face_thread(int* pos)
{
    pos[0] = (int)(blockIdx.x * BX + threadIdx.x);
    pos[1] = (int)(blockIdx.y * BY + threadIdx.y);
    pos[2] = (int)(blockIdx.z * BZ + threadIdx.z);
}

// The operator's constants: the layout, s = theta_nu * dt[0], the weights 1 / h^2 and the six
// sides' kinds.
struct Helmholtz3 {
    Mac3 m;
    real s, w[3];
    int kinds[6];
};

// y = (I - s L) d over the packed vector, one thread a face (i, j, k) of each component
// (face_thread); viscous_rows.h's rows, as viscous.cu's in 2D.
KERNEL void viscous_helmholtz(const real* __restrict__ d, real* __restrict__ y,
                              const real* __restrict__ dt, real theta_nu, int nx, int ny, int nz,
                              real wx, real wy, real wz, int kx_lo, int kx_hi, int ky_lo,
                              int ky_hi, int kz_lo, int kz_hi)
{
    const Helmholtz3 h = {mac3(nx, ny, nz), theta_nu * dt[0], {wx, wy, wz},
                          {kx_lo, kx_hi, ky_lo, ky_hi, kz_lo, kz_hi}};
    int pos[3], stride[3];
    face_thread(pos);
    for (int a = 0; a < 3; ++a) {
        if (!has_face(h.m, a, pos)) continue;
        const int r = packed3(h.m, a, pos, stride);
        y[r] = helmholtz_row(d, r, stride, a, pos, h.m.n, h.kinds, h.w, h.s, 3);
    }
}

// A block's y = (I - s L) d into the packed vector y, d read from the padded du, dv, dw (laid
// out as u, v, w, their ghosts exchanged: solvers/fv/incompressible/block_viscous.py); the row
// of a copied face (mac_lines.h) is zero. Threads as viscous_helmholtz.
KERNEL void viscous_block_helmholtz(const real* __restrict__ du, const real* __restrict__ dv,
                                    const real* __restrict__ dw, real* __restrict__ y,
                                    const real* __restrict__ dt, real theta_nu, int nx, int ny,
                                    int nz, real wx, real wy, real wz, int kx_lo, int kx_hi,
                                    int ky_lo, int ky_hi, int kz_lo, int kz_hi)
{
    const Helmholtz3 h = {mac3(nx, ny, nz), theta_nu * dt[0], {wx, wy, wz},
                          {kx_lo, kx_hi, ky_lo, ky_hi, kz_lo, kz_hi}};
    const real* d[3] = {du, dv, dw};
    int pos[3], stride[3];
    face_thread(pos);
    for (int a = 0; a < 3; ++a) {
        if (!has_face(h.m, a, pos)) continue;
        const int r = packed3(h.m, a, pos, stride);
        y[r] = copied_face(pos[a], h.m.n[a], h.kinds[2 * a + 1]) ? R(0) :
            helmholtz_row(d[a], face_index(h.m, a, pos), h.m.s[a], a, pos, h.m.n, h.kinds, h.w,
                          h.s, 3);
    }
}

// Copies between the packed vector d and a block's padded du, dv, dw: into them (to_padded)
// or out of them. Threads as viscous_helmholtz.
KERNEL void viscous_pad(real* __restrict__ d, real* __restrict__ du, real* __restrict__ dv,
                        real* __restrict__ dw, int nx, int ny, int nz, int to_padded)
{
    const Mac3 m = mac3(nx, ny, nz);
    real* q[3] = {du, dv, dw};
    int pos[3], stride[3];
    face_thread(pos);
    for (int a = 0; a < 3; ++a) {
        if (!has_face(m, a, pos)) continue;
        real* padded = q[a] + face_index(m, a, pos);
        const int r = packed3(m, a, pos, stride);
        if (to_padded) *padded = d[r];
        else d[r] = *padded;
    }
}

// u* = u^n + d on the predicted faces (ins3_predict left the boundary faces' u*), the periodic
// copy face taking face 0's increment (a block's copied face: d holds the value of the block
// that solves for it, copied out of the padded du, dv, dw). Threads as ins3_predict.
KERNEL void ins3_viscous_increment(real* __restrict__ us, real* __restrict__ vs,
                                   real* __restrict__ ws, const real* __restrict__ u,
                                   const real* __restrict__ v, const real* __restrict__ w,
                                   const real* __restrict__ d, int nx, int ny, int nz, int kx_lo,
                                   int kx_hi, int ky_lo, int ky_hi, int kz_lo, int kz_hi)
{
    const Mac3 m = mac3(nx, ny, nz);
    int pos[3];
    face_thread(pos);
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
