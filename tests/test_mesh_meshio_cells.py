"""Mixed-cell meshes through meshio files: Gmsh 2.2 (physical names) and VTU ('<type>_<tag>'
groups) read back the cells, groups and geometry written; clockwise 2D meshes and wedges in
Gmsh's order are turned over; unsupported types, mixed orientations and boundary
faces in no group give one-line errors that start with the path."""

import meshio
import numpy as np
import pytest

from solvers.mesh import CellMesh, MeshError, face_geometry, hex_grid, quad_grid, read_cell_mesh
from solvers.mesh.cell_mesh import LOCAL_FACES
from solvers.mesh.meshio_cells import cell_mesh_from_meshio

FACET = {2: "line", 3: "triangle", 4: "quad"}


def _to_meshio(mesh):
    """A meshio.Mesh of a CellMesh: cell blocks in group 'fluid', facets tagged by group."""
    points = mesh.points if mesh.dim == 3 else np.column_stack([mesh.points,
                                                                np.zeros(mesh.npoints)])
    cells, tags, field_data = [], [], {"fluid": np.array([100, mesh.dim])}
    for kind, block in mesh.blocks.items():
        cells.append((kind, block))
        tags.append(np.full(len(block), 100))
    for tag, (name, facets) in enumerate(mesh.boundaries.items(), start=1):
        for kind, rows in facets.items():
            cells.append((kind, rows))
            tags.append(np.full(len(rows), tag))
        field_data[name] = np.array([tag, mesh.dim - 1])
    return meshio.Mesh(points, cells, cell_data={"gmsh:physical": tags,
                                                 "gmsh:geometrical": tags},
                       field_data=field_data)


def _hex_and_wedges():
    """hex_grid(2, 2, 1) with its cubes at x > 0.5 cut into two wedges each."""
    hexes = hex_grid(2, 2, 1)
    h = hexes.blocks["hexahedron"]
    cut = h[1::2]
    blocks = {"hexahedron": h[::2],
              "wedge": np.concatenate([cut[:, [0, 2, 1, 4, 6, 5]], cut[:, [0, 3, 2, 4, 7, 6]]])}
    sides = {}
    for name, axis, value in (("x_lo", 0, 0), ("x_hi", 0, 1), ("y_lo", 1, 0), ("y_hi", 1, 1),
                              ("z_lo", 2, 0), ("z_hi", 2, 1)):
        for kind, cells in blocks.items():
            for face in LOCAL_FACES[kind]:
                rows = cells[:, list(face)]
                rows = rows[np.all(hexes.points[rows][..., axis] == value, axis=1)]
                if len(rows):
                    sides.setdefault(name, {}).setdefault(FACET[len(face)], []).append(rows)
    sides = {n: {k: np.concatenate(v) for k, v in f.items()} for n, f in sides.items()}
    return CellMesh(hexes.points, blocks, sides)


@pytest.mark.parametrize("fmt, suffix", [("gmsh22", ".msh"), ("vtu", ".vtu")])
@pytest.mark.parametrize("make", [lambda: quad_grid(3, 4, cells="mixed", jitter=0.2),
                                  _hex_and_wedges], ids=["tri+quad", "hex+wedge"])
def test_round_trip(tmp_path, fmt, suffix, make):
    mesh = make()
    raw = _to_meshio(mesh)
    path = tmp_path / f"m{suffix}"
    if fmt == "gmsh22":
        meshio.write(path, raw, file_format=fmt, binary=False)
    else:
        raw.cell_data = {"gmsh:physical": raw.cell_data["gmsh:physical"]}
        meshio.write(path, raw)
    read = read_cell_mesh(path)
    assert read.source == str(path) and read.dim == mesh.dim
    np.testing.assert_allclose(read.points, mesh.points)
    for kind, block in mesh.blocks.items():
        np.testing.assert_array_equal(read.blocks[kind], block)
    if fmt == "gmsh22":
        assert list(read.boundaries) == list(mesh.boundaries)
    else:  # VTU keeps the tags, not the names: a group per facet type and tag
        assert set(read.boundaries) == {f"{kind}_{tag}" for tag, facets in enumerate(
            mesh.boundaries.values(), start=1) for kind in facets}
    geometry = face_geometry(read)
    np.testing.assert_allclose(geometry.volumes, face_geometry(mesh).volumes)
    np.testing.assert_allclose(geometry.areas[geometry.neighbour < 0].sum(),
                               2 * mesh.dim if mesh.dim == 3 else 4)


