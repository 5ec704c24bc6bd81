// MUSCL-Hancock (Toro, Riemann Solvers and Numerical Methods for Fluid Dynamics, ch. 14) on the
// scheme of euler_scheme.h: the half-step predictor of a cell's face states, for the step
// kernels of euler_hancock.cu. With these states the faces' Riemann fluxes give the one
// conservative update of a step, second order in space and time.
#pragma once
#include "euler_scheme.h"

// The buffer a step reads (U^n, the one parity[0] names) and the one it writes.
DEVICE const real* step_input(const real* a, const real* b, const int* parity)
{
    return parity[0] ? b : a;
}
DEVICE real* step_output(real* a, real* b, const int* parity) { return parity[0] ? a : b; }

// A cell's face states after the predictor: along axis d, at its low face lo[d] and at its high
// face hi[d] (lab frame).
struct Faces {
    Prim lo[DIM], hi[DIM];
};

// The conserved variables of a lab-frame state whose total energy is `energy`.
DEVICE void lab_conserved(const Prim& w, real energy, real cons[NVAR])
{
    cons[0] = w.rho;
    cons[1] = w.rho * w.un;
#if DIM >= 2
    cons[2] = w.rho * w.ut;
#endif
#if DIM == 3
    cons[3] = w.rho * w.ut2;
#endif
    cons[VAR_E] = energy;
}

// A face state (total energy `energy`) moved by du, its cell's change of conserved variables
// over half a step; the face state itself where that would not be physical (rho or p <= 0:
// the predictor can overshoot at strong rarefactions), which keeps the scheme positive there.
DEVICE Prim evolved(const Prim& w, real energy, const real du[NVAR], real gamma)
{
    real cons[NVAR];
    lab_conserved(w, energy, cons);
    for (int v = 0; v < NVAR; ++v) cons[v] += du[v];
    const Prim moved = conserved_prim(cons, R(1), R(1), gamma);
    return moved.rho > R(0) && moved.p > R(0) ? moved : w;
}

// The face states of a cell with state `here` and neighbours below[d], above[d] along each
// axis d: its limited MUSCL face values (half_slopes, face_state) moved by half a step,
//   U_face += sum_d dt / (2 dx_d) (F_d(W_lo[d]) - F_d(W_hi[d])),
// one change for all its faces, with every axis in it (unsplit). half_dt_dx[d] = dt / (2 dx_d).
// The difference of the physical fluxes is an fma, and the axes' differences are summed
// symmetrically, so that x <-> y (<-> z) symmetric problems round alike on every axis.
// First order: the cell's state at every face (the scheme is Godunov's).
DEVICE Faces hancock_faces(const Prim& here, const Prim below[DIM], const Prim above[DIM],
                           const Gas& gas, const real half_dt_dx[DIM])
{
    Faces f;
    for (int d = 0; d < DIM; ++d) {
        const Prim h = half_slopes(below[d], here, above[d]);
        f.lo[d] = face_state(here, h, -1);
        f.hi[d] = face_state(here, h, 1);
    }
#if RECONSTRUCTION == 2
    real energy_lo[DIM], energy_hi[DIM], change[DIM][NVAR];
    for (int d = 0; d < DIM; ++d) {
        energy_lo[d] = total_energy(f.lo[d], gas);
        energy_hi[d] = total_energy(f.hi[d], gas);
        real flux_lo[NVAR], flux_hi[NVAR];
        lab_components(physical_flux(along(f.lo[d], d), energy_lo[d]), d, R(1), flux_lo);
        lab_components(physical_flux(along(f.hi[d], d), energy_hi[d]), d, R(1), flux_hi);
        for (int v = 0; v < NVAR; ++v)
            change[d][v] = fma(half_dt_dx[d], flux_lo[v], -(half_dt_dx[d] * flux_hi[v]));
    }
    real du[NVAR];
    for (int v = 0; v < NVAR; ++v) {
#if DIM == 1
        du[v] = change[0][v];
#elif DIM == 2
        du[v] = change[0][v] + change[1][v];
#else
        du[v] = symmetric_sum(change[0][v], change[1][v], change[2][v]);
#endif
    }
    for (int d = 0; d < DIM; ++d) {
        f.lo[d] = evolved(f.lo[d], energy_lo[d], du, gas.gamma);
        f.hi[d] = evolved(f.hi[d], energy_hi[d], du, gas.gamma);
    }
#else
    (void)gas;
    (void)half_dt_dx;
#endif
    return f;
}
