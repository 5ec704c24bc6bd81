// Finite-element assembly in two launches per form: one thread per element computes its
// element matrix once, then one thread per nonzero of a precomputed CSR pattern sums the
// entries that add up to it. Driven by solvers/fe/assembly.py, which explains the maps.
//
// Gather, not scatter: thread t owns nonzero t of the matrix (or entry t of a vector) and adds
// its contributions, listed by the host in nz_ptr/entries sorted by element, in that fixed
// order. No atomics, no colouring passes, and the same bits every run. The element matrices
// pass through memory once (written by the element kernel, read by the gather); a load
// recomputes each contribution's geometry instead (one per element and node only).
//
// Defines: GDIM (space dimension 2 or 3), TDIM (element dimension: GDIM for cells, GDIM - 1
// for boundary facets), NLOC (nodes per element: TDIM + 1 for P1, (TDIM + 1)(TDIM + 2) / 2 for
// P2), NCOMP (values per node: 1, or GDIM for vector spaces). An element has NL = NLOC * NCOMP
// local dofs, node-major; contribution `entry` = e * NL * NL + I * NL + J for matrices and
// e * NL + I for vectors, where I = node * NCOMP + component.
//
// Element matrices of affine simplices (solvers/fe/reference.py): geometry times constant
// reference tensors, so no quadrature loop runs here.
//   mass       coef[e] |K| Mref[i][j]                                  (same component)
//   stiffness  coef[e] |K| sum_ab (G_a . G_b) Sref[i][j][a][b]          (same component)
//   elasticity |K| (lambda T(ci, cj) + mu T(cj, ci) + mu [ci == cj] sum_d T(d, d)), with
//              T(p, q) = sum_ab G_a[p] G_b[q] Eref[i][j][a][b] = (1/|K|) int dphi_i/dx_p
//              dphi_j/dx_q and (lambda, mu) = (coef[2e], coef[2e + 1]): the weak form
//              int lambda div u div v + 2 mu eps(u) : eps(v) of linear elasticity
#include "prelude.h"

#define NV (TDIM + 1)          // vertices of an element
#define NL (NLOC * NCOMP)      // local dofs of an element

// Barycentric gradients G[a][d] and the measure |K| of element e (vertex ids `vertices`,
// coordinates `points`, both row-major). For TDIM < GDIM (facets) only the measure is
// needed and the gradients are left unset.
DEVICE real element_geometry(const int* __restrict__ vertices,
                             const real* __restrict__ points, int e, real G[NV][GDIM])
{
    real x[NV][GDIM];
    for (int a = 0; a < NV; ++a)
        for (int d = 0; d < GDIM; ++d)
            x[a][d] = points[vertices[e * NV + a] * GDIM + d];
#if TDIM == 2 && GDIM == 2
    const real j00 = x[1][0] - x[0][0], j01 = x[2][0] - x[0][0];
    const real j10 = x[1][1] - x[0][1], j11 = x[2][1] - x[0][1];
    const real det = j00 * j11 - j01 * j10;
    const real inv = R(1) / det;
    // Rows of J^-1 are the gradients of lambda_1, lambda_2.
    G[1][0] = j11 * inv;  G[1][1] = -j01 * inv;
    G[2][0] = -j10 * inv; G[2][1] = j00 * inv;
    G[0][0] = -G[1][0] - G[2][0];
    G[0][1] = -G[1][1] - G[2][1];
    return fabs(det) * R(0.5);
#elif TDIM == 3 && GDIM == 3
    real j[3][3];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            j[r][c] = x[c + 1][r] - x[0][r];
    // Cofactors: (J^-1)[c][r] = cof[r][c] / det.
    real cof[3][3];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            cof[r][c] = j[(r + 1) % 3][(c + 1) % 3] * j[(r + 2) % 3][(c + 2) % 3]
                      - j[(r + 1) % 3][(c + 2) % 3] * j[(r + 2) % 3][(c + 1) % 3];
    const real det = j[0][0] * cof[0][0] + j[0][1] * cof[0][1] + j[0][2] * cof[0][2];
    const real inv = R(1) / det;
    for (int a = 1; a < 4; ++a)
        for (int d = 0; d < 3; ++d)
            G[a][d] = cof[d][a - 1] * inv;
    for (int d = 0; d < 3; ++d)
        G[0][d] = -G[1][d] - G[2][d] - G[3][d];
    return fabs(det) * (R(1) / R(6));
#elif TDIM == 1
    (void)G;
    real length2 = R(0);
    for (int d = 0; d < GDIM; ++d)
        length2 += (x[1][d] - x[0][d]) * (x[1][d] - x[0][d]);
    return sqrt(length2);
#elif TDIM == 2 && GDIM == 3
    (void)G;
    const real u0 = x[1][0] - x[0][0], u1 = x[1][1] - x[0][1], u2 = x[1][2] - x[0][2];
    const real v0 = x[2][0] - x[0][0], v1 = x[2][1] - x[0][1], v2 = x[2][2] - x[0][2];
    const real c0 = u1 * v2 - u2 * v1, c1 = u2 * v0 - u0 * v2, c2 = u0 * v1 - u1 * v0;
    return R(0.5) * sqrt(c0 * c0 + c1 * c1 + c2 * c2);
#endif
}

