// Conjugate gradients and BiCGStab (optionally Jacobi-preconditioned) with every scalar on the
// device, so a chunk of iterations replays from one graph and the host only reads the
// convergence state between chunks. Dot products accumulate in double through fixed-size two-pass reductions
// (per-block partial sums, then one block adds them in a fixed order): the same bits every run.
//
// Each CG iteration: q = A p and pq = p.q (the operator's kernel where it offers the dot, else
// the operator's and dot_total), then
//   cg_update     alpha = (r.z) / (p.q), x += alpha p, r -= alpha q, z = M^-1 r, partial sums
//                 of r.z and r.r; its last block tests convergence and sets
//                 beta = (r.z)new / (r.z)
//   cg_direction  p = z + beta p
// (with a general preconditioner: cg_update without its last step, z = M r, then cg_dot_beta).
// Once the state says done, every kernel returns at once (the operator's does not know; it
// recomputes the same q), so a chunk may run past convergence at the cost of its SpMVs.
#include "prelude.h"
#include "reduce.h"
#include "krylov.h"

// Partial sums: one double per block of a partial-sum kernel, in slots of PARTIAL_SLOT entries.
// The host picks the block count from n alone (at most PARTIAL_SLOT: enough to fill a GPU), so
// a sum's order, and its bits, depend on n only, on every device and on the host. Entries past
// the block count stay 0, and the scalar steps add whole slots.
//
// Compile-time, from solvers/linalg/krylov.py: PARTIAL_SLOT, and THREADS (the threads of every
// block, a power of two).
#ifndef PARTIAL_SLOT
#error "PARTIAL_SLOT (the most blocks of a partial-sum kernel) must be defined"
#endif
#ifndef THREADS
#error "THREADS (threads of a block) must be defined"
#endif

// Sum the partials of slot k (k = 0, 1, 2) in a fixed order. Every thread of the block calls.
DEVICE double sum_partials(const double* partials, int k, double* s)
{
    sum_in_order(partials + k * PARTIAL_SLOT, PARTIAL_SLOT, s);
    return s[0];
}

// Reduce the per-thread sums a and b over the block; store them in partial slots 0 and 1.
DEVICE void store_two_partials(double* a, double* b, double* partials)
{
    block_sum(a);
    block_sum(b);
    PHASE {
        if (threadIdx.x == 0) {
            partials[blockIdx.x] = a[0];
            partials[PARTIAL_SLOT + blockIdx.x] = b[0];
        }
    }
}

// Partial sums of r.z, r.r and b.b over this block's share of the vectors (slots 0, 1, 2).
REDUCTION BLOCK_KERNEL void cg_start_partials(const real* __restrict__ r, const real* __restrict__ z,
                                              const real* __restrict__ b, int n,
                                              double* __restrict__ partials)
{
    __shared__ double s_rz[THREADS];
    __shared__ double s_rr[THREADS];
    __shared__ double s_bb[THREADS];
    PHASE {
        double rz = 0.0, rr = 0.0, bb = 0.0;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            rz += (double)r[i] * (double)z[i];
            rr += (double)r[i] * (double)r[i];
            bb += (double)b[i] * (double)b[i];
        }
        s_rz[threadIdx.x] = rz;
        s_rr[threadIdx.x] = rr;
        s_bb[threadIdx.x] = bb;
    }
    store_two_partials(s_rz, s_rr, partials);
    block_sum(s_bb);
    PHASE {
        if (threadIdx.x == 0) partials[2 * PARTIAL_SLOT + blockIdx.x] = s_bb[0];
    }
}

// r = b - q (q = A x0), z = M^-1 r, p = z; the status becomes "running" (no kernel before
// cg_start_state reads it except copy_vector, which runs after this one).
KERNEL void cg_start(const real* __restrict__ b, const real* __restrict__ q,
                     const real* __restrict__ inv_diag, real* __restrict__ r,
                     real* __restrict__ z, real* __restrict__ p, int n, int precondition,
                     int* __restrict__ done)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) done[0] = 0;
    if (i >= n) return;
    const real ri = b[i] - q[i];
    const real zi = precondition ? inv_diag[i] * ri : ri;
    r[i] = ri;
    z[i] = zi;
    p[i] = zi;
}

