"""Stresses of a linear-elastic displacement field, for output: the Cauchy stress of each cell
at its vertices, averaged over the cells around each mesh vertex, and the von Mises stress.

    stress = vertex_stress(space, u, lame, plane)     # (npoints, 3, 3)
    von_mises(stress)                                 # (npoints,)

Each cell's displacement gradient is evaluated at its own vertices (constant on a P1 cell,
linear on a P2 cell, so these values are exact for the discrete field), turned into a stress
by Hooke's law with the cell's Lame parameters, and averaged without weights over the cells
sharing a vertex: a nodal field for the writers, continuous where the discrete stress jumps.
2D: the stress is padded to 3 x 3; sigma_zz = lambda tr(eps) in plane strain (lambda the
true Lame parameter), 0 in plane stress (where `lame` already holds the effective lambda*).
"""

import numpy as np

from .reference import vertex_derivatives


def barycentric_gradients(points, cells):
    """G (m, d + 1, d): the gradients of the barycentric coordinates of each cell."""
    x = points[cells]
    jacobian = np.transpose(x[:, 1:] - x[:, :1], (0, 2, 1))  # columns: edges from vertex 0
    inverse = np.linalg.inv(jacobian)  # rows: gradients of lambda_1..lambda_d
    return np.concatenate([-inverse.sum(axis=1, keepdims=True), inverse], axis=1)


def vertex_stress(space, u, lame, plane=None):
    """(npoints, 3, 3) float64 stress at the mesh vertices from nodal displacements u (n,)
    and per-cell Lame parameters lame (cells, 2)."""
    mesh = space.mesh
    d = mesh.dim
    G = barycentric_gradients(mesh.points, mesh.cells)
    D = vertex_derivatives(d + 1, space.degree)
    local = np.asarray(u, np.float64)[space.cell_dofs].reshape(mesh.ncells, -1, d)
    # grad[m, v, c, k] = d u_c / d x_k at vertex v of cell m.
    grad = np.einsum("via,mak,mic->mvck", D, G, local)
    strain = (grad + np.swapaxes(grad, 2, 3)) / 2
    trace = np.trace(strain, axis1=2, axis2=3)
    lam, mu = lame[:, 0, None], lame[:, 1, None]
    stress = np.zeros(grad.shape[:2] + (3, 3))
    stress[:, :, :d, :d] = 2 * mu[..., None, None] * strain
    stress[:, :, range(d), range(d)] += (lam * trace)[..., None]
    if d == 2 and plane == "strain":
        stress[:, :, 2, 2] = lam * trace
    total = np.zeros((mesh.npoints, 3, 3))
    np.add.at(total, mesh.cells.ravel(), stress.reshape(-1, 3, 3))
    count = np.bincount(mesh.cells.ravel(), minlength=mesh.npoints)
    return total / count[:, None, None]


def von_mises(stress):
    """sqrt(3/2 s : s) of the deviatoric part s of (..., 3, 3) stresses."""
    deviator = stress - np.trace(stress, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) / 3
    return np.sqrt(1.5 * np.einsum("...ij,...ij->...", deviator, deviator))
