// The sub-cell immersed boundary of the incompressible MAC solver: interpolated direct forcing
// of the predicted velocity (Fadlun et al. 2000, Balaras 2004), and the force on the body by
// momentum exchange. Geometry (classification, image points, stencils, coefficients) from
// solvers/fv/incompressible/immersed.py; drivers: solvers/fv/incompressible/forcing.py (one
// rank) and block_immersed.py (a decomposed grid's block), in solver.py's step.
//
// Place in the step: after the momentum predictor has written (us, vs) and after anything
// else that changes them (an implicit viscous solve), before ins_divergence, so that the
// projection follows the forcing:
//   ins_predict -> [other updates of us, vs] -> ins_immersed -> ins_divergence -> solve -> ...
//
// Layouts: us, vs are the face arrays of incompressible.cu (G ghost layers, x fastest:
// u(i, j) at (i + G) + (j + G)(nx + 1 + 2G), v(i, j) at (i + G) + (j + G)(nx + 2G)); p the cell
// pressure at i + nx j. Forced faces, entry k: face[k] the flat index, cells[2k], cells[2k + 1]
// the cells below and above it along its axis, counted[k] whether its forcing counts in the
// force; the forcing and ghost points first (`extrapolated` of them, u faces before v faces,
// `extrapolated_u` u faces), then the solid faces (`solid`, `solid_u` of them u faces). Per
// forcing or ghost point: stencil[TERMS k .. TERMS k + TERMS - 1] per image point CORNERS u
// faces then CORNERS v faces around it (flat in su, sv), coefficient[...] what the point's
// velocity is of their values. No stencil holds a forced face, so no thread reads what another
// writes.
//
// A decomposed grid's block (SAMPLED; solvers/fv/incompressible/block_immersed.py): the
// arrays index the block's faces and its forced faces, p is p^n padded by one halo cell, and
// the stencils read su, sv, the incremental predictions that ins_immersed_sample wrote at the
// block's faces and the halo swap beyond its sides (as many ghost layers as the stencils
// reach); a face on a side between two blocks is forced by both, counted by one. On one rank
// su, sv are us, vs.
//
// Compile-time, from the driver:
//   G            ghost layers of the face arrays
//   THREADS      threads of a block, a power of two (the block sums)
//   INCREMENTAL  1 when u* holds the incremental prediction already (implicit viscosity: the
//                predictor subtracts dt grad p^n), 0 when it leaves p^n out (explicit)
//   SAMPLED      1 when the stencils read the incremental predictions su, sv (a block), 0
//                when they read us, vs and subtract dt grad p^n themselves
//   CORNERS      faces of one image point's stencil of one component
//   TERMS        stencil faces of a forcing or ghost point (2 CORNERS per image point)
#include "prelude.h"
#include "reduce.h"
#include "mac.h"

#ifndef G
#error "G (ghost layers of u and v) must be defined"
#endif
#ifndef THREADS
#error "THREADS (threads of a block) must be defined"
#endif
#ifndef INCREMENTAL
#error "INCREMENTAL (0 or 1) must be defined"
#endif
#ifndef SAMPLED
#error "SAMPLED (0 or 1) must be defined"
#endif
#if !defined(CORNERS) || !defined(TERMS)
#error "CORNERS and TERMS (the stencils' sizes) must be defined"
#endif

// The incremental prediction q* - dt (p_above - p_below) inv_h at a face with a pressure step.
DEVICE real incremental(real q, real above, real below, real dt, real inv_h)
{
    return q - dt * (above - below) * inv_h;
}

// The incremental prediction q* - dt grad p^n at a fluid face c of component `axis`: no
// pressure step on the domain's boundary faces (the stencils use only walls, slip sides and
// inflow there, where the correction does nothing). With INCREMENTAL (implicit viscosity),
// q* already holds -dt grad p^n, and with SAMPLED q holds the incremental predictions: q itself.
DEVICE real stencil_value(const real* q, const real* __restrict__ p, int c, int axis, int nx,
                          int ny, real dt, real inv_dx, real inv_dy)
{
#if INCREMENTAL || SAMPLED
    (void)p;
    (void)axis;
    (void)nx;
    (void)ny;
    (void)dt;
    (void)inv_dx;
    (void)inv_dy;
    return q[c];
#else
    const int stride = axis == 0 ? nx + 1 + 2 * G : nx + 2 * G;
    const int i = c % stride - G, j = c / stride - G;
    const int along = axis == 0 ? i : j, n = axis == 0 ? nx : ny;
    if (along == 0 || along == n) return q[c];
    const int cell = i + nx * j, below = axis == 0 ? cell - 1 : cell - nx;
    return incremental(q[c], p[cell], p[below], dt, axis == 0 ? inv_dx : inv_dy);
#endif
}

// The incremental prediction of face `along` (0..n) of a block's line of faces, q* there: as
// stencil_value's, none on a side of the whole grid (a side that faces no other block);
// `cell` the index of the cell above the face in p, `stride` p's along the line.
DEVICE real sampled(real q, const real* __restrict__ p, int cell, int stride, int along, int n,
                    int kind_lo, int kind_hi, real dt, real inv_h)
{
#if INCREMENTAL
    (void)p;
    (void)cell;
    (void)stride;
    (void)along;
    (void)n;
    (void)kind_lo;
    (void)kind_hi;
    (void)dt;
    (void)inv_h;
    return q;
#else
    const bool side = (along == 0 && kind_lo != BC_HALO) || (along == n && kind_hi != BC_HALO);
    return side ? q : incremental(q, p[cell], p[cell - stride], dt, inv_h);
#endif
}

