"""An independent finite-element assembly for the tests of solvers.fe: Lagrange bases from
monomial Vandermonde matrices on the reference simplex, Duffy-collapsed Gauss-Legendre
quadrature, element matrices by einsum over quadrature points and scipy COO summation. It shares
nothing with solvers.fe but the documented local node order (vertices, then these edges)."""

from itertools import product

import numpy as np
import scipy.sparse as sp

EDGES = {2: [(0, 1)], 3: [(0, 1), (1, 2), (2, 0)],
         4: [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]}


def reference_nodes(tdim, degree):
    vertices = np.vstack([np.zeros(tdim), np.eye(tdim)])
    if degree == 1:
        return vertices
    return np.vstack([vertices] + [(vertices[a] + vertices[b]) / 2 for a, b in EDGES[tdim + 1]])


def exponents(tdim, degree):
    return [e for e in product(range(degree + 1), repeat=tdim) if sum(e) <= degree]


def monomials(points, tdim, degree):
    """(values (q, m), gradients (q, m, tdim)) of the monomials at reference points."""
    exps = exponents(tdim, degree)
    values = np.stack([np.prod(points ** np.array(e), axis=1) for e in exps], axis=1)
    grads = np.zeros((len(points), len(exps), tdim))
    for m, e in enumerate(exps):
        for d in range(tdim):
            if e[d]:
                lowered = np.array(e)
                lowered[d] -= 1
                grads[:, m, d] = e[d] * np.prod(points ** lowered, axis=1)
    return values, grads


def quadrature(tdim, n=5):
    """Points and weights on the reference simplex (Duffy collapse of an n^tdim Gauss rule,
    exact for polynomials of degree 2n - 1 - tdim + 1 at least)."""
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = (x + 1) / 2, w / 2
    if tdim == 1:
        return x[:, None], w
    if tdim == 2:
        u, v = np.meshgrid(x, x, indexing="ij")
        wu, wv = np.meshgrid(w, w, indexing="ij")
        pts = np.stack([u.ravel(), (v * (1 - u)).ravel()], axis=1)
        return pts, (wu * wv * (1 - u)).ravel()
    u, v, s = np.meshgrid(x, x, x, indexing="ij")
    wu, wv, ws = np.meshgrid(w, w, w, indexing="ij")
    pts = np.stack([u.ravel(), (v * (1 - u)).ravel(), (s * (1 - u) * (1 - v)).ravel()], axis=1)
    return pts, (wu * wv * ws * (1 - u) ** 2 * (1 - v)).ravel()


def basis(tdim, degree, points):
    """(phi (q, nloc), dphi (q, nloc, tdim)) of the Lagrange basis at reference points."""
    V, _ = monomials(reference_nodes(tdim, degree), tdim, degree)
    coef = np.linalg.inv(V)  # phi_i = sum_m coef[m, i] monomial_m
    values, grads = monomials(points, tdim, degree)
    return values @ coef, np.einsum("qmd,mi->qid", grads, coef)


def geometry(points, vertices):
    """(jacobians (m, g, t), measure factor (m,)) of affine simplices (t <= g)."""
    x = points[vertices]
    J = np.transpose(x[:, 1:] - x[:, :1], (0, 2, 1))
    if J.shape[1] == J.shape[2]:
        return J, np.abs(np.linalg.det(J))
    return J, np.sqrt(np.linalg.det(np.einsum("mgt,mgs->mts", J, J)))


def element_matrices(points, vertices, degree, coef, kind):
    tdim = vertices.shape[1] - 1
    q, w = quadrature(tdim)
    phi, dphi = basis(tdim, degree, q)
    J, det = geometry(points, vertices)
    if kind == "mass":
        return np.einsum("q,qi,qj,m->mij", w, phi, phi, det * coef)
    inv = np.linalg.inv(J)  # (m, t, g)
    grads = np.einsum("qid,mdg->mqig", dphi, inv)
    return np.einsum("q,mqig,mqjg,m->mij", w, grads, grads, det * coef)


def assemble(n, dofs, local, components=1):
    """Sum element matrices (m, L, L) of scalar entries into an n x n CSR matrix; for vector
    spaces (components > 1) each scalar entry is repeated on the diagonal of its block."""
    if components > 1:
        eye = np.eye(components)
        local = np.einsum("mij,cd->micjd", local, eye).reshape(local.shape[0],
                                                               *(2 * (local.shape[1] *
                                                                      components,)))
    L = dofs.shape[1]
    rows = np.repeat(dofs, L, axis=1).ravel()
    cols = np.tile(dofs, (1, L)).ravel()
    return sp.coo_matrix((local.ravel(), (rows, cols)), shape=(n, n)).tocsr()


def errors(space, u, exact, grad_exact):
    """(L2 error, H1 seminorm error) of nodal values u against exact(x...) and its gradient."""
    mesh = space.mesh
    tdim = mesh.dim
    q, w = quadrature(tdim, 6)
    phi, dphi = basis(tdim, space.degree, q)
    J, det = geometry(mesh.points, mesh.cells)
    inv = np.linalg.inv(J)
    x = mesh.points[mesh.cells[:, :1]] + np.einsum("mgt,qt->mqg", J, q)
    local = u[space.cell_dofs]  # (m, nloc)
    uh = np.einsum("qi,mi->mq", phi, local)
    duh = np.einsum("qid,mdg,mi->mqg", dphi, inv, local)
    coords = [x[..., d] for d in range(tdim)]
    e0 = uh - exact(*coords)
    e1 = duh - np.stack(grad_exact(*coords), axis=-1)
    l2 = np.sqrt(np.einsum("q,m,mq->", w, det, e0 ** 2))
    h1 = np.sqrt(np.einsum("q,m,mqg->", w, det, e1 ** 2))
    return l2, h1
