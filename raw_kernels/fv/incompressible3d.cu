// Incompressible Navier-Stokes on a 3D staggered (MAC) grid: the kernels of one time step
// (driver: solvers/fv/incompressible3d/solver.py). The scheme is the 2D one (incompressible.cu)
// with a third axis; the per-line rules (boundary ghosts, transported value, boundary faces,
// face gradient) are shared with it through mac_lines.h.
//
// Unknowns: component a (u, v, w: a = 0, 1, 2) on the faces normal to axis a, pressure p per
// cell. Component a's array has n_d + 2G cells along each axis d != a and n_a + 1 + 2G faces
// along a, x fastest: q_a(i, j, k) = q_a[(i + G) + (j + G) s1 + (k + G) s2] (mac3.h). Cell
// arrays (p, the pressure right-hand side b and solution x) have no ghosts: c = i + nx (j +
// ny k), the numbering of solvers.linalg's StencilLaplacian.
//
// One step (after the clock's finish_dt):
//   ins_boundary_scale  the inflow ramp factor at the new time (one thread)
//   ins3_boundary (x3)  boundary faces and ghost layers: the x sides, then y, then z
//   ins3_predict        u* = u + dt (a N + c N_old), AB2 of N = -div(u u) + nu lap u + f;
//                       implicit viscosity: the viscous stage's right-hand side instead
//   (implicit: the viscous stage (I - s L) d = rhs by CG, then u* = u + d: viscous3d.cu)
//   ins3_divergence     b = -div u*, x = dt p (implicit: 0), the pressure solve's guess
//   (the pressure solve A x = b, A = -lap with the wall / outflow kinds, in solvers.linalg)
//   ins3_correct        u = u* - grad x, p = x / dt (implicit: p += x / dt), and per block:
//                       the stability rate, the largest change from the reference velocity,
//                       the largest velocity, |div u| and the sum of the faces' kinetic energy
//   ins3_finish         one block: reductions, steady-state test, history row, AB2 dt memory
//
// Compile-time, from the driver: G (ghost layers), ADVECTION (1 central, 2 QUICK), IMPLICIT
// (0 explicit viscosity, 1 implicit), BX, BY, BZ (threads of a face block along x, y, z;
// BX BY BZ a power of two, also ins3_finish's block).
// BZ is 1: the block reductions of reduce.h span a block's x and y; blockIdx.z walks z.
#include "prelude.h"
#include "reduce.h"
#include "clock.h"
#include "mac3.h"
#include "viscous_rows.h"

#if !defined(BX) || !defined(BY) || !defined(BZ)
#error "BX, BY and BZ (the threads of a face block along x, y and z) must be defined"
#endif
#if BZ != 1
#error "BZ must be 1 (reduce.h reduces over a block's x and y threads)"
#endif
#define THREADS (BX * BY * BZ)

// History row (double[HIST_COLS] per step, ring of `hist_rows`).
#define HIST_T 0
#define HIST_DT 1
#define HIST_CHANGE 2    // max |u^{n+1} - u_ref| / ((t - t_ref) max |u^{n+1}|)
#define HIST_DIV 3       // max |div u^{n+1}| (1/s)
#define HIST_ITER 4      // pressure iterations
#define HIST_STATUS 5    // pressure solve status (1 converged)
#define HIST_ENERGY 6    // kinetic energy per unit volume of u^{n+1}, 1/V sum |u|^2 / 2 dV
#define HIST_VISCOUS 7   // viscous stage iterations (0 with explicit viscosity)
#define HIST_COLS 8
// mac_finish.h reads the HIST_ columns.
#include "mac_finish.h"

// diag (double[8]): DIAG_* of mac_finish.h

// -- boundaries --------------------------------------------------------------------------------

