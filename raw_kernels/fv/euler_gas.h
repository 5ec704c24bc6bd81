// The ideal gas of the Euler solvers, structured (euler_state.h, euler_scheme.h) and
// unstructured (euler_unstructured.cu): the conserved and primitive states, the exact sums that
// keep symmetric problems symmetric, the physical and Riemann (Rusanov, HLLC) fluxes in the frame
// of a face.
//
// Compile-time: DIM (1, 2 or 3), RIEMANN (1 Rusanov, 2 HLLC).
#pragma once
#include "prelude.h"

#define NVAR (DIM + 2)
#define VAR_E (DIM + 1)

// Primitive state. In the frame of a face: velocity normal (un) and tangential (ut, and in 3D
// ut2) to it; in the lab frame (the shared-memory arrays of a stage block): un = vx, ut = vy,
// ut2 = vz.
struct Prim {
    real rho, un, ut, p;
#if DIM == 3
    real ut2;
#endif
};

// Flux through a face, in the same frame.
struct Flux {
    real mass, mom_n, mom_t, energy;
#if DIM == 3
    real mom_t2;
#endif
};


// a^2 + b^2 rounded the same way for (a, b) and (b, a), to keep x <-> y symmetric problems
// symmetric to the bit: the terms ordered by magnitude, and one fixed FMA.
DEVICE real sum_of_squares(real a, real b)
{
    const real lo = fmin(fabs(a), fabs(b)), hi = fmax(fabs(a), fabs(b));
    return fma(hi, hi, lo * lo);
}

// a^2 + b^2 + c^2 rounded the same way for every order of (a, b, c) (x <-> y <-> z symmetry):
// the terms ordered by magnitude, smallest first, and two fixed FMAs.
DEVICE real sum_of_squares(real a, real b, real c)
{
    const real fa = fabs(a), fb = fabs(b), fc = fabs(c);
    const real lo = fmin(fmin(fa, fb), fc), hi = fmax(fmax(fa, fb), fc);
    const real mid = fmax(fmin(fa, fb), fmin(fmax(fa, fb), fc));
    return fma(hi, hi, fma(mid, mid, lo * lo));
}

// |v|^2 of a primitive state, symmetric in its components.
DEVICE real speed_squared(const Prim& w)
{
#if DIM == 3
    return sum_of_squares(w.un, w.ut, w.ut2);
#else
    return sum_of_squares(w.un, w.ut);
#endif
}

// Primitive state in the lab frame of a cell with conserved variables cons, its velocity
// components times flip_x, flip_y and flip_z (-1 mirrors them at a wall).
DEVICE Prim conserved_prim(const real cons[NVAR], real flip_x, real flip_y, real gamma,
                           real flip_z = R(1))
{
    Prim w;
    const real rho = cons[0];
    const real inv_rho = approx_recip(rho);
    const real vx = cons[1] * inv_rho;
#if DIM >= 2
    const real vy = cons[2] * inv_rho;
#else
    const real vy = R(0);
    (void)flip_y;
#endif
    w.rho = rho;
    w.un = flip_x * vx;
    w.ut = flip_y * vy;
#if DIM == 3
    const real vz = cons[3] * inv_rho;
    w.ut2 = flip_z * vz;
    const real v2 = sum_of_squares(vx, vy, vz);
#else
    (void)flip_z;
    const real v2 = sum_of_squares(vx, vy);
#endif
    w.p = (gamma - R(1)) * (cons[VAR_E] - R(0.5) * rho * v2);
    return w;
}

// The conserved variables of stored cell c (a pointer step a variable: fewer integer
// instructions than an index product each).
DEVICE void load_cell(const real* u, int ncell, int c, real cons[NVAR])
{
    const real* p = u + c;
    for (int v = 0; v < NVAR; ++v, p += ncell) cons[v] = *p;
}

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
