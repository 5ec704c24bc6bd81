"""Face geometry of CellMeshes: hand values for one cell of each type; on every generator's
meshes (jittered, mixed, non-planar faces) the area vectors of each cell close, the volumes and
their first moments fill the domain, the divergence theorem gives the volumes; boundary groups
and their errors; the locality order."""

from collections import Counter

import numpy as np
import pytest

from solvers.mesh import CellMesh, MeshError, face_geometry, hex_grid, locality_order, quad_grid
from solvers.mesh import faces as faces_module
from solvers.mesh.cell_mesh import LOCAL_FACES

R = np.sqrt(1.25)
# Per type: vertices, then per local face (area, outward normal, centroid).
HAND = {
    "triangle": ([[0, 0], [1, 0], [0, 1]],
                 [(np.sqrt(2), [1, 1] / np.sqrt(2), [0.5, 0.5]), (1, [-1, 0], [0, 0.5]),
                  (1, [0, -1], [0.5, 0])]),
    "quad": ([[0, 0], [2, 0], [2, 1], [0, 1]],
             [(2, [0, -1], [1, 0]), (1, [1, 0], [2, 0.5]), (2, [0, 1], [1, 1]),
              (1, [-1, 0], [0, 0.5])]),
    "tetra": ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
              [(np.sqrt(3) / 2, [1, 1, 1] / np.sqrt(3), [1 / 3] * 3),
               (0.5, [-1, 0, 0], [0, 1 / 3, 1 / 3]), (0.5, [0, -1, 0], [1 / 3, 0, 1 / 3]),
               (0.5, [0, 0, -1], [1 / 3, 1 / 3, 0])]),
    "hexahedron": ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1],
                    [1, 1, 1], [0, 1, 1]],
                   [(1, [0, 0, -1], [0.5, 0.5, 0]), (1, [0, 0, 1], [0.5, 0.5, 1]),
                    (1, [0, -1, 0], [0.5, 0, 0.5]), (1, [1, 0, 0], [1, 0.5, 0.5]),
                    (1, [0, 1, 0], [0.5, 1, 0.5]), (1, [-1, 0, 0], [0, 0.5, 0.5])]),
    "wedge": ([[0, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 1], [1, 0, 1]],
              [(0.5, [0, 0, -1], [1 / 3, 1 / 3, 0]), (0.5, [0, 0, 1], [1 / 3, 1 / 3, 1]),
               (1, [-1, 0, 0], [0, 0.5, 0.5]),
               (np.sqrt(2), [1, 1, 0] / np.sqrt(2), [0.5, 0.5, 0.5]),
               (1, [0, -1, 0], [0.5, 0, 0.5])]),
    "pyramid": ([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0.5, 1]],
                [(1, [0, 0, -1], [0.5, 0.5, 0]), (R / 2, [0, -1, 0.5] / R, [0.5, 1 / 6, 1 / 3]),
                 (R / 2, [1, 0, 0.5] / R, [5 / 6, 0.5, 1 / 3]),
                 (R / 2, [0, 1, 0.5] / R, [0.5, 5 / 6, 1 / 3]),
                 (R / 2, [-1, 0, 0.5] / R, [1 / 6, 0.5, 1 / 3])]),
}
VOLUMES = {"triangle": 0.5, "quad": 2, "tetra": 1 / 6, "hexahedron": 1, "wedge": 0.5,
           "pyramid": 1 / 3}
CENTROIDS = {"triangle": [1 / 3, 1 / 3], "quad": [1, 0.5], "tetra": [0.25] * 3,
             "hexahedron": [0.5] * 3, "wedge": [1 / 3, 1 / 3, 0.5], "pyramid": [0.5, 0.5, 0.25]}


def _with_walls(points, blocks):
    """A CellMesh whose faces of one cell form the boundary group 'wall'."""
    dim = len(points[0])
    found = Counter()
    rows = {}
    for kind, cells in blocks.items():
        for cell in np.asarray(cells):
            for face in LOCAL_FACES[kind]:
                key = tuple(sorted(cell[list(face)]))
                found[key] += 1
                rows[key] = cell[list(face)]
    walls = {}
    for key, count in found.items():
        if count == 1:
            kind = "line" if dim == 2 else ("triangle" if len(key) == 3 else "quad")
            walls.setdefault(kind, []).append(rows[key])
    return CellMesh(np.array(points, float), blocks, {"wall": walls})


@pytest.mark.parametrize("kind", list(HAND))
def test_single_cells_match_hand_values(kind):
    vertices, faces = HAND[kind]
    geometry = face_geometry(_with_walls(vertices, {kind: [list(range(len(vertices)))]}))
    assert geometry.nfaces == len(faces) and geometry.ncells == 1
    assert geometry.cell_faces.shape == (1, len(faces))
    np.testing.assert_allclose(geometry.volumes, [VOLUMES[kind]])
    np.testing.assert_allclose(geometry.centroids[0], CENTROIDS[kind])
    for slot, (area, normal, centroid) in enumerate(faces):
        f = geometry.cell_faces[0, slot]
        assert geometry.owner[f] == 0 and geometry.neighbour[f] == -1
        assert geometry.boundary[f] == 0 and geometry.boundary_names == ("wall",)
        np.testing.assert_allclose(geometry.areas[f], area)
        np.testing.assert_allclose(geometry.normals[f], normal, atol=1e-15)
        np.testing.assert_allclose(geometry.face_centroids[f], centroid)


