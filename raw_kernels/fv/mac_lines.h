// The per-line rules of the staggered (MAC) incompressible kernels that hold in any dimension
// (incompressible.cu in 2D through mac.h, incompressible3d.cu in 3D): boundary
// kinds, the ghosts of one boundary line, the transported value of the advective fluxes, which
// faces a boundary sets and the pressure gradient at a face. A line is a run of values along
// one axis with a stride; nothing here knows the other axes.
//
// Compile-time: G (ghost layers), ADVECTION (1 central, 2 QUICK; only transported() reads it).
#pragma once

#ifndef G
#error "G (ghost layers of the face velocities) must be defined"
#endif

#define BC_PERIODIC 0
#define BC_WALL 1     // no slip; the tangential velocity of the wall is given (a moving lid)
#define BC_SLIP 2     // free slip (symmetry)
#define BC_INFLOW 3   // normal velocity from a profile, tangential zero
#define BC_OUTFLOW 4  // zero normal gradient, pressure zero
#define BC_HALO 5     // a side between two blocks of a decomposed grid: its ghosts are the
                      // neighbouring block's faces, exchanged before the step reads them

// One side of one boundary line, at transverse position m. Along the normal the normal
// velocity has nodes on the faces 0..n (stride sn), the tangential velocity on the centres
// 0..n-1 (stride st); lo: the side at index 0, else the side at n. `line` points at node 0.
DEVICE void fill_normal(real* line, int sn, int n, bool lo, int kind, real inflow, bool fix)
{
    if (kind == BC_HALO) return;
    const int face = lo ? 0 : n;
    const real q = kind == BC_INFLOW ? inflow : R(0);
    if (fix && kind != BC_PERIODIC && kind != BC_OUTFLOW) line[face * sn] = q;
    if (kind == BC_PERIODIC && !lo) line[n * sn] = line[0];
    for (int g = 1; g <= G; ++g) {
        const int ghost = lo ? -g : n + g, mirror = lo ? g : n - g, partner = lo ? n - g : g;
        if (kind == BC_PERIODIC) line[ghost * sn] = line[partner * sn];
        else if (kind == BC_OUTFLOW) line[ghost * sn] = line[face * sn];
        else line[ghost * sn] = R(2) * q - line[mirror * sn];  // odd about the face value
    }
}

DEVICE void fill_tangential(real* line, int st, int n, bool lo, int kind, real wall)
{
    if (kind == BC_HALO) return;
    for (int g = 1; g <= G; ++g) {
        const int ghost = lo ? -g : n - 1 + g, mirror = lo ? g - 1 : n - g;
        const int partner = lo ? n - g : g - 1;
        real value;
        if (kind == BC_PERIODIC) value = line[partner * st];
        else if (kind == BC_OUTFLOW) value = line[(lo ? 0 : n - 1) * st];
        else if (kind == BC_WALL) value = R(2) * wall - line[mirror * st];  // wall speed
        else if (kind == BC_SLIP) value = line[mirror * st];
        else value = -line[mirror * st];  // inflow: no tangential velocity
        line[ghost * st] = value;
    }
}

// The transported value at the face between nodes a (index k) and b (k + 1), moved by velocity
// w: central (a + b) / 2, or QUICK (Leonard 1979), 3/8 downstream + 6/8 upstream - 1/8 far
// upstream (am = node k - 1, bp = node k + 2).
DEVICE real transported(real am, real a, real b, real bp, real w)
{
#if ADVECTION == 2
    return w >= R(0) ? R(0.375) * b + R(0.75) * a - R(0.125) * am
                     : R(0.375) * a + R(0.75) * b - R(0.125) * bp;
#else
    (void)am;
    (void)bp;
    (void)w;
    return R(0.5) * (a + b);
#endif
}

// Whether the face at normal index i (0..n) is set by a boundary instead of predicted: the two
// boundary faces of a non-periodic axis, unless a block's neighbour lies beyond them (halo).
// Outflow faces copy the inner face (zero gradient).
DEVICE bool boundary_face(int i, int n, int kind_lo, int kind_hi)
{
    return (i == 0 && kind_lo != BC_PERIODIC && kind_lo != BC_HALO)
        || (i == n && kind_hi != BC_PERIODIC && kind_hi != BC_HALO);
}

// x of the cell on the other side of face `i` (0..n) of an axis, seen from cell `i` (inside:
// true) or from cell i - 1: the neighbour (beyond a halo side, the halo cell of a padded x),
// the periodic partner, or the outflow ghost -x. Returns false for a face with no pressure
// gradient (a wall or inflow face).
DEVICE bool face_gradient(const real* __restrict__ x, int i, int n, int stride, int base,
                          int kind_lo, int kind_hi, real inv_h, real* grad)
{
    const int kind = i == 0 ? kind_lo : kind_hi;
    if ((i > 0 && i < n) || kind == BC_HALO) {
        *grad = (x[base + i * stride] - x[base + (i - 1) * stride]) * inv_h;
        return true;
    }
    if (kind == BC_PERIODIC) {
        *grad = (x[base] - x[base + (n - 1) * stride]) * inv_h;
        return true;
    }
    if (kind == BC_OUTFLOW) {  // x = 0 on the face: the ghost is -x of the inner cell
        const real inner = x[base + (i == 0 ? 0 : n - 1) * stride];
        *grad = (i == 0 ? R(2) * inner : -R(2) * inner) * inv_h;
        return true;
    }
    return false;
}

// Whether face i (0..n) of an axis is the copy of face 0 on a periodic axis (face n).
DEVICE bool periodic_copy(int i, int n, int kind_hi) { return i == n && kind_hi == BC_PERIODIC; }

// Whether face i (0..n) of an axis takes another face's increment in the implicit viscous
// stage (viscous.cu): face n of a periodic axis (face 0's), or face n of a halo side, which the
// block beyond solves for as its face 0 (so each face is one row of the distributed solve).
DEVICE bool copied_face(int i, int n, int kind_hi)
{
    return i == n && (kind_hi == BC_PERIODIC || kind_hi == BC_HALO);
}