// The element matrix entry of local dofs (i, ci) and (j, cj) (nodes, components) of element
// e, without the measure |K|, for each form. A new form adds an entry function and a FORM_
// number here, and a kernel that calls element_matrix<FORM_...> with fe_mass's signature.
#define FORM_MASS 0
#define FORM_STIFFNESS 1
#define FORM_ELASTICITY 2

DEVICE real mass_entry(const real* __restrict__ coef, const real* __restrict__ ref, int e,
                       int i, int ci, int j, int cj)
{
    return ci == cj ? coef[e] * ref[i * NLOC + j] : R(0);
}

DEVICE real stiffness_entry(const real G[NV][GDIM], const real* __restrict__ coef,
                            const real* __restrict__ ref, int e, int i, int ci, int j, int cj)
{
    if (ci != cj) return R(0);
    const real* s = ref + (i * NLOC + j) * NV * NV;
    real sum = R(0);
    for (int a = 0; a < NV; ++a)
        for (int b = 0; b < NV; ++b) {
            real dot = R(0);
            for (int d = 0; d < GDIM; ++d)
                dot += G[a][d] * G[b][d];
            sum += dot * s[a * NV + b];
        }
    return coef[e] * sum;
}

// T(p, q) of the elasticity entry: sum_ab G[a][p] G[b][q] s[a][b], s = Eref[i][j].
DEVICE real gradient_product(const real G[NV][GDIM], const real* s, int p, int q)
{
    real sum = R(0);
    for (int a = 0; a < NV; ++a) {
        real row = R(0);
        for (int b = 0; b < NV; ++b)
            row += s[a * NV + b] * G[b][q];
        sum += G[a][p] * row;
    }
    return sum;
}

// Lame parameters interleaved per element: lambda = coef[2e], mu = coef[2e + 1].
DEVICE real elasticity_entry(const real G[NV][GDIM], const real* __restrict__ coef,
                             const real* __restrict__ ref, int e, int i, int ci, int j, int cj)
{
    // K_IJ = K_JI in exact arithmetic but not in rounding: both nonzeros evaluate the entry
    // with I <= J, so the assembled matrix is symmetric to the last bit (CG and AMG need it).
    if (i * NCOMP + ci > j * NCOMP + cj) {
        const int k = i, ck = ci;
        i = j; ci = cj; j = k; cj = ck;
    }
    const real* s = ref + (i * NLOC + j) * NV * NV;
    real value = coef[2 * e] * gradient_product(G, s, ci, cj)
               + coef[2 * e + 1] * gradient_product(G, s, cj, ci);
    if (ci == cj) {
        real trace = R(0);
        for (int d = 0; d < GDIM; ++d)
            trace += gradient_product(G, s, d, d);
        value += coef[2 * e + 1] * trace;
    }
    return value;
}