// Partial sums of |b - q|^2 (slot 0) and |b|^2 (slot 1), q = A x: the true residual of a
// finished solve, which in fp32 can lie far above the recursively updated one.
REDUCTION BLOCK_KERNEL void residual_partials(const real* __restrict__ b,
                                              const real* __restrict__ q, int n,
                                              double* __restrict__ partials)
{
    __shared__ double s_rr[THREADS];
    __shared__ double s_bb[THREADS];
    PHASE {
        double rr = 0.0, bb = 0.0;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            const double r = (double)b[i] - (double)q[i];
            rr += r * r;
            bb += (double)b[i] * (double)b[i];
        }
        s_rr[threadIdx.x] = rr;
        s_bb[threadIdx.x] = bb;
    }
    store_two_partials(s_rr, s_bb, partials);
}

// dst = src (a general preconditioner's first p = z).
KERNEL void copy_vector(real* __restrict__ dst, const real* __restrict__ src,
                        const int* __restrict__ done, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || done[0] != 0) return;
    dst[i] = src[i];
}

// The initial state from the partials of cg_start_partials. One block.
REDUCTION BLOCK_KERNEL void cg_start_state(const double* __restrict__ partials,
                                           double* __restrict__ state, int* __restrict__ done,
                                           real* __restrict__ coef)
{
    __shared__ double s[THREADS];
    const double rz = sum_partials(partials, 0, s);
    const double rr = sum_partials(partials, 1, s);
    const double bb = sum_partials(partials, 2, s);
    PHASE {
        if (threadIdx.x == 0) cg_start_update(rz, rr, bb, state, done, coef);
    }
}

// Partial sums of a.b into slot 0 and, when pairs == 2, of c.d into slot 1.
REDUCTION BLOCK_KERNEL void dot_partials(const real* __restrict__ a, const real* __restrict__ b,
                                         const real* __restrict__ c, const real* __restrict__ d,
                                         int pairs, int n, const int* __restrict__ done,
                                         double* __restrict__ partials)
{
    __shared__ double s_ab[THREADS];
    __shared__ double s_cd[THREADS];
    if (done[0] != 0) return;
    PHASE {
        double ab = 0.0, cd = 0.0;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            ab += (double)a[i] * (double)b[i];
            if (pairs == 2) cd += (double)c[i] * (double)d[i];
        }
        s_ab[threadIdx.x] = ab;
        s_cd[threadIdx.x] = cd;
    }
    if (pairs == 2) {
        store_two_partials(s_ab, s_cd, partials);
    } else {  // slot 1 may hold another kernel's sums (r.r after cg_update): leave it
        block_sum(s_ab);
        PHASE {
            if (threadIdx.x == 0) partials[blockIdx.x] = s_ab[0];
        }
    }
}

// The scalar step of a CG iteration, run by the last block of the kernel that produced its
// partial sums (see last_block_arrived), so it needs no launch of its own: from the partials
// of r.z (slot 0) and r.r (slot 1), cg_beta_update.
DEVICE void cg_beta_step(const double* partials, double* state, int* done, real* coef,
                         double* s)
{
    const double rz = sum_partials(partials, 0, s);
    const double rr = sum_partials(partials, 1, s);
    PHASE {
        if (threadIdx.x == 0) cg_beta_update(rz, rr, state, done, coef);
    }
}

// Partial sum of a.b over this block's share of the vectors into partials[blockIdx.x], with
// s (THREADS doubles) as scratch; then whether this block arrived last (see reduce.h).
DEVICE bool dot_partial_arrived_last(const real* __restrict__ a, const real* __restrict__ b,
                                     int n, double* partials, double* s, int* tickets,
                                     int* last)
{
    PHASE {
        double ab = 0.0;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
            ab += (double)a[i] * (double)b[i];
        s[threadIdx.x] = ab;
    }
    block_sum(s);
    PHASE {
        if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
    }
    return last_block_arrived(tickets, last);
}

// dot[0] = a.b: partial sums per block, then the last block adds them in a fixed order.
REDUCTION BLOCK_KERNEL void dot_total(const real* __restrict__ a, const real* __restrict__ b,
                                      int n, const int* __restrict__ done, double* partials,
                                      double* __restrict__ dot, int* __restrict__ tickets)
{
    __shared__ double s[THREADS];
    __shared__ int last;
    if (done[0] != 0) return;
    if (!dot_partial_arrived_last(a, b, n, partials, s, tickets, &last)) return;
    sum_in_order(partials, gridDim.x, s);
    PHASE {
        if (threadIdx.x == 0) dot[0] = s[0];
    }
}

