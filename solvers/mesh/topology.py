"""Mesh topology by sorting: facets and edges of simplex cells, in a fixed local order."""

import numpy as np

# Local edges of a cell as vertex pairs: the P2 edge nodes follow this order.
LOCAL_EDGES = {3: ((0, 1), (1, 2), (2, 0)),
               4: ((0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3))}
# Local facets: facet k is the cell without vertex k.
LOCAL_FACETS = {3: ((1, 2), (2, 0), (0, 1)),
                4: ((1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1))}


def unique_rows(rows):
    """(unique sorted-vertex rows, inverse index, counts) of an (m, k) integer array."""
    ordered = np.sort(rows, axis=1)
    return np.unique(ordered, axis=0, return_inverse=True, return_counts=True)


def boundary_facets(cells):
    """The facets that belong to one cell only, as vertex tuples oriented outwards."""
    k = cells.shape[1]
    facets = np.concatenate([cells[:, list(local)] for local in LOCAL_FACETS[k]])
    _, inverse, counts = unique_rows(facets)
    return facets[counts[inverse.ravel()] == 1]


def cell_edges(cells):
    """(edges (e, 2) sorted vertex pairs, cell_edge (m, edges per cell) edge indices)."""
    k = cells.shape[1]
    local = LOCAL_EDGES[k]
    pairs = np.sort(np.concatenate([cells[:, list(pair)] for pair in local]), axis=1)
    # One int64 key per pair sorts much faster than rows (np.unique(axis=0)) on big meshes.
    n = int(cells.max()) + 1
    keys, inverse = np.unique(pairs[:, 0] * n + pairs[:, 1], return_inverse=True)
    edges = np.stack([keys // n, keys % n], axis=1)
    return edges, inverse.ravel().reshape(len(local), -1).T.copy()


def first_repeat(rows, times=2):
    """Indices (ascending) of `times` rows with one vertex set, the first such group in the
    lexicographic order of the sorted rows, or None if no vertex set occurs `times` times."""
    if len(rows) < times:
        return None
    ordered = np.sort(rows, axis=1)
    order = np.lexsort(ordered.T[::-1])
    ordered = ordered[order]
    # Sorted, so rows k and k + times - 1 agree only if the rows between them do too.
    same = np.all(ordered[times - 1:] == ordered[:len(rows) - times + 1], axis=1)
    if not same.any():
        return None
    first = int(np.argmax(same))
    return np.sort(order[first:first + times])


def all_facets(cells):
    """Every cell's facets (LOCAL_FACETS order): facet k * m + c is facet k of cell c."""
    return np.concatenate([cells[:, list(local)] for local in LOCAL_FACETS[cells.shape[1]]])
