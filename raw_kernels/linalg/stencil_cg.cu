// Conjugate gradients on the matrix-free Laplacian of stencil.cu (optionally Jacobi), fused to
// two kernels an iteration that store neither z = M^-1 r nor q = A p. Driven by
// solvers/linalg/stencil_cg.py inside a ConjugateGradient (krylov.py), whose device state
// (krylov.h) they share:
//   stencil_cg_direction  p = z + beta p_old, computed at each cell and at its neighbours from
//                         r, M^-1 and p_old; writes p, and p.Ap by a last-block reduction
//   stencil_cg_update     alpha = (r.z) / (p.Ap), x += alpha p, r -= alpha A p (A p again, from
//                         the stored p: the same bits as the first kernel's), partial sums of
//                         r.z and r.r; the last block tests convergence and sets beta
// p_old and p are two vectors that trade places every iteration (neighbours read p_old while
// p is written). Vectors moved an iteration: r, M^-1, p_old read and p written; x, p, r, M^-1
// read and x, r written (ten; the neighbours' loads come from cache).
//
// Compile-time, as stencil.cu: DIM, VARIABLE, STENCIL_THREADS, STENCIL_LAYERS.
#include "prelude.h"
#include "reduce.h"
#include "krylov.h"
#include "stencil_coef.h"
#include "stencil_launch.h"

// One face of the row through neighbour n, whose value comes from value(n) when `inside`.
template <typename Value>
DEVICE real face_of(bool inside, Value value, const real* __restrict__ inv_coef, int n,
                    real xc, real rc, real w, int dirichlet, int side)
{
    (void)inv_coef;  // unused when VARIABLE == 0
    return inside ? face_term(true, value(n), INV_COEF(n), xc, rc, w, dirichlet, side)
                  : face_term(false, R(0), R(1), xc, rc, w, dirichlet, side);
}

// Row c of A x, the faces in stencil_apply's order, for the cell (i, j, k) of value xc: x, y
// neighbours from value(n), z neighbours given (below, above, with their inverse
// coefficients).
template <typename Value>
DEVICE real row_of(Value value, const real* __restrict__ inv_coef, int c, int i, int j, int k,
                   int nx, int ny, int nz, real xc, real rc, real below, real r_below,
                   real above, real r_above, real wx, real wy, real wz, int dirichlet)
{
    real acc = face_of(i > 0, value, inv_coef, c - 1, xc, rc, wx, dirichlet, 0);
    acc += face_of(i < nx - 1, value, inv_coef, c + 1, xc, rc, wx, dirichlet, 1);
    acc += face_of(j > 0, value, inv_coef, c - nx, xc, rc, wy, dirichlet, 2);
    acc += face_of(j < ny - 1, value, inv_coef, c + nx, xc, rc, wy, dirichlet, 3);
#if DIM == 3
    acc += face_term(k > 0, below, r_below, xc, rc, wz, dirichlet, 4);
    acc += face_term(k < nz - 1, above, r_above, xc, rc, wz, dirichlet, 5);
#else
    (void)k, (void)nz, (void)below, (void)r_below, (void)above, (void)r_above, (void)wz;
#endif
    return acc;
}

// Calls visit(c, i, j, k, xc, row) for every cell this thread owns, xc = value(c) and row =
// (A value)_c. In 3D a thread walks STENCIL_LAYERS layers of its (i, j) column, keeping the
// values below, at and above the cell in registers, as stencil_apply does.
template <typename Value, typename Visit>
DEVICE void walk_rows(Value value, Visit visit, const real* __restrict__ inv_coef, int nx,
                      int ny, int nz, real wx, real wy, real wz, int dirichlet)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int sz = nx * ny;
    for (int k0 = blockIdx.z * STENCIL_LAYERS; k0 < nz && i < nx;
         k0 += gridDim.z * STENCIL_LAYERS) {
        const int k1 = k0 + STENCIL_LAYERS < nz ? k0 + STENCIL_LAYERS : nz;
        for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < ny; j += blockDim.y * gridDim.y) {
            int c = i + nx * (j + ny * k0);
            real xc = value(c), rc = INV_COEF(c);
            real below = R(0), r_below = R(1);
#if DIM == 3
            if (k0 > 0) {
                below = value(c - sz);
                r_below = INV_COEF(c - sz);
            }
#endif
            for (int k = k0; k < k1; ++k, c += sz) {
                real above = R(0), r_above = R(1);
#if DIM == 3
                if (k < nz - 1) {
                    above = value(c + sz);
                    r_above = INV_COEF(c + sz);
                }
#endif
                visit(c, xc, row_of(value, inv_coef, c, i, j, k, nx, ny, nz, xc, rc, below,
                                    r_below, above, r_above, wx, wy, wz, dirichlet));
                below = xc;
                r_below = rc;
                xc = above;
                rc = r_above;
            }
        }
    }
}