// With alpha = r.z / p.q (pq[0] = p.q): x += alpha p, r -= alpha q, z = M^-1 r, and partial
// sums of r.z (slot 0) and r.r (slot 1); with `finish` the last block then takes the beta step
// (a general preconditioner instead recomputes r.z with cg_dot_beta once it has set z). A
// non-positive p.q (A not positive definite) changes nothing and stops with breakdown.
REDUCTION BLOCK_KERNEL void cg_update(real* __restrict__ x, real* __restrict__ r,
                                      real* __restrict__ z, const real* __restrict__ p,
                                      const real* __restrict__ q,
                                      const real* __restrict__ inv_diag, int n, int precondition,
                                      const double* __restrict__ pq, int finish,
                                      double* __restrict__ state, int* __restrict__ done,
                                      real* __restrict__ coef, double* partials,
                                      int* __restrict__ tickets)
{
    __shared__ double s_rz[THREADS];
    __shared__ double s_rr[THREADS];
    __shared__ int last;
    if (done[0] != 0) return;
    const bool positive = pq[0] > 0.0;  // the same in every block
    PHASE {
        double rz = 0.0, rr = 0.0;
        if (positive) {
            const real alpha = (real)(state[RZ] / pq[0]);
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
                 i += blockDim.x * gridDim.x) {
                x[i] += alpha * p[i];
                const real ri = r[i] - alpha * q[i];
                const real zi = precondition ? inv_diag[i] * ri : ri;
                r[i] = ri;
                z[i] = zi;
                rz += (double)ri * (double)zi;
                rr += (double)ri * (double)ri;
            }
        }
        s_rz[threadIdx.x] = rz;
        s_rr[threadIdx.x] = rr;
    }
    store_two_partials(s_rz, s_rr, partials);
    if ((positive && !finish) || !last_block_arrived(tickets, &last)) return;
    if (positive) {
        cg_beta_step(partials, state, done, coef, s_rz);
        return;
    }
    PHASE {
        if (threadIdx.x == 0) done[0] = 3;
    }
}

// Partial sums of r.z (slot 0, after a general preconditioner set z); the last block then
// takes the beta step with r.r from cg_update (slot 1).
REDUCTION BLOCK_KERNEL void cg_dot_beta(const real* __restrict__ r, const real* __restrict__ z,
                                        int n, double* __restrict__ state,
                                        int* __restrict__ done, real* __restrict__ coef,
                                        double* partials, int* __restrict__ tickets)
{
    __shared__ double s[THREADS];
    __shared__ int last;
    if (done[0] != 0) return;
    if (!dot_partial_arrived_last(r, z, n, partials, s, tickets, &last)) return;
    cg_beta_step(partials, state, done, coef, s);
}

// p = z + beta p.
KERNEL void cg_direction(real* __restrict__ p, const real* __restrict__ z,
                         const real* __restrict__ coef, const int* __restrict__ done, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || done[0] != 0) return;
    p[i] = z[i] + coef[BETA] * p[i];
}

// -- BiCGStab (van der Vorst 1992), right-preconditioned with M = diag(A) or I -----------------
// Started like CG with z := r0hat (r0hat = r0, rho = r0hat.r0 in state[RZ]). Each iteration:
//   jacobi_apply  phat = M^-1 p;   v = A phat;   dot_partials r0hat.v;   bicg_alpha
//   bicg_s        s = r - alpha v, shat = M^-1 s;   t = A shat;   dot_partials t.s, t.t
//   bicg_omega    omega = t.s / t.t
//   bicg_update   x += alpha phat + omega shat, r = s - omega t, partial sums r0hat.r, r.r
//   bicg_beta     convergence test, beta = (rho_new / rho) (alpha / omega)
//   bicg_direction p = r + beta (p - omega v)

// y = M^-1 x.
KERNEL void jacobi_apply(real* __restrict__ y, const real* __restrict__ x,
                         const real* __restrict__ inv_diag, const int* __restrict__ done, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || done[0] != 0) return;
    y[i] = inv_diag[i] * x[i];
}