// Boundary faces and ghosts of axis a's two sides, one thread per line along a across the side
// (mb, mc) = -G .. n_b + G, -G .. n_c + G, ghost lines included, so that edges take the values
// the earlier axes' sides left. b < c are the other two axes. wall: the lo side's speeds along
// b and c, then the hi side's. inflow: the normal velocity of the lo side (n_b n_c values, b
// fastest) then the hi side's, times scale[0]. fix 0 fills only the ghosts.
KERNEL void ins3_boundary(real* __restrict__ u, real* __restrict__ v, real* __restrict__ w,
                          int nx, int ny, int nz, int a, int kind_lo, int kind_hi, real wall_lo_b,
                          real wall_lo_c, real wall_hi_b, real wall_hi_c,
                          const real* __restrict__ inflow, const real* __restrict__ scale, int fix)
{
    const Mac3 m = mac3(nx, ny, nz);
    const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
    const int width = m.n[b] + 1 + 2 * G;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int mb = (int)(t % width) - G, mc = (int)(t / width) - G;
    if (mc >= m.n[c] + 1 + G) return;
    real* q[3] = {u, v, w};
    int pos[3];
    pos[a] = 0;
    pos[b] = mb;
    pos[c] = mc;
    const int n = m.n[a];
    // The normal component has lines -G .. n_b - 1 + G across b and c.
    if (mb < m.n[b] + G && mc < m.n[c] + G) {
        const bool inside = mb >= 0 && mb < m.n[b] && mc >= 0 && mc < m.n[c];
        const int f = inside ? mb + m.n[b] * mc : 0, side = m.n[b] * m.n[c];
        const real s = scale[0];
        real* line = q[a] + face_index(m, a, pos);
        fill_normal(line, m.s[a][a], n, true, kind_lo, inside ? inflow[f] * s : R(0),
                    fix && inside);
        fill_normal(line, m.s[a][a], n, false, kind_hi, inside ? inflow[side + f] * s : R(0),
                    fix && inside);
    }
    // Component b has a line more across b, component c across c.
    if (mc < m.n[c] + G) {
        real* line = q[b] + face_index(m, b, pos);
        fill_tangential(line, m.s[b][a], n, true, kind_lo, wall_lo_b);
        fill_tangential(line, m.s[b][a], n, false, kind_hi, wall_hi_b);
    }
    if (mb < m.n[b] + G) {
        real* line = q[c] + face_index(m, c, pos);
        fill_tangential(line, m.s[c][a], n, true, kind_lo, wall_lo_c);
        fill_tangential(line, m.s[c][a], n, false, kind_hi, wall_hi_c);
    }
}

// -- momentum predictor ------------------------------------------------------------------------

// The advective rate -d(q w)/dx_d of q at its face c along one axis d (stride s, 1/h = inv),
// with w_lo, w_hi the advecting velocity at the flux points below and above; adds q's second
// difference along d to *lap.
DEVICE real advection_along(const real* __restrict__ q, int c, int s, real w_lo, real w_hi,
                            real inv, real* lap)
{
    const real qc = q[c], qp = q[c + s], qm = q[c - s];
    const real fp = w_hi * transported(qm, qc, qp, q[c + 2 * s], w_hi);
    const real fm = w_lo * transported(q[c - 2 * s], qm, qc, qp, w_lo);
    *lap += (qp - R(2) * qc + qm) * inv * inv;
    return -(fp - fm) * inv;
}

// The advective rate -div(q_a u) + force of component a at its face pos (index c), and its
// Laplacian into *lap. Conservative: along a, q_a q_a at the cell centres beside the face;
// across (axis d), q_a moved by component d's mean at the edges below and above.
DEVICE real momentum3(real* const* q, const Mac3& m, int a, const int* pos, int c,
                      const real* inv, real force, real* lap)
{
    const real* qa = q[a];
    real rate = force;
    *lap = R(0);
    for (int d = 0; d < 3; ++d) {
        const int s = m.s[a][d];
        real lo, hi;
        if (d == a) {
            lo = R(0.5) * (qa[c - s] + qa[c]);
            hi = R(0.5) * (qa[c] + qa[c + s]);
        } else {
            const real* qd = q[d];
            const int e = face_index(m, d, pos), along = m.s[d][a], up = m.s[d][d];
            lo = R(0.5) * (qd[e - along] + qd[e]);
            hi = R(0.5) * (qd[e - along + up] + qd[e + up]);
        }
        rate += advection_along(qa, c, s, lo, hi, inv[d], lap);
    }
    return rate;
}

