// The 3D staggered (MAC) layout of the incompressible kernels (incompressible3d.cu,
// viscous3d.cu): component a (u, v, w: a = 0, 1, 2) on the faces normal to axis a, with n_d +
// 2G cells along each axis d != a and n_a + 1 + 2G faces along a, x fastest:
// q_a(i, j, k) = q_a[(i + G) + (j + G) s1 + (k + G) s2]; and the packed face vector of the
// implicit viscous stage (no ghosts, u's faces, then v's, then w's).
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
