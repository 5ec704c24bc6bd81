// The scalar steps of conjugate gradients on a decomposed grid (driver:
// solvers/linalg/distributed_cg.py), with every scalar on the device as in krylov.cu. Each rank
// adds its block's partial sums (krylov.cu's partial-sum kernels) in a fixed order, every rank
// receives every rank's sums (an all-gather: NCCL or MPI, in the graph or staged through the
// host), and each adds them in rank order: every rank holds the same bits and takes the same
// steps. Then the single-rank steps of krylov.h.
//   rank_sums     local[k] = this rank's sum of partial slot k, k < slots
//   ranks_start   the state from the whole grid's r.z, r.r and b.b (gathered[rank][3])
//   ranks_alpha   pq[0] = the whole grid's p.q (gathered[rank][1]), which cg_update reads
//   ranks_beta    the end of an iteration from the whole grid's r.z and r.r (gathered[rank][2])
//
// Compile-time, as krylov.cu: PARTIAL_SLOT and THREADS.
#include "prelude.h"
#include "reduce.h"
#include "krylov.h"

// The sum over the ranks of entry k of gathered[rank][slots], in rank order.
DEVICE double ranks_total(const double* gathered, int ranks, int slots, int k)
{
    double total = 0.0;
    for (int r = 0; r < ranks; ++r) total += gathered[r * slots + k];
    return total;
}

// local[k] = the sum of partial slot k (PARTIAL_SLOT entries, in sum_in_order's order: a
// single-rank solve's), for k < slots. One block.
REDUCTION BLOCK_KERNEL void rank_sums(const double* __restrict__ partials, int slots,
                                      double* __restrict__ local)
{
    __shared__ double s[THREADS];
    for (int k = 0; k < slots; ++k) {
        sum_in_order(partials + k * PARTIAL_SLOT, PARTIAL_SLOT, s);
        PHASE {
            if (threadIdx.x == 0) local[k] = s[0];
        }
    }
}

// The state of a solve's start from the ranks' sums of r.z, r.r and b.b. One thread.
REDUCTION KERNEL void ranks_start(const double* __restrict__ gathered, int ranks,
                                  double* __restrict__ state, int* __restrict__ done,
                                  real* __restrict__ coef)
{
    cg_start_update(ranks_total(gathered, ranks, 3, 0), ranks_total(gathered, ranks, 3, 1),
                    ranks_total(gathered, ranks, 3, 2), state, done, coef);
}

// pq[0] = the ranks' sums of p.q added. One thread.
REDUCTION KERNEL void ranks_alpha(const double* __restrict__ gathered, int ranks,
                                  double* __restrict__ pq)
{
    pq[0] = ranks_total(gathered, ranks, 1, 0);
}

// Count the iteration, test convergence, set beta (cg_beta_update) from the ranks' sums of
// r.z and r.r. One thread.
REDUCTION KERNEL void ranks_beta(const double* __restrict__ gathered, int ranks,
                                 double* __restrict__ state, int* __restrict__ done,
                                 real* __restrict__ coef)
{
    if (done[0] != 0) return;
    cg_beta_update(ranks_total(gathered, ranks, 2, 0), ranks_total(gathered, ranks, 2, 1),
                   state, done, coef);
}
