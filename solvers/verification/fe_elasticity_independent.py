"""An independent linear-elasticity assembly for the tests of solvers.fe: the textbook B-matrix
(Voigt) formulation, k_e = sum_q w_q |J| B^T C B, with the Lagrange basis and quadrature of
fe_independent.py (monomial Vandermonde, Duffy-collapsed Gauss), and errors of vector
fields. Nothing here comes from solvers.fe but the documented local dof order (node-major,
components interleaved)."""

import numpy as np

from .fe_independent import basis, geometry, quadrature

# Voigt order of the strain components and the (row, column) of the gradient each reads.
VOIGT = {2: [(0, 0), (1, 1), (0, 1)], 3: [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]}


def constitutive(lam, mu, dim):
    """Voigt C (m, k, k) of per-element (lambda, mu): sigma = C (eps_xx, ..., gamma_xy, ...)."""
    k = len(VOIGT[dim])
    C = np.zeros((lam.size, k, k))
    C[:, :dim, :dim] = lam[:, None, None]
    C[:, range(dim), range(dim)] += 2 * mu[:, None]
    C[:, range(dim, k), range(dim, k)] = mu[:, None]
    return C


def plane_lame(young, poisson, plane):
    """(lambda, mu) from E and nu, written out: plane stress from its own modulus matrix
    E / (1 - nu^2) [[1, nu], [nu, 1]] (so lambda = E nu / (1 - nu^2)), else the 3D formula."""
    mu = young / (2 * (1 + poisson))
    if plane == "stress":
        return young * poisson / (1 - poisson ** 2), mu
    return young * poisson / ((1 + poisson) * (1 - 2 * poisson)), mu


def stiffness_matrices(points, cells, degree, lam, mu):
    """Element stiffness matrices (m, L, L), L = nloc * dim, node-major dofs."""
    dim = points.shape[1]
    q, w = quadrature(dim)
    _, dphi = basis(dim, degree, q)
    J, det = geometry(points, cells)
    grads = np.einsum("qid,mdg->mqig", dphi, np.linalg.inv(J))  # physical gradients
    m, nq, nloc, _ = grads.shape
    B = np.zeros((m, nq, len(VOIGT[dim]), nloc, dim))
    for row, (a, b) in enumerate(VOIGT[dim]):
        B[:, :, row, :, a] += grads[..., b]
        if a != b:
            B[:, :, row, :, b] += grads[..., a]
    B = B.reshape(m, nq, -1, nloc * dim)
    return np.einsum("q,m,mqki,mkl,mqlj->mij", w, det, B, constitutive(lam, mu, dim), B)


def vector_errors(space, u, exact, grad_exact, points=5):
    """(L2, H1-seminorm) errors of interleaved nodal u against exact(*x) -> [components] and
    grad_exact(*x) -> [[d u_c / d x_k]], by a Gauss rule of points^dim points per cell."""
    mesh, d = space.mesh, space.components
    q, w = quadrature(mesh.dim, points)
    phi, dphi = basis(mesh.dim, space.degree, q)
    J, det = geometry(mesh.points, mesh.cells)
    x = mesh.points[mesh.cells[:, :1]] + np.einsum("mgt,qt->mqg", J, q)
    local = u[space.cell_dofs].reshape(mesh.ncells, -1, d)  # (m, nloc, components)
    uh = np.einsum("qi,mic->mqc", phi, local, optimize=True)
    duh = np.einsum("qit,mtk,mic->mqck", dphi, np.linalg.inv(J), local, optimize=True)
    coords = [x[..., k] for k in range(mesh.dim)]
    e0 = uh - np.stack(exact(*coords), axis=-1)
    e1 = duh - np.stack([np.stack(row, axis=-1) for row in grad_exact(*coords)], axis=-2)
    l2 = np.sqrt(np.einsum("q,m,mqc->", w, det, e0 ** 2))
    h1 = np.sqrt(np.einsum("q,m,mqck->", w, det, e1 ** 2))
    return l2, h1
