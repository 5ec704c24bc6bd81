"""Mesh topology by sorting: facets and edges of simplex cells, in a fixed local order, and the
search for repeated vertex sets (duplicate cells, facets of three cells) that validation runs on
every mesh, so it sorts one integer key per row instead of the rows."""

import numpy as np

# Local edges of a cell as vertex pairs: the P2 edge nodes follow this order.
LOCAL_EDGES = {3: ((0, 1), (1, 2), (2, 0)),
               4: ((0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3))}
# Local facets: facet k is the cell without vertex k.
LOCAL_FACETS = {3: ((1, 2), (2, 0), (0, 1)),
                4: ((1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1))}
# Compare-and-swap networks that sort 2, 3 or 4 columns elementwise.
SORTING_NETWORKS = {2: ((0, 1),), 3: ((0, 1), (1, 2), (0, 1)),
                    4: ((0, 1), (2, 3), (0, 2), (1, 3), (1, 2))}
MIX = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)  # splitmix64's finalizer constants


def unique_keys(keys, return_inverse=False):
    """np.unique of a 1D integer array by one sort. NumPy 2.3 and later find unique integers
    by hashing, which measured 20x slower than a sort on the 20M keys of a 1.3M-cell pattern
    (10.9 s against 0.53 s on the 2-core CI machine)."""
    order = np.argsort(keys, kind="stable") if return_inverse else None
    ordered = keys[order] if return_inverse else np.sort(keys)
    first = np.ones(ordered.size, bool)
    first[1:] = ordered[1:] != ordered[:-1]
    if not return_inverse:
        return ordered[first]
    inverse = np.empty(keys.size, np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse


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
    keys, inverse = unique_keys(pairs[:, 0] * n + pairs[:, 1], return_inverse=True)
    edges = np.stack([keys // n, keys % n], axis=1)
    return edges, inverse.ravel().reshape(len(local), -1).T.copy()


def all_facets(cells):
    """Every cell's facets (LOCAL_FACETS order): facet k * m + c is facet k of cell c."""
    return np.concatenate([cells[:, list(local)] for local in LOCAL_FACETS[cells.shape[1]]])


def facets_at(cells, ids):
    """Rows `ids` of all_facets(cells), without building all the facets."""
    local = np.array(LOCAL_FACETS[cells.shape[1]])
    m = len(cells)
    return np.take_along_axis(cells[ids % m], local[ids // m], axis=1)


def _mix(values):
    """splitmix64's finalizer: a bijection of uint64 that scatters nearby values."""
    z = values ^ (values >> 30)
    z *= MIX[0]
    z ^= z >> 27
    z *= MIX[1]
    return z ^ (z >> 31)


def vertex_set_keys(columns, n):
    """One int64 per row of 2 to 4 vertex index columns (indices below n), the same for rows of
    one vertex set: the sorted indices packed into one number where they fit in 63 bits, else
    a 64-bit hash of them (so equal keys of different sets are possible but rare)."""
    columns = list(columns)
    for a, b in SORTING_NETWORKS[len(columns)]:
        low, high = np.minimum(columns[a], columns[b]), np.maximum(columns[a], columns[b])
        columns[a], columns[b] = low, high
    if n ** len(columns) < 2 ** 63:
        key = columns[0].astype(np.int64)
        for column in columns[1:]:
            key *= n
            key += column
        return key
    # Pack pairs of indices (exact below 2^31 nodes), hash each pair with its own top bits (so
    # the pairs' hashes differ) and combine them.
    key = np.zeros(len(columns[0]), np.uint64)
    for slot, start in enumerate(range(0, len(columns), 2)):
        pair = columns[start].astype(np.uint64)
        if start + 1 < len(columns):
            pair = pair * np.uint64(n) + columns[start + 1].astype(np.uint64)
        key ^= _mix(pair ^ np.uint64(slot << 62))
    return key.view(np.int64)


def _repeated_keys(keys, times):
    """The distinct keys that occur at least `times` times."""
    ordered = np.sort(keys)
    # Sorted, so keys k and k + times - 1 agree only if the keys between them do too.
    same = ordered[times - 1:] == ordered[:len(ordered) - times + 1]
    return unique_keys(ordered[times - 1:][same])


def _first_repeat_of_rows(rows, times):
    """first_repeat by sorting the rows themselves (slow: for a few candidate rows)."""
    ordered = np.sort(rows, axis=1)
    order = np.lexsort(ordered.T[::-1])
    ordered = ordered[order]
    same = np.all(ordered[times - 1:] == ordered[:len(rows) - times + 1], axis=1)
    if not same.any():
        return None
    first = int(np.argmax(same))
    return np.sort(order[first:first + times])


def _first_repeat(keys, rows_at, times):
    """first_repeat of the rows with these vertex_set_keys; rows_at(ids) gives rows ids."""
    if len(keys) < times:
        return None
    repeated = _repeated_keys(keys, times)
    if not repeated.size:
        return None
    # Every row of a repeated vertex set has a repeated key: search those rows exactly, in
    # their order, so the answer is the one over all rows.
    candidates = np.flatnonzero(np.isin(keys, repeated))
    found = _first_repeat_of_rows(rows_at(candidates), times)
    return None if found is None else candidates[found]


def first_repeat(rows, times=2):
    """Indices (ascending) of `times` rows with one vertex set, the first such group in the
    lexicographic order of the sorted rows, or None if no vertex set occurs `times` times.
    Rows have 2 to 4 non-negative indices."""
    n = int(rows.max()) + 1 if rows.size else 1
    return _first_repeat(vertex_set_keys(rows.T, n), lambda ids: rows[ids], times)


def first_shared_facet(cells, times=3):
    """first_repeat(all_facets(cells), times), without building all the facets."""
    n = int(cells.max()) + 1
    keys = np.concatenate([vertex_set_keys([cells[:, v] for v in local], n)
                           for local in LOCAL_FACETS[cells.shape[1]]])
    return _first_repeat(keys, lambda ids: facets_at(cells, ids), times)