// One thread per (i, j, k) with i <= nx, j <= ny, k <= nz: the faces of u, v and w there
// (where they exist). Interior faces, explicit viscosity: u* = u^n + dt AB2(N), N = a + nu lap
// kept for the next step; implicit (IMPLICIT 1): the viscous stage's right-hand side
// dt (AB2(a) + nu lap - grad p^n) into rhs (packed, mac3.h; 0 on identity rows, on copied
// faces (mac_lines.h) and at dt = 0), N = a kept, and viscous3d.cu sets u*; p^n's cell (i, j,
// k) at p[p_first + i + p_sy j + p_sz k] (a block's: padded, its halo swapped). Boundary faces
// keep their value (outflow faces copy the face inside them). kinds: the six sides' boundary
// kinds (x_lo, x_hi, y_lo, ...).
KERNEL void ins3_predict(real* __restrict__ u, real* __restrict__ v, real* __restrict__ w,
                         real* __restrict__ us, real* __restrict__ vs, real* __restrict__ ws,
                         real* __restrict__ nu_old, real* __restrict__ nv_old,
                         real* __restrict__ nw_old, const real* __restrict__ p, int p_first,
                         int p_sy, int p_sz, const real* __restrict__ dt_now, const real* __restrict__ dt_prev,
                         real* __restrict__ rhs, int nx, int ny, int nz, real inv_dx,
                         real inv_dy, real inv_dz, real nu, real fx, real fy, real fz,
                         int kx_lo, int kx_hi, int ky_lo, int ky_hi, int kz_lo, int kz_hi)
{
    const Mac3 m = mac3(nx, ny, nz);
    const int pos[3] = {(int)(blockIdx.x * BX + threadIdx.x), (int)(blockIdx.y * BY + threadIdx.y),
                        (int)(blockIdx.z * BZ + threadIdx.z)};
    real* q[3] = {u, v, w};
    real* q_star[3] = {us, vs, ws};
    real* n_old[3] = {nu_old, nv_old, nw_old};
    const real inv[3] = {inv_dx, inv_dy, inv_dz}, force[3] = {fx, fy, fz};
    const int kinds[6] = {kx_lo, kx_hi, ky_lo, ky_hi, kz_lo, kz_hi};
    const real dt = dt_now[0];
    const real c_old = dt_prev[0] > R(0) ? -dt / (R(2) * dt_prev[0]) : R(0), c_new = R(1) - c_old;
#if !IMPLICIT
    (void)p, (void)p_first, (void)p_sy, (void)p_sz, (void)rhs;
#endif
    for (int a = 0; a < 3; ++a) {
        if (!has_face(m, a, pos)) continue;
        const int c = face_index(m, a, pos), i = pos[a], n = m.n[a];
        const int lo = kinds[2 * a], hi = kinds[2 * a + 1];
#if IMPLICIT
        int stride[3];
        const int r = packed3(m, a, pos, stride);
        if (identity_row(i, n, lo, hi) || copied_face(i, n, hi) || !(dt > R(0))) rhs[r] = R(0);
#endif
        if (boundary_face(i, n, lo, hi)) {
            const bool out = (i == 0 ? lo : hi) == BC_OUTFLOW;
            q_star[a][c] = out ? q[a][c + (i == 0 ? 1 : -1) * m.s[a][a]] : q[a][c];
        } else if (!(dt > R(0))) {  // a step past the stop time: no change
            q_star[a][c] = q[a][c];
        } else {
            real lap;
            const real rate = momentum3(q, m, a, pos, c, inv, force[a], &lap);
#if IMPLICIT
            real grad = R(0);
            gradient_at(p, Cells{p_first, p_sy, p_sz}, m, a, pos, kinds, inv, &grad);
            const real ab2 = c_new * rate + c_old * n_old[a][c] + nu * lap - grad;
            n_old[a][c] = rate;
            if (!copied_face(i, n, hi)) rhs[r] = dt * ab2;
#else
            const real n_new = rate + nu * lap;
            const real ab2 = c_new * n_new + c_old * n_old[a][c];
            n_old[a][c] = n_new;
            q_star[a][c] = q[a][c] + dt * ab2;
#endif
        }
    }
}

// -- projection --------------------------------------------------------------------------------

