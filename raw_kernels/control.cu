// Time-step control shared by the explicit solvers. All of it runs on the device, so a captured
// step never waits on the host.
//
// ctrl (double[CTRL_SIZE]): the run's clock, read by the host only between graph replays.
#include "prelude.h"
#include "reduce.h"

#define CTRL_T 0       // simulated time
#define CTRL_DT 1      // the last step's dt (0 once t has reached t_stop)
#define CTRL_T_STOP 2  // steps stop here: the next output time or the end time
#define CTRL_STEPS 3   // steps taken
#define CTRL_STATUS 4  // 0 running, 1 non-finite or non-physical state found

// Reduce the per-block maxima of the stability rate (1/s) written by a solver's rate kernel,
// take dt = cfl / rate, clip it to land exactly on t_stop, and advance the clock. Launched as
// one block of 32 to 1024 threads, a power of two (finish_threads in clock.py). Nothing later
// in a step reads t, so t moves forward here already.
// parity flips with every step taken: a solver that alternates its state between two buffers
// reads from it which one the step writes (a step with dt = 0 writes nothing and flips nothing).
REDUCTION BLOCK_KERNEL void finish_dt(const real* __restrict__ rates, int n,
                                      double* __restrict__ ctrl, real* __restrict__ dt_out,
                                      int* __restrict__ parity, double cfl)
{
    __shared__ real s[1024];
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
