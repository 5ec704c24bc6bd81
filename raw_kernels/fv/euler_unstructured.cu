// Compressible Euler on unstructured meshes, cell-centred (the scheme:
// docs/euler_unstructured.md; the mesh layout: unstructured_cells.h). One thread a cell, each
// gathering over its face slots in a fixed order: no atomics, the same bits every run.
//
// A Runge-Kutta stage is two launches: euler_gradients (least-squares gradients of the
// primitive variables, limited by a gradient limiter) and euler_stage (face values, Riemann
// fluxes, the update; the last stage also leaves per block the largest stability rate of the
// new state, for the next dt).
//
// Compile-time: DIM, RIEMANN, RATE_THREADS and FACES, the slots a cell (a fixed trip count: the
// compiler unrolls the face loops). At run time (uniform branches): the reconstruction (1 first
// order, 2 MUSCL) and the limiter: the face limiters of limiter.h (LIMITER_MINMOD,
// LIMITER_VAN_LEER, LIMITER_MC) or a gradient limiter.
#include "unstructured_cells.h"
#include "limiter.h"
#include "reduce.h"
#include "ssp_stages.h"

#define GRADIENTS (NVAR * DIM)
// Blocks of RATE_THREADS a multiprocessor the two stage kernels are compiled for (their
// register budget: docs/euler_unstructured.md).
#define STAGE_BLOCKS_PER_SM 4
#define LIMITER_BARTH_JESPERSEN 4
#define LIMITER_VENKATAKRISHNAN 5
#define FIRST_ORDER 1

// The state of slot k's far side as cell c sees it: the neighbour cell's (its index in j), or
// the ghost of w across a boundary face (j < 0).
DEVICE int far_side(const real* u, const Cells& m, int k, int c, const real w[NVAR],
                    real far[NVAR])
{
    const int j = m.nb[k * m.n + c];
    if (j >= 0) {
        cell_primitive(u, m, j, far);
    } else {
        real n[DIM];
        for (int a = 0; a < DIM; ++a) n[a] = slot_vector(m.normal, m, k, c, a);
        ghost_state(w, n, -1 - j, m, far);
    }
    return j;
}

// The gradient limiter's factor for a face value change d2 within the neighbours' range
// [dmin, dmax].
DEVICE real limiter_factor(int limiter, real d2, real dmin, real dmax, real eps2)
{
    if (d2 == R(0)) return R(1);
    const real d = d2 > R(0) ? dmax : dmin;
    if (limiter == LIMITER_BARTH_JESPERSEN) return fmin(R(1), d / d2);
    const real num = fma(d, d, eps2) + R(2) * d * d2;
    return num / (fma(d, d, eps2) + R(2) * d2 * d2 + d * d2);
}

// Per cell, the least-squares gradients of the primitive variables of the stage's input state
// (grad[(v * DIM + a) * n + c]), times the gradient limiter's factor if there is one. Like the
// stage, nothing once dt = 0 (the clock has reached its stop time and left the parity as it
// was: the buffers' roles are not this step's).
KERNEL LAUNCH_BOUNDS(RATE_THREADS, STAGE_BLOCKS_PER_SM)
void euler_gradients(real* __restrict__ state_a, real* __restrict__ state_b,
                            real* __restrict__ scratch, const int* __restrict__ parity,
                            int u_role, real* __restrict__ grad, const int* __restrict__ nb,
                            const real* __restrict__ area, const real* __restrict__ normal,
                            const real* __restrict__ r, const real* __restrict__ d,
                            const real* __restrict__ inv_vol, const real* __restrict__ lsq,
                            const real* __restrict__ eps2, const int* __restrict__ bc_kind,
                            const real* __restrict__ bc_state, const real* __restrict__ dt,
                            int n, int limiter, real gamma)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n || dt[0] == R(0)) return;  // dt = 0: the run has reached its stop time
    const Cells m = {nb, area, normal, r, d, inv_vol, bc_kind, bc_state, n, gamma};
    const real* u = stage_buffer(u_role, parity[0], state_a, state_b, scratch);
    real w[NVAR], lo[NVAR], hi[NVAR], sum[GRADIENTS];
    cell_primitive(u, m, c, w);
    for (int v = 0; v < NVAR; ++v) {
        lo[v] = hi[v] = w[v];
        for (int a = 0; a < DIM; ++a) sum[v * DIM + a] = R(0);
    }
    // sum_j d_j (w_j - w_c), and the range of the neighbours' values.
    for (int k = 0; k < FACES; ++k) {
        real far[NVAR];
        far_side(u, m, k, c, w, far);
        for (int v = 0; v < NVAR; ++v) {
            const real diff = far[v] - w[v];
            lo[v] = fmin(lo[v], far[v]);
            hi[v] = fmax(hi[v], far[v]);
            for (int a = 0; a < DIM; ++a)
                sum[v * DIM + a] = fma(slot_vector(d, m, k, c, a), diff, sum[v * DIM + a]);
        }
    }
    // grad = M^-1 sum (M^-1 symmetric, its upper triangle row by row).
    real inv[DIM][DIM], g[NVAR][DIM];
    for (int a = 0, e = 0; a < DIM; ++a)
        for (int b = a; b < DIM; ++b, ++e) inv[a][b] = inv[b][a] = lsq[e * n + c];
    for (int v = 0; v < NVAR; ++v)
        for (int a = 0; a < DIM; ++a) {
            g[v][a] = R(0);
            for (int b = 0; b < DIM; ++b) g[v][a] = fma(inv[a][b], sum[v * DIM + b], g[v][a]);
        }
    // A gradient limiter: per variable the factor of the face whose value overshoots the
    // range most. One face loop around the variables' loops (a variable loop around a face
    // loop is not unrolled, and the arrays it indexes go to local memory).
    if (limiter >= LIMITER_BARTH_JESPERSEN) {
        real phi[NVAR];
        for (int v = 0; v < NVAR; ++v) phi[v] = R(1);
        for (int k = 0; k < FACES; ++k) {
            real rk[DIM];
            for (int a = 0; a < DIM; ++a) rk[a] = slot_vector(r, m, k, c, a);
            for (int v = 0; v < NVAR; ++v)
                phi[v] = fmin(phi[v], limiter_factor(limiter, dot(g[v], rk), lo[v] - w[v],
                                                     hi[v] - w[v], eps2[c]));
        }
        for (int v = 0; v < NVAR; ++v)
            for (int a = 0; a < DIM; ++a) g[v][a] *= phi[v];
    }
    for (int v = 0; v < NVAR; ++v)
        for (int a = 0; a < DIM; ++a) grad[(v * DIM + a) * n + c] = g[v][a];
}

