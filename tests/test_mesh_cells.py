"""CellMesh validation and the cell generators: every supported cell is accepted with its
measure and true centroid; inverted, degenerate, self-intersecting cells, unknown types and bad
node indices give one-line errors naming the cell; the generators number, orient and name their
cells and boundaries as documented."""

import numpy as np
import pytest

from solvers.mesh import CellMesh, MeshError, hex_grid, quad_grid
from solvers.mesh.cell_mesh import CORNERS, LOCAL_FACES, cell_geometry

# One unit cell of each type, with its volume and centroid.
REFERENCE = {
    "triangle": ([[0, 0], [1, 0], [0, 1]], 0.5, [1 / 3, 1 / 3]),
    "quad": ([[0, 0], [2, 0], [2, 1], [0, 1]], 2.0, [1, 0.5]),
    "tetra": ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], 1 / 6, [0.25] * 3),
    "hexahedron": ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1],
                    [1, 1, 1], [0, 1, 1]], 1.0, [0.5] * 3),
    "wedge": ([[0, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 1], [1, 0, 1]], 0.5,
              [1 / 3, 1 / 3, 0.5]),
    "pyramid": ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 1]], 1 / 3,
                [0.5, 0.5, 0.25]),
}


def _one_line(error):
    message = str(error.value)
    assert "\n" not in message
    return message


def _single(kind, points=None):
    vertices, _, _ = REFERENCE[kind]
    points = np.array(vertices if points is None else points, float)
    return points, {kind: np.arange(len(points))[None]}


@pytest.mark.parametrize("kind", list(REFERENCE))
def test_reference_cells_have_their_measure_centroid_and_positive_corners(kind):
    points, blocks = _single(kind)
    mesh = CellMesh(points, blocks)
    assert mesh.ncells == 1 and mesh.shape == (1,) and mesh.cell_types == (kind,)
    volumes, centroids = cell_geometry(points, kind, blocks[kind])
    _, volume, centroid = REFERENCE[kind]
    np.testing.assert_allclose(volumes, [volume])
    np.testing.assert_allclose(centroids[0], centroid)
    # Each local face turns positively outwards: its normal points away from the centroid.
    for face in LOCAL_FACES[kind]:
        p = points[list(face)]
        if len(face) == 2:
            normal = np.array([p[1, 1] - p[0, 1], p[0, 0] - p[1, 0]])
        else:
            normal = np.cross(p[1] - p[0], p[2] - p[0])
        assert normal @ (p.mean(axis=0) - centroids[0]) > 0, face
    for corner, *others in CORNERS.get(kind, ()):
        edges = points[others] - points[corner]
        assert np.linalg.det(edges) > 0


def test_irregular_quad_centroid_is_the_area_centroid():
    # A convex irregular quad: its centroid from two triangles by hand.
    points = np.array([[0, 0], [4, 0], [3, 2], [0, 1]], float)
    volumes, centroids = cell_geometry(points, "quad", np.array([[0, 1, 2, 3]]))
    tri = [points[[0, 1, 2]], points[[0, 2, 3]]]
    areas = [0.5 * abs(np.linalg.det(t[1:] - t[0])) for t in tri]
    expected = sum(a * t.mean(0) for a, t in zip(areas, tri)) / sum(areas)
    np.testing.assert_allclose(volumes, [sum(areas)])
    np.testing.assert_allclose(centroids[0], expected)


@pytest.mark.parametrize("kind, order, expected", [
    ("triangle", [1, 0, 2], "cell 0 (triangle) is inverted (negative area -0.5"),
    ("quad", [3, 2, 1, 0], "cell 0 (quad) is inverted (negative area -2"),
    ("tetra", [1, 0, 2, 3], "cell 0 (tetra) is inverted (negative volume -0.167"),
    ("hexahedron", [4, 5, 6, 7, 0, 1, 2, 3], "cell 0 (hexahedron) is inverted"),
    ("wedge", [0, 2, 1, 3, 5, 4], "cell 0 (wedge) is inverted"),
])
def test_inverted_cells_are_named(kind, order, expected):
    points, blocks = _single(kind)
    with pytest.raises(MeshError) as error:
        CellMesh(points, {kind: blocks[kind][:, order]}, source="m.msh")
    message = _one_line(error)
    assert message.startswith("m.msh: ") and expected in message and "vertices [" in message


def test_bow_tie_and_non_convex_quads_are_caught():
    # Vertices 2 and 3 swapped: a self-intersecting quad whose signed area is zero.
    bow_tie = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], float)
    with pytest.raises(MeshError, match=r"cell 0 \(quad\) is (degenerate|inverted)"):
        CellMesh(bow_tie, {"quad": [[0, 1, 2, 3]]})
    # Lopsided bow-tie: positive area, but two corners turn the wrong way.
    lopsided = np.array([[0, 0], [2, 0], [0, 1], [1, 1]], float)
    with pytest.raises(MeshError) as error:
        CellMesh(lopsided, {"quad": [[0, 1, 2, 3]]})
    assert "self-intersecting or not convex at its vertex" in _one_line(error)
    dart = np.array([[0, 0], [2, 0], [0.5, 0.5], [0, 2]], float)
    with pytest.raises(MeshError, match="not convex at its vertex 2"):
        CellMesh(dart, {"quad": [[0, 1, 2, 3]]})


def test_twisted_hexahedron_is_caught():
    points, blocks = _single("hexahedron")
    points[[6, 7]] = points[[7, 6]]  # the top face crossed over itself
    with pytest.raises(MeshError, match=r"cell 0 \(hexahedron\) is"):
        CellMesh(points, blocks)


