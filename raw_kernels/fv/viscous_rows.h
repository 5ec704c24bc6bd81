// The rows of the implicit viscous stage's operator I - s L in any dimension (viscous.cu in
// 2D, viscous3d.cu in 3D): what the Laplacian of the increment d = u* - u^n sees along a
// face's own axis and across each other axis. The boundary conditions of d are the velocity's
// made homogeneous (the boundary values of the new time are already in u^n when the step
// predicts):
//   along the own axis: boundary faces are fixed (d = 0) and their rows are the identity; an
//     outflow face copies the face inside it (d_n = d_{n-1}); the periodic copy face n is an
//     identity row too, and face n-1 sees face 0 beyond it;
//   across: ghosts are odd about a wall or inflow side (-d), even about a slip or outflow side
//     (d), periodic partners on a periodic side.
// Beyond a halo side (a decomposed grid's block, d padded: viscous.cu, viscous3d.cu) a row
// reads the neighbouring block's faces where the whole grid's row reads them.
// Every coupling is -s / h^2 both ways, so I - s L is symmetric positive definite.
#pragma once

// Whether the row of the face at index k (0..n) along its own axis is the identity.
DEVICE bool identity_row(int k, int n, int k_lo, int k_hi)
{
    return boundary_face(k, n, k_lo, k_hi) || periodic_copy(k, n, k_hi);
}

// d_{k-1} - 2 d_k + d_{k+1} along the own axis, at row r (value c), stride sk in d (the packed
// vector, or a block's padded faces); for a row that is not the identity.
DEVICE real second_along(const real* __restrict__ d, int r, int k, int n, int sk, int k_lo,
                         int k_hi, real c)
{
    real lo, hi;
    if (k > 0) lo = k - 1 > 0 || k_lo == BC_PERIODIC || k_lo == BC_HALO
                       ? d[r - sk] : (k_lo == BC_OUTFLOW ? c : R(0));
    else lo = d[r + (k_lo == BC_HALO ? -1 : n - 1) * sk];  // face -1: halo, or face n - 1
    if (k + 1 < n || k_hi == BC_HALO) hi = d[r + sk];
    else if (k_hi == BC_PERIODIC) hi = d[r - k * sk];  // face n is face 0
    else hi = k_hi == BC_OUTFLOW ? c : R(0);
    return lo - R(2) * c + hi;
}

// d_{m-1} - 2 d_m + d_{m+1} across one other axis (m = 0..lines-1 cell centres, stride sm).
DEVICE real second_across(const real* __restrict__ d, int r, int m, int lines, int sm, int m_lo,
                          int m_hi, real c)
{
    real south, north;
    if (m > 0 || m_lo == BC_HALO) south = d[r - sm];
    else if (m_lo == BC_PERIODIC) south = d[r + (lines - 1) * sm];
    else south = m_lo == BC_WALL || m_lo == BC_INFLOW ? -c : c;
    if (m + 1 < lines || m_hi == BC_HALO) north = d[r + sm];
    else if (m_hi == BC_PERIODIC) north = d[r - m * sm];
    else north = m_hi == BC_WALL || m_hi == BC_INFLOW ? -c : c;
    return south - R(2) * c + north;
}

// (I - s L) d at a face of component a in `dims` dimensions: d[r] its value, stride[e] d's
// stride along axis e (the packed vector's, or a block's padded array's), pos its index along
// each axis, n the cells, kinds the 2 dims sides' kinds (x_lo, x_hi, y_lo, ...), w 1 / h^2.
DEVICE real helmholtz_row(const real* __restrict__ d, int r, const int* stride, int a,
                          const int* pos, const int* n, const int* kinds, const real* w, real s,
                          int dims)
{
    const real c = d[r];
    if (identity_row(pos[a], n[a], kinds[2 * a], kinds[2 * a + 1])) return c;
    real lap = w[a] * second_along(d, r, pos[a], n[a], stride[a], kinds[2 * a],
                                   kinds[2 * a + 1], c);
    for (int e = 0; e < dims; ++e)
        if (e != a)
            lap += w[e] * second_across(d, r, pos[e], n[e], stride[e], kinds[2 * e],
                                        kinds[2 * e + 1], c);
    return c - s * lap;
}