// A decomposed grid's block (SAMPLED): the incremental predictions of its faces (nx, ny its
// cells) into su, sv, padded by `layers` ghost layers (x fastest) that the halo swap fills
// next, for ins_immersed's stencils; p^n(i, j) at p[p0 + i + ps j] (padded by one halo cell,
// swapped), k* the block's side kinds (BC_HALO towards another block). One thread per (i, j),
// i <= nx, j <= ny: u face (i, j) when j < ny, v face (i, j) when i < nx.
KERNEL void ins_immersed_sample(const real* __restrict__ us, const real* __restrict__ vs,
                                const real* __restrict__ p, int ps, int p0,
                                const real* __restrict__ dt_now, real* __restrict__ su,
                                real* __restrict__ sv, int layers, int nx, int ny, real inv_dx,
                                real inv_dy, int kx_lo, int kx_hi, int ky_lo, int ky_hi)
{
    const Faces f = {nx, ny, nx + 1 + 2 * G, nx + 2 * G};
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = e % (nx + 1), j = e / (nx + 1);
    if (j > ny) return;
    const real dt = dt_now[0];
    const int cell = p0 + i + ps * j;
    if (j < ny)
        su[(i + layers) + (j + layers) * (nx + 1 + 2 * layers)] =
            sampled(us[iu(f, i, j)], p, cell, 1, i, nx, kx_lo, kx_hi, dt, inv_dx);
    if (i < nx)
        sv[(i + layers) + (j + layers) * (nx + 2 * layers)] =
            sampled(vs[iv(f, i, j)], p, cell, ps, j, ny, ky_lo, ky_hi, dt, inv_dy);
}

// One thread per forced face. The predictor's us, vs leave out the old
// pressure (the solver writes the incremental scheme in the total pressure: the correction
// subtracts all of dt grad p^{n+1}), so what the forcing sees is the incremental prediction
// q~ = q* - dt grad p^n, at the face and at its stencil. A forced face is given
// target + dt grad p^n, which after the correction holds target - dt grad (p^{n+1} - p^n):
// target = the stencil's combination of q~ at a forcing or ghost point, 0 at a solid face.
// The body cells' divergence is no part of the pressure solve (ins_divergence), so at a steady
// state the increment vanishes in every cell and the forced faces hold their targets.
// The force on the body is the momentum the forcing removes per unit time, (q~ - target) / dt
// per unit volume (the driver's last kernel multiplies by the cell area), summed over the
// counted forced faces: per block into force_partials (x for every block, then y). Its
// pressure share is p^n's (the step's force lags the pressure by one step; steady values and
// amplitudes do not change). A step past the stop time (dt = 0) changes nothing and records
// no force. us, vs and su, sv are one pair on one rank (no __restrict__).
BLOCK_KERNEL void ins_immersed(real* us, real* vs, const real* su, const real* sv,
                               const real* __restrict__ p, const real* __restrict__ dt_now,
                               const int* __restrict__ face, const int* __restrict__ cells,
                               const int* __restrict__ counted, const int* __restrict__ stencil,
                               const real* __restrict__ coefficient, int extrapolated,
                               int extrapolated_u, int solid, int solid_u, int nx,
                               int ny, real inv_dx, real inv_dy,
                               real* __restrict__ force_partials)
{
    __shared__ real s_fx[THREADS];
    __shared__ real s_fy[THREADS];
    PHASE {
        const int k = blockIdx.x * THREADS + threadIdx.x;
        const real dt = dt_now[0];
        const int forced = extrapolated + solid;
        real rate = R(0);  // counted forcing only
        int axis = 0;
        if (k < forced && dt > R(0)) {
            // The face's component, and dt grad p^n there.
            const bool is_solid = k >= extrapolated;
            axis = is_solid ? (k - extrapolated >= solid_u) : (k >= extrapolated_u);
            real* q = axis == 0 ? us : vs;
            const int c = face[k];
#if INCREMENTAL
            (void)cells;
            const real step = R(0);  // u* is already the incremental prediction
#else
            const real step = dt * (p[cells[2 * k + 1]] - p[cells[2 * k]])
                            * (axis == 0 ? inv_dx : inv_dy);
#endif
            // The target: the stencils' combination at a forcing or ghost point.
            real target = R(0);
            if (!is_solid) {
                for (int m = 0; m < TERMS; ++m) {
                    const int component = (m / CORNERS) % 2;
                    const real value = stencil_value(component == 0 ? su : sv, p,
                                                     stencil[TERMS * k + m], component, nx, ny,
                                                     dt, inv_dx, inv_dy);
                    target += coefficient[TERMS * k + m] * value;
                }
            }
            // Force the face; the momentum removed goes to the body's force.
            if (counted[k]) rate = (q[c] - step - target) / dt;
            q[c] = target + step;
        }
        s_fx[threadIdx.x] = axis == 0 ? rate : R(0);
        s_fy[threadIdx.x] = axis == 0 ? R(0) : rate;
    }
    block_sum(s_fx);
    block_sum(s_fy);
    PHASE {
        if (threadIdx.x == 0) {
            force_partials[blockIdx.x] = s_fx[0];
            force_partials[gridDim.x + blockIdx.x] = s_fy[0];
        }
    }
}


