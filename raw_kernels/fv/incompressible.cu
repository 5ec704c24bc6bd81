// Incompressible Navier-Stokes on a 2D staggered (MAC) grid: the kernels of one time step
// (driver: solvers/fv/incompressible/solver.py).
//
// Unknowns: u on the x faces, v on the y faces (layout and boundary kinds in mac.h), pressure
// p per cell. Cell arrays (p, the pressure right-hand side b and solution x) have no ghosts:
// c = i + nx j, the numbering of solvers.linalg's StencilLaplacian.
//
// One step (after the clock's finish_dt):
//   ins_boundary_scale  the inflow ramp factor at the new time (one thread)
//   ins_boundary (x2)   boundary faces and ghost layers of u and v: the x sides, then the y sides
//   ins_predict         explicit viscosity: u* = u + dt (a N + c N_old), AB2 of
//                       N = -div(u u) + nu lap u + f; implicit: the right-hand side of the
//                       viscous stage, dt (AB2 of -div(u u) + f, + nu lap u - grad p)
//   (implicit: the viscous stage (I - s L) d = rhs by CG, then u* = u + d: viscous.cu)
//   ins_immersed        with a body (raw_kernels/fv/immersed.cu): its immersed boundary's
//                       direct forcing of u*, and per block the force it takes; it runs after
//                       every update of u* and before the divergence, so the projection follows
//   ins_divergence      b = -div u* (0 in a body's cells), x = dt p (implicit: x = 0), the
//                       pressure solve's guess
//   (the pressure solve A x = b, A = -lap with the wall / outflow kinds, in solvers.linalg,
//   to a relative tolerance with an absolute floor)
//   ins_correct         u = u* - grad x, p = x / dt (implicit: p += x / dt), and per block: the
//                       stability rate of the new field, the largest change from the reference
//                       velocity, the largest velocity and |div u|
//   ins_finish          one block: reductions, steady-state test, history row, AB2 dt memory
//
// Compile-time, from the driver (besides ADVECTION, and IMPLICIT, 0 or 1):
//   G       ghost layers of u and v
//   BX, BY  threads of a face block along x and y; BX * BY a power of two (the block
//           reductions), also the threads of ins_finish's one block
#include "prelude.h"
#include "reduce.h"
#include "clock.h"
#include "mac.h"

#if !defined(BX) || !defined(BY)
#error "BX and BY (the threads of a face block along x and y) must be defined"
#endif
#define THREADS (BX * BY)

// History row (double[HIST_COLS] per step, ring of `hist_rows`).
#define HIST_T 0
#define HIST_DT 1
#define HIST_FX 2        // force on the body (per unit depth), x
#define HIST_FY 3
#define HIST_CHANGE 4    // max |u^{n+1} - u_ref| / ((t - t_ref) max |u^{n+1}|), see ins_finish
#define HIST_DIV 5       // max |div u^{n+1}| (1/s)
#define HIST_ITER 6      // pressure iterations
#define HIST_STATUS 7    // pressure solve status (1 converged)
#define HIST_VISCOUS 8   // viscous stage iterations (0 with explicit viscosity)
#define HIST_COLS 9
// mac_finish.h reads the HIST_ columns.
#include "mac_finish.h"

// diag (double[8]): DIAG_* of mac_finish.h.
// dt_prev (real[1]): dt of the previous step (0: none yet, AB2 starts as forward Euler); real,
// so that the predictor has no FP64 arithmetic.

// -- boundaries --------------------------------------------------------------------------------

// Boundary faces and ghosts of one axis' two sides, one thread per line across the side (ghost
// lines included, so the corners take the values the other axis' sides left). axis 0: the x
// sides (lines j = -G .. ny + G), axis 1: the y sides (lines i = -G .. nx + G). inflow: normal
// velocity profiles, x_lo and x_hi (ny each) then y_lo and y_hi (nx each), times scale[0].
// fix 0 leaves the boundary-normal faces as they are (only ghosts are filled).
KERNEL void ins_boundary(real* __restrict__ u, real* __restrict__ v, int nx, int ny, int axis,
                         int kind_lo, int kind_hi, real wall_lo, real wall_hi,
                         const real* __restrict__ inflow, const real* __restrict__ scale, int fix)
{
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    const int m = blockIdx.x * blockDim.x + threadIdx.x - G;
    const int n = axis == 0 ? nx : ny, lines = axis == 0 ? ny : nx;
    if (m >= lines + 1 + G) return;
    // The normal array has lines -G .. lines - 1 + G, the tangential one a line more.
    const bool inside = m >= 0 && m < lines;
    const real* profile = inflow + (axis == 0 ? 0 : 2 * ny);
    const real s = scale[0];
    real* normal = axis == 0 ? u + iu(f, 0, m) : v + iv(f, m, 0);
    real* tangential = axis == 0 ? v + iv(f, 0, m) : u + iu(f, m, 0);
    const int sn = axis == 0 ? 1 : f.sv, st = axis == 0 ? 1 : f.su;
    if (m < lines + G) {
        fill_normal(normal, sn, n, true, kind_lo, inside ? profile[m] * s : R(0), fix && inside);
        fill_normal(normal, sn, n, false, kind_hi, inside ? profile[lines + m] * s : R(0),
                    fix && inside);
    }
    fill_tangential(tangential, st, n, true, kind_lo, wall_lo);
    fill_tangential(tangential, st, n, false, kind_hi, wall_hi);
}

