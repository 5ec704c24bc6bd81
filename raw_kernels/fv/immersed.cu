// The sub-cell immersed boundary of the incompressible MAC solver: interpolated direct forcing
// of the predicted velocity (Fadlun et al. 2000, Balaras 2004), and the force on the body by
// momentum exchange. Geometry (classification, image points, stencils, coefficients) from
// solvers/fv/incompressible/immersed.py; driver: solvers/fv/incompressible/solver.py.
//
// Place in the step: after the momentum predictor has written (us, vs) and after anything
// else that changes them (an implicit viscous solve), before ins_divergence, so that the
// projection follows the forcing:
//   ins_predict -> [other updates of us, vs] -> ins_immersed -> ins_divergence -> solve -> ...
//
// Layouts: us, vs are the face arrays of incompressible.cu (G ghost layers, x fastest:
// u(i, j) at (i + G) + (j + G)(nx + 1 + 2G), v(i, j) at (i + G) + (j + G)(nx + 2G)); p the cell
// pressure at i + nx j. Forced faces, entry k: face[k] the flat index, cells[2k], cells[2k + 1]
// the cells below and above it along its axis; the forcing and ghost points first
// (`extrapolated` of them, u faces before v faces, `extrapolated_u` u faces), then the solid
// faces (`solid`, `solid_u` of them u faces). Per forcing or ghost point: stencil[TERMS k ..
// TERMS k + TERMS - 1] per image point CORNERS u faces then CORNERS v faces around it,
// coefficient[...] what the point's velocity is of their values. No stencil holds a forced
// face, so no thread reads what another writes.
//
// Compile-time, from the driver:
//   G            ghost layers of the face arrays
//   THREADS      threads of a block, a power of two (the block sums)
//   INCREMENTAL  1 when u* holds the incremental prediction already (implicit viscosity: the
//                predictor subtracts dt grad p^n), 0 when it leaves p^n out (explicit)
//   CORNERS      faces of one image point's stencil of one component
//   TERMS        stencil faces of a forcing or ghost point (2 CORNERS per image point)
#include "prelude.h"
#include "reduce.h"

#ifndef G
#error "G (ghost layers of u and v) must be defined"
#endif
#ifndef THREADS
#error "THREADS (threads of a block) must be defined"
#endif
#ifndef INCREMENTAL
#error "INCREMENTAL (0 or 1) must be defined"
#endif
#if !defined(CORNERS) || !defined(TERMS)
#error "CORNERS and TERMS (the stencils' sizes) must be defined"
#endif

// The incremental prediction q* - dt grad p^n at a fluid face c of component `axis`: no
// pressure step on the domain's boundary faces (the stencils use only walls, slip sides and
// inflow there, where the correction does nothing). With INCREMENTAL (implicit viscosity),
// q* already holds -dt grad p^n: q* itself.
DEVICE real stencil_value(const real* __restrict__ q, const real* __restrict__ p, int c,
                          int axis, int nx, int ny, real dt, real inv_dx, real inv_dy)
{
#if INCREMENTAL
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
    return q[c] - dt * (p[cell] - p[below]) * (axis == 0 ? inv_dx : inv_dy);
#endif
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
// forced faces: per block into force_partials (x for every block, then y). Its pressure share
// is p^n's (the step's force lags the pressure by one step; steady values and amplitudes do
// not change). A step past the stop time (dt = 0) changes nothing and records no force.
BLOCK_KERNEL void ins_immersed(real* __restrict__ us, real* __restrict__ vs,
                               const real* __restrict__ p, const real* __restrict__ dt_now,
                               const int* __restrict__ face, const int* __restrict__ cells,
                               const int* __restrict__ stencil,
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
        real rate = R(0);
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
                    const real value = stencil_value(component == 0 ? us : vs, p,
                                                     stencil[TERMS * k + m], component, nx, ny,
                                                     dt, inv_dx, inv_dy);
                    target += coefficient[TERMS * k + m] * value;
                }
            }
            // Force the face; the momentum removed goes to the body's force.
            rate = (q[c] - step - target) / dt;
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


