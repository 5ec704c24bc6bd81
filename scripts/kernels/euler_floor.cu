// The floor of an Euler stage, for scripts/bench_euler.py: a kernel with the arguments of
// euler_stage_tile (so that an eager launch costs the host what a stage's does) that takes dt
// from the clock as a stage does (begin_step, clock.h), copies the 4 values of each cell from u
// to out, one thread a cell, and as the last stage ends the step (close_step) with a rate of 1
// for every cell. No arithmetic, no halo: a step of these shows what a graph of the step's
// kernels costs without their work, and how that compares with their eager launches.
// Compiled from here by Backend.module(path, ...): includes resolve in this folder, then in
// raw_kernels/core/, so the scheme's header is named by its path from here.
//
// Compile-time (besides the scheme's): COPY_THREADS, the threads of a block (COPY_BLOCK of
// bench_euler.py).
#include "../../raw_kernels/fv/euler_scheme.h"
#include "clock.h"

#ifndef COPY_THREADS
#error "COPY_THREADS (threads of a copy block) must be defined"
#endif

BLOCK_KERNEL void euler_copy_stage(real* state_a, real* state_b, real* scratch, int* parity,
                                   int u_role, int out_role, double* ctrl, const double* cfl,
                                   real* rates, int* tickets, const real* __restrict__ inflow,
                                   int nx, int ny, int bc_xlo, int bc_xhi, int bc_ylo,
                                   int bc_yhi, real inv_dx, real inv_dy, real gamma,
                                   real inv_gm1, real w, int last_stage)
{
    __shared__ real block_rates[COPY_THREADS];
    __shared__ real step_dt[1];
    __shared__ int taken[1], last[1];
    (void)inflow, (void)bc_xlo, (void)bc_xhi, (void)bc_ylo, (void)bc_yhi;
    (void)inv_dx, (void)inv_dy, (void)gamma, (void)inv_gm1, (void)w;
    if (!begin_step(ctrl, step_dt, taken)) return;
    const StageBuffers buf = stage_buffers(u_role, out_role, parity, state_a, state_b, scratch);
    const int ncell = nx * ny;
    PHASE {
        const int c = (int)(blockIdx.x * blockDim.x + threadIdx.x);
        if (c < ncell) {
            real cons[NVAR];
            load_cell(buf.u, ncell, c, cons);
            for (int v = 0; v < NVAR; ++v) buf.out[v * ncell + c] = cons[v];
        }
        block_rates[threadIdx.x] = R(1);
    }
    if (last_stage) close_step(block_rates, rates, tickets, last, ctrl, parity, cfl);
}
