// Time-step control shared by the explicit solvers. All of it runs on the device, so a captured
// step never waits on the host.
//
// ctrl (double[CTRL_SIZE], laid out in clock.h): the run's clock, read by the host only between
// graph replays.
//
// Compile-time (from solvers/backend/clock.py):
//   FINISH_THREADS  the most threads of finish_dt's one block (the size of its shared array)
#include "prelude.h"
#include "reduce.h"
#include "clock.h"

#ifndef FINISH_THREADS
#error "FINISH_THREADS (the most threads of a finish_dt block) must be defined"
#endif

// Reduce the per-block maxima of the stability rate (1/s) written by a solver's rate kernel,
// take dt = cfl / rate, clip it to land exactly on t_stop, and advance the clock. Launched as
// one block of 32 to FINISH_THREADS threads, a power of two (finish_threads in clock.py).
// Nothing later in a step reads t, so t moves forward here already.
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
        real m = R(0);
        for (int k = threadIdx.x; k < n; k += blockDim.x) m = fmax(m, rates[k]);
        s[threadIdx.x] = m;
    }
    block_max(s);
    PHASE {
        if (threadIdx.x == 0) {
            const double rate = (double)s[0], t_stop = clock[1];
            double t = clock[0];
            double dt = 0.0;
            if (!(rate < (double)REAL_INF)) {
                ctrl[CTRL_STATUS] = 1.0;
            } else if (t < t_stop && clock[2] == 0.0) {
                dt = cfl / rate;
                if (t + dt >= t_stop) {
                    dt = t_stop - t;
                    t = t_stop;
                } else {
                    t += dt;
                }
                ctrl[CTRL_STEPS] += 1.0;
                parity[0] ^= 1;
            }
            ctrl[CTRL_T] = t;
            ctrl[CTRL_DT] = dt;
            dt_out[0] = (real)dt;
        }
    }
}
