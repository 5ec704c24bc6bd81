// Rows of the cell-centred Laplacian and the per-axis transfers of the multigrid cycle, shared
// by the single-rank cycle (multigrid.cu, on a whole grid) and a rank's block of a decomposed
// grid (block_multigrid.cu, on an array padded by a one-cell halo). Needs stencil_coef.h.
//
// A cell's `inner` mask: bit s set when face s (0 x_lo, 1 x_hi, 2 y_lo, 3 y_hi, 4 z_lo, 5 z_hi)
// has a neighbour value to read (a cell of the array: of the grid, or of a halo); clear when the
// face lies on boundary side s of the whole grid. `walls` marks the array's sides that are
// boundary sides of the whole grid: every side of a whole grid (ALL_WALLS); on a block, the
// sides towards other blocks are not walls (their neighbours are halo cells).
#pragma once

#define ALL_WALLS 63

DEVICE int inner_faces(int i, int j, int k, int nx, int ny, int nz, int walls)
{
    int inner = ((i > 0 || !(walls & 1)) ? 1 : 0) | ((i < nx - 1 || !(walls & 2)) ? 2 : 0)
                | ((j > 0 || !(walls & 4)) ? 4 : 0) | ((j < ny - 1 || !(walls & 8)) ? 8 : 0);
#if DIM == 3
    inner |= ((k > 0 || !(walls & 16)) ? 16 : 0) | ((k < nz - 1 || !(walls & 32)) ? 32 : 0);
#else
    (void)k;
    (void)nz;
#endif
    return inner;
}

// One face of cell c (value xc, inverse coefficient rc) through neighbour n when `inside`, else
// through boundary side `side`: adds w k_f (xc - x_n) to *ax and w k_f to *diag.
DEVICE void add_face(bool inside, const real* __restrict__ x, const real* __restrict__ inv_coef,
                     int n, real xc, real rc, real w, int dirichlet, int side, real* ax,
                     real* diag)
{
    (void)inv_coef;  // unused when VARIABLE == 0
    if (inside) {
        const real a = w * face_coef(rc, INV_COEF(n));
        *ax += a * (xc - x[n]);
        *diag += a;
    } else if ((dirichlet >> side) & 1) {
        const real a = R(2) * w * wall_coef(rc);
        *ax += a * xc;
        *diag += a;
    }
}

// Row of cell c (array strides 1, sy, sz; faces by `inner`): (A x)_c into *ax, A_cc into *diag.
DEVICE void stencil_row(const real* __restrict__ x, const real* __restrict__ inv_coef, int c,
                        int sy, int sz, int inner, real wx, real wy, real wz, int dirichlet,
                        real* ax, real* diag)
{
    const real xc = x[c], rc = INV_COEF(c);
    *ax = R(0);
    *diag = R(0);
    add_face(inner & 1, x, inv_coef, c - 1, xc, rc, wx, dirichlet, 0, ax, diag);
    add_face(inner & 2, x, inv_coef, c + 1, xc, rc, wx, dirichlet, 1, ax, diag);
    add_face(inner & 4, x, inv_coef, c - sy, xc, rc, wy, dirichlet, 2, ax, diag);
    add_face(inner & 8, x, inv_coef, c + sy, xc, rc, wy, dirichlet, 3, ax, diag);
#if DIM == 3
    add_face(inner & 16, x, inv_coef, c - sz, xc, rc, wz, dirichlet, 4, ax, diag);
    add_face(inner & 32, x, inv_coef, c + sz, xc, rc, wz, dirichlet, 5, ax, diag);
#else
    (void)sz;
    (void)wz;
#endif
}