// -- momentum predictor ------------------------------------------------------------------------

struct Momentum {
    real inv_dx, inv_dy, fx, fy;
};

// The advective rate -div(q u) + force of the velocity component q at its face c (q = u: along
// x, q = v: along y), and its Laplacian into *lap (the viscous rate is nu lap). Conservative:
// q q fluxes at the cell centres beside the face along its own axis (stride s_self, spacing
// 1 / inv_self), and q moved by the other component w at the corners across (stride s_cross),
// where w_lo and w_hi are w's means at the low and high corner.
DEVICE real momentum(const real* __restrict__ q, int c, int s_self, int s_cross, real w_lo,
                     real w_hi, real inv_self, real inv_cross, real force, real* lap)
{
    const real qc = q[c], qp = q[c + s_self], qm = q[c - s_self];
    const real qn = q[c + s_cross], qs = q[c - s_cross];
    const real ap = R(0.5) * (qc + qp), am = R(0.5) * (qm + qc);
    const real fp = ap * transported(qm, qc, qp, q[c + 2 * s_self], ap);
    const real fm = am * transported(q[c - 2 * s_self], qm, qc, qp, am);
    const real fn = w_hi * transported(qs, qc, qn, q[c + 2 * s_cross], w_hi);
    const real fs = w_lo * transported(q[c - 2 * s_cross], qs, qc, qn, w_lo);
    *lap = (qp - R(2) * qc + qm) * inv_self * inv_self
         + (qn - R(2) * qc + qs) * inv_cross * inv_cross;
    return -(fp - fm) * inv_self - (fn - fs) * inv_cross + force;
}

// At u face (i, j): v at the corners (i, j) and (i, j + 1) below and above it.
DEVICE real momentum_u(const real* __restrict__ u, const real* __restrict__ v, const Faces& f,
                       const Momentum& k, int i, int j, real* lap)
{
    const real lo = R(0.5) * (v[iv(f, i - 1, j)] + v[iv(f, i, j)]);
    const real hi = R(0.5) * (v[iv(f, i - 1, j + 1)] + v[iv(f, i, j + 1)]);
    return momentum(u, iu(f, i, j), 1, f.su, lo, hi, k.inv_dx, k.inv_dy, k.fx, lap);
}

// At v face (i, j): u at the corners (i, j) and (i + 1, j) left and right of it.
DEVICE real momentum_v(const real* __restrict__ u, const real* __restrict__ v, const Faces& f,
                       const Momentum& k, int i, int j, real* lap)
{
    const real lo = R(0.5) * (u[iu(f, i, j - 1)] + u[iu(f, i, j)]);
    const real hi = R(0.5) * (u[iu(f, i + 1, j - 1)] + u[iu(f, i + 1, j)]);
    return momentum(v, iv(f, i, j), f.sv, 1, lo, hi, k.inv_dy, k.inv_dx, k.fy, lap);
}


// AB2 weights of one step: a = 1 + dt / (2 dt_prev), c = -dt / (2 dt_prev) (forward Euler on
// the first step, dt_prev = 0).
struct Weights {
    real dt, c_new, c_old;
};

