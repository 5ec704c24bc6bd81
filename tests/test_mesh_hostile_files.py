"""Hostile mesh files are one-line MeshErrors naming the file and what is wrong in it (issue 18):
meshio answers some unreadable files (empty, truncated, byte-flipped VTU and binary Gmsh) with
sys.exit(1), a node index out of range raised IndexError before validation, Gmsh node tag 0
wrapped around to the last node, and duplicated or overlapping cells were accepted.

The mutated files come from tests/mesh_mutations.py, which other tests (the fuzz test) import.
"""

import os
from pathlib import Path

import numpy as np
import pytest
from mesh_mutations import FORMATS, byte_mutations, mutated_meshes, write

from solvers.cli import main
from solvers.mesh.generators import unit_cube, unit_square
from solvers.mesh.meshio_reader import read_mesh
from solvers.mesh.unstructured import Mesh, MeshError, signed_measures

CASES = Path(__file__).parent.parent / "cases"


def _error(path):
    """read_mesh's MeshError for `path`: one line that starts with the file's path."""
    with pytest.raises(MeshError) as error:
        read_mesh(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and "\n" not in message, message
    return message[len(str(path)) + 2:]


def test_every_mutated_file_is_a_mesh_or_a_one_line_error_and_prints_nothing(tmp_path, capfd):
    outcomes = {"mesh": 0, "error": 0}
    for path in mutated_meshes(tmp_path):
        try:
            read_mesh(path)
            outcomes["mesh"] += 1
        except MeshError as error:  # anything else (SystemExit, IndexError) fails the test
            message = str(error)
            assert message.startswith(f"{path}: ") and "\n" not in message, message
            outcomes["error"] += 1
    assert capfd.readouterr() == ("", "")  # meshio's console output is not let through
    assert outcomes["error"] > 100 and outcomes["mesh"] < 20, outcomes


@pytest.mark.parametrize("form", ["vtu", "vtub", "gmsh22b", "gmsh41b"])
def test_files_meshio_gives_up_on_are_mesh_errors_not_exits(tmp_path, form):
    base = write(unit_square(3), tmp_path / f"base.{FORMATS[form][2]}", form)
    rng = np.random.default_rng(1)
    for label, data in byte_mutations(base.read_bytes(), rng):
        if label == "last-byte-missing":
            continue  # readable: VTU ends in a newline, Gmsh in one after $EndElements
        path = tmp_path / f"{label}{base.suffix}"
        path.write_bytes(data)
        message = _error(path)  # flipped bytes may also give a readable, invalid mesh
        assert label.startswith("flipped") or message.startswith("cannot read mesh ("), message


def test_an_empty_or_truncated_vtu_names_the_file_once(tmp_path):
    path = tmp_path / "empty.vtu"
    path.write_bytes(b"")
    assert _error(path) == "cannot read mesh (not readable as vtu)"


@pytest.mark.parametrize("form", ["gmsh41", "gmsh41b", "gmsh22", "gmsh22b"])
@pytest.mark.parametrize("index, tag, why", [
    (-1, 0, "Gmsh node tags start at 1"),
    (40, 41, "the file defines no such node"),
])
def test_a_gmsh_node_tag_out_of_range_names_the_element_block(tmp_path, form, index, tag, why):
    mesh = unit_square(3)
    cells = mesh.cells.copy()
    cells[4, 1] = index  # meshio writes index + 1
    path = write(mesh, tmp_path / "bad.msh", form, cells)
    assert _error(path) == (f"element block 0 (Gmsh element type 2), element 5 refers to "
                            f"node tag {tag}; {why}")


def test_heated_block_with_node_tag_0_is_an_error_not_the_last_node(tmp_path):
    (path,) = [p for p in mutated_meshes(tmp_path) if p.name == "heated_block--node-tag-0.msh"]
    assert _error(path) == ("element block 0 (Gmsh element type 2), element 1 refers to node "
                            "tag 0; Gmsh node tags start at 1")


def test_a_vtu_node_index_out_of_range_is_checked_before_use(tmp_path):
    mesh = unit_cube(2)
    for value in (mesh.npoints + 3, -1):
        cells = mesh.cells.copy()
        cells[7, 2] = value
        path = write(mesh, tmp_path / f"bad{value}.vtu", "vtu", cells)
        assert _error(path) == (f"cell block 0 (tetra), cell 7 refers to node {value}, but the "
                                f"mesh has nodes 0..{mesh.npoints - 1}")


@pytest.mark.parametrize("form", ["gmsh41", "gmsh22b", "vtu"])
def test_a_duplicate_cell_is_named(tmp_path, form):
    mesh = unit_square(3)
    path = write(mesh, tmp_path / f"dup.{FORMATS[form][2]}", form,
                 np.vstack([mesh.cells, mesh.cells[[6]]]))
    assert _error(path) == (f"cells 6 and 18 are duplicates (both have the vertices "
                            f"{sorted(mesh.cells[6].tolist())})")


def test_overlapping_cells_are_found_three_ways():
    square = unit_square(2)
    points, cells = square.points, square.cells
    # A third cell on an interior edge.
    edge = [1, 4]
    assert sum(set(edge) <= set(c) for c in cells.tolist()) == 2
    third = next(np.array(edge + [v]) for v in range(len(points))
                 if not any(set(edge + [v]) == set(c) for c in cells.tolist())
                 and signed_measures(points, np.array([edge + [v]]))[0] > 1e-9)
    with pytest.raises(MeshError, match=r"m: facet \[1, 4\] is shared by cells .* cells overlap"):
        Mesh(points, np.vstack([cells, third]), source="m")
    # The same square twice over other nodes: no shared facet, but twice the area of its box.
    twice = np.vstack([cells, cells + len(points)])
    with pytest.raises(MeshError, match=r"m: the 16 cells' total area 2 exceeds the 1 of "
                                        r"their bounding box: cells overlap"):
        Mesh(np.vstack([points, points]), twice, source="m")
    # A duplicate on the boundary shares no facet with a third cell: the duplicate check.
    with pytest.raises(MeshError, match="m: cells 0 and 8 are duplicates"):
        Mesh(points, np.vstack([cells, cells[:1]]), source="m")


def test_a_case_with_a_hostile_mesh_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.vtu"
    bad.write_bytes(b"<?xml version='1.0'?><VTKFile")
    code = main(["run", str(CASES / "poisson_block.toml"), "--backend", "host", "--quiet",
                 "--out", str(tmp_path), "--set", f"mesh.file={bad}"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert str(bad) in err and "cannot read mesh" in err


def test_a_fifo_or_a_missing_file_is_an_error_not_a_hang(tmp_path):
    fifo = tmp_path / "mesh.msh"
    os.mkfifo(fifo)
    assert _error(fifo) == "not a regular file"
    assert _error(tmp_path / "missing.vtu") == "no such file"
