// The device state of a Krylov solve (solvers/linalg/krylov.py), shared by krylov.cu and the
// operators' fused CG kernels (stencil_cg.cu).
#pragma once

// state (double[STATE_SIZE])
#define RZ 0        // r.z of the current residual
#define RR 1        // r.r
#define BB 2        // b.b
#define TOL2 3      // rtol^2: converged when r.r <= max(rtol^2 b.b, atol^2)
#define ITER 4      // iterations done
#define MAXITER 5
#define ATOL2 6     // atol^2, an absolute floor (0: none)
// done (int[1]), apart so that the vector kernels test it without double arithmetic:
// 0 running, 1 converged, 2 maxiter reached, 3 breakdown (p.q <= 0: A not positive definite).
// coef (real[3]): alpha, beta (and omega) for the vector kernels, which must not touch double.
#define ALPHA 0
#define BETA 1
#define OMEGA 2

// The start of a solve, by one thread, from r.z, r.r and b.b of the first residual: the state,
// beta 0 (a fused first direction p = z + beta p is z), and done if r already converged.
DEVICE void cg_start_update(double rz, double rr, double bb, double* state, int* done,
                            real* coef)
{
    state[RZ] = rz;
    state[RR] = rr;
    state[BB] = bb;
    state[ITER] = 0.0;
    coef[BETA] = R(0);
    done[0] = rr <= fmax(state[TOL2] * bb, state[ATOL2]) ? 1 : 0;
}

// The end of a CG iteration, by one thread, from the new r.z and r.r: count the iteration,
// test convergence, and set beta = (r.z)new / (r.z).
DEVICE void cg_beta_update(double rz, double rr, double* state, int* done, real* coef)
{
    state[ITER] += 1.0;
    state[RR] = rr;
    coef[BETA] = (real)(rz / state[RZ]);
    state[RZ] = rz;
    if (rr <= fmax(state[TOL2] * state[BB], state[ATOL2])) done[0] = 1;
    else if (state[ITER] >= state[MAXITER]) done[0] = 2;
}