def _hex_and_pyramids():
    """Two unit cubes along x: a hexahedron, and six pyramids about the second's centre."""
    hexes = hex_grid(2, 1, 1, x=(0, 2))
    h = hexes.blocks["hexahedron"]
    points = np.vstack([hexes.points, [[1.5, 0.5, 0.5]]])
    centre = len(points) - 1
    pyramids = [list(h[1][list(face)]) + [centre] for face in LOCAL_FACES["hexahedron"]]
    # The faces turn outwards; a pyramid's base turns towards its apex: reverse them.
    pyramids = [[p[0], p[3], p[2], p[1], p[4]] for p in pyramids]
    return _with_walls(points, {"hexahedron": h[:1], "pyramid": pyramids})


def _hex_and_wedges():
    """Two unit cubes along x: a hexahedron, and the second cut into two wedges."""
    hexes = hex_grid(2, 1, 1, x=(0, 2), jitter=0.0)
    h = hexes.blocks["hexahedron"][1]
    wedges = [h[[0, 2, 1, 4, 6, 5]], h[[0, 3, 2, 4, 7, 6]]]
    return _with_walls(hexes.points, {"hexahedron": hexes.blocks["hexahedron"][:1],
                                      "wedge": wedges})


MESHES = {
    "quads": lambda: quad_grid(5, 4, jitter=0.2),
    "triangles": lambda: quad_grid(5, 4, cells="triangle", jitter=0.2),
    "mixed 2D": lambda: quad_grid(4, 5, x=(0, 2), cells="mixed", jitter=0.2),
    "hexahedra": lambda: hex_grid(3, 3, 2, jitter=0.2),
    "tetrahedra": lambda: hex_grid(2, 3, 2, cells="tetra", jitter=0.2),
    "wedges": lambda: hex_grid(3, 2, 2, cells="wedge", jitter=0.2),
    "hexahedron and pyramids": _hex_and_pyramids,
    "hexahedron and wedges": _hex_and_wedges,
}
EXTENT = {"mixed 2D": 2.0, "hexahedron and pyramids": 2.0, "hexahedron and wedges": 2.0}


def _outward(geometry):
    """(cells, faces, signs) of every used cell-face slot; signs +1 where the cell owns."""
    cells, slots = np.nonzero(geometry.cell_faces >= 0)
    faces = geometry.cell_faces[cells, slots]
    return cells, faces, np.where(geometry.owner[faces] == cells, 1.0, -1.0)


@pytest.mark.parametrize("name", list(MESHES))
def test_cells_close_and_fill_the_domain(name):
    mesh = MESHES[name]()
    g = face_geometry(mesh)
    cells, faces, signs = _outward(g)
    # Each cell's outward area vectors sum to zero.
    closure = np.zeros((g.ncells, g.dim))
    np.add.at(closure, cells, (signs * g.areas[faces])[:, None] * g.normals[faces])
    assert np.abs(closure).max() < 1e-14
    # Volumes and first moments fill the box [0, extent] x [0, 1]^(dim - 1).
    extent = EXTENT.get(name, 1.0)
    assert np.isclose(g.volumes.sum(), extent, rtol=1e-13)
    centre = np.r_[extent / 2, [0.5] * (g.dim - 1)]
    np.testing.assert_allclose(g.volumes @ g.centroids, extent * centre, rtol=1e-13)
    # Every face has its owner and at most one neighbour, which the normal points towards.
    assert np.all(np.bincount(faces, minlength=g.nfaces) == np.where(g.neighbour < 0, 1, 2))
    inner = g.neighbour >= 0
    assert np.all(g.owner[inner] < g.neighbour[inner])
    towards = np.sum((g.centroids[g.neighbour[inner]] - g.centroids[g.owner[inner]])
                     * g.normals[inner], axis=1)
    assert np.all(towards > 0)
    np.testing.assert_allclose(np.linalg.norm(g.normals, axis=1), 1)
    assert np.all((g.boundary >= 0) == (g.neighbour < 0))


@pytest.mark.parametrize("name", ["quads", "triangles", "mixed 2D", "tetrahedra"])
def test_divergence_theorem_gives_the_volumes(name):
    """V = (1 / dim) sum_f (x_f . n_f) A_f (outward), exact for planar faces: every face in
    2D and of tetrahedra, and the faces of the unjittered hexahedra and wedges."""
    for g in (face_geometry(MESHES[name]()), face_geometry(hex_grid(2, 3, 2)),
              face_geometry(hex_grid(2, 2, 3, cells="wedge"))):
        cells, faces, signs = _outward(g)
        flux = signs * np.sum(g.face_centroids[faces] * g.normals[faces], 1) * g.areas[faces]
        np.testing.assert_allclose(np.bincount(cells, flux) / g.dim, g.volumes, rtol=1e-12)