// One interior face of a velocity component: c its index in the component's arrays, r its row
// of the packed vector (mac.h; own: false for a copied face, mac_lines.h), a and lap its advective
// rate and Laplacian, grad the gradient of p^n there. Explicit viscosity: u* = u^n +
// dt AB2(a + nu lap), N = a + nu lap kept for the next step; implicit: the viscous stage's
// right-hand side dt (AB2(a) + nu lap - grad) into rhs[r] (0 for a copied face and at
// dt = 0), N = a kept; viscous.cu sets u*. A body's faces are predicted as the fluid's: its
// forcing (ins_immersed) overwrites them afterwards.
DEVICE void predict_face(const real* __restrict__ q, real* __restrict__ q_star,
                         real* __restrict__ n_old, real* __restrict__ rhs, int c, int r, bool own,
                         real a, real lap, real grad, const Weights& w, real nu)
{
#if IMPLICIT
    (void)q;
    (void)q_star;
    const real rate = w.c_new * a + w.c_old * n_old[c] + nu * lap - grad;
    const bool moving = w.dt > R(0);
    if (moving) n_old[c] = a;
    rhs[r] = moving && own ? w.dt * rate : R(0);
#else
    (void)rhs;
    (void)r;
    (void)own;
    (void)grad;
    if (!(w.dt > R(0))) {  // a step past the stop time: no change
        q_star[c] = q[c];
        return;
    }
    const real n = a + nu * lap;
    q_star[c] = q[c] + w.dt * (w.c_new * n + w.c_old * n_old[c]);
    n_old[c] = n;
#endif
}

// One thread per (i, j) for i <= nx, j <= ny: u face (i, j) when j < ny, v face (i, j) when
// i < nx, predicted by predict_face; boundary faces keep their value (outflow faces copy the
// face inside them) and, implicit, have a zero right-hand side; p^n(i, j) is p[p0 + i + ps j].
KERNEL void ins_predict(const real* __restrict__ u, const real* __restrict__ v,
                        real* __restrict__ us, real* __restrict__ vs,
                        real* __restrict__ nu_old, real* __restrict__ nv_old,
                        const real* __restrict__ p, int ps, int p0, const real* __restrict__ dt_now,
                        const real* __restrict__ dt_prev, real* __restrict__ rhs, int nx, int ny,
                        real inv_dx, real inv_dy, real nu, real fx, real fy, int kx_lo,
                        int kx_hi, int ky_lo, int ky_hi)
{
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    const Momentum k = {inv_dx, inv_dy, fx, fy};
#if !IMPLICIT
    (void)p, (void)ps, (void)p0;
#endif
    const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
    const real dt = dt_now[0];
    const real c_old = dt_prev[0] > R(0) ? -dt / (R(2) * dt_prev[0]) : R(0);
    const Weights w = {dt, R(1) - c_old, c_old};
    if (i <= nx && j < ny) {
        const int c = iu(f, i, j), r = packed_u(nx, i, j);
        if (boundary_face(i, nx, kx_lo, kx_hi)) {
            const bool out = (i == 0 ? kx_lo : kx_hi) == BC_OUTFLOW;
            us[c] = out ? u[c + (i == 0 ? 1 : -1)] : u[c];
#if IMPLICIT
            rhs[r] = R(0);
#endif
        } else {
            real lap, grad = R(0);
            const real a = momentum_u(u, v, f, k, i, j, &lap);
#if IMPLICIT
            face_gradient(p, i, nx, 1, p0 + ps * j, kx_lo, kx_hi, inv_dx, &grad);
#endif
            predict_face(u, us, nu_old, rhs, c, r, !copied_face(i, nx, kx_hi), a, lap, grad,
                         w, nu);
        }
    }
    if (i < nx && j <= ny) {
        const int c = iv(f, i, j), r = packed_v(nx, ny, i, j);
        if (boundary_face(j, ny, ky_lo, ky_hi)) {
            const bool out = (j == 0 ? ky_lo : ky_hi) == BC_OUTFLOW;
            vs[c] = out ? v[c + (j == 0 ? f.sv : -f.sv)] : v[c];
#if IMPLICIT
            rhs[r] = R(0);
#endif
        } else {
            real lap, grad = R(0);
            const real a = momentum_v(u, v, f, k, i, j, &lap);
#if IMPLICIT
            face_gradient(p, j, ny, ps, p0 + i, ky_lo, ky_hi, inv_dy, &grad);
#endif
            predict_face(v, vs, nv_old, rhs, c, r, !copied_face(j, ny, ky_hi), a, lap, grad,
                         w, nu);
        }
    }
}

// -- projection --------------------------------------------------------------------------------

// Divergence of cell (i, j) of a face field, in 1/s.
DEVICE real divergence(const real* __restrict__ u, const real* __restrict__ v, const Faces& f,
                       int i, int j, real inv_dx, real inv_dy)
{
    return (u[iu(f, i + 1, j)] - u[iu(f, i, j)]) * inv_dx
         + (v[iv(f, i, j + 1)] - v[iv(f, i, j)]) * inv_dy;
}

