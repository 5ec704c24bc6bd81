// Transient heat, theta scheme in increment form (solvers/fe/heat.py): each step solves
//     (M + theta dt K) d = dt (F - K u^n),   u^{n+1} = u^n + d,
// which is (M + theta dt K) u^{n+1} = (M - (1 - theta) dt K) u^n + dt F rearranged, with d = g -
// u^n on the Dirichlet dofs. Every kernel reads t and dt from the device, so a captured step
// (clock, matrix, right-hand side, CG solve, update) replays with no host involvement.
//
// The fixed step dt is clipped to land exactly on the clock's stop time (an output or the end
// time); the system matrix is rebuilt only in a step whose dt differs from the one it holds
// (the flag `rebuild`), so with output times on multiples of dt it is assembled once.
#include "prelude.h"
#include "clock.h"

#define LANDING 1e-9   // a stop time within LANDING * dt of a whole step is reached by it

// One thread: this step's dt (written to dt_out): dt, or the time left to t_stop when that is
// shorter, or 0 once t_stop is reached (the step is then a no-op); advances the clock. A stop
// time within LANDING * dt of t + dt takes the full dt (the matrix stays) and sets t = t_stop.
// times = {t^{n+1}, t^n + theta dt}: when Dirichlet values and loads that change in time are
// evaluated (values.cu).
REDUCTION KERNEL void heat_clock(double* __restrict__ ctrl, double* __restrict__ matrix_dt,
                                 int* __restrict__ rebuild, real* __restrict__ dt_out,
                                 real* __restrict__ times, double dt, double theta)
{
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    const double t = ctrl[CTRL_T], stop = ctrl[CTRL_T_STOP];
    const double left = stop - t;
    double step = 0.0;
    if (left > 0.0 && ctrl[CTRL_STATUS] == 0.0) {
        const bool lands = left <= dt * (1.0 + LANDING);
        step = lands && left < dt * (1.0 - LANDING) ? left : dt;
        ctrl[CTRL_T] = lands ? stop : t + dt;
        ctrl[CTRL_STEPS] += 1.0;
    }
    ctrl[CTRL_DT] = step;
    times[0] = (real)ctrl[CTRL_T];
    times[1] = (real)(t + theta * step);
    rebuild[0] = step > 0.0 && step != matrix_dt[0] ? 1 : 0;
    if (rebuild[0]) matrix_dt[0] = step;
    dt_out[0] = (real)step;
}

// When rebuild[0]: full = mass + theta dt stiffness, and values = full with the rows and
// columns of Dirichlet dofs (mask) cut except the diagonal (the rule of system.cu's
// fe_dirichlet_matrix). One thread per row.
KERNEL void heat_matrix(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                        const int* __restrict__ mask, const real* __restrict__ mass,
                        const real* __restrict__ stiffness, const real* __restrict__ dt,
                        const int* __restrict__ rebuild, real theta, real* __restrict__ full,
                        real* __restrict__ values, int n)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || rebuild[0] == 0) return;
    const real scale = theta * dt[0];
    const bool constrained_row = mask[row] != 0;
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k) {
        const int col = columns[k];
        const real a = mass[k] + scale * stiffness[k];
        full[k] = a;
        values[k] = col == row || (!constrained_row && mask[col] == 0) ? a : R(0);
    }
}

// b = dt (load - K u) on every row (fe_dirichlet_rhs then lifts the Dirichlet increments
// g := dirichlet - u); a no-op step (dt = 0) gets b = 0, g = 0 and the initial guess x = 0, so
// CG stops at once with d = 0. Otherwise x keeps the last increment as the initial guess.
KERNEL void heat_rhs(const int* __restrict__ row_ptr, const int* __restrict__ columns,
                     const real* __restrict__ stiffness, const real* __restrict__ u,
                     const real* __restrict__ load, const int* __restrict__ mask,
                     const real* __restrict__ dirichlet, const real* __restrict__ dt,
                     real* __restrict__ b, real* __restrict__ g, real* __restrict__ x, int n)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const real h = dt[0];
    real ku = R(0);
    for (int k = row_ptr[row]; k < row_ptr[row + 1]; ++k)
        ku += stiffness[k] * u[columns[k]];
    b[row] = h * (load[row] - ku);
    g[row] = mask[row] != 0 && h > R(0) ? dirichlet[row] - u[row] : R(0);
    if (h == R(0)) x[row] = R(0);
}

// u += d; thread 0 keeps the first failed solve's status (the solver's done flag: 2 maxiter,
// 3 breakdown, 4 refinement stalled above rtol) in failed[0] for the host to report between
// replays.
KERNEL void heat_update(real* __restrict__ u, const real* __restrict__ d,
                        const int* __restrict__ done, int* __restrict__ failed, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0 && done[0] != 1 && failed[0] == 0) failed[0] = done[0];
    if (i >= n) return;
    u[i] += d[i];
}