// How a stage reconstructs face values: order (FIRST_ORDER or MUSCL) and limiter, from the
// cells' gradients in grad (MUSCL); predicted: moved half a step (half_dt) on (MUSCL-Hancock).
struct Reconstruction {
    int order, limiter;
    bool predicted;
    real half_dt;
    const real* grad;
};

// The value on cell c's side of a face at offset rf from its centroid, toward the far state
// `far` at offset df (a neighbour's centroid or a ghost's), from the cell's primitive state w
// and its gradients d w_v / d x_a, read from rec.grad a variable at a time where they are used
// (this cell's and the neighbour's held at once, the 3D stage kernel spilled registers).
DEVICE void face_value(const Reconstruction& rec, const Cells& m, int c, const real w[NVAR],
                       const real rf[DIM], const real df[DIM], const real far[NVAR],
                       real out[NVAR])
{
    if (rec.order == FIRST_ORDER) {
        for (int v = 0; v < NVAR; ++v) out[v] = w[v];
        return;
    }
    const real* grad = rec.grad + c;
    const real scale = R(2) * dot(rf, df) / dot(df, df);
    // The predictor's divergence of the velocity and pressure gradient.
    real div = R(0), grad_p[DIM] = {};
    if (rec.predicted) {
        for (int a = 0; a < DIM; ++a) {
            div += grad[((1 + a) * DIM + a) * m.n];
            grad_p[a] = grad[(VAR_E * DIM + a) * m.n];
        }
    }
    for (int v = 0; v < NVAR; ++v) {
        real g[DIM];
        for (int a = 0; a < DIM; ++a) g[a] = grad[(v * DIM + a) * m.n];
        if (rec.limiter >= LIMITER_BARTH_JESPERSEN) {
            out[v] = w[v] + dot(g, rf);
        } else {
            // The structured solver's MUSCL along the line to the far side: the upwind
            // difference from the gradient, the downwind one from the far state.
            const real down = far[v] - w[v];
            const real up = R(2) * dot(g, df) - down;
            out[v] = w[v] + scale * limited_half_slope(rec.limiter, up, down);
        }
        // MUSCL-Hancock's predictor: out += (dt / 2) dw/dt, with dw/dt from the
        // primitive-variable equations: rho_t = -v.grad rho - rho div v, v_t = -(v.grad) v -
        // grad p / rho, p_t = -v.grad p - gamma p div v.
        if (rec.predicted) {
            real rate = -dot(w + 1, g);
            if (v == 0) rate -= w[0] * div;
            else if (v == VAR_E) rate -= m.gamma * w[VAR_E] * div;
            else rate -= grad_p[v - 1] / w[0];
            out[v] = fma(rec.half_dt, rate, out[v]);
        }
    }
}

