// The staggered (MAC) layout of the incompressible solver's kernels (incompressible.cu,
// viscous.cu): boundary kinds, face indexing with G ghost layers, and the rules at the
// domain's boundary faces that both the momentum and the pressure stages follow.
//
//   u(i, j) = u[(i + G) + (j + G) * su], su = nx + 1 + 2G  (x faces, i = 0..nx, j = 0..ny-1)
//   v(i, j) = v[(i + G) + (j + G) * sv], sv = nx + 2G      (y faces, i = 0..nx-1, j = 0..ny)
#pragma once

#ifndef G
#error "G (ghost layers of u and v) must be defined"
#endif

#define BC_PERIODIC 0
#define BC_WALL 1     // no slip; the tangential velocity of the wall is given (a moving lid)
#define BC_SLIP 2     // free slip (symmetry)
#define BC_INFLOW 3   // normal velocity from a profile, tangential zero
#define BC_OUTFLOW 4  // zero normal gradient, pressure zero

struct Faces {
    int nx, ny, su, sv;
};

DEVICE int iu(const Faces& f, int i, int j) { return (i + G) + (j + G) * f.su; }
DEVICE int iv(const Faces& f, int i, int j) { return (i + G) + (j + G) * f.sv; }

// Whether the face at normal index i (0..n) is set by a boundary instead of predicted: the two
// boundary faces of a non-periodic axis. Outflow faces copy the inner face (zero gradient).
DEVICE bool boundary_face(int i, int n, int kind_lo, int kind_hi)
{
    return (i == 0 && kind_lo != BC_PERIODIC) || (i == n && kind_hi != BC_PERIODIC);
}

// x of the cell on the other side of face `i` (0..n) of an axis, seen from cell `i` (inside:
// true) or from cell i - 1: the neighbour, the periodic partner, or the outflow ghost -x.
// Returns false for a face with no pressure gradient (a wall or inflow face).
DEVICE bool face_gradient(const real* __restrict__ x, int i, int n, int stride, int base,
                          int kind_lo, int kind_hi, real inv_h, real* grad)
{
    if (i > 0 && i < n) {
        *grad = (x[base + i * stride] - x[base + (i - 1) * stride]) * inv_h;
        return true;
    }
    const int kind = i == 0 ? kind_lo : kind_hi;
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

// The packed face vector of the implicit viscous stage (viscous.cu): the u faces at
// i + (nx + 1) j, then the v faces at (nx + 1) ny + i + nx j, no ghosts.
DEVICE int packed_u(int nx, int i, int j) { return i + (nx + 1) * j; }
DEVICE int packed_v(int nx, int ny, int i, int j) { return (nx + 1) * ny + i + nx * j; }

// Whether face i (0..n) of an axis is the copy of face 0 on a periodic axis (face n).
DEVICE bool periodic_copy(int i, int n, int kind_hi) { return i == n && kind_hi == BC_PERIODIC; }