def test_hexahedron_centroids_are_box_centres_and_faces_are_counted():
    g = face_geometry(hex_grid(3, 2, 4, z=(0, 2)))
    c = np.arange(24)
    centres = np.stack([(c % 3 + 0.5) / 3, (c // 3 % 2 + 0.5) / 2, (c // 6 + 0.5) / 2], 1)
    np.testing.assert_allclose(g.centroids, centres)
    assert g.nfaces == 4 * 2 * 4 + 3 * 3 * 4 + 3 * 2 * 5  # x, y and z faces
    for nx, ny in ((1, 1), (4, 3), (2, 7)):
        assert face_geometry(quad_grid(nx, ny)).nfaces == nx * (ny + 1) + ny * (nx + 1)
    mixed = face_geometry(quad_grid(3, 4, cells="mixed"))
    assert mixed.cell_faces.shape == (18, 4) and np.sum(mixed.cell_faces[12:, 3] >= 0) == 0
    assert mixed.nfaces == 3 * 5 + 4 * 4 + 6


def test_non_planar_faces_agree_from_both_sides():
    g = face_geometry(hex_grid(2, 2, 2, jitter=0.3))
    inner = g.neighbour >= 0
    cells, faces, signs = _outward(g)
    # Both cells of a face use one area vector (the face list holds each face once).
    assert len(np.unique(faces)) == g.nfaces and inner.sum() == 12
    assert np.isclose(g.volumes.sum(), 1.0, rtol=1e-14)


def _broken(mesh, **changes):
    boundaries = {name: dict(facets) for name, facets in mesh.boundaries.items()}
    boundaries.update(changes)
    return CellMesh(mesh.points, mesh.blocks, boundaries, source="bad.msh")


def test_boundary_errors_are_one_line():
    mesh = quad_grid(4, 3)
    without = {k: v for k, v in mesh.boundaries.items() if k != "y_hi"}
    with pytest.raises(MeshError) as error:
        face_geometry(CellMesh(mesh.points, mesh.blocks, without, source="bad.msh"))
    assert str(error.value) == ("bad.msh: 4 boundary faces are in no boundary group, the first "
                                "at (0.125, 1); every boundary face needs a physical group")
    with pytest.raises(MeshError) as error:
        face_geometry(_broken(mesh, x_lo={"line": np.array([[0, 5], [1, 6]])}))
    assert "bad.msh: boundary 'x_lo' line [1, 6] is not a boundary face of the mesh" in \
        str(error.value)
    twice = {"line": np.vstack([mesh.boundaries["y_lo"]["line"], [[5, 0]]])}
    with pytest.raises(MeshError) as error:
        face_geometry(_broken(mesh, y_lo=twice))
    assert "bad.msh: facet [0, 5] is in boundary groups 'x_lo' and 'y_lo'" in str(error.value)
    cells = np.vstack([mesh.blocks["quad"], mesh.blocks["quad"][5:6]])
    with pytest.raises(MeshError) as error:
        face_geometry(CellMesh(mesh.points, {"quad": cells}, mesh.boundaries, source="bad.msh"))
    assert str(error.value) == ("bad.msh: face [6, 7] is shared by cells 1, 5, 12 (at most two "
                                "cells meet at a face)")


def test_hash_collisions_fall_back_to_exact_matching(monkeypatch):
    mesh = hex_grid(2, 2, 2, cells="wedge", jitter=0.2)
    expected = face_geometry(mesh)
    real = faces_module.vertex_set_keys
    monkeypatch.setattr(faces_module, "PACKED", 0)
    monkeypatch.setattr(faces_module, "vertex_set_keys", lambda cols, n: real(cols, n) % 7)
    got = face_geometry(mesh)
    # The same faces, possibly numbered differently: compare through the cells' slots.
    for field in ("areas", "owner", "neighbour", "boundary"):
        np.testing.assert_array_equal(getattr(got, field)[got.cell_faces],
                                      getattr(expected, field)[expected.cell_faces])
    np.testing.assert_allclose(got.normals[got.cell_faces],
                               expected.normals[expected.cell_faces])


def test_locality_order_is_a_permutation_that_narrows_the_bandwidth():
    mesh = quad_grid(30, 20, cells="mixed")
    rng = np.random.default_rng(1)
    shuffled = {kind: cells[rng.permutation(len(cells))] for kind, cells in mesh.blocks.items()}
    g = face_geometry(CellMesh(mesh.points, shuffled, mesh.boundaries))
    order = locality_order(g)
    assert order.dtype == np.int64 and np.array_equal(np.sort(order), np.arange(g.ncells))
    position = np.empty_like(order)
    position[order] = np.arange(len(order))
    inner = g.neighbour >= 0

    def bandwidth(where):
        return np.abs(where[g.owner[inner]] - where[g.neighbour[inner]]).max()

    assert bandwidth(position) < bandwidth(np.arange(g.ncells)) / 10