// One stage for each cell: out = (1 - w) U^n + w (u + dt L(u)), L(u) = -(1/V) sum_f A_f F_f.
// hancock: the face values are predicted half a step on (one stage a step, w = 1).
BLOCK_KERNEL LAUNCH_BOUNDS(RATE_THREADS, STAGE_BLOCKS_PER_SM)
void euler_stage(real* __restrict__ state_a, real* __restrict__ state_b,
                              real* __restrict__ scratch, const int* __restrict__ parity,
                              int u_role, int out_role, const real* __restrict__ dt,
                              const real* __restrict__ grad, const int* __restrict__ nb,
                              const real* __restrict__ area, const real* __restrict__ normal,
                              const real* __restrict__ r, const real* __restrict__ d,
                              const real* __restrict__ inv_vol, const int* __restrict__ bc_kind,
                              const real* __restrict__ bc_state, real* __restrict__ rates,
                              int n, int reconstruction, int limiter, real gamma,
                              real w, int write_rates, int hancock)
{
    __shared__ real block_rates[RATE_THREADS];
    if (dt[0] == R(0)) return;  // the run has reached its stop time: nothing to write
    PHASE {
        const int c = blockIdx.x * blockDim.x + threadIdx.x;
        real rate = R(0);
        if (c < n) {
            const Cells m = {nb, area, normal, r, d, inv_vol, bc_kind, bc_state, n, gamma};
            const StageBuffers buf = stage_buffers(u_role, out_role, parity, state_a, state_b,
                                                   scratch);
            const Gas gas = {gamma, R(1) / (gamma - R(1))};
            const Reconstruction rec = {reconstruction, limiter,
                                        hancock && reconstruction != FIRST_ORDER,
                                        R(0.5) * dt[0], grad};
            real acc[NVAR];
            for (int v = 0; v < NVAR; ++v) acc[v] = R(0);
            for (int k = 0; k < FACES; ++k) {
                if (nb[k * n + c] == c) continue;  // an unused slot
                real nk[DIM], rk[DIM], dk[DIM], t1[DIM], t2[DIM];
                for (int a = 0; a < DIM; ++a) {
                    nk[a] = slot_vector(normal, m, k, c, a);
                    rk[a] = slot_vector(r, m, k, c, a);
                    dk[a] = slot_vector(d, m, k, c, a);
                }
                // This cell's state, read again each face (as its gradients, in face_value):
                // kept through the loop with its conserved form, the 3D kernel spilled.
                real here[NVAR], far[NVAR], left[NVAR], right[NVAR];
                cell_primitive(buf.u, m, c, here);
                const int j = far_side(buf.u, m, k, c, here, far);
                face_value(rec, m, c, here, rk, dk, far, left);
                if (j >= 0) {
                    // The neighbour's side: offsets from its centroid, toward this cell.
                    real rj[DIM], dj[DIM];
                    for (int a = 0; a < DIM; ++a) {
                        rj[a] = rk[a] - dk[a];
                        dj[a] = -dk[a];
                    }
                    face_value(rec, m, j, far, rj, dj, here, right);
                } else {
                    ghost_state(left, nk, -1 - j, m, right);
                }
                face_tangents(nk, t1, t2);
                const Flux f = riemann_flux(face_frame(left, nk, t1, t2),
                                            face_frame(right, nk, t1, t2), gas);
                add_lab_flux(f, nk, t1, t2, area[k * n + c], acc);
            }
            // The update, blended with U^n where the stage blends.
            const real* start = buf.u0 + c;
            const real scale = -dt[0] * inv_vol[c];
            real old[NVAR], next[NVAR];
            load_cell(buf.u, n, c, old);
            for (int v = 0; v < NVAR; ++v) {
                const real stage = fma(scale, acc[v], old[v]);
                next[v] = w != R(1) ? start[v * n] + w * (stage - start[v * n]) : stage;
                buf.out[v * n + c] = next[v];
            }
            if (write_rates) {
                real wn[NVAR];
                primitive(next, gamma, wn);
                rate = cell_rate(wn, m, c);
            }
        }
        block_rates[threadIdx.x] = rate;
    }
    if (write_rates) {
        block_max(block_rates);
        PHASE {
            if (threadIdx.x == 0) rates[blockIdx.x] = block_rates[0];
        }
    }
}

// Per block, the largest stability rate of the state in u (the first dt of a state set from
// the host; later steps take theirs from the last stage).
BLOCK_KERNEL void euler_max_rate(const real* __restrict__ u, real* __restrict__ rates,
                                 const real* __restrict__ area,
                                 const real* __restrict__ normal,
                                 const real* __restrict__ inv_vol, int n, real gamma)
{
    __shared__ real s[RATE_THREADS];
    PHASE {
        const Cells m = {nullptr, area, normal, nullptr, nullptr, inv_vol, nullptr, nullptr, n,
                         gamma};
        real top = R(0);
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < n;
             c += blockDim.x * gridDim.x) {
            real w[NVAR];
            cell_primitive(u, m, c, w);
            top = fmax(top, cell_rate(w, m, c));
        }
        s[threadIdx.x] = top;
    }
    block_max(s);
    PHASE {
        if (threadIdx.x == 0) rates[blockIdx.x] = s[0];
    }
}