// The pressure system's right-hand side b = -div u* and initial guess: explicit x = dt p (the
// total pressure: the solve then starts from the incremental scheme's residual), implicit
// x = 0 (the increment: u* already holds -dt grad p^n). One thread a cell.
KERNEL void ins3_divergence(const real* __restrict__ us, const real* __restrict__ vs,
                            const real* __restrict__ ws, const real* __restrict__ p,
                            const real* __restrict__ dt_now, real* __restrict__ b,
                            real* __restrict__ x, int nx, int ny, int nz, real inv_dx,
                            real inv_dy, real inv_dz)
{
    const Mac3 m = mac3(nx, ny, nz);
    const int pos[3] = {(int)(blockIdx.x * BX + threadIdx.x), (int)(blockIdx.y * BY + threadIdx.y),
                        (int)(blockIdx.z * BZ + threadIdx.z)};
    if (pos[0] >= nx || pos[1] >= ny || pos[2] >= nz) return;
    const real* q[3] = {us, vs, ws};
    const real inv[3] = {inv_dx, inv_dy, inv_dz};
    real div = R(0);
    for (int a = 0; a < 3; ++a) {
        const int c = face_index(m, a, pos);
        div += (q[a][c + m.s[a][a]] - q[a][c]) * inv[a];
    }
    const long long cell = pos[0] + (long long)nx * (pos[1] + (long long)ny * pos[2]);
    b[cell] = -div;
#if IMPLICIT
    (void)p;
    (void)dt_now;
    x[cell] = R(0);
#else
    x[cell] = dt_now[0] * p[cell];
#endif
}

// The corrected value of component a at face pos: u* - grad x (u* where x has no gradient).
DEVICE real corrected(const real* __restrict__ q_star, const real* __restrict__ x,
                      const Cells& cells, const Mac3& m, int a, const int* pos, const int* kinds,
                      const real* inv)
{
    real grad = R(0);
    const bool has = gradient_at(x, cells, m, a, pos, kinds, inv, &grad);
    const real value = q_star[face_index(m, a, pos)];
    return has ? value - grad : value;
}

// u = u* - grad x, p = x / dt (implicit: p += x / dt), one thread per (i, j, k) as
// ins3_predict; x's cell (i, j, k) at x[x_first + i + x_sy j + x_sz k]. Per block: the largest
// stability rate max(|u|/dx + |v|/dy + |w|/dz, rate_floor) + diffusion_rate into rates[block],
// and into partials[k * blocks + block]: k = 0 max |u_new - u_ref|, 1 max |u_new|, 2 max
// |div u_new|, 3 the sum of weight q^2 / 2 / ncells over the block's faces (weight 1, 1/2 on a
// boundary face, 0 on a periodic copy: the kinetic energy per unit volume). With refresh[0]
// set (by ins3_finish), the new velocity becomes the reference.
BLOCK_KERNEL void ins3_correct(real* __restrict__ u, real* __restrict__ v, real* __restrict__ w,
                               const real* __restrict__ us, const real* __restrict__ vs,
                               const real* __restrict__ ws, const real* __restrict__ x,
                               int x_first, int x_sy, int x_sz, real* __restrict__ p,
                               const real* __restrict__ dt_now, int nx,
                               int ny, int nz, real inv_dx, real inv_dy, real inv_dz, int kx_lo,
                               int kx_hi, int ky_lo, int ky_hi, int kz_lo, int kz_hi,
                               real diffusion_rate, real rate_floor, real inv_cells,
                               real* __restrict__ rates, real* __restrict__ partials,
                               real* __restrict__ u_ref, real* __restrict__ v_ref,
                               real* __restrict__ w_ref, const int* __restrict__ refresh)
{
    __shared__ real s_rate[THREADS];
    __shared__ real s_change[THREADS];
    __shared__ real s_speed[THREADS];
    __shared__ real s_div[THREADS];
    __shared__ real s_energy[THREADS];
    const Mac3 m = mac3(nx, ny, nz);
    PHASE {
        const int pos[3] = {(int)(blockIdx.x * BX + threadIdx.x),
                            (int)(blockIdx.y * BY + threadIdx.y),
                            (int)(blockIdx.z * BZ + threadIdx.z)};
        const int t = (threadIdx.z * BY + threadIdx.y) * BX + threadIdx.x;
        real* q[3] = {u, v, w};
        const real* q_star[3] = {us, vs, ws};
        real* q_ref[3] = {u_ref, v_ref, w_ref};
        const real inv[3] = {inv_dx, inv_dy, inv_dz};
        const int kinds[6] = {kx_lo, kx_hi, ky_lo, ky_hi, kz_lo, kz_hi};
        const Cells cells = {x_first, x_sy, x_sz};
        const bool moving = dt_now[0] > R(0);  // else a step past the stop time: no change
        real change = R(0), speed = R(0), rate = R(0), energy = R(0), div = R(0);
        for (int a = 0; a < 3; ++a) {
            if (!has_face(m, a, pos)) continue;
            const int c = face_index(m, a, pos), i = pos[a], n = m.n[a];
            const real value = moving ? corrected(q_star[a], x, cells, m, a, pos, kinds, inv)
                                      : q[a][c];
            change = fmax(change, fabs(value - q_ref[a][c]));
            if (refresh[0]) q_ref[a][c] = value;
            q[a][c] = value;
            speed = fmax(speed, fabs(value));
            rate += fabs(value) * inv[a];
            const bool periodic = kinds[2 * a] == BC_PERIODIC;
            const real weight = periodic ? (i == n ? R(0) : R(1))
                                         : (i == 0 || i == n ? R(0.5) : R(1));
            energy += weight * R(0.5) * value * value * inv_cells;
        }
        if (pos[0] < nx && pos[1] < ny && pos[2] < nz && moving) {
            const int cell = pos[0] + nx * (pos[1] + ny * pos[2]);
#if IMPLICIT
            p[cell] += x[cell_at(cells, pos)] / dt_now[0];
#else
            p[cell] = x[cell_at(cells, pos)] / dt_now[0];
#endif
            // The new divergence from this thread's corrected faces and the corrections of the
            // cell's high faces, recomputed here (the same bits as their owners write).
            for (int a = 0; a < 3; ++a) {
                int up[3] = {pos[0], pos[1], pos[2]};
                up[a] += 1;
                div += (corrected(q_star[a], x, cells, m, a, up, kinds, inv)
                        - q[a][face_index(m, a, pos)]) * inv[a];
            }
            div = fabs(div);
        }
        // A non-finite velocity or divergence makes every maximum of the block infinite:
        // finish_dt then stops the run as diverged.
        const bool finite = rate < REAL_INF && div < REAL_INF;
        s_rate[t] = finite ? fmax(rate, rate_floor) + diffusion_rate : REAL_INF;
        s_change[t] = finite ? change : REAL_INF;
        s_speed[t] = finite ? speed : REAL_INF;
        s_div[t] = finite ? div : REAL_INF;
        s_energy[t] = energy;
    }
    block_max(s_rate);
    block_max(s_change);
    block_max(s_speed);
    block_max(s_div);
    block_sum(s_energy);
    PHASE {
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            const int blocks = gridDim.x * gridDim.y * gridDim.z;
            const int block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
            rates[block] = s_rate[0];
            partials[block] = s_change[0];
            partials[blocks + block] = s_speed[0];
            partials[2 * blocks + block] = s_div[0];
            partials[3 * blocks + block] = s_energy[0];
        }
    }
}

