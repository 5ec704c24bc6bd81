// The buffers of the Shu-Osher SSP Runge-Kutta stages of the Euler solvers, structured
// (euler_scheme.h) and unstructured (euler_unstructured.cu).
#pragma once
#include "prelude.h"

// The buffers of a Runge-Kutta stage, by role: the state alternates between two buffers
// (state_a, state_b). finish_dt flipped `parity` when the step began, so U^n is in the buffer
// parity does not name and U^(n+1) goes to the one it names; scratch holds an intermediate
// stage. No stage writes a buffer it reads, so a stage's loads never wait on its own stores
// (in place over U^n the last stage was slower: docs/euler_performance.md).
#define ROLE_OLD 0      // U^n
#define ROLE_NEW 1      // U^(n+1), and the first stage of SSP-RK3
#define ROLE_SCRATCH 2  // the other intermediate stage
DEVICE real* stage_buffer(int role, int parity, real* state_a, real* state_b, real* scratch)
{
    if (role == ROLE_SCRATCH) return scratch;
    return (role == ROLE_NEW) == (parity != 0) ? state_b : state_a;
}

// A stage's buffers in this step: it reads u (role u_role) and u0 and writes out (out_role).
struct StageBuffers {
    const real* u;
    const real* u0;
    real* out;
};

DEVICE StageBuffers stage_buffers(int u_role, int out_role, const int* parity, real* state_a,
                                  real* state_b, real* scratch)
{
    const int step_parity = parity[0];
    StageBuffers b;
    b.u = stage_buffer(u_role, step_parity, state_a, state_b, scratch);
    b.u0 = stage_buffer(ROLE_OLD, step_parity, state_a, state_b, scratch);
    b.out = stage_buffer(out_role, step_parity, state_a, state_b, scratch);
    return b;
}
