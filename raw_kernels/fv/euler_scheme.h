// The finite-volume scheme for the compressible Euler equations of an ideal gas on a
// structured grid, shared by the stage kernels of euler.cu (the march) and euler_tile.cu (the
// tile for small 2D grids): states, boundaries, reconstruction, Riemann solvers, the update.
//
// State: conserved variables stored variable by variable (structure of arrays), cell (i, j) at
// j * nx + i, x fastest. DIM 1: rho, rho*vx, E. DIM 2: rho, rho*vx, rho*vy, E.
//
// Compile-time scheme:
//   DIM             1 or 2
//   RECONSTRUCTION  1 first order, 2 MUSCL on primitive variables
//   LIMITER         1 minmod, 2 van Leer, 3 monotonized central (MC)
//   RIEMANN         1 Rusanov, 2 HLLC
//
// Boundaries are applied while loading neighbours (no ghost cells, no extra launch): an index
// outside the grid is mapped through the boundary of its side.
#pragma once
#include "prelude.h"
#include "reduce.h"
#include "limiter.h"

#define NVAR (DIM + 2)
#define VAR_E (DIM + 1)

#define BC_PERIODIC 0
#define BC_TRANSMISSIVE 1
#define BC_REFLECTIVE 2
#define BC_INFLOW 3

// Primitive state. In the frame of a face: velocity normal (un) and tangential (ut) to it; in
// the lab frame (the shared-memory arrays of a stage block): un = vx, ut = vy.
struct Prim {
    real rho, un, ut, p;
};

// Flux through a face, in the same frame.
struct Flux {
    real mass, mom_n, mom_t, energy;
};


// Boundary kinds are separate members, not an array: a runtime index into an array would put
// the whole struct in (slow) local memory.
struct Grid {
    const real* u;
    const real* inflow;  // per side (x_lo, x_hi, y_lo, y_hi): rho, vx, vy, p
    int nx, ny;
    int bc_xlo, bc_xhi, bc_ylo, bc_yhi;
    real gamma;
};

// a^2 + b^2 rounded the same way for (a, b) and (b, a), to keep x <-> y symmetric problems
// symmetric to the bit: the terms ordered by magnitude, and one fixed FMA.
DEVICE real sum_of_squares(real a, real b)
{
    const real lo = fmin(fabs(a), fabs(b)), hi = fmax(fabs(a), fabs(b));
    return fma(hi, hi, lo * lo);
}

// Primitive state in the lab frame of a cell with conserved variables cons, its velocity
// components times flip_x and flip_y (-1 mirrors them at a wall).
DEVICE Prim conserved_prim(const real cons[NVAR], real flip_x, real flip_y, real gamma)
{
    Prim w;
    const real rho = cons[0];
    const real inv_rho = approx_recip(rho);
    const real vx = cons[1] * inv_rho;
#if DIM == 2
    const real vy = cons[2] * inv_rho;
#else
    const real vy = R(0);
    (void)flip_y;
#endif
    w.rho = rho;
    w.un = flip_x * vx;
    w.ut = flip_y * vy;
    w.p = (gamma - R(1)) * (cons[VAR_E] - R(0.5) * rho * sum_of_squares(vx, vy));
    return w;
}

// The conserved variables of stored cell c (a pointer step a variable: fewer integer
// instructions than an index product each).
DEVICE void load_cell(const real* u, int ncell, int c, real cons[NVAR])
{
    const real* p = u + c;
    for (int v = 0; v < NVAR; ++v, p += ncell) cons[v] = *p;
}

// Primitive state of stored cell c (see conserved_prim).
DEVICE Prim cell_prim(const real* u, int ncell, int c, real flip_x, real flip_y, real gamma)
{
    real cons[NVAR];
    load_cell(u, ncell, c, cons);
    return conserved_prim(cons, flip_x, flip_y, gamma);
}

// Primitive state of cell (i, j) in the lab frame (un = vx, ut = vy). The cell may be
// a ghost cell of one side: its index is mapped through that side's boundary, and a wall
// mirrors the velocity normal to it. Cells outside every side's two ghost layers (only
// corners and the far end of a partial strip) are never used; they get a harmless state.
DEVICE Prim lab_prim(const Grid& g, int i, int j)
{
    Prim w;
    int side = -1;
    if (i < 0) side = 0;
    else if (i >= g.nx) side = 1;
    if (j < 0 || j >= g.ny) side = side >= 0 ? 4 : (j < 0 ? 2 : 3);
    if (side == 4 || i < -2 || i >= g.nx + 2 || j < -2 || j >= g.ny + 2) {
        w.rho = R(1);
        w.un = R(0);
        w.ut = R(0);
        w.p = R(1);
        return w;
    }

    real flip_x = R(1), flip_y = R(1);
    if (side >= 0) {
        const int kind = side == 0 ? g.bc_xlo : side == 1 ? g.bc_xhi : side == 2 ? g.bc_ylo
                                                                             : g.bc_yhi;
        if (kind == BC_INFLOW) {
            const real* s = g.inflow + 4 * side;
            w.rho = s[0];
            w.un = s[1];
            w.ut = s[2];
            w.p = s[3];
            return w;
        }
        if (side < 2) {
            if (kind == BC_PERIODIC) i = i < 0 ? i + g.nx : i - g.nx;
            else i = i < 0 ? -1 - i : 2 * g.nx - 1 - i;
            if (kind == BC_REFLECTIVE) flip_x = R(-1);
        } else {
            if (kind == BC_PERIODIC) j = j < 0 ? j + g.ny : j - g.ny;
            else j = j < 0 ? -1 - j : 2 * g.ny - 1 - j;
            if (kind == BC_REFLECTIVE) flip_y = R(-1);
        }
    }
    return cell_prim(g.u, g.nx * g.ny, j * g.nx + i, flip_x, flip_y, g.gamma);
}

