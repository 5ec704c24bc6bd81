// The floor of an Euler stage, for scripts/bench_euler.py: a kernel with the arguments of
// euler_stage_tile (so that an eager launch costs the host what a stage's does) that reads dt
// and the buffer parity as a stage does and copies the 4 values of each cell from u to out,
// one thread a cell. No arithmetic, no halo: a step of these shows what a graph of the step's
// kernels costs without their work, and how that compares with their eager launches.
// Compiled from here by Backend.module(path, ...): includes resolve in this folder, then in
// raw_kernels/core/, so the scheme's header is named by its path from here.
#include "../../raw_kernels/fv/euler_scheme.h"

BLOCK_KERNEL void euler_copy_stage(real* state_a, real* state_b, real* scratch,
                                   const int* __restrict__ parity, int u_role, int out_role,
                                   const real* __restrict__ dt_dev,
                                   const real* __restrict__ inflow, real* __restrict__ rates,
                                   int nx, int ny, int bc_xlo, int bc_xhi, int bc_ylo,
                                   int bc_yhi, real inv_dx, real inv_dy, real gamma,
                                   real inv_gm1, real w, int write_rates)
{
    (void)inflow, (void)rates, (void)bc_xlo, (void)bc_xhi, (void)bc_ylo, (void)bc_yhi;
    (void)inv_dx, (void)inv_dy, (void)gamma, (void)inv_gm1, (void)w, (void)write_rates;
    const real dt = dt_dev[0];
    if (dt == R(0)) return;
    const StageBuffers buf = stage_buffers(u_role, out_role, parity, state_a, state_b, scratch);
    const int ncell = nx * ny;
    PHASE {
        const int c = (int)(blockIdx.x * blockDim.x + threadIdx.x);
        if (c < ncell) {
            real cons[NVAR];
            load_cell(buf.u, ncell, c, cons);
            for (int v = 0; v < NVAR; ++v) buf.out[v * ncell + c] = cons[v];
        }
    }
}