template <int FORM>
DEVICE real form_entry(const real G[NV][GDIM], const real* __restrict__ coef,
                       const real* __restrict__ ref, int e, int i, int ci, int j, int cj)
{
    if (FORM == FORM_MASS) return mass_entry(coef, ref, e, i, ci, j, cj);
    if (FORM == FORM_STIFFNESS) return stiffness_entry(G, coef, ref, e, i, ci, j, cj);
    return elasticity_entry(G, coef, ref, e, i, ci, j, cj);
}

// Element e's matrix: contributions[(I * NL + J) * count + e] = |K| times the entry of local
// dofs I and J (the index the gather map's entries hold). Entry-major, so that a warp's
// stores are coalesced.
template <int FORM>
DEVICE void element_matrix(const int* __restrict__ vertices, const real* __restrict__ points,
                           const real* __restrict__ coef, const real* __restrict__ ref,
                           real* __restrict__ contributions, int count)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= count) return;
    real G[NV][GDIM];
    const real measure = element_geometry(vertices, points, e, G);
    for (int I = 0; I < NL; ++I)
        for (int J = 0; J < NL; ++J)
            contributions[(long long)(I * NL + J) * count + e] =
                measure * form_entry<FORM>(G, coef, ref, e, I / NCOMP, I % NCOMP, J / NCOMP,
                                           J % NCOMP);
}

// Mass: coef int u v.
KERNEL void fe_mass(const int* __restrict__ vertices, const real* __restrict__ points,
                    const real* __restrict__ coef, const real* __restrict__ ref,
                    real* __restrict__ contributions, int count)
{
    element_matrix<FORM_MASS>(vertices, points, coef, ref, contributions, count);
}

// Stiffness: coef int grad u . grad v.
KERNEL void fe_stiffness(const int* __restrict__ vertices, const real* __restrict__ points,
                         const real* __restrict__ coef, const real* __restrict__ ref,
                         real* __restrict__ contributions, int count)
{
    element_matrix<FORM_STIFFNESS>(vertices, points, coef, ref, contributions, count);
}

// Linear elasticity: int lambda div u div v + 2 mu eps(u) : eps(v), coef holding (lambda, mu)
// per cell. Meaningful on vector spaces (NCOMP == GDIM) over cells only: assembly.py refuses
// other element sets (compiled in every variant, as the host launchers list every kernel).
KERNEL void fe_elasticity(const int* __restrict__ vertices, const real* __restrict__ points,
                          const real* __restrict__ coef, const real* __restrict__ ref,
                          real* __restrict__ contributions, int count)
{
    element_matrix<FORM_ELASTICITY>(vertices, points, coef, ref, contributions, count);
}

// values[t] = the sum of the element matrix entries of nonzero t, in the map's order.
KERNEL void fe_gather(const int* __restrict__ nz_ptr, const int* __restrict__ entries,
                      const real* __restrict__ contributions, real* __restrict__ values,
                      int nnz)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nnz) return;
    real sum = R(0);
    for (int k = nz_ptr[t]; k < nz_ptr[t + 1]; ++k)
        sum += contributions[entries[k]];
    values[t] = sum;
}

// b[t] (+)= sum over contributions (e, I) of coef[e] |K| sum_j Mref[i][j] f[dof of (e, j)]:
// the load of a source interpolated at the nodes (f nodal, same components). add != 0 adds
// to b (a boundary load on top of a volume load), else overwrites it.
KERNEL void fe_load(const int* __restrict__ dof_ptr, const int* __restrict__ entries,
                    const int* __restrict__ element_dofs, const int* __restrict__ vertices,
                    const real* __restrict__ points, const real* __restrict__ coef,
                    const real* __restrict__ mref, const real* __restrict__ f,
                    real* __restrict__ b, int n, int add)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    real sum = R(0);
    for (int k = dof_ptr[t]; k < dof_ptr[t + 1]; ++k) {
        const int e = entries[k] / NL;
        const int I = entries[k] - e * NL;
        const int i = I / NCOMP, c = I % NCOMP;
        real G[NV][GDIM];
        const real measure = element_geometry(vertices, points, e, G);
        real local = R(0);
        for (int j = 0; j < NLOC; ++j)
            local += mref[i * NLOC + j] * f[element_dofs[e * NL + j * NCOMP + c]];
        sum += coef[e] * measure * local;
    }
    b[t] = add ? b[t] + sum : sum;
}
