"""Hostile mesh files for tests, importable by any test (tests/ is on pytest's path):

    from mesh_mutations import mutated_meshes
    for path in mutated_meshes(tmp_path):      # about 150 small files, deterministic
        ...                                    # read_mesh(path): a Mesh or a one-line MeshError

The files start from meshes/heated_block.msh (Gmsh 4.1 ASCII, tetrahedra) and from small
generated meshes that meshio writes as Gmsh 4.1 and 2.2 (ASCII and binary) and VTU (ASCII and
binary). Each is mutated at the byte level (emptied, truncated, bytes flipped) and at the level
of its connectivity (a node index out of range, Gmsh node tag 0, a negative index, a duplicated
cell, a cell over others, an inverted cell). A file's name says what was done to it:
'<base>--<mutation>.<ext>'.
"""

import contextlib
import io
from pathlib import Path

import meshio
import numpy as np

from solvers.mesh.generators import unit_cube, unit_square
from solvers.mesh.topology import all_facets
from solvers.mesh.unstructured import signed_measures

ROOT = Path(__file__).resolve().parent.parent
HEATED_BLOCK = ROOT / "meshes" / "heated_block.msh"
# name -> (meshio file format, binary, extension)
FORMATS = {"gmsh41": ("gmsh", False, "msh"), "gmsh41b": ("gmsh", True, "msh"),
           "gmsh22": ("gmsh22", False, "msh"), "gmsh22b": ("gmsh22", True, "msh"),
           "vtu": ("vtu", False, "vtu"), "vtub": ("vtu", True, "vtu")}


def _meshio_mesh(mesh, cells=None):
    """A meshio.Mesh of a generated mesh (3D points, one physical group) with other cells."""
    cells = mesh.cells if cells is None else cells
    points = np.c_[mesh.points, np.zeros(len(mesh.points))] if mesh.dim == 2 else mesh.points
    tags = np.ones(len(cells), int)
    return meshio.Mesh(points, [(mesh.cell_type, cells)],
                       cell_data={"gmsh:physical": [tags], "gmsh:geometrical": [tags]})


def write(mesh, path, form, cells=None):
    """Write a generated mesh (with `cells` in place of its own) in one of FORMATS."""
    file_format, binary, _ = FORMATS[form]
    with _quiet():
        _meshio_mesh(mesh, cells).write(path, file_format=file_format, binary=binary)
    return Path(path)


def _quiet():
    """meshio's writers print warnings (no 3D points, no tags): keep them out of the test."""
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    return stack


def connectivity_mutations(mesh):
    """(label, cells) of a generated mesh with broken connectivity (as meshio writes it, so a
    Gmsh file gets tag index + 1: index -1 is node tag 0)."""
    cells = mesh.cells
    n, middle = mesh.npoints, len(cells) // 2

    def changed(row, column, value):
        out = cells.copy()
        out[row, column] = value
        return out

    yield "node-out-of-range", changed(middle, 1, n + 7)
    yield "node-tag-0", changed(middle, 2, -1)
    yield "node-negative", changed(0, 0, -5)
    yield "duplicate-cell", np.vstack([cells, cells[middle:middle + 1]])
    # A cell with two vertices swapped: inverted (and over the cell it copies).
    swapped = cells[middle].copy()
    swapped[:2] = swapped[1::-1]
    yield "inverted-cell", np.vstack([cells, swapped])
    yield "overlapping-cell", np.vstack([cells, _cell_on_an_interior_facet(mesh)])


def _cell_on_an_interior_facet(mesh):
    """A positively oriented cell made of an interior facet (two cells meet there) and the
    vertex farthest from its plane but in neither cell: a third cell at that facet, over one
    of the others."""
    facets = all_facets(mesh.cells)
    _, inverse, counts = np.unique(np.sort(facets, axis=1), axis=0, return_inverse=True,
                                   return_counts=True)
    facet = facets[int(np.argmax(counts[inverse.ravel()] == 2))]
    neighbours = mesh.cells[np.isin(mesh.cells, facet).sum(axis=1) == len(facet)]
    candidates = np.array([np.append(facet, v) for v in range(mesh.npoints)
                           if v not in neighbours])
    measures = signed_measures(mesh.points, candidates)
    extra = candidates[int(np.argmax(abs(measures)))]
    if measures[int(np.argmax(abs(measures)))] < 0:
        extra[:2] = extra[1::-1]
    return extra


def byte_mutations(data, rng, flips=3):
    """(label, bytes) of a file's bytes emptied, truncated and with flipped bytes."""
    yield "empty", b""
    for fraction in (0.1, 0.5, 0.9):
        yield f"truncated-{int(fraction * 100)}", data[:int(len(data) * fraction)]
    yield "last-byte-missing", data[:-1]
    for k in range(flips):
        flipped = bytearray(data)
        for position in rng.integers(0, len(data), 1 + k * 4):
            flipped[position] ^= 0xFF
        yield f"flipped-{k}", bytes(flipped)


def _block_edits(text):
    """(label, text) of heated_block.msh with one node tag of its first element replaced."""
    head = text.index("$Elements")
    lines = text[head:].split("\n", 4)  # $Elements, counts, block header, first element
    for label, tag in (("node-tag-0", "0"), ("node-out-of-range", "999999"),
                       ("node-negative", "-3")):
        parts = lines[3].split()
        parts[2] = tag
        yield label, text[:head] + "\n".join(lines[:3] + [" ".join(parts)] + lines[4:])


def base_meshes(folder):
    """{name: path} of the unmutated files: heated_block.msh and a 2D and a 3D generated mesh
    in every format of FORMATS."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bases = {"heated_block": folder / "heated_block.msh"}
    bases["heated_block"].write_bytes(HEATED_BLOCK.read_bytes())
    for dim, mesh in ((2, unit_square(3)), (3, unit_cube(2))):
        for form, (_, _, ext) in FORMATS.items():
            bases[f"{dim}d-{form}"] = write(mesh, folder / f"{dim}d-{form}.{ext}", form)
    return bases


def mutated_meshes(folder, seed=0, flips=3):
    """Paths of mutated mesh files written into `folder` (see the module docstring)."""
    folder = Path(folder)
    rng = np.random.default_rng(seed)
    for name, path in base_meshes(folder / "bases").items():
        data, ext = path.read_bytes(), path.suffix
        for label, mutated in byte_mutations(data, rng, flips):
            target = folder / f"{name}--{label}{ext}"
            target.write_bytes(mutated)
            yield target
    for label, text in _block_edits(HEATED_BLOCK.read_text()):
        target = folder / f"heated_block--{label}.msh"
        target.write_text(text)
        yield target
    for dim, mesh in ((2, unit_square(3)), (3, unit_cube(2))):
        for label, cells in connectivity_mutations(mesh):
            for form in ("gmsh41", "gmsh22", "gmsh22b", "vtu"):
                ext = FORMATS[form][2]
                try:
                    yield write(mesh, folder / f"{dim}d-{form}--{label}.{ext}", form, cells)
                except (ValueError, IndexError, OverflowError):
                    continue  # meshio cannot write this one (a negative tag in binary, say)
