"""The face slots of an unstructured mesh's cells, as the finite-volume kernels read them
(layout: raw_kernels/fv/unstructured_cells.h): per cell, in locality order, each face's
neighbour (or boundary group), outward normal, area, offsets to the face and to the far side,
and the inverse least-squares matrix of the gradients.

    slots = CellSlots(geometry, order)    # order: new position -> mesh cell (locality_order)
    slots.arrays["nb"]                    # (faces, n) int32, slot-major
"""

import numpy as np

from ..mesh.unstructured import MeshError


class CellSlots:
    """Host arrays (float64, int32) of the slot layout; `order` maps stored cells to the mesh's
    cells, `position` the mesh's cells to stored ones."""

    def __init__(self, geometry, order, source="mesh"):
        self.order = np.asarray(order, np.int64)
        n, dim = geometry.ncells, geometry.dim
        self.position = np.empty(n, np.int64)
        self.position[self.order] = np.arange(n)
        self.dim, self.ncells = dim, n

        # Faces of each stored cell, and which of them are used.
        faces = geometry.cell_faces[self.order]
        self.faces_per_cell = faces.shape[1]
        used = faces >= 0
        face = np.where(used, faces, 0)
        cell = self.order[:, None]
        owner, neighbour = geometry.owner[face], geometry.neighbour[face]
        owns = owner == cell
        other = np.where(owns, neighbour, owner)
        boundary = used & (other < 0)
        interior = used & ~boundary

        # Neighbour (stored index), boundary group as -1 - g, or the cell itself (unused).
        stored = np.arange(n)[:, None]
        nb = np.where(interior, self.position[np.maximum(other, 0)], stored)
        nb = np.where(boundary, -1 - geometry.boundary[face], nb)

        # Outward normals, areas, and offsets from the centroid to the face and the far side
        # (a ghost lies as far beyond the face as the centroid lies before it).
        sign = np.where(owns, 1.0, -1.0)[..., None]
        normal = np.where(used[..., None], sign * geometry.normals[face], 0.0)
        area = np.where(used, geometry.areas[face], 0.0)
        centre = geometry.centroids[self.order][:, None, :]
        r = np.where(used[..., None], geometry.face_centroids[face] - centre, 0.0)
        far = geometry.centroids[np.maximum(other, 0)] - centre
        d = np.where(interior[..., None], far, np.where(boundary[..., None], 2.0 * r, 0.0))

        # M^-1 of the least squares, M = sum_k d_k d_k^T: the upper triangle row by row.
        moments = np.einsum("cka,ckb->cab", d, d)
        scale = np.einsum("caa->c", moments) ** dim
        flat = np.flatnonzero(np.linalg.det(moments) <= 1e-12 * scale)
        if flat.size:
            raise MeshError(f"{source}: cell {int(self.order[flat[0]])} has "
                            "neighbours on one line (plane): no least-squares gradient")
        inverse = np.linalg.inv(moments)
        upper = np.triu_indices(dim)
        self.volumes = geometry.volumes[self.order]
        self.arrays = {
            "nb": np.ascontiguousarray(nb.T, np.int32),
            "area": np.ascontiguousarray(area.T),
            "normal": np.ascontiguousarray(normal.transpose(2, 1, 0)),
            "r": np.ascontiguousarray(r.transpose(2, 1, 0)),
            "d": np.ascontiguousarray(d.transpose(2, 1, 0)),
            "inv_vol": 1.0 / self.volumes,
            "lsq": np.ascontiguousarray(inverse[:, upper[0], upper[1]].T),
        }

    def venkatakrishnan_eps2(self, k=5.0):
        """Per stored cell, eps^2 = (K h)^3 with h = V^(1/dim)."""
        return (k * self.volumes ** (1.0 / self.dim)) ** 3

    def stored(self, values):
        """Per-cell values in the mesh's order -> the stored order (the last axis)."""
        return np.asarray(values)[..., self.order]

    def in_mesh_order(self, values):
        """Per-cell values in the stored order -> the mesh's order (the last axis)."""
        return np.asarray(values)[..., self.position]
