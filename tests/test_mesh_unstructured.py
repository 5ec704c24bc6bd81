"""Meshes of the finite-element solvers: the generators are conforming, correctly oriented and
name their boundaries; meshio formats (Gmsh 2.2 and 4.1 with physical groups, VTU, XDMF) read
back the same mesh; bad meshes and unknown names give one-line errors naming the culprit."""

import meshio
import numpy as np
import pytest

from solvers.fe.space import FunctionSpace
from solvers.mesh.generators import box, rectangle, unit_cube, unit_square
from solvers.mesh.meshio_reader import from_meshio, read_mesh
from solvers.mesh.topology import boundary_facets
from solvers.mesh.unstructured import Mesh, MeshError, signed_measures

ROOT = __import__("pathlib").Path(__file__).parent.parent
BLOCK = ROOT / "meshes" / "heated_block.msh"


@pytest.mark.parametrize("make, measure, facets", [
    (lambda: rectangle(4, 3, x=(0, 2), y=(1, 2)), 2.0, 2 * (4 + 3)),
    (lambda: box(2, 3, 4, z=(0, 0.5)), 0.5, 4 * (2 * 3 + 3 * 4 + 2 * 4)),
])
def test_generators_are_conforming_positive_and_named(make, measure, facets):
    mesh = make()
    volumes = signed_measures(mesh.points, mesh.cells)
    assert np.all(volumes > 0) and np.isclose(volumes.sum(), measure)
    # Conforming: the only facets with one cell are on the outer boundary, and the named
    # groups cover them exactly once (two triangles per square face in 3D, edges in 2D).
    outer = boundary_facets(mesh.cells)
    assert len(outer) == facets
    named = np.concatenate(list(mesh.boundaries.values()))
    assert sorted(map(tuple, np.sort(named, 1))) == sorted(map(tuple, np.sort(outer, 1)))


def test_generator_boundaries_lie_on_their_planes():
    mesh = unit_cube(3)
    planes = {"left": (0, 0), "right": (0, 1), "front": (1, 0), "back": (1, 1),
              "bottom": (2, 0), "top": (2, 1)}
    for name, (axis, value) in planes.items():
        assert np.all(mesh.points[mesh.boundaries[name]][..., axis] == value), name
    assert set(unit_square(2).boundaries) == {"left", "right", "bottom", "top"}


def test_p2_nodes_are_vertices_and_edge_midpoints_in_rcm_order():
    mesh = unit_square(6)
    space = FunctionSpace(mesh, 2)
    corners = space.node_points[space.cell_nodes[:, :3]]
    np.testing.assert_array_equal(corners, mesh.points[mesh.cells])
    edges = ((0, 1), (1, 2), (2, 0))
    for k, (a, b) in enumerate(edges):
        np.testing.assert_allclose(space.node_points[space.cell_nodes[:, 3 + k]],
                                   (corners[:, a] + corners[:, b]) / 2)
    # Reverse Cuthill-McKee narrows the bandwidth below the unnumbered space's.
    def bandwidth(s):
        return max(abs(np.subtract.outer(c, c)).max() for c in s.cell_nodes)
    assert bandwidth(space) < bandwidth(FunctionSpace(mesh, 2, renumber=False))


def _with_physical_groups(mesh):
    """A meshio.Mesh of a generated mesh with two materials and the named boundaries."""
    centres = mesh.points[mesh.cells].mean(axis=1)
    left = centres[:, 0] < 0.5
    facet_type = "line" if mesh.dim == 2 else "triangle"
    cell_type = "triangle" if mesh.dim == 2 else "tetra"
    cells, tags, field_data = [], [], {}
    for tag, (name, facets) in enumerate(mesh.boundaries.items(), start=1):
        cells.append((facet_type, facets))
        tags.append(np.full(len(facets), tag))
        field_data[name] = np.array([tag, mesh.dim - 1])
    for tag, (name, selected) in enumerate((("a", left), ("b", ~left)), start=10):
        cells.append((cell_type, mesh.cells[selected]))
        tags.append(np.full(int(selected.sum()), tag))
        field_data[name] = np.array([tag, mesh.dim])
    points = mesh.points if mesh.dim == 3 else np.column_stack([mesh.points,
                                                                np.zeros(mesh.npoints)])
    return meshio.Mesh(points, cells, cell_data={"gmsh:physical": tags,
                                                 "gmsh:geometrical": tags},
                       field_data=field_data)