// The pressure system's right-hand side b = -div u* where continuity holds (fluid[c]; 0 in a
// body's cells, fv/immersed.cu) and initial guess: explicit viscosity x = dt p (the total
// pressure: the solve then starts from the incremental scheme's residual), implicit x = 0
// (the increment: u* already holds -dt grad p^n). One thread a cell.
KERNEL void ins_divergence(const real* __restrict__ us, const real* __restrict__ vs,
                           const real* __restrict__ p, const real* __restrict__ dt_now,
                           const int* __restrict__ fluid, real* __restrict__ b,
                           real* __restrict__ x, int nx, int ny, real inv_dx, real inv_dy)
{
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
    if (i >= nx || j >= ny) return;
    const int c = i + nx * j;
    b[c] = fluid[c] ? -divergence(us, vs, f, i, j, inv_dx, inv_dy) : R(0);
#if IMPLICIT
    (void)p;
    (void)dt_now;
    x[c] = R(0);
#else
    x[c] = dt_now[0] * p[c];
#endif
}

// u = u* - grad x, p = x / dt (implicit: p += x / dt), one thread per (i, j) as ins_predict.
// Cell (i, j) of x is x[x0 + i + xs j]: the pressure solve's vector (xs = nx, x0 = 0), or on a
// decomposed grid's block a copy padded by one halo cell (xs = nx + 2, x0 = nx + 3), which
// the gradients at halo sides read. Per block: the largest stability rate max(|u|/dx + |v|/dy,
// rate_floor) + diffusion_rate into rates[block] (the clock's dt comes from them), and into
// partials[k * blocks + block] the maxima of k = 0 |u_new - u_ref|, 1 |u_new|, 2 |div u_new|
// over the block's faces and fluid cells (as ins_divergence's). With refresh[0] set (by
// ins_finish), the new velocity becomes the reference (u_ref, v_ref).
BLOCK_KERNEL void ins_correct(real* __restrict__ u, real* __restrict__ v,
                              const real* __restrict__ us, const real* __restrict__ vs,
                              const real* __restrict__ x, int xs, int x0, real* __restrict__ p,
                              const real* __restrict__ dt_now, const int* __restrict__ fluid,
                              int nx, int ny, real inv_dx, real inv_dy, int kx_lo, int kx_hi,
                              int ky_lo, int ky_hi, real diffusion_rate, real rate_floor,
                              real* __restrict__ rates, real* __restrict__ partials,
                              real* __restrict__ u_ref, real* __restrict__ v_ref,
                              const int* __restrict__ refresh)
{
    __shared__ real s_rate[THREADS];
    __shared__ real s_change[THREADS];
    __shared__ real s_speed[THREADS];
    __shared__ real s_div[THREADS];
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    PHASE {
        const int i = blockIdx.x * BX + threadIdx.x, j = blockIdx.y * BY + threadIdx.y;
        const int t = threadIdx.y * BX + threadIdx.x;
        real change = R(0), speed = R(0), au = R(0), av = R(0), div = R(0);
        const bool moving = dt_now[0] > R(0);  // else a step past the stop time: no change
        if (i <= nx && j < ny) {
            const int c = iu(f, i, j);
            real grad = R(0);
            const bool has = face_gradient(x, i, nx, 1, x0 + xs * j, kx_lo, kx_hi, inv_dx, &grad);
            const real value = !moving ? u[c] : has ? us[c] - grad : us[c];
            change = fabs(value - u_ref[c]);
            if (refresh[0]) u_ref[c] = value;
            au = fabs(value);
            u[c] = value;
        }
        if (i < nx && j <= ny) {
            const int c = iv(f, i, j);
            real grad = R(0);
            const bool has = face_gradient(x, j, ny, xs, x0 + i, ky_lo, ky_hi, inv_dy, &grad);
            const real value = !moving ? v[c] : has ? vs[c] - grad : vs[c];
            change = fmax(change, fabs(value - v_ref[c]));
            if (refresh[0]) v_ref[c] = value;
            av = fabs(value);
            v[c] = value;
        }
        if (i < nx && j < ny && moving) {
#if IMPLICIT
            p[i + nx * j] += x[x0 + i + xs * j] / dt_now[0];
#else
            p[i + nx * j] = x[x0 + i + xs * j] / dt_now[0];
#endif
            // The new divergence from this thread's corrected faces and the corrections of
            // the cell's east and north faces, recomputed here (the same bits as their owners).
            real ge = R(0), gn = R(0);
            const bool he = face_gradient(x, i + 1, nx, 1, x0 + xs * j, kx_lo, kx_hi, inv_dx, &ge);
            const bool hn = face_gradient(x, j + 1, ny, xs, x0 + i, ky_lo, ky_hi, inv_dy, &gn);
            const real ue = he ? us[iu(f, i + 1, j)] - ge : us[iu(f, i + 1, j)];
            const real vn = hn ? vs[iv(f, i, j + 1)] - gn : vs[iv(f, i, j + 1)];
            div = fluid[i + nx * j] ? fabs((ue - u[iu(f, i, j)]) * inv_dx
                                           + (vn - v[iv(f, i, j)]) * inv_dy) : R(0);
        }
        // A non-finite velocity or divergence (NaN, which fmax would skip, or an overflow)
        // makes every maximum of the block infinite: finish_dt then stops the run as
        // diverged, and ins_finish flags the clock and never finds the field steady.
        const real rate = au * inv_dx + av * inv_dy;
        const bool finite = rate < REAL_INF && div < REAL_INF;
        speed = fmax(au, av);
        s_rate[t] = finite ? fmax(rate, rate_floor) + diffusion_rate : REAL_INF;
        s_change[t] = finite ? change : REAL_INF;
        s_speed[t] = finite ? speed : REAL_INF;
        s_div[t] = finite ? div : REAL_INF;
    }
    block_max(s_rate);
    block_max(s_change);
    block_max(s_speed);
    block_max(s_div);
    PHASE {
        if (threadIdx.x == 0 && threadIdx.y == 0) {
            const int blocks = gridDim.x * gridDim.y, block = blockIdx.y * gridDim.x + blockIdx.x;
            rates[block] = s_rate[0];
            partials[block] = s_change[0];
            partials[blocks + block] = s_speed[0];
            partials[2 * blocks + block] = s_div[0];
        }
    }
}