@pytest.mark.parametrize("kind, points", [
    ("triangle", [[0, 0], [1, 0], [2, 0]]),
    ("tetra", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]),
    ("pyramid", [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 0]]),
])
def test_degenerate_cells_are_named(kind, points):
    points, blocks = _single(kind, points)
    with pytest.raises(MeshError) as error:
        CellMesh(points, blocks)
    assert f"cell 0 ({kind}) is degenerate" in _one_line(error)


def test_unsupported_types_counts_and_nodes_are_named():
    points, blocks = _single("triangle")
    with pytest.raises(MeshError) as error:
        CellMesh(points, {"triangle6": np.arange(6)[None] % 3})
    assert "cell type triangle6 is not supported in 2D (supported: triangle, quad)" in \
        _one_line(error)
    with pytest.raises(MeshError, match="cell type tetra is not supported in 2D"):
        CellMesh(points, {"tetra": [[0, 1, 2, 2]]})
    with pytest.raises(MeshError, match="quad cells need 4 vertices each"):
        CellMesh(points, {"quad": [[0, 1, 2]]})
    with pytest.raises(MeshError) as error:
        CellMesh(points, {"triangle": [[0, 1, 2], [0, 1, 7]]})
    assert "cell 1 (triangle) refers to node 7, but the mesh has nodes 0..2" in _one_line(error)
    with pytest.raises(MeshError, match="non-finite"):
        CellMesh(np.array([[0, 0], [1, np.nan], [0, 1]]), blocks)
    with pytest.raises(MeshError, match="no cells"):
        CellMesh(points, {})
    with pytest.raises(MeshError, match="boundary 'wall' has quad facets"):
        CellMesh(points, blocks, {"wall": {"quad": [[0, 1, 2, 0]]}})
    with pytest.raises(MeshError, match="boundary 'wall' line facet 0 refers to node 9"):
        CellMesh(points, blocks, {"wall": {"line": [[0, 9]]}})


def test_unused_nodes_are_allowed():
    points, blocks = _single("triangle")
    mesh = CellMesh(np.vstack([points, [[7.0, 7.0]]]), blocks)
    assert mesh.npoints == 4 and mesh.ncells == 1


def test_quad_grid_numbers_cells_x_fastest_and_names_sides():
    mesh = quad_grid(4, 3, x=(0, 2), y=(1, 4))
    volumes, centroids = cell_geometry(mesh.points, "quad", mesh.blocks["quad"])
    np.testing.assert_allclose(volumes, 0.5)
    i, j = np.arange(12) % 4, np.arange(12) // 4
    np.testing.assert_allclose(centroids, np.stack([0.25 + 0.5 * i, 1.5 + j], axis=1))
    sides = {"x_lo": (0, 0), "x_hi": (0, 2), "y_lo": (1, 1), "y_hi": (1, 4)}
    counts = {"x_lo": 3, "x_hi": 3, "y_lo": 4, "y_hi": 4}
    for name, (axis, value) in sides.items():
        facets = mesh.boundaries[name]["line"]
        assert len(facets) == counts[name]
        assert np.all(mesh.points[facets][..., axis] == value)


@pytest.mark.parametrize("cells, types", [("triangle", {"triangle": 24}),
                                          ("mixed", {"quad": 8, "triangle": 8})])
def test_quad_grid_triangles_and_mixed_rows(cells, types):
    mesh = quad_grid(4, 3, cells=cells, jitter=0.2)
    assert {k: len(v) for k, v in mesh.blocks.items()} == types
    total = sum(cell_geometry(mesh.points, k, c)[0].sum() for k, c in mesh.blocks.items())
    assert np.isclose(total, 1.0)


def test_hex_grid_numbers_cells_x_fastest():
    mesh = hex_grid(3, 2, 2, z=(0, 2))
    _, centroids = cell_geometry(mesh.points, "hexahedron", mesh.blocks["hexahedron"])
    c = np.arange(12)
    i, j, k = c % 3, (c // 3) % 2, c // 6
    np.testing.assert_allclose(centroids, np.stack([(i + 0.5) / 3, (j + 0.5) / 2, k + 0.5], 1))
    assert len(mesh.boundaries["z_hi"]["quad"]) == 6 and len(mesh.boundaries["x_lo"]["quad"]) == 4


@pytest.mark.parametrize("cells, kind, count, facets", [
    ("tetra", "tetra", 6 * 12, {"x_lo": {"triangle": 8}, "z_lo": {"triangle": 12}}),
    ("wedge", "wedge", 2 * 12, {"x_lo": {"quad": 4}, "z_lo": {"triangle": 12}}),
])
def test_hex_grid_tetra_and_wedge(cells, kind, count, facets):
    mesh = hex_grid(3, 2, 2, cells=cells, jitter=0.15)
    assert len(mesh.blocks[kind]) == count
    assert np.isclose(cell_geometry(mesh.points, kind, mesh.blocks[kind])[0].sum(), 1.0)
    for name, expected in facets.items():
        assert {k: len(v) for k, v in mesh.boundaries[name].items()} == expected


def test_generator_arguments_are_checked():
    with pytest.raises(ValueError, match="cells must be one of quad, triangle, mixed"):
        quad_grid(2, 2, cells="hexahedron")
    with pytest.raises(ValueError, match="jitter"):
        hex_grid(2, 2, 2, jitter=0.7)
    with pytest.raises(ValueError, match="positive integers"):
        quad_grid(0, 2)
