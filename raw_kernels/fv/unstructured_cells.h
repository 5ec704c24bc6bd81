// The cells of an unstructured finite-volume mesh as the Euler kernels read them
// (euler_unstructured.cu; the scheme: docs/euler_unstructured.md): each cell's face slots, the
// boundaries' ghost states, primitive states in the lab frame and in the frame of a face.
//
// Layout, n cells in locality order, FACES slots a cell (an unused slot: the cell itself as
// its neighbour, zero area, normal and offsets; the stage skips it). Slot k of cell c at
// k * n + c:
//   nb      int: the neighbour cell, or -1 - g across a face of boundary group g
//   area    face area (length in 2D)
//   normal  DIM components (component a at (a * FACES + k) * n + c): unit normal out of c
//   r       DIM components: face centroid - cell centroid
//   d       DIM components: neighbour (or ghost) centroid - cell centroid
// Per cell: inv_vol (1 / volume), lsq (the inverse least-squares matrix, symmetric, DIM = 2:
// xx xy yy; DIM = 3: xx xy xz yy yz zz, entry e at e * n + c), eps2 (Venkatakrishnan's eps^2).
// Per boundary group g: its kind (GHOST_*) and a state rho, vx, vy, vz, p at 5 g.
#pragma once
#include "euler_gas.h"

#define GHOST_REFLECTIVE 0
#define GHOST_TRANSMISSIVE 1
#define GHOST_INFLOW 2
#define GHOST_PRESSURE 3
#define GHOST_FARFIELD 4
#define GHOST_STATE 5

#define LSQ_ENTRIES (DIM * (DIM + 1) / 2)

struct Cells {
    const int* nb;
    const real* area;
    const real* normal;
    const real* r;
    const real* d;
    const real* inv_vol;
    const int* bc_kind;
    const real* bc_state;
    int n;
    real gamma;
};

// Component a of a slot's vector array (normal, r, d).
DEVICE real slot_vector(const real* a, const Cells& m, int k, int c, int axis)
{
    return a[(axis * FACES + k) * m.n + c];
}

// x . y of DIM-vectors.
DEVICE real dot(const real* x, const real* y)
{
    real s = x[0] * y[0];
    for (int a = 1; a < DIM; ++a) s = fma(x[a], y[a], s);
    return s;
}

// The lab-frame primitive state w = (rho, v, p) of conserved variables cons.
DEVICE void primitive(const real cons[NVAR], real gamma, real w[NVAR])
{
    const real inv_rho = approx_recip(cons[0]);
    real v2 = R(0);
    w[0] = cons[0];
    for (int a = 1; a <= DIM; ++a) {
        w[a] = cons[a] * inv_rho;
        v2 = fma(w[a], w[a], v2);
    }
    w[VAR_E] = (gamma - R(1)) * (cons[VAR_E] - R(0.5) * cons[0] * v2);
}

// The primitive state of stored cell c.
DEVICE void cell_primitive(const real* u, const Cells& m, int c, real w[NVAR])
{
    real cons[NVAR];
    load_cell(u, m.n, c, cons);
    primitive(cons, m.gamma, w);
}

// v . n of a lab-frame state.
DEVICE real normal_velocity(const real w[NVAR], const real n[DIM])
{
    return dot(w + 1, n);
}

// Characteristic far-field state (Riemann invariants) from w inside and the free stream s
// (rho, vx, vy, vz, p) outside.
DEVICE void farfield_state(const real w[NVAR], const real n[DIM], const real* s, real gamma,
                           real g[NVAR])
{
    const real gm1 = gamma - R(1);
    const real un = normal_velocity(w, n), c = approx_sqrt(gamma * w[VAR_E] / w[0]);
    real inf[NVAR];
    inf[0] = s[0];
    for (int a = 0; a < DIM; ++a) inf[1 + a] = s[1 + a];
    inf[VAR_E] = s[4];
    const real un_inf = normal_velocity(inf, n);
    const real c_inf = approx_sqrt(gamma * inf[VAR_E] / inf[0]);
    // Supersonic: everything comes from upstream. (The side is chosen value by value, not by
    // a pointer to one of the two arrays, which would put both in local memory.)
    if (fabs(un) >= c) {
        for (int v = 0; v < NVAR; ++v) g[v] = un < R(0) ? inf[v] : w[v];
        return;
    }
    // Subsonic: the outgoing invariant from inside, the incoming one from the free stream;
    // entropy and tangential velocity from the side the flow comes from.
    const real r_out = un + R(2) * c / gm1, r_in = un_inf - R(2) * c_inf / gm1;
    const real un_b = R(0.5) * (r_out + r_in), c_b = R(0.25) * gm1 * (r_out - r_in);
    const bool inflow = un_b < R(0);
    const real un_up = inflow ? un_inf : un;
    const real entropy = (inflow ? inf[VAR_E] : w[VAR_E]) / pow(inflow ? inf[0] : w[0], gamma);
    g[0] = pow(c_b * c_b / (gamma * entropy), R(1) / gm1);
    g[VAR_E] = g[0] * c_b * c_b / gamma;
    for (int a = 0; a < DIM; ++a)
        g[1 + a] = (inflow ? inf[1 + a] : w[1 + a]) + (un_b - un_up) * n[a];
}

