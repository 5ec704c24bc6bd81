// Face coefficients and face terms of the cell-centred Laplacian -div(k grad u), shared by the
// operator (stencil.cu, stencil_cg.cu) and the multigrid cycle (multigrid.cu).
//   VARIABLE 0: constant k, folded into the axis weights by the host.
//   VARIABLE 1: k per cell, passed as its inverse r = 1 / k; the face between cells a and b
//               has the harmonic mean 2 / (r_a + r_b) (no overflow for large k, the same bits
//               from either side), a boundary face the cell's own k.
#pragma once

#if VARIABLE
DEVICE real face_coef(real ra, real rb) { return R(2) / (ra + rb); }
DEVICE real wall_coef(real rc) { return R(1) / rc; }
#define INV_COEF(c) inv_coef[c]
#else
DEVICE real face_coef(real, real) { return R(1); }
DEVICE real wall_coef(real) { return R(1); }
#define INV_COEF(c) R(1)
#endif

// Contribution of one face of the cell (value xc, inverse coefficient rc) to its row: through
// the neighbour of value xn and inverse coefficient rn when `inside`, else through boundary
// side `side`.
DEVICE real face_term(bool inside, real xn, real rn, real xc, real rc, real w, int dirichlet,
                      int side)
{
    if (inside) return w * face_coef(rc, rn) * (xc - xn);
    return ((dirichlet >> side) & 1) ? R(2) * w * wall_coef(rc) * xc : R(0);
}