// The block's index among all blocks of the launch, and whether this is its first thread.
DEVICE int block_index() { return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }
DEVICE bool first_thread() { return threadIdx.x == 0 && threadIdx.y == 0; }

// p = z + beta p_old (z = M^-1 r), and pq[0] = p.Ap: per-block partial sums, then the last
// block adds them in a fixed order.
REDUCTION BLOCK_KERNEL void stencil_cg_direction(
    const real* __restrict__ r, const real* __restrict__ inv_diag,
    const real* __restrict__ p_old, real* __restrict__ p, const real* __restrict__ inv_coef,
    int nx, int ny, int nz, real wx, real wy, real wz, int dirichlet, int precondition,
    const real* __restrict__ coef, const int* __restrict__ done, double* partials,
    double* __restrict__ pq, int* __restrict__ tickets)
{
    __shared__ double s[STENCIL_THREADS];
    __shared__ int last;
    if (done[0] != 0) return;
    PHASE {
        const real beta = coef[BETA];
        auto direction = [&](int n) {
            const real z = precondition ? inv_diag[n] * r[n] : r[n];
            return fma(beta, p_old[n], z);
        };
        double dot = 0.0;
        walk_rows(direction, [&](int c, real pc, real apc) {
            p[c] = pc;
            dot += (double)pc * (double)apc;
        }, inv_coef, nx, ny, nz, wx, wy, wz, dirichlet);
        s[threadIdx.y * blockDim.x + threadIdx.x] = dot;
    }
    block_sum(s);
    PHASE {
        if (first_thread()) partials[block_index()] = s[0];
    }
    if (!last_block_arrived(tickets, &last)) return;
    sum_in_order(partials, (int)(gridDim.x * gridDim.y * gridDim.z), s);
    PHASE {
        if (first_thread()) pq[0] = s[0];
    }
}

// With alpha = r.z / p.Ap: x += alpha p, r -= alpha A p, partial sums of r.z and r.r (slots
// of `blocks` doubles), and the last block's beta step. A non-positive p.Ap (A not positive
// definite) changes nothing and stops with breakdown.
REDUCTION BLOCK_KERNEL void stencil_cg_update(
    real* __restrict__ x, real* __restrict__ r, const real* __restrict__ p,
    const real* __restrict__ inv_diag, const real* __restrict__ inv_coef, int nx, int ny,
    int nz, real wx, real wy, real wz, int dirichlet, int precondition,
    const double* __restrict__ pq, double* __restrict__ state, int* __restrict__ done,
    real* __restrict__ coef, double* partials, int* __restrict__ tickets)
{
    __shared__ double s_rz[STENCIL_THREADS];
    __shared__ double s_rr[STENCIL_THREADS];
    __shared__ int last;
    if (done[0] != 0) return;
    const bool positive = pq[0] > 0.0;  // the same in every block
    const int blocks = (int)(gridDim.x * gridDim.y * gridDim.z);
    PHASE {
        double rz = 0.0, rr = 0.0;
        if (positive) {
            const real alpha = (real)(state[RZ] / pq[0]);
            auto stored = [&](int n) { return p[n]; };
            walk_rows(stored, [&](int c, real pc, real apc) {
                x[c] += alpha * pc;
                const real rc = r[c] - alpha * apc;
                const real zc = precondition ? inv_diag[c] * rc : rc;
                r[c] = rc;
                rz += (double)rc * (double)zc;
                rr += (double)rc * (double)rc;
            }, inv_coef, nx, ny, nz, wx, wy, wz, dirichlet);
        }
        s_rz[threadIdx.y * blockDim.x + threadIdx.x] = rz;
        s_rr[threadIdx.y * blockDim.x + threadIdx.x] = rr;
    }
    block_sum(s_rz);
    block_sum(s_rr);
    PHASE {
        if (first_thread()) {
            partials[block_index()] = s_rz[0];
            partials[blocks + block_index()] = s_rr[0];
        }
    }
    if (!last_block_arrived(tickets, &last)) return;
    if (!positive) {
        PHASE {
            if (first_thread()) done[0] = 3;
        }
        return;
    }
    sum_in_order(partials, blocks, s_rz);
    sum_in_order(partials + blocks, blocks, s_rr);
    const double rz = s_rz[0], rr = s_rr[0];
    PHASE {
        if (first_thread()) cg_beta_update(rz, rr, state, done, coef);
    }
}