// alpha = rho / r0hat.v; r0hat.v == 0 is a breakdown.
REDUCTION BLOCK_KERNEL void bicg_alpha(const double* __restrict__ partials,
                                       const double* __restrict__ state, int* __restrict__ done,
                                       real* __restrict__ coef)
{
    __shared__ double s[THREADS];
    if (done[0] != 0) return;
    const double r0v = sum_partials(partials, 0, s);
    PHASE {
        if (threadIdx.x == 0) {
            if (r0v == 0.0 || !(r0v == r0v)) done[0] = 3;
            else coef[ALPHA] = (real)(state[RZ] / r0v);
        }
    }
}

// s = r - alpha v, shat = M^-1 s.
KERNEL void bicg_s(real* __restrict__ s, real* __restrict__ shat, const real* __restrict__ r,
                   const real* __restrict__ v, const real* __restrict__ inv_diag,
                   const real* __restrict__ coef, const int* __restrict__ done, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || done[0] != 0) return;
    const real si = r[i] - coef[ALPHA] * v[i];
    s[i] = si;
    shat[i] = inv_diag[i] * si;
}

// omega = t.s / t.t (0 when t = 0: then s = 0 and the next test converges).
REDUCTION BLOCK_KERNEL void bicg_omega(const double* __restrict__ partials,
                                       const int* __restrict__ done, real* __restrict__ coef)
{
    __shared__ double s[THREADS];
    if (done[0] != 0) return;
    const double ts = sum_partials(partials, 0, s);
    const double tt = sum_partials(partials, 1, s);
    PHASE {
        if (threadIdx.x == 0) coef[OMEGA] = tt > 0.0 ? (real)(ts / tt) : R(0);
    }
}

// x += alpha phat + omega shat, r = s - omega t, and partial sums of r0hat.r and r.r.
REDUCTION BLOCK_KERNEL void bicg_update(real* __restrict__ x, real* __restrict__ r,
                                        const real* __restrict__ phat,
                                        const real* __restrict__ shat,
                                        const real* __restrict__ s, const real* __restrict__ t,
                                        const real* __restrict__ r0hat, int n,
                                        const real* __restrict__ coef,
                                        const int* __restrict__ done,
                                        double* __restrict__ partials)
{
    __shared__ double s_rho[THREADS];
    __shared__ double s_rr[THREADS];
    if (done[0] != 0) return;
    PHASE {
        const real alpha = coef[ALPHA], omega = coef[OMEGA];
        double rho = 0.0, rr = 0.0;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            x[i] += alpha * phat[i] + omega * shat[i];
            const real ri = s[i] - omega * t[i];
            r[i] = ri;
            rho += (double)r0hat[i] * (double)ri;
            rr += (double)ri * (double)ri;
        }
        s_rho[threadIdx.x] = rho;
        s_rr[threadIdx.x] = rr;
    }
    store_two_partials(s_rho, s_rr, partials);
}

// Count the iteration, test convergence, and set beta; rho_new == 0 or omega == 0 before
// convergence is a breakdown.
REDUCTION BLOCK_KERNEL void bicg_beta(const double* __restrict__ partials,
                                      double* __restrict__ state, int* __restrict__ done,
                                      real* __restrict__ coef)
{
    __shared__ double s[THREADS];
    if (done[0] != 0) return;
    const double rho = sum_partials(partials, 0, s);
    const double rr = sum_partials(partials, 1, s);
    PHASE {
        if (threadIdx.x == 0) {
            state[ITER] += 1.0;
            state[RR] = rr;
            if (rr <= fmax(state[TOL2] * state[BB], state[ATOL2])) {
                done[0] = 1;
            } else if (rho == 0.0 || coef[OMEGA] == R(0) || !(rr == rr)) {
                done[0] = 3;
            } else {
                coef[BETA] = (real)((rho / state[RZ]) * ((double)coef[ALPHA] / (double)coef[OMEGA]));
                state[RZ] = rho;
                if (state[ITER] >= state[MAXITER]) done[0] = 2;
            }
        }
    }
}

// p = r + beta (p - omega v).
KERNEL void bicg_direction(real* __restrict__ p, const real* __restrict__ r,
                           const real* __restrict__ v, const real* __restrict__ coef,
                           const int* __restrict__ done, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || done[0] != 0) return;
    p[i] = r[i] + coef[BETA] * (p[i] - coef[OMEGA] * v[i]);
}
