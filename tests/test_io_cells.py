"""Run output on meshes of mixed cell types (CellMesh): HDF5 layout, the XDMF sidecar read back
by meshio's XDMF reader, cell-centred PNG plots, refused fields."""

import xml.etree.ElementTree as ET

import h5py
import numpy as np
import pytest

from solvers.io import CellRunWriter, plot_fields, writer_class
from solvers.io.plot_cells import TRIANGLES, boundary_faces, local_rows
from solvers.mesh.cell_mesh import CellMesh

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# 2D: a unit square (quad) with two triangles on its right; two quads.
SQUARES = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1]], np.float64)
TRI_QUAD = CellMesh(SQUARES, {"triangle": [[1, 2, 5], [1, 5, 4]], "quad": [[0, 1, 4, 3]]})
QUADS = CellMesh(SQUARES, {"quad": [[0, 1, 4, 3], [1, 2, 5, 4]]})
# 3D: a unit cube (hexahedron) with a wedge on its x = 1 face; two tetrahedra.
CUBE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1],
                 [0, 1, 1], [2, 0, 0], [2, 1, 0]], np.float64)
HEX_WEDGE = CellMesh(CUBE, {"hexahedron": [[0, 1, 2, 3, 4, 5, 6, 7]],
                            "wedge": [[1, 8, 5, 2, 9, 6]]})
TETS = CellMesh(CUBE[:5], {"tetra": [[0, 1, 3, 4], [1, 2, 3, 4]]})
MESHES = {"2d-mixed": TRI_QUAD, "2d-quad": QUADS, "3d-mixed": HEX_WEDGE, "3d-tetra": TETS}
# XDMF type code of each cell type (its Mixed topology).
CODES = {"triangle": 4, "quad": 5, "tetra": 6, "wedge": 8, "hexahedron": 9}


def make_fields(mesh, t, dtype=np.float64):
    """rho = cell number + 100 t; velocity (ncells, dim) = (rho, -rho[, 2 rho])."""
    rho = np.arange(mesh.ncells) + 100 * t
    velocity = np.stack([rho, -rho, 2 * rho][:mesh.dim], axis=1)
    return {"rho": rho.astype(dtype), "velocity": velocity.astype(dtype)}


def write_run(tmp_path, mesh, dtype=np.float64):
    writer = CellRunWriter(tmp_path, "run", mesh, {"case": "cells"})
    writer.snapshot(0.0, 0, make_fields(mesh, 0.0, dtype))
    return writer.finish(0.5, 7, make_fields(mesh, 0.5, dtype))


def padded(vectors):
    """A snapshot's vectors: 3 components, a 2D vector's third one 0."""
    return np.column_stack([vectors, np.zeros((len(vectors), 3 - vectors.shape[1]))])


@pytest.mark.parametrize("key", MESHES)
def test_run_file_layout(tmp_path, key):
    mesh = MESHES[key]
    paths = write_run(tmp_path, mesh, np.float32)
    with h5py.File(paths["h5"], "r") as f:
        group = f["mesh"]
        assert group.attrs["ndim"] == mesh.dim
        assert list(group.attrs["block_types"]) == list(mesh.blocks)
        assert list(group.attrs["block_sizes"]) == [len(c) for c in mesh.blocks.values()]
        np.testing.assert_array_equal(group["points"], mesh.points)
        if len(mesh.blocks) == 1:
            ((kind, cells),) = mesh.blocks.items()
            assert group.attrs["cell_type"] == kind and group["cells"].dtype == np.int64
            np.testing.assert_array_equal(group["cells"], cells)
            assert "offsets" not in group and "cell_types" not in group
        else:
            # Each cell is its XDMF code and its vertices, block by block.
            expected = [[CODES[kind], *cell] for kind, cells in mesh.blocks.items()
                        for cell in cells]
            assert group.attrs["cell_type"] == "mixed" and group["cells"].dtype == np.int64
            np.testing.assert_array_equal(group["cells"], np.concatenate(expected))
            np.testing.assert_array_equal(group["cell_types"], [row[0] for row in expected])
            assert group["cell_types"].dtype == np.int8
            np.testing.assert_array_equal(group["offsets"],
                                          np.cumsum([0] + [len(row) for row in expected]))
        assert list(f["snapshots"]) == ["000000", "000001"]
        for index, t in enumerate((0.0, 0.5)):
            snap, fields = f[f"snapshots/{index:06d}"], make_fields(mesh, t, np.float32)
            assert snap.attrs["time"] == t and snap["rho"].dtype == np.float32
            np.testing.assert_array_equal(snap["rho"], fields["rho"])
            np.testing.assert_array_equal(snap["velocity"], padded(fields["velocity"]))
            assert snap["velocity"].attrs["layout"] == "cell"
        # The final state as the solver gave it: vectors of dim components.
        np.testing.assert_array_equal(f["fields/velocity"], make_fields(mesh, 0.5)["velocity"])


