// Time-step control shared by the explicit solvers. All of it runs on the device, so a captured
// step never waits on the host.
//
// ctrl (double[CTRL_SIZE], laid out in clock.h): the run's clock, read by the host only between
// graph replays.
//
// Compile-time (from solvers/backend/clock.py):
//   FINISH_THREADS  the most threads of the one block of these kernels (their shared arrays)
#include "prelude.h"
#include "reduce.h"
#include "clock.h"

#ifndef FINISH_THREADS
#error "FINISH_THREADS (the most threads of a finish_dt block) must be defined"
#endif

// Reduce the per-block maxima of the stability rate (1/s) written by a solver's rate kernel,
// take dt = cfl / rate, land it on t_stop (landed_step in clock.h) and advance the clock.
// Launched as one block of 32 to FINISH_THREADS threads, a power of two (finish_threads in
// clock.py). Nothing later in a step reads t, so t moves forward here already.
// parity flips with every step taken: a solver that alternates its state between two buffers
// reads from it which one the step writes (a step with dt = 0 writes nothing and flips nothing).
REDUCTION BLOCK_KERNEL void finish_dt(const real* __restrict__ rates, int n,
                                      double* __restrict__ ctrl, real* __restrict__ dt_out,
                                      int* __restrict__ parity, double cfl)
{
    __shared__ real s[FINISH_THREADS];
    // The clock, read before the reduction so that its loads overlap the rates'.
    __shared__ double clock[3];  // t, t_stop, status
    PHASE {
        if (threadIdx.x == 0) {
            clock[0] = ctrl[CTRL_T];
            clock[1] = ctrl[CTRL_T_STOP];
            clock[2] = ctrl[CTRL_STATUS];
        }
    }
    partials_max(rates, n, s);
    PHASE {
        if (threadIdx.x == 0) {
            const double rate = (double)s[0], t_stop = clock[1];
            ClockStep step = {0.0, clock[0]};
            if (!(rate < (double)REAL_INF)) {
                ctrl[CTRL_STATUS] = 1.0;
            } else if (step.t < t_stop && clock[2] == 0.0) {
                step = landed_step(step.t, t_stop, cfl / rate);
                ctrl[CTRL_STEPS] += 1.0;
                parity[0] ^= 1;
            }
            ctrl[CTRL_T] = step.t;
            ctrl[CTRL_DT] = step.dt;
            dt_out[0] = (real)step.dt;
        }
    }
}

// The next dt of a state the host has just set, for a solver whose step kernels take their dt
// from the clock and advance it themselves (one-launch steps, see clock.h): the per-block
// maxima of the state's stability rate reduced as in finish_dt, and cfl / rate left in ctrl
// (or the run stopped on a non-finite rate). Launched as finish_dt is.
REDUCTION BLOCK_KERNEL void next_dt(const real* __restrict__ rates, int n,
                                    double* __restrict__ ctrl, real cfl)
{
    __shared__ real s[FINISH_THREADS];
    partials_max(rates, n, s);
    PHASE {
        if (threadIdx.x == 0) record_next_dt(ctrl, s[0], cfl);
    }
}

// The largest of rates[0 .. n) left in rates[0]: a decomposed grid's block offers that one value
// to the other ranks' maximum, which then goes back into rates[0] before finish_dt. Launched as
// finish_dt is.
BLOCK_KERNEL void fold_rates(real* rates, int n)
{
    __shared__ real s[FINISH_THREADS];
    partials_max(rates, n, s);
    PHASE {
        if (threadIdx.x == 0) rates[0] = s[0];
    }
}
