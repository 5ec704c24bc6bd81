// The step-level bookkeeping of the MAC incompressible kernels, shared by the 2D
// (incompressible.cu) and 3D (incompressible3d.cu) steps: the inflow ramp at the step's start,
// and for ins_finish / ins3_finish the diag layout, the change rate of the steady-state test
// and the updates after a step's history row is written.
// Needs clock.h (CTRL_T) before it, IMPLICIT (0 or 1) defined, and the history row's columns
// HIST_T, HIST_DT, HIST_CHANGE, HIST_DIV, HIST_ITER, HIST_STATUS, HIST_VISCOUS and HIST_COLS.
#pragma once

// The inflow ramp factor at time t: 1/2 (1 - cos(pi t / ramp)) until t = ramp, then 1.
REDUCTION KERNEL void ins_boundary_scale(const double* __restrict__ ctrl, real* __restrict__ scale,
                                         double ramp)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const double t = ctrl[CTRL_T];
    scale[0] = (real)(ramp > 0.0 && t < ramp ? 0.5 * (1.0 - cos(3.141592653589793 * t / ramp))
                                             : 1.0);
}

// diag (double[8])
#define DIAG_STEADY 0       // 1 once the change rate fell below the tolerance
#define DIAG_UNCONVERGED 1  // pressure solves that ended without converging
#define DIAG_MAX_ITER 2     // most pressure iterations of one step
#define DIAG_ROWS 3         // history rows written so far
#define DIAG_T_REF 4        // time of the reference velocity of the steady-state test
#define DIAG_VISCOUS_UNCONVERGED 5  // implicit viscous stage solves that ended unconverged

// The steady-state test's rate max |u - u_ref| / ((t - t_ref) max |u|) of this step.
DEVICE double change_rate(const double* __restrict__ ctrl, const double* __restrict__ diag,
                          real change, real max_speed)
{
    const double speed = (double)max_speed;
    const double span = ctrl[CTRL_T] - diag[DIAG_T_REF];
    return speed > 0.0 ? (double)change / (span * speed) : 0.0;
}

// After a step's history row: count the row; once t - t_ref reaches `window` the next step
// takes its velocity as the new reference (refresh), and a step that did is steady when its
// rate is below steady_tol; the pressure solve's outcome; dt for the next step's AB2 weights.
DEVICE void close_step_record(const double* __restrict__ ctrl, double* __restrict__ diag,
                              real* __restrict__ dt_prev, int* __restrict__ refresh, double rate,
                              bool finite, int iterations, int status, double steady_tol,
                              double window, double dt)
{
    const double span = ctrl[CTRL_T] - diag[DIAG_T_REF];
    diag[DIAG_ROWS] += 1.0;
    if (refresh[0]) {  // this step closed a window and took the new reference
        if (finite && rate < steady_tol) diag[DIAG_STEADY] = 1.0;
        diag[DIAG_T_REF] = ctrl[CTRL_T];
        refresh[0] = 0;
    } else if (span >= window) {
        refresh[0] = 1;
    }
    if (status != 1) diag[DIAG_UNCONVERGED] += 1.0;
    diag[DIAG_MAX_ITER] = fmax(diag[DIAG_MAX_ITER], (double)iterations);
    dt_prev[0] = (real)dt;
}

// The implicit viscous stage's iterations (Krylov state ITER = state[4]) into row[column] and
// its unconverged solve into diag; 0 with explicit viscosity (IMPLICIT 0).
DEVICE void record_viscous(double* __restrict__ row, int column, double* __restrict__ diag,
                           const double* __restrict__ viscous_state,
                           const int* __restrict__ viscous_done)
{
#if IMPLICIT
    row[column] = viscous_state[4];
    if (viscous_done[0] != 1) diag[DIAG_VISCOUS_UNCONVERGED] += 1.0;
#else
    (void)diag;
    (void)viscous_state;
    (void)viscous_done;
    row[column] = 0.0;
#endif
}

// The per-block maxima the correction left (partials: change, speed and divergence, `blocks`
// each) folded over thread t's share into s_change[t], s_speed[t], s_div[t].
DEVICE void fold_step_maxima(const real* __restrict__ partials, int blocks, int t,
                             real* s_change, real* s_speed, real* s_div)
{
    real change = R(0), speed = R(0), div = R(0);
    for (int k = t; k < blocks; k += THREADS) {
        change = fmax(change, partials[k]);
        speed = fmax(speed, partials[blocks + k]);
        div = fmax(div, partials[2 * blocks + k]);
    }
    s_change[t] = change;
    s_speed[t] = speed;
    s_div[t] = div;
}

// Thread 0 of ins_finish / ins3_finish, the step's maxima reduced. A non-finite field (the
// correction left infinite maxima) has diverged: the clock's status says so at once (finish_dt
// would at the next step), and it is never steady. A step before the stop time (dt > 0) gets
// its history row's shared columns, the pressure and viscous solves' outcomes and the
// steady-state bookkeeping (close_step_record); the row is returned for the solver's own
// columns (nullptr for a step after the stop time, which changes and records nothing).
DEVICE double* record_step(double* __restrict__ ctrl, double* __restrict__ diag,
                           double* __restrict__ history, int hist_rows, real change, real speed,
                           real div, const double* __restrict__ krylov_state,
                           const int* __restrict__ krylov_done,
                           const double* __restrict__ viscous_state,
                           const int* __restrict__ viscous_done, real* __restrict__ dt_prev,
                           int* __restrict__ refresh, double steady_tol, double window)
{
    const double dt = ctrl[CTRL_DT];
    const bool finite = speed < REAL_INF && change < REAL_INF;
    if (!finite) ctrl[CTRL_STATUS] = 1.0;
    if (!(dt > 0.0)) return nullptr;
    const double rate = change_rate(ctrl, diag, change, speed);
    const int iterations = (int)krylov_state[4];
    const int status = krylov_done[0];
    double* row = history + HIST_COLS * ((long long)diag[DIAG_ROWS] % hist_rows);
    row[HIST_T] = ctrl[CTRL_T];
    row[HIST_DT] = dt;
    row[HIST_CHANGE] = rate;
    row[HIST_DIV] = (double)div;
    row[HIST_ITER] = (double)iterations;
    row[HIST_STATUS] = (double)status;
    record_viscous(row, HIST_VISCOUS, diag, viscous_state, viscous_done);
    close_step_record(ctrl, diag, dt_prev, refresh, rate, finite, iterations, status, steady_tol,
                      window, dt);
    return row;
}