def test_clockwise_2d_mesh_and_gmsh_ordered_wedges_are_turned_over():
    mesh = quad_grid(2, 2, cells="mixed")
    raw = _to_meshio(mesh)
    raw.cells[0].data = raw.cells[0].data[:, ::-1]
    raw.cells[1].data = raw.cells[1].data[:, ::-1]
    read = cell_mesh_from_meshio(raw, "cw.vtu")
    assert np.isclose(face_geometry(read).volumes.sum(), 1.0)
    wedges = hex_grid(1, 1, 1, cells="wedge")
    raw = _to_meshio(wedges)
    raw.cells[0].data = raw.cells[0].data[:, [0, 2, 1, 3, 5, 4]]
    read = cell_mesh_from_meshio(raw, "prisms.msh")
    np.testing.assert_array_equal(read.blocks["wedge"], wedges.blocks["wedge"])
    # One clockwise cell among counter-clockwise ones is inverted.
    raw = _to_meshio(mesh)
    raw.cells[0].data[1] = raw.cells[0].data[1, ::-1]
    with pytest.raises(MeshError, match=r"^mixed.vtu: cell 1 \(quad\) is inverted"):
        cell_mesh_from_meshio(raw, "mixed.vtu")


def test_untagged_and_lower_dimensional_blocks_are_ignored():
    mesh = quad_grid(2, 1)
    raw = _to_meshio(mesh)
    raw.cells.append(meshio.CellBlock("vertex", np.array([[0], [1]])))
    raw.cell_data["gmsh:physical"].append(np.array([7, 7]))
    read = cell_mesh_from_meshio(raw)
    assert set(read.boundaries) == set(mesh.boundaries)
    untagged = meshio.Mesh(raw.points, [("quad", mesh.blocks["quad"]),
                                        ("line", mesh.boundaries["x_lo"]["line"])])
    assert cell_mesh_from_meshio(untagged).boundaries == {}


@pytest.mark.parametrize("kind, vertices, supported", [
    ("triangle6", 6, "triangle, quad"), ("quad8", 8, "triangle, quad"),
    ("tetra10", 10, "tetra, hexahedron, wedge, pyramid"),
    ("hexahedron20", 20, "tetra, hexahedron, wedge, pyramid")])
def test_unsupported_cell_types_are_named(tmp_path, kind, vertices, supported):
    points = np.random.default_rng(0).random((vertices, 3))
    if kind in ("triangle6", "quad8"):
        points[:, 2] = 0
    raw = meshio.Mesh(points, [(kind, np.arange(vertices)[None])])
    path = tmp_path / "high.vtu"
    meshio.write(path, raw)
    with pytest.raises(MeshError) as error:
        read_cell_mesh(path)
    assert str(error.value) == (f"{path}: cell type {kind} is not supported (the finite volumes "
                                f"take {supported} cells)")


def test_boundary_faces_in_no_group_name_the_file(tmp_path):
    mesh = quad_grid(3, 2)
    raw = _to_meshio(CellMesh(mesh.points, mesh.blocks,
                              {k: v for k, v in mesh.boundaries.items() if k != "x_hi"}))
    path = tmp_path / "open.msh"
    meshio.write(path, raw, file_format="gmsh22", binary=False)
    with pytest.raises(MeshError) as error:
        face_geometry(read_cell_mesh(path))
    assert str(error.value) == (f"{path}: 2 boundary faces are in no boundary group, the first "
                                "at (1, 0.25); every boundary face needs a physical group")


def test_file_errors_start_with_the_path(tmp_path):
    with pytest.raises(MeshError, match=r"missing.msh: no such file$"):
        read_cell_mesh(tmp_path / "missing.msh")
    path = tmp_path / "broken.msh"
    path.write_text("$MeshFormat\nnonsense\n")
    with pytest.raises(MeshError) as error:
        read_cell_mesh(path)
    assert str(error.value).startswith(f"{path}: cannot read mesh")
    raw = meshio.Mesh(np.array([[0, 0, 1.0], [1, 0, 0], [0, 1, 0]]), [("triangle", [[0, 1, 2]])])
    with pytest.raises(MeshError, match="2D cells must lie in the z = 0 plane"):
        cell_mesh_from_meshio(raw, "tilted.vtu")
    raw = meshio.Mesh(np.zeros((3, 3)), [("triangle", np.array([[0, 1, 5]]))])
    with pytest.raises(MeshError, match=r"cell block 0 \(triangle\), cell 0 refers to node 5"):
        cell_mesh_from_meshio(raw)