// -- end of step ---------------------------------------------------------------------------------

// One block of THREADS: the step's maxima and kinetic energy from the block partials (fixed
// order), one history row at the step's index, the pressure solve's outcome (krylov state ITER
// = state[4], done: 1 converged), and the steady-state test of the 2D solver (ins_finish in
// incompressible.cu): rate = max |u - u_ref| / ((t - t_ref) max |u|) over windows of `window`.
REDUCTION BLOCK_KERNEL void ins3_finish(const real* __restrict__ partials, int blocks,
                                        double* __restrict__ ctrl,
                                        const double* __restrict__ krylov_state,
                                        const int* __restrict__ krylov_done,
                                        const double* __restrict__ viscous_state,
                                        const int* __restrict__ viscous_done,
                                        double* __restrict__ diag, real* __restrict__ dt_prev,
                                        double* __restrict__ history, int hist_rows,
                                        double steady_tol, double window,
                                        int* __restrict__ refresh)
{
    __shared__ real s_change[THREADS];
    __shared__ real s_speed[THREADS];
    __shared__ real s_div[THREADS];
    __shared__ double s_energy[THREADS];
    PHASE {
        const int t = threadIdx.x;
        fold_step_maxima(partials, blocks, t, s_change, s_speed, s_div);
        double energy = 0.0;
        for (int k = t; k < blocks; k += THREADS) energy += (double)partials[3 * blocks + k];
        s_energy[t] = energy;
    }
    block_max(s_change);
    block_max(s_speed);
    block_max(s_div);
    block_sum(s_energy);
    PHASE {
        if (threadIdx.x == 0) {
            double* row = record_step(ctrl, diag, history, hist_rows, s_change[0], s_speed[0],
                                      s_div[0], krylov_state, krylov_done, viscous_state,
                                      viscous_done, dt_prev, refresh, steady_tol, window);
            if (row) row[HIST_ENERGY] = s_energy[0];
        }
    }
}