@pytest.mark.parametrize("key", MESHES)
def test_xdmf_reads_back_with_meshio(tmp_path, key):
    meshio = pytest.importorskip("meshio")
    mesh = MESHES[key]
    paths = write_run(tmp_path, mesh)
    root = ET.parse(paths["xdmf"]).getroot()
    topology = root.find("Domain/Grid/Grid/Topology")
    assert topology.get("NumberOfElements") == str(mesh.ncells)
    assert (topology.get("TopologyType") == "Mixed") == (len(mesh.blocks) > 1)
    assert {a.get("Center") for a in root.iter("Attribute")} == {"Cell"}
    with meshio.xdmf.TimeSeriesReader(paths["xdmf"]) as reader:
        points, cells = reader.read_points_cells()
        np.testing.assert_array_equal(points, mesh.points)
        assert [block.type for block in cells] == list(mesh.blocks)
        for block, expected in zip(cells, mesh.blocks.values()):
            np.testing.assert_array_equal(block.data, expected)
        assert reader.num_steps == 2
        splits = np.cumsum([len(c) for c in mesh.blocks.values()])[:-1]
        for k, time in enumerate((0.0, 0.5)):
            t, _, cell_data = reader.read_data(k)
            fields = make_fields(mesh, time)
            assert t == time
            for name, value in (("rho", fields["rho"]), ("velocity", padded(fields["velocity"]))):
                for got, want in zip(cell_data[name], np.split(value, splits)):
                    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("key", ["2d-mixed", "3d-mixed"])
def test_plot_png(tmp_path, key):
    pytest.importorskip("matplotlib")
    mesh = MESHES[key]
    fields = make_fields(mesh, 0.0)
    path = plot_fields(tmp_path / "run.png", mesh, fields, list(fields), "run at t=0")
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000


def test_plot_geometry():
    """2D cells are drawn as triangles (a quad as two) in their cell's value; a 3D mesh by the
    faces of one cell only."""
    ((triangles, owners),) = local_rows(TRI_QUAD, TRIANGLES).values()
    np.testing.assert_array_equal(triangles, [[1, 2, 5], [1, 5, 4], [0, 1, 4], [0, 4, 3]])
    np.testing.assert_array_equal(owners, [0, 1, 2, 2])
    # The cube and the wedge share one quad: 5 + 4 faces remain, 2 of them the wedge's ends.
    faces = {rows.shape[1]: (rows, cells) for rows, cells in boundary_faces(HEX_WEDGE)}
    np.testing.assert_array_equal(np.sort(faces[3][0], axis=1), [[1, 5, 8], [2, 6, 9]])
    assert sorted(faces[4][1]) == [0] * 5 + [1] * 2
    assert sum(len(rows) for rows, _ in boundary_faces(TETS)) == 6


def test_writer_class_and_refused_fields(tmp_path):
    assert writer_class(TRI_QUAD) is CellRunWriter
    n = TRI_QUAD.ncells
    with CellRunWriter(tmp_path, "run", TRI_QUAD, {}) as writer:
        for bad in (np.zeros(n + 1), np.zeros((n, 4)), np.zeros((n, 2, 2))):
            with pytest.raises(ValueError, match="shape"):
                writer.snapshot(0.0, 0, {"rho": bad})
        writer.snapshot(0.0, 0, {"rho": np.zeros(n)})
        with pytest.raises(ValueError, match="differ"):
            writer.snapshot(0.1, 1, {"p": np.zeros(n)})
    with CellRunWriter(tmp_path, "run", HEX_WEDGE, {}) as writer:
        with pytest.raises(ValueError, match="shape"):  # a 3D vector has 3 components
            writer.snapshot(0.0, 0, {"velocity": np.zeros((HEX_WEDGE.ncells, 2))})
