"""Meshes from files through meshio: Gmsh .msh (versions 2 and 4), VTU, XDMF and the other
formats meshio reads.

Cells of the mesh's top dimension (triangles in 2D, tetrahedra in 3D) form the domain; a 2D
mesh is recognised by a z coordinate that is zero everywhere. Names come from Gmsh physical
groups (meshio's field_data and the cell data 'gmsh:physical'): a physical group of facet
dimension names a boundary, one of cell dimension names a material. VTU and XDMF files keep
the 'gmsh:physical' tags but not the names; their groups are called '<cell type>_<tag>'
(e.g. 'triangle_3', 'tetra_4'). Lower-dimensional cells without a group (e.g. Gmsh's
points and curves) are ignored; any other cell type of the top dimension (quadrilaterals,
second-order triangles, hexahedra...) is an error.

Every failure is a one-line MeshError that starts with the file's path: a file meshio cannot
read (it answers some, such as an empty or truncated VTU, with sys.exit(1) and console output,
both caught here), a Gmsh element naming a node tag the file does not define (checked in the
file itself, gmsh_tags.py: meshio's MSH 2.2 reader wraps tag 0 around to the last node), a
node index out of range in a cell block (checked before any use), and whatever Mesh.validate
finds (degenerate, inverted, duplicated or overlapping cells, unused nodes).
"""

import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np

from .gmsh_tags import bad_node_tag
from .unstructured import CELL_TYPES, FACET_TYPES, Mesh, MeshError, signed_measures

PHYSICAL = "gmsh:physical"
_COULD_NOT = re.compile(r"Error: Couldn't read file .* as (.*)$")
TOP_DIM = {"triangle": 2, "quad": 2, "triangle6": 2, "quad8": 2, "quad9": 2, "triangle7": 2,
           "polygon": 2, "tetra": 3, "hexahedron": 3, "wedge": 3, "pyramid": 3, "tetra10": 3,
           "hexahedron20": 3, "hexahedron27": 3}


def _import_meshio():
    try:
        import meshio
    except ImportError:
        raise ImportError("reading mesh files needs meshio: pip install meshio") from None
    return meshio


def _physical_names(field_data):
    """{(dim, tag): name} of the Gmsh physical groups."""
    names = {}
    for name, value in field_data.items():
        value = np.asarray(value).ravel()
        if value.size >= 2:
            names[(int(value[1]), int(value[0]))] = name
    return names


def _spatial_dim(points, top):
    if top == 3:
        return 3
    if points.shape[1] == 3 and np.any(points[:, 2] != 0):
        raise MeshError("a triangle mesh must lie in the z = 0 plane (2D)")
    return 2


def _one_line(text, limit=200):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _meshio_read(meshio, path):
    """meshio.read with its console output (warnings, 'Error: ...') captured: a MeshError for a
    file it cannot read, including the ones it answers with sys.exit(1)."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return meshio.read(path)
    except (Exception, SystemExit) as error:  # meshio raises many types for unreadable files
        if not isinstance(error, SystemExit):
            reason = f"{type(error).__name__}: {error}"
        else:  # what meshio printed (wrapped at 80 columns) before it gave up
            said = " ".join(said.getvalue().split()).replace("Warning: ", "")
            gave_up = _COULD_NOT.search(said)
            reason = "; ".join(part for part in (
                said[:gave_up.start()].strip() if gave_up else said,
                f"not readable as {gave_up.group(1)}" if gave_up else "") if part)
        raise MeshError(f"{path}: cannot read mesh ({_one_line(reason or 'unreadable')})") \
            from None


def read_mesh(path):
    """A validated Mesh from a mesh file; MeshError (one line) for what cannot be used."""
    return read_with(from_meshio, path)


def read_with(convert, path):
    """convert(meshio.Mesh, source) of the file at path: its checks before meshio reads it (a
    regular file; Gmsh node tags), and every failure as one MeshError line naming the file."""
    meshio = _import_meshio()
    if not Path(path).is_file():  # a FIFO or device would block the readers
        what = "not a regular file" if Path(path).exists() else "no such file"
        raise MeshError(f"{path}: {what}")
    if str(path).endswith(".msh"):
        bad = bad_node_tag(path)  # meshio wraps Gmsh node tag 0 around to the last node
        if bad:
            raise MeshError(f"{path}: {bad}")
    raw = _meshio_read(meshio, path)
    try:
        return convert(raw, str(path))
    except MeshError as error:
        message = _one_line(error, 400)
        raise MeshError(message if message.startswith(str(path)) else f"{path}: {message}") \
            from None
    except Exception as error:  # malformed data meshio passed through
        raise MeshError(f"{path}: cannot use mesh ({type(error).__name__}: "
                        f"{_one_line(error)})") from None


def _check_nodes(data, npoints, index, kind, source):
    """Connectivity of cell block `index` within the points, before any use of it."""
    if data.ndim != 2 or data.size == 0:
        return
    bad = (data < 0) | (data >= npoints)
    if bad.any():
        row = int(np.argmax(bad.any(axis=1)))
        raise MeshError(f"{source}: cell block {index} ({kind}), cell {row} refers to node "
                        f"{int(data[row][bad[row]][0])}, but the mesh has nodes 0.."
                        f"{npoints - 1}")


def from_meshio(raw, source="mesh"):
    """A Mesh from a meshio.Mesh (see the module docstring)."""
    types = [block.type for block in raw.cells]
    dims = [TOP_DIM.get(t, 0) for t in types]
    top = max(dims, default=0)
    if top == 0:
        raise MeshError(f"{source}: no 2D or 3D cells (cell types: {', '.join(types) or 'none'})")
    wanted = CELL_TYPES[top]
    unsupported = sorted({t for t, d in zip(types, dims) if d == top and t != wanted})
    if unsupported:
        raise MeshError(f"{source}: cell type {unsupported[0]} is not supported (the finite "
                        f"elements take {wanted} cells only)")
    dim = _spatial_dim(raw.points, top)
    points = raw.points[:, :dim]
    names = _physical_names(raw.field_data)
    tags = raw.cell_data.get(PHYSICAL)
    facet_type = FACET_TYPES[dim]

    cells, materials, boundaries, offset = [], {}, {}, 0
    for index, block in enumerate(raw.cells):
        block_tags = None if tags is None else np.asarray(tags[index]).ravel()
        if block.type != wanted and (block.type != facet_type or block_tags is None):
            continue  # not used: points, curves in 3D, untagged facets
        data = np.asarray(block.data, np.int64)
        _check_nodes(data, len(points), index, block.type, source)
        if block.type == wanted:
            cells.append(data)
            if block_tags is not None:
                for tag in np.unique(block_tags):
                    name = names.get((top, int(tag)), f"{wanted}_{int(tag)}")
                    ids = offset + np.flatnonzero(block_tags == tag)
                    materials[name] = np.concatenate([materials.get(name, []), ids])
            offset += data.shape[0]
        else:
            for tag in np.unique(block_tags):
                name = names.get((top - 1, int(tag)), f"{facet_type}_{int(tag)}")
                facets = data[block_tags == tag]
                boundaries[name] = np.concatenate([boundaries.get(name, np.zeros((0, dim))),
                                                   facets])
    cells = np.concatenate(cells)
    # A mesh whose cells all turn clockwise (a Gmsh surface with normal -z, say) is consistently
    # oriented: turn every cell over. A mix of orientations is left to validation (inverted).
    if np.all(signed_measures(points, cells) < 0):
        cells[:, :2] = cells[:, 1::-1]
    return Mesh(points, cells, boundaries, materials, source=source)