// A_cc alone (no neighbour values) of cell c, as stencil_row's *diag.
DEVICE real stencil_diagonal(const real* __restrict__ inv_coef, int c, int sy, int sz, int inner,
                             real wx, real wy, real wz, int dirichlet)
{
    (void)inv_coef;
    (void)c;  // c, sy and sz are unused when VARIABLE == 0
    (void)sy;
    (void)sz;
    const real rc = INV_COEF(c);
    const real wall = R(2) * wall_coef(rc);
    real d = R(0);
    d += (inner & 1) ? wx * face_coef(rc, INV_COEF(c - 1)) : ((dirichlet & 1) ? wx * wall : R(0));
    d += (inner & 2) ? wx * face_coef(rc, INV_COEF(c + 1)) : ((dirichlet & 2) ? wx * wall : R(0));
    d += (inner & 4) ? wy * face_coef(rc, INV_COEF(c - sy)) : ((dirichlet & 4) ? wy * wall : R(0));
    d += (inner & 8) ? wy * face_coef(rc, INV_COEF(c + sy)) : ((dirichlet & 8) ? wy * wall : R(0));
#if DIM == 3
    d += (inner & 16) ? wz * face_coef(rc, INV_COEF(c - sz))
                      : ((dirichlet & 16) ? wz * wall : R(0));
    d += (inner & 32) ? wz * face_coef(rc, INV_COEF(c + sz))
                      : ((dirichlet & 32) ? wz * wall : R(0));
#else
    (void)wz;
#endif
    return d;
}

// Per axis, the four fine cells 2I - 1 ... 2I + 2 that coarse cell I restricts from, as indices
// into an array whose first fine cell is 2 I0 - 1, with weights (1, 3, 3, 1) / 8; on a wall, a
// cell beyond it is the mirror of the cell inside it with weight s / 8 (the transpose of P's
// ghost rule; s = -1 Dirichlet, +1 Neumann). lo_side / hi_side: the side bits of the axis.
DEVICE void restrict_axis(int I, int I0, int nc, int walls, int dirichlet, int lo_side,
                          int hi_side, int* index, real* weight)
{
    const int f = 2 * (I - I0);  // index of fine cell 2I - 1
    index[0] = f;
    index[1] = f + 1;
    index[2] = f + 2;
    index[3] = f + 3;
    weight[0] = R(0.125);
    weight[1] = R(0.375);
    weight[2] = R(0.375);
    weight[3] = R(0.125);
    if (I == 0 && ((walls >> lo_side) & 1)) {
        index[0] = f + 1;
        weight[0] = ((dirichlet >> lo_side) & 1) ? R(-0.125) : R(0.125);
    }
    if (I == nc - 1 && ((walls >> hi_side) & 1)) {
        index[3] = f + 2;
        weight[3] = ((dirichlet >> hi_side) & 1) ? R(-0.125) : R(0.125);
    }
}

// The weighted sum over N x N (x N in 3D) points of v: sum over c, b, a of
// wz[c] wy[b] wx[a] v[ix[a] + sx (iy[b] + sy iz[c])], each axis's indices and weights from
// restrict_axis (N = 4) or prolong_axis (N = 2). In 2D only iz[0] and wz[0] are read.
template <int N>
DEVICE real tensor_sum(const real* v, int sx, int sy, const int* ix, const real* wx,
                       const int* iy, const real* wy, const int* iz, const real* wz)
{
#if DIM == 3
    const int nz_terms = N;
#else
    const int nz_terms = 1;
#endif
    real sum = R(0);
    for (int c = 0; c < nz_terms; ++c) {
        for (int b = 0; b < N; ++b) {
            real line = R(0);
            const int base = sx * (iy[b] + sy * iz[c]);
            for (int a = 0; a < N; ++a) line += wx[a] * v[base + ix[a]];
            sum += wz[c] * wy[b] * line;
        }
    }
    return sum;
}

// Per axis, the two coarse cells fine cell f interpolates from, with weights 3/4 and 1/4, as
// indices into an array whose first coarse cell is at `pad` (a halo cell before it at 0 when
// pad is 1); on a wall the outer one is the ghost s x_c[I] (s = -1 Dirichlet, +1 Neumann).
DEVICE void prolong_axis(int f, int nc, int walls, int dirichlet, int lo_side, int hi_side,
                         int pad, int* index, real* weight)
{
    const int I = f >> 1;
    const int other = (f & 1) ? I + 1 : I - 1;
    const int side = (f & 1) ? hi_side : lo_side;
    index[0] = I + pad;
    weight[0] = R(0.75);
    if ((other >= 0 && other < nc) || !((walls >> side) & 1)) {
        index[1] = other + pad;
        weight[1] = R(0.25);
    } else {
        index[1] = I + pad;
        weight[1] = ((dirichlet >> side) & 1) ? R(-0.25) : R(0.25);
    }
}
