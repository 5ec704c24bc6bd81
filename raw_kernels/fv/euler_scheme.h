// The finite-volume scheme for the compressible Euler equations of an ideal gas on a
// structured grid, shared by the stage kernels of euler.cu (the march) and euler_tile.cu (the
// tile for small 2D grids): reconstruction, the update (the states and boundaries they read:
// euler_state.h; the Riemann solvers: euler_gas.h).
//
// State: conserved variables stored variable by variable (structure of arrays), cell (i, j, k)
// at (k * ny + j) * nx + i, x fastest. DIM 1: rho, rho*vx, E. DIM 2: rho, rho*vx, rho*vy, E.
// DIM 3: rho, rho*vx, rho*vy, rho*vz, E.
//
// Compile-time scheme:
//   DIM             1, 2 or 3
//   RECONSTRUCTION  1 first order, 2 MUSCL on primitive variables
//   LIMITER         1 minmod, 2 van Leer, 3 monotonized central (MC)
//   RIEMANN         1 Rusanov, 2 HLLC
//
// Boundaries are applied while loading neighbours (no ghost cells, no extra launch): an index
// outside the grid is mapped through the boundary of its side.
#pragma once
#include "euler_state.h"
#include "limiter.h"
#include "reduce.h"
#include "ssp_stages.h"

// Half the limited slopes of cell `here` along the axis on which `below` and `above` are its
// neighbours (lab frame, variable by variable): its faces' states are here -+ these.
DEVICE Prim half_slopes(const Prim& below, const Prim& here, const Prim& above)
{
    Prim h;
    h.rho = half_slope(here.rho - below.rho, above.rho - here.rho);
    h.un = half_slope(here.un - below.un, above.un - here.un);
    h.ut = half_slope(here.ut - below.ut, above.ut - here.ut);
    h.p = half_slope(here.p - below.p, above.p - here.p);
#if DIM == 3
    h.ut2 = half_slope(here.ut2 - below.ut2, above.ut2 - here.ut2);
#endif
    return h;
}

// The state at a cell's low face (sign -1) or high face (sign 1) from its half slopes h.
DEVICE Prim face_state(const Prim& here, const Prim& h, int sign)
{
    Prim w;
    w.rho = face_sum(here.rho, sign > 0 ? h.rho : -h.rho);
    w.un = face_sum(here.un, sign > 0 ? h.un : -h.un);
    w.ut = face_sum(here.ut, sign > 0 ? h.ut : -h.ut);
    w.p = face_sum(here.p, sign > 0 ? h.p : -h.p);
#if DIM == 3
    w.ut2 = face_sum(here.ut2, sign > 0 ? h.ut2 : -h.ut2);
#endif
    return w;
}

// A lab-frame state seen from a face normal to axis dir (0 x, 1 y, 2 z): the normal velocity
// swapped with the lab component along dir (y: un = vy, ut = vx; z: un = vz, ut2 = vx).
DEVICE Prim along(const Prim& lab, int dir)
{
    Prim w = lab;
    if (dir == 1) {
        w.un = lab.ut;
        w.ut = lab.un;
    }
#if DIM == 3
    if (dir == 2) {
        w.un = lab.ut2;
        w.ut2 = lab.un;
    }
#endif
    return w;
}

// A flux through a face normal to axis dir, in that face's frame (see along), times scale, as
// lab-frame components (the momentum components swapped back).
DEVICE void lab_components(const Flux& g, int dir, real scale, real f[NVAR])
{
    f[0] = g.mass * scale;
#if DIM == 2
    f[1] = (dir == 0 ? g.mom_n : g.mom_t) * scale;
    f[2] = (dir == 0 ? g.mom_t : g.mom_n) * scale;
#elif DIM == 3
    f[1] = (dir == 0 ? g.mom_n : dir == 1 ? g.mom_t : g.mom_t2) * scale;
    f[2] = (dir == 1 ? g.mom_n : g.mom_t) * scale;
    f[3] = (dir == 2 ? g.mom_n : g.mom_t2) * scale;
#else
    (void)dir;
    f[1] = g.mom_n * scale;
#endif
    f[VAR_E] = g.energy * scale;
}

// The flux through the face between lab-frame states `left` and `right` along axis dir, times
// dt/dx (dt/dy, dt/dz), in the lab frame (the momentum components swapped back, see along).
DEVICE void lab_flux(const Prim& left, const Prim& right, int dir, const Gas& gas, real dt_dx,
                     real f[NVAR])
{
    lab_components(riemann_flux(along(left, dir), along(right, dir), gas), dir, dt_dx, f);
}

// The new state `next` of one cell, written to o (its variables ncell apart): the stage value
// u + (x_lo - x_hi) + (y_lo - y_hi) + (z_lo - z_hi) from the cell's old state u and the fluxes
// (times dt/dx) through its low and high faces (1D: no y, 2D: no z; in 3D the three summed in
// an order independent of the axes, symmetric_sum), blended with u0 = start where the stage
// blends (w != 1).
DEVICE void update_cell(real* o, int ncell, const real old[NVAR], const real start[NVAR],
                        const real x_lo[NVAR], const real x_hi[NVAR], const real y_lo[NVAR],
                        const real y_hi[NVAR], const real z_lo[NVAR], const real z_hi[NVAR],
                        bool blend, real w, real next[NVAR])
{
    for (int v = 0; v < NVAR; ++v, o += ncell) {
        real change = x_lo[v] - x_hi[v];
#if DIM == 2
        change = change + (y_lo[v] - y_hi[v]);
#elif DIM == 3
        change = symmetric_sum(unfused_add(x_lo[v], -x_hi[v]), unfused_add(y_lo[v], -y_hi[v]),
                               unfused_add(z_lo[v], -z_hi[v]));
#else
        (void)y_lo;
        (void)y_hi;
#endif
#if DIM != 3
        (void)z_lo;
        (void)z_hi;
#endif
        const real stage = old[v] + change;
        next[v] = blend ? start[v] + w * (stage - start[v]) : stage;
        *o = next[v];
    }
}

// update_cell of a 1D or 2D grid (no z faces).
DEVICE void update_cell(real* o, int ncell, const real old[NVAR], const real start[NVAR],
                        const real x_lo[NVAR], const real x_hi[NVAR], const real y_lo[NVAR],
                        const real y_hi[NVAR], bool blend, real w, real next[NVAR])
{
    update_cell(o, ncell, old, start, x_lo, x_hi, y_lo, y_hi, nullptr, nullptr, blend, w, next);
}

// The stability rate of a cell's conserved variables (see cell_rate; inv_dz in 3D).
DEVICE real state_rate(const real cons[NVAR], real gamma, real inv_dx, real inv_dy,
                       real inv_dz = R(0))
{
#if DIM >= 2
    const real my = cons[2];
#else
    const real my = R(0);
#endif
#if DIM == 3
    const real mz = cons[3];
#else
    const real mz = R(0);
#endif
    return cell_rate(cons[0], cons[1], my, cons[VAR_E], gamma, inv_dx, inv_dy, mz, inv_dz);
}