// Largest stable 1/dt of one cell from its conserved variables: (|vx| + c)/dx + (|vy| + c)/dy.
// A non-finite or non-physical cell gives an infinite rate, which stops the run.
DEVICE real cell_rate(real rho, real mx, real my, real energy, real gamma, real inv_dx,
                      real inv_dy)
{
    const real inv_rho = approx_recip(rho);
    const real vx = mx * inv_rho, vy = my * inv_rho;
    const real p = (gamma - R(1)) * (energy - R(0.5) * rho * sum_of_squares(vx, vy));
    // Without a branch: a NaN anywhere fails the comparisons.
    const real a = approx_sqrt(gamma * p * inv_rho);
    real rate = (fabs(vx) + a) * inv_dx;
#if DIM == 2
    rate += (fabs(vy) + a) * inv_dy;
#else
    (void)inv_dy;
#endif
    return rho > R(0) && p > R(0) && rate < REAL_INF ? rate : REAL_INF;
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
    f.energy = (energy + w.p) * w.un;
    return f;
}

// The face fluxes below are inlined twice in a stage kernel (x and y faces), and their inputs
// reach the two copies in different orders. Left to the compiler, a sum of two products a b + c d
// may become an FMA of either product, chosen differently in the two copies: a symmetric problem
// would lose its x <-> y symmetry. So every such sum is written with an explicit fma, and
// un^2 + ut^2 through sum_of_squares.
DEVICE real total_energy(const Prim& w, const Gas& gas)
{
    return fma(w.p, gas.inv_gm1, R(0.5) * w.rho * sum_of_squares(w.un, w.ut));
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
    f.energy = fma(-hs, er - el, R(0.5) * fma(el + l.p, l.un, (er + r.p) * r.un));
    return f;
}
#else
// HLLC (Toro, Spruce and Speares 1994) with Davis wave-speed estimates. The flux of the side
// K whose state the face sees (the upwind side of the contact, or of the whole fan when it is
// supersonic); in the star region F*_K = F_K + S_K (U*_K - U_K) with, for m = rho (S_K - un)
// and q = 1 / (S_K - S*), U*_K = q (m, m S*, m ut, (S_K - un) E + (S* - un)(m S* + p)).
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
    return h;
}

// The state at a cell's low face (sign -1) or high face (sign 1) from its half slopes h.
DEVICE Prim face_state(const Prim& here, const Prim& h, int sign)
{
    Prim w;
    w.rho = sign > 0 ? here.rho + h.rho : here.rho - h.rho;
    w.un = sign > 0 ? here.un + h.un : here.un - h.un;
    w.ut = sign > 0 ? here.ut + h.ut : here.ut - h.ut;
    w.p = sign > 0 ? here.p + h.p : here.p - h.p;
    return w;
}

// A lab-frame state seen from a face normal to axis dir (0 x, 1 y).
DEVICE Prim along(const Prim& lab, int dir)
{
    Prim w = lab;
    if (dir == 1) {
        w.un = lab.ut;
        w.ut = lab.un;
    }
    return w;
}

// The flux through the face between lab-frame states `left` and `right` along axis dir, times
// dt/dx (dt/dy), in the lab frame.
DEVICE void lab_flux(const Prim& left, const Prim& right, int dir, const Gas& gas, real dt_dx,
                     real f[NVAR])
{
    const Flux g = riemann_flux(along(left, dir), along(right, dir), gas);
    f[0] = g.mass * dt_dx;
#if DIM == 2
    f[1] = (dir == 0 ? g.mom_n : g.mom_t) * dt_dx;
    f[2] = (dir == 0 ? g.mom_t : g.mom_n) * dt_dx;
#else
    f[1] = g.mom_n * dt_dx;
#endif
    f[VAR_E] = g.energy * dt_dx;
}

// The new state `next` of one cell, written to o (its variables ncell apart): the stage value
// u + (x_lo - x_hi) + (y_lo - y_hi) from the cell's old state u and the fluxes (times dt/dx)
// through its low and high faces (1D: no y), blended with u0 = start where the stage blends
// (w != 1).
DEVICE void update_cell(real* o, int ncell, const real old[NVAR], const real start[NVAR],
                        const real x_lo[NVAR], const real x_hi[NVAR], const real y_lo[NVAR],
                        const real y_hi[NVAR], bool blend, real w, real next[NVAR])
{
    for (int v = 0; v < NVAR; ++v, o += ncell) {
        real change = x_lo[v] - x_hi[v];
#if DIM == 2
        change = change + (y_lo[v] - y_hi[v]);
#else
        (void)y_lo;
        (void)y_hi;
#endif
        const real stage = old[v] + change;
        next[v] = blend ? start[v] + w * (stage - start[v]) : stage;
        *o = next[v];
    }
}

// The stability rate of a cell's conserved variables (see cell_rate).
DEVICE real state_rate(const real cons[NVAR], real gamma, real inv_dx, real inv_dy)
{
#if DIM == 2
    const real my = cons[2];
#else
    const real my = R(0);
#endif
    return cell_rate(cons[0], cons[1], my, cons[VAR_E], gamma, inv_dx, inv_dy);
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
