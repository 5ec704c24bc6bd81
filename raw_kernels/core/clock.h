// The clock of a run: ctrl, a double[CTRL_SIZE] array in device memory that the time-step
// kernels (control.cu's finish_dt, fe/heat.cu's heat_clock, and the one-launch step kernels
// through close_step below) advance and the host reads only between graph replays, and the
// rule by which they advance it. solvers/backend/clock.py reads the indices from this file.
#pragma once
#include "prelude.h"
#include "reduce.h"

#define CTRL_T 0        // simulated time
#define CTRL_DT 1       // the last step's dt (0 once t has reached t_stop)
#define CTRL_T_STOP 2   // steps stop here: the next output time or the end time
#define CTRL_STEPS 3    // steps taken
#define CTRL_STATUS 4   // 0 running, 1 non-finite or non-physical state found
#define CTRL_NEXT_DT 5  // one-launch steps: cfl / the state's stability rate, before landing
#define CTRL_SIZE 8     // doubles of ctrl (the rest unused)

// A step may stretch by this fraction to land on t_stop: a remainder left by the rounding of
// t is never a step of its own.
#define LANDING_SLACK 1e-6

// A step of the clock: its dt and the time it ends at.
struct ClockStep {
    double dt, t;
};

// The landing rule, the one place it is written: a step of the CFL-limited `dt` from t toward
// t_stop (t < t_stop) reaches t_stop exactly, in one step when it lies within dt, in two equal
// steps when it lies within 2 dt, so that no step is much shorter than the one before it (a
// multistep scheme extrapolates with their ratio, and amplifies the noise of a tiny step by it).
DEVICE ClockStep landed_step(double t, double t_stop, double dt)
{
    ClockStep step;
    const double remaining = t_stop - t;
    if (dt * (1.0 + LANDING_SLACK) >= remaining) {
        step.dt = remaining;
        step.t = t_stop;
    } else {
        step.dt = 2.0 * dt > remaining ? 0.5 * remaining : dt;
        step.t = t + step.dt;
    }
    return step;
}

// The largest of partials[0 .. count) (per-block maxima of a stability rate) left in s[0]
// (s: a __shared__ real per thread of the block; every thread calls it). The reads are
// volatile: in a one-launch step the last block reads what the other blocks just wrote.
DEVICE void partials_max(const real* partials, int count, real* s)
{
    PHASE {
        const int t = (int)(threadIdx.y * blockDim.x + threadIdx.x);
        real m = R(0);
        for (int k = t; k < count; k += (int)(blockDim.x * blockDim.y))
            m = fmax(m, ((volatile const real*)partials)[k]);
        s[t] = m;
    }
    block_max(s);
}

// The next step's dt before landing, cfl / rate, from the largest stability rate of a state;
// a non-finite rate (a non-finite or non-physical state) stops the run instead.
DEVICE void record_next_dt(double* ctrl, real rate, real cfl)
{
    if (rate < REAL_INF) ctrl[CTRL_NEXT_DT] = (double)cfl / (double)rate;
    else ctrl[CTRL_STATUS] = 1.0;
}

// One-launch steps: a step is one kernel launch that reads its dt from
// ctrl at its start (step_begins) and advances the clock at its end, in the last of its blocks
// to finish (close_step). No block writes ctrl before the last one has read it, so every block
// computes the same dt, and a stop time the host changes between replays takes effect in the
// next step. parity names the buffer that holds the state between steps; close_step flips it.

// Whether a one-launch step is taken (t < t_stop, the run not stopped), with its dt (the
// clock's next dt landed on t_stop) in *dt, else 0. With `record` (one block of the launch)
// a step not taken leaves dt = 0 in ctrl, as finish_dt does.
REDUCTION_DEVICE int step_begins(double* ctrl, int record, real* dt)
{
    const double t = ctrl[CTRL_T], t_stop = ctrl[CTRL_T_STOP];
    if (t < t_stop && ctrl[CTRL_STATUS] == 0.0) {
        *dt = (real)landed_step(t, t_stop, ctrl[CTRL_NEXT_DT]).dt;
        return 1;
    }
    if (record) ctrl[CTRL_DT] = 0.0;
    *dt = R(0);
    return 0;
}

// The end of a step taken, in one thread: the clock moves by the step step_begins found (from
// the same ctrl), the step is counted, parity flips, and the next dt comes from `rate`, the
// largest stability rate of the new state.
REDUCTION_DEVICE void end_step(double* ctrl, int* parity, real rate, real cfl)
{
    const ClockStep step = landed_step(ctrl[CTRL_T], ctrl[CTRL_T_STOP], ctrl[CTRL_NEXT_DT]);
    ctrl[CTRL_T] = step.t;
    ctrl[CTRL_DT] = step.dt;
    ctrl[CTRL_STEPS] += 1.0;
    parity[0] ^= 1;
    record_next_dt(ctrl, rate, cfl);
}

// The epilogue of a one-launch step kernel, called by every thread of every block that took
// the step, with the threads' largest stability rates of the new state in s (a __shared__
// real per thread): the block's maximum goes to rates[block], and the last block to arrive
// reduces them all (in a fixed order: a maximum is exact) and ends the step. `tickets`: 0
// before the launch and after it; `last`: a __shared__ int.
DEVICE void close_step(real* s, real* rates, int* tickets, int* last, double* ctrl, int* parity,
                       real cfl)
{
    block_max(s);
    PHASE {
        if (threadIdx.x == 0 && threadIdx.y == 0)
            rates[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = s[0];
    }
    if (!last_block_arrived(tickets, last)) return;
    partials_max(rates, (int)(gridDim.x * gridDim.y * gridDim.z), s);
    PHASE {
        if (threadIdx.x == 0 && threadIdx.y == 0) end_step(ctrl, parity, s[0], cfl);
    }
}
