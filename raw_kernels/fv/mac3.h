// The 3D staggered (MAC) layout of the incompressible kernels (incompressible3d.cu,
// viscous3d.cu): component a (u, v, w: a = 0, 1, 2) on the faces normal to axis a, with n_d +
// 2G cells along each axis d != a and n_a + 1 + 2G faces along a, x fastest:
// q_a(i, j, k) = q_a[(i + G) + (j + G) s1 + (k + G) s2]; and the packed face vector of the
// implicit viscous stage (no ghosts, u's faces, then v's, then w's); cell arrays and the
// pressure gradient at a face.
#pragma once

#include "mac_lines.h"

// The face layout: n cells per axis, s[a][d] the stride of component a's array along axis d.
struct Mac3 {
    int n[3];
    int s[3][3];
};

DEVICE Mac3 mac3(int nx, int ny, int nz)
{
    Mac3 m;
    m.n[0] = nx;
    m.n[1] = ny;
    m.n[2] = nz;
    for (int a = 0; a < 3; ++a) {
        const int ex = nx + 2 * G + (a == 0), ey = ny + 2 * G + (a == 1);
        m.s[a][0] = 1;
        m.s[a][1] = ex;
        m.s[a][2] = ex * ey;
    }
    return m;
}

DEVICE int face_index(const Mac3& m, int a, const int* pos)
{
    return (pos[0] + G) + (pos[1] + G) * m.s[a][1] + (pos[2] + G) * m.s[a][2];
}

// Whether component a has a face at pos: 0..n along a, 0..n-1 across.
DEVICE bool has_face(const Mac3& m, int a, const int* pos)
{
    for (int d = 0; d < 3; ++d)
        if (pos[d] < 0 || pos[d] > m.n[d] - (d != a)) return false;
    return true;
}

// The row of component a's face at pos in the packed face vector: the components one after
// another, each x fastest with n_d + (d == a) faces along axis d. stride[d]: its strides.
DEVICE int packed3(const Mac3& m, int a, const int* pos, int* stride)
{
    int offset = 0;
    for (int b = 0; b < a; ++b)
        offset += (m.n[0] + (b == 0)) * (m.n[1] + (b == 1)) * (m.n[2] + (b == 2));
    stride[0] = 1;
    stride[1] = m.n[0] + (a == 0);
    stride[2] = stride[1] * (m.n[1] + (a == 1));
    return offset + pos[0] + stride[1] * pos[1] + stride[2] * pos[2];
}

// Where a cell array holds cell (i, j, k): x[first + i + sy j + sz k]. A packed one (p, the
// pressure solve's vectors) has first 0, sy nx, sz nx ny; a decomposed grid's block reads the
// solution and (implicit viscosity) p^n from copies padded by one halo cell
// (raw_kernels/core/halo.cu).
struct Cells {
    int first, sy, sz;
};

DEVICE int cell_at(const Cells& c, const int* pos)
{
    return c.first + pos[0] + c.sy * pos[1] + c.sz * pos[2];
}

// The gradient of the cell field x (laid out as `cells`) at component a's face pos into *grad
// (face_gradient of mac_lines.h along a); false where x has none (a wall or inflow face).
DEVICE bool gradient_at(const real* __restrict__ x, const Cells& cells, const Mac3& m, int a,
                        const int* pos, const int* kinds, const real* inv, real* grad)
{
    const int stride[3] = {1, cells.sy, cells.sz};
    int base = cells.first;
    for (int d = 0; d < 3; ++d)
        if (d != a) base += pos[d] * stride[d];
    return face_gradient(x, pos[a], m.n[a], stride[a], base, kinds[2 * a], kinds[2 * a + 1],
                         inv[a], grad);
}
