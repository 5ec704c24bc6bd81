// The finite-volume scheme for the compressible Euler equations of an ideal gas on a
// structured grid, shared by the stage kernels of euler.cu (the march) and euler_tile.cu (the
// tile for small 2D grids): reconstruction, Riemann solvers, the update (the states and
// boundaries they read: euler_state.h).
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

struct Gas {
    real gamma, inv_gm1;  // ratio of specific heats, 1 / (gamma - 1)
};

DEVICE Flux physical_flux(const Prim& w, real energy)
{
    Flux f;
    f.mass = w.rho * w.un;
    f.mom_n = f.mass * w.un + w.p;
    f.mom_t = f.mass * w.ut;
#if DIM == 3
    f.mom_t2 = f.mass * w.ut2;
#endif
    f.energy = (energy + w.p) * w.un;
    return f;
}

// The face fluxes below are inlined twice in a stage kernel (x and y faces), and their inputs
// reach the two copies in different orders. Left to the compiler, a sum of two products a b + c d
// may become an FMA of either product, chosen differently in the two copies: a symmetric problem
// would lose its x <-> y symmetry. So every such sum is written with an explicit fma, and
// un^2 + ut^2 (+ ut2^2) through speed_squared.
DEVICE real total_energy(const Prim& w, const Gas& gas)
{
    return fma(w.p, gas.inv_gm1, R(0.5) * w.rho * speed_squared(w));
}

// sqrt(gamma p / rho), as gamma p / sqrt(gamma p rho): one approximate reciprocal square root.
DEVICE real sound_speed(const Prim& w, const Gas& gas)
{
    const real gp = gas.gamma * w.p;
    return gp * approx_rsqrt(gp * w.rho);
}

#if RIEMANN == 1
// Rusanov (local Lax-Friedrichs).
DEVICE Flux riemann_flux(const Prim& l, const Prim& r, const Gas& gas)
{
    const real el = total_energy(l, gas), er = total_energy(r, gas);
    const real ml = l.rho * l.un, mr = r.rho * r.un;  // mass fluxes
    const real hs = R(0.5) * fmax(fabs(l.un) + sound_speed(l, gas),
                                  fabs(r.un) + sound_speed(r, gas));
    // F = (F_L + F_R) / 2 - hs (U_R - U_L), component by component.
    Flux f;
    f.mass = fma(-hs, r.rho - l.rho, R(0.5) * fma(l.rho, l.un, mr));
    f.mom_n = fma(-hs, fma(r.rho, r.un, -ml),
                  R(0.5) * (fma(ml, l.un, l.p) + fma(mr, r.un, r.p)));
    f.mom_t = fma(-hs, fma(r.rho, r.ut, -(l.rho * l.ut)), R(0.5) * fma(ml, l.ut, mr * r.ut));
#if DIM == 3
    f.mom_t2 = fma(-hs, fma(r.rho, r.ut2, -(l.rho * l.ut2)),
                   R(0.5) * fma(ml, l.ut2, mr * r.ut2));
#endif
    f.energy = fma(-hs, er - el, R(0.5) * fma(el + l.p, l.un, (er + r.p) * r.un));
    return f;
}
#else
// HLLC (Toro, Spruce and Speares 1994) with Davis wave-speed estimates. The flux of the side
// K whose state the face sees (the upwind side of the contact, or of the whole fan when it is
// supersonic); in the star region F*_K = F_K + S_K (U*_K - U_K) with, for m = rho (S_K - un)
// and q = 1 / (S_K - S*), U*_K = q (m, m S*, m ut, (S_K - un) E + (S* - un)(m S* + p)) (and
// m ut2 in 3D).
DEVICE Flux riemann_flux(const Prim& l, const Prim& r, const Gas& gas)
{
    const real cl = sound_speed(l, gas), cr = sound_speed(r, gas);
    const real sl = fmin(l.un - cl, r.un - cr);
    const real sr = fmax(l.un + cl, r.un + cr);
    const real ml = l.rho * (sl - l.un), mr = r.rho * (sr - r.un);
    const real s_star = (fma(l.un, ml, r.p - l.p) - r.un * mr) * approx_recip(ml - mr);
    // Select the side's inputs, then evaluate one flux and its star-region correction, and
    // select again: no branch (a divergent one in a warp whose faces see contacts moving both
    // ways; in smooth subsonic flow every face takes the correction anyway).
    const bool left = sl >= R(0) || (sr > R(0) && s_star >= R(0));
    const Prim w = left ? l : r;
    const real energy = total_energy(w, gas);
    const Flux f = physical_flux(w, energy);
    const real s = left ? sl : sr, m = left ? ml : mr;
    const real q = approx_recip(s - s_star);
    const real e_star = q * fma(s - w.un, energy, (s_star - w.un) * fma(m, s_star, w.p));
    Flux g;
    g.mom_n = f.mom_n + s * fma(m * q, s_star, -f.mass);
    g.mass = fma(s, m * q - w.rho, f.mass);
    g.mom_t = g.mass * w.ut;
#if DIM == 3
    g.mom_t2 = g.mass * w.ut2;
#endif
    g.energy = fma(s, e_star - energy, f.energy);
    return sl < R(0) && sr > R(0) ? g : f;
}
#endif

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