// The ghost state g(w) across a face of boundary group `group` with unit outward normal n.
DEVICE void ghost_state(const real w[NVAR], const real n[DIM], int group, const Cells& m,
                        real g[NVAR])
{
    const int kind = m.bc_kind[group];
    const real* s = m.bc_state + GHOST_STATE * group;
    for (int v = 0; v < NVAR; ++v) g[v] = w[v];
    if (kind == GHOST_REFLECTIVE) {
        const real un = normal_velocity(w, n);
        for (int a = 0; a < DIM; ++a) g[1 + a] = fma(R(-2) * un, n[a], w[1 + a]);
    } else if (kind == GHOST_INFLOW) {
        g[0] = s[0];
        for (int a = 0; a < DIM; ++a) g[1 + a] = s[1 + a];
        g[VAR_E] = s[4];
    } else if (kind == GHOST_PRESSURE) {
        const real c = approx_sqrt(m.gamma * w[VAR_E] / w[0]);
        if (normal_velocity(w, n) < c) g[VAR_E] = s[4];
    } else if (kind == GHOST_FARFIELD) {
        farfield_state(w, n, s, m.gamma, g);
    }
}

// A unit tangent of a 3D face with unit normal n (any: the fluxes depend on the tangential
// velocity only through the plane it spans).
DEVICE void face_tangents(const real n[DIM], real t1[DIM], real t2[DIM])
{
#if DIM == 3
    // Project the axis least aligned with n out of n.
    const bool x_axis = fabs(n[0]) < R(0.6);
    const real ax = x_axis ? R(1) : R(0), ay = x_axis ? R(0) : R(1);
    const real an = ax * n[0] + ay * n[1];
    real t[3] = {ax - an * n[0], ay - an * n[1], -an * n[2]};
    const real inv = approx_rsqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    for (int a = 0; a < 3; ++a) t1[a] = t[a] * inv;
    t2[0] = n[1] * t1[2] - n[2] * t1[1];
    t2[1] = n[2] * t1[0] - n[0] * t1[2];
    t2[2] = n[0] * t1[1] - n[1] * t1[0];
#else
    t1[0] = -n[1];
    t1[1] = n[0];
    (void)t2;
#endif
}

// A lab-frame state in the frame of a face: un = v . n, ut = v . t1 (ut2 = v . t2).
DEVICE Prim face_frame(const real w[NVAR], const real n[DIM], const real t1[DIM],
                       const real t2[DIM])
{
    Prim p;
    p.rho = w[0];
    p.un = normal_velocity(w, n);
    p.ut = dot(w + 1, t1);
#if DIM == 3
    p.ut2 = dot(w + 1, t2);
#else
    (void)t2;
#endif
    p.p = w[VAR_E];
    return p;
}

// A face-frame flux as lab-frame components, times scale, added to acc.
DEVICE void add_lab_flux(const Flux& f, const real n[DIM], const real t1[DIM],
                         const real t2[DIM], real scale, real acc[NVAR])
{
    acc[0] = fma(scale, f.mass, acc[0]);
    for (int a = 0; a < DIM; ++a) {
        real m = f.mom_n * n[a] + f.mom_t * t1[a];
#if DIM == 3
        m = fma(f.mom_t2, t2[a], m);
#else
        (void)t2;
#endif
        acc[1 + a] = fma(scale, m, acc[1 + a]);
    }
    acc[VAR_E] = fma(scale, f.energy, acc[VAR_E]);
}

// The largest stable 1/dt of cell c with primitive state w: (1 / (2 V)) sum_f (|v . n| + c) A
// over its faces; infinite for a non-finite or non-physical state (which stops the run).
DEVICE real cell_rate(const real w[NVAR], const Cells& m, int c)
{
    if (!(w[0] > R(0) && w[VAR_E] > R(0) && w[VAR_E] < REAL_INF)) return REAL_INF;
    const real sound = approx_sqrt(m.gamma * w[VAR_E] / w[0]);
    real sum = R(0);
    for (int k = 0; k < FACES; ++k) {
        real n[DIM];
        for (int a = 0; a < DIM; ++a) n[a] = slot_vector(m.normal, m, k, c, a);
        sum = fma(fabs(normal_velocity(w, n)) + sound, m.area[k * m.n + c], sum);
    }
    const real rate = R(0.5) * sum * m.inv_vol[c];
    return rate == rate ? rate : REAL_INF;
}
