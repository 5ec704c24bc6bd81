"""A cell order with locality for the finite-volume kernels: reverse Cuthill-McKee on the
graph of cells joined by interior faces, so that a cell's neighbours sit near it in memory.

    order = locality_order(face_geometry(mesh))   # new position -> mesh cell index
"""

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import reverse_cuthill_mckee


def locality_order(geometry):
    """The permutation (new position -> old cell index, int64) of reverse Cuthill-McKee on the
    cell adjacency through the interior faces of a FaceGeometry."""
    interior = geometry.neighbour >= 0
    owner, neighbour = geometry.owner[interior], geometry.neighbour[interior]
    n = geometry.ncells
    # Both directions of every interior face: a symmetric adjacency matrix.
    rows = np.concatenate([owner, neighbour])
    columns = np.concatenate([neighbour, owner])
    adjacency = csr_matrix((np.ones(len(rows), np.int8), (rows, columns)), shape=(n, n))
    return reverse_cuthill_mckee(adjacency, symmetric_mode=True).astype(np.int64)
