"""Mesh validation's fast paths give the answers of the plain ones: repeated vertex sets found by
one sorted key per row (packed indices, or a hash past 2^21 nodes) name the rows that sorting
the rows themselves names, measures are the determinants, the degenerate check measures the
edges of the cells it cannot clear at once, and the generators' cells (trusted by Mesh, which
skips the facet search for them) have no repeated vertex sets."""

import numpy as np
import pytest

from solvers.mesh import topology
from solvers.mesh.generators import box, quadrilateral, rectangle
from solvers.mesh.topology import all_facets, first_repeat, first_shared_facet, unique_keys
from solvers.mesh.unstructured import Mesh, MeshError, signed_measures


def _reference_repeat(rows, times):
    """The first `times` rows (by index) of the lexicographically first repeated vertex set."""
    groups = {}
    for index, row in enumerate(rows.tolist()):
        groups.setdefault(tuple(sorted(row)), []).append(index)
    repeated = sorted(key for key, ids in groups.items() if len(ids) >= times)
    return groups[repeated[0]][:times] if repeated else None


def _random_rows(rng, width, n, m):
    """m rows of `width` indices below n, a few of them vertex sets of others reordered."""
    rows = rng.integers(0, n, (m, width))
    rows[:, 0] = rng.integers(0, min(n, 6), m)  # small indices too, so sets repeat
    for _ in range(int(rng.integers(0, 4))):
        rows[rng.integers(0, m)] = rng.permutation(rows[rng.integers(0, m)])
    return rows


@pytest.mark.parametrize("n", [7, 1000, 2 ** 21 + 3, 2 ** 31 - 1])  # packed and hashed keys
def test_first_repeat_names_the_rows_that_sorting_the_rows_names(n):
    rng = np.random.default_rng(n)
    for _ in range(300):
        width, times = int(rng.integers(2, 5)), int(rng.integers(2, 4))
        rows = _random_rows(rng, width, n, int(rng.integers(1, 30)))
        found = first_repeat(rows, times)
        assert (None if found is None else found.tolist()) == _reference_repeat(rows, times)
        # Keys of different sets may be equal (a hash): the rows decide.
        keys = topology.vertex_set_keys(rows.T, n) % 3
        found = topology._first_repeat(keys, lambda ids, rows=rows: rows[ids], times)
        assert (None if found is None else found.tolist()) == _reference_repeat(rows, times)


def test_first_shared_facet_is_first_repeat_of_all_facets():
    rng = np.random.default_rng(3)
    for k, n in ((3, 8), (4, 8), (4, 2 ** 22)):
        for _ in range(100):
            cells = np.array([rng.choice(n, k, replace=False) for _ in range(12)])
            cells[:, :2] = rng.integers(0, 8, (12, 2))  # rows may repeat an index: still found
            for times in (2, 3):
                found = first_shared_facet(cells, times)
                expected = _reference_repeat(all_facets(cells), times)
                assert (None if found is None else found.tolist()) == expected


def test_signed_measures_are_determinants():
    rng = np.random.default_rng(4)
    for d in (2, 3):
        points = rng.normal(size=(50, d))
        cells = np.array([rng.choice(50, d + 1, replace=False) for _ in range(70_000)])
        corners = points[cells]
        expected = np.linalg.det(corners[:, 1:] - corners[:, :1]) / (2 if d == 2 else 6)
        np.testing.assert_allclose(signed_measures(points, cells), expected, rtol=1e-10,
                                   atol=1e-14)


def test_small_cells_are_degenerate_only_if_flat_for_their_size():
    # A tetrahedron a millionth of the box's size is fine; flattened to 1e-13 of it, it is not.
    tiny = 1e-6 * np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    big = np.array([[2, 0, 0], [3, 0, 0], [2, 1, 0], [2, 0, 1.0]])
    cells = np.array([[0, 1, 2, 3], [4, 5, 6, 7]])
    assert Mesh(np.vstack([tiny, big]), cells).ncells == 2
    tiny[3, 2] = 1e-19
    with pytest.raises(MeshError, match=r"cell 0 is degenerate \(its 4 vertices \[0, 1, 2, 3\]"):
        Mesh(np.vstack([tiny, big]), cells)


@pytest.mark.parametrize("make", [lambda: rectangle(5, 4), lambda: box(3, 4, 2),
                                  lambda: quadrilateral(3, 2, [(0, 0), (4, 1), (4, 3), (0, 2)])])
def test_generated_cells_have_no_repeated_vertex_sets(make):
    # What lets the generators skip the facet search: no duplicates, two cells at most a facet.
    mesh = make()
    assert first_repeat(mesh.cells) is None and first_shared_facet(mesh.cells, 3) is None
    checked = Mesh(mesh.points, mesh.cells, mesh.boundaries)  # with the search
    np.testing.assert_array_equal(checked.cells, mesh.cells)


def test_a_user_mesh_still_gets_the_facet_search():
    mesh = rectangle(2, 2)
    with pytest.raises(MeshError, match="cells 0 and 8 are duplicates"):
        Mesh(mesh.points, np.vstack([mesh.cells, mesh.cells[:1]]))


@pytest.mark.parametrize("keys", [np.arange(1), np.full(5, 7), np.arange(10)[::-1],
                                  np.random.default_rng(2).integers(-50, 50, 2000)],
                         ids=["one", "all-equal", "descending", "random"])
def test_unique_keys_equals_numpy_unique(keys):
    """The sort-based unique of the pattern and the edge numbering gives np.unique's values
    and inverse."""
    values, inverse = np.unique(keys, return_inverse=True)
    np.testing.assert_array_equal(unique_keys(keys), values)
    got_values, got_inverse = unique_keys(keys, return_inverse=True)
    np.testing.assert_array_equal(got_values, values)
    np.testing.assert_array_equal(got_inverse, inverse.ravel())