// -- end of step ---------------------------------------------------------------------------------

// One block of THREADS: the step's maxima and force from the block partials (fixed order; the
// force's from ins_immersed, force_blocks of them, none without a body), one history row at
// the step's index, the pressure solve's outcome (krylov state ITER = state[4], done: 1
// converged), and the steady-state test. That compares the velocity with a reference
// taken at t_ref: rate = max |u - u_ref| / ((t - t_ref) max |u|), and once t - t_ref reaches
// `window` the next step makes its velocity the new reference; the run is steady when a whole
// window's rate is below `steady_tol`. Over a window rather than one step, so that jitter of
// the solves' tolerance (not a change of the flow) does not set a floor of rtol / dt. A
// non-finite field sets the clock's divergence status (CTRL_STATUS) and is never steady.
REDUCTION BLOCK_KERNEL void ins_finish(const real* __restrict__ partials, int blocks,
                                       const real* __restrict__ force_partials,
                                       int force_blocks, double* __restrict__ ctrl,
                                       const double* __restrict__ krylov_state,
                                       const int* __restrict__ krylov_done,
                                       const double* __restrict__ viscous_state,
                                       const int* __restrict__ viscous_done,
                                       double* __restrict__ diag, real* __restrict__ dt_prev,
                                       double* __restrict__ history,
                                       int hist_rows, double cell_area, double steady_tol,
                                       double window, int* __restrict__ refresh)
{
    __shared__ real s_change[THREADS];
    __shared__ real s_speed[THREADS];
    __shared__ real s_div[THREADS];
    __shared__ double s_fx[THREADS];
    __shared__ double s_fy[THREADS];
    PHASE {
        const int t = threadIdx.x;
        fold_step_maxima(partials, blocks, t, s_change, s_speed, s_div);
        double fx = 0.0, fy = 0.0;
        for (int k = t; k < force_blocks; k += THREADS) {
            fx += (double)force_partials[k];
            fy += (double)force_partials[force_blocks + k];
        }
        s_fx[t] = fx;
        s_fy[t] = fy;
    }
    block_max(s_change);
    block_max(s_speed);
    block_max(s_div);
    block_sum(s_fx);
    block_sum(s_fy);
    PHASE {
        if (threadIdx.x == 0) {
            double* row = record_step(ctrl, diag, history, hist_rows, s_change[0], s_speed[0],
                                      s_div[0], krylov_state, krylov_done, viscous_state,
                                      viscous_done, dt_prev, refresh, steady_tol, window);
            if (row) {
                row[HIST_FX] = s_fx[0] * cell_area;
                row[HIST_FY] = s_fy[0] * cell_area;
            }
        }
    }
}