@pytest.mark.parametrize("fmt, suffix, named", [("gmsh22", ".msh", True), ("vtu", ".vtu", False),
                                                ("xdmf", ".xdmf", False)])
@pytest.mark.parametrize("dim", [2, 3])
def test_meshio_formats_read_back_groups(tmp_path, fmt, suffix, named, dim):
    mesh = unit_square(4) if dim == 2 else unit_cube(2)
    raw = _with_physical_groups(mesh)
    path = tmp_path / f"m{suffix}"
    if fmt == "gmsh22":
        meshio.write(path, raw, file_format=fmt, binary=False)
    else:
        raw.cell_data = {"gmsh:physical": raw.cell_data["gmsh:physical"]}
        meshio.write(path, raw, file_format=fmt)
    read = read_mesh(path)
    np.testing.assert_allclose(read.points, mesh.points)
    assert read.ncells == mesh.ncells and read.dim == dim
    if named:
        assert set(read.boundaries) == set(mesh.boundaries)
        assert set(read.materials) == {"a", "b"}
        assert len(read.boundaries["left"]) == len(mesh.boundaries["left"])
    else:  # VTU and XDMF keep tags, not names
        facet = "line" if dim == 2 else "triangle"
        assert f"{facet}_1" in read.boundaries
        assert {f"{'triangle' if dim == 2 else 'tetra'}_{t}" for t in (10, 11)} == \
            set(read.materials)


def test_committed_gmsh41_mesh_has_its_groups():
    mesh = read_mesh(BLOCK)
    assert BLOCK.read_text().startswith("$MeshFormat\n4.1 0 8")
    assert set(mesh.boundaries) == {"hot", "cold", "sides"}
    assert set(mesh.materials) == {"copper", "steel"}
    assert sum(len(c) for c in mesh.materials.values()) == mesh.ncells
    assert np.isclose(signed_measures(mesh.points, mesh.cells).sum(), 2.0)


def _one_line(error):
    message = str(error.value)
    assert "\n" not in message
    return message


def test_inverted_cell_is_named():
    mesh = unit_square(2)
    cells = mesh.cells.copy()
    cells[5] = cells[5, [1, 0, 2]]
    with pytest.raises(MeshError) as error:
        Mesh(mesh.points, cells)
    assert "cell 5 is inverted" in _one_line(error)


def test_degenerate_cell_is_named():
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]], float)
    cells = np.array([[0, 1, 2, 3], [0, 1, 4, 2]])  # the second is flat (z = 0)
    with pytest.raises(MeshError) as error:
        Mesh(points, cells)
    assert "cell 1 is degenerate" in _one_line(error)


def test_unused_node_is_named():
    mesh = unit_square(2)
    points = np.vstack([mesh.points, [[5.0, 5.0]]])
    with pytest.raises(MeshError) as error:
        Mesh(points, mesh.cells)
    assert "1 nodes belong to no cell, the first node 9" in _one_line(error)


def test_unsupported_cell_type_is_named(tmp_path):
    raw = meshio.Mesh(np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.0]]),
                      [("quad", np.array([[0, 1, 2, 3]]))])
    path = tmp_path / "quads.vtu"
    meshio.write(path, raw)
    with pytest.raises(MeshError) as error:
        read_mesh(path)
    assert "cell type quad is not supported" in _one_line(error)
    mixed = meshio.Mesh(raw.points, [("triangle", np.array([[0, 1, 2]])),
                                     ("quad", np.array([[0, 1, 2, 3]]))])
    with pytest.raises(MeshError, match="cell type quad is not supported"):
        from_meshio(mixed)


def test_missing_boundary_and_material_names_list_the_mesh_names():
    mesh = read_mesh(BLOCK)
    with pytest.raises(MeshError) as error:
        mesh.require_boundaries(["hot", "inlet"])
    assert ("boundary 'inlet' is not in" in _one_line(error)
            and "(its boundaries: cold, hot, sides)" in str(error.value))
    with pytest.raises(MeshError) as error:
        mesh.require_materials(["wood"])
    assert "(its materials: copper, steel)" in _one_line(error)


def test_unreadable_file_is_one_line(tmp_path):
    path = tmp_path / "broken.msh"
    path.write_text("$MeshFormat\nnonsense\n")
    with pytest.raises(MeshError) as error:
        read_mesh(path)
    assert str(path) in _one_line(error)
