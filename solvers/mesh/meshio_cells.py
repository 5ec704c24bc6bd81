"""CellMeshes of mixed cell types from files through meshio (Gmsh .msh 2 and 4, VTU, XDMF...),
for the finite-volume solvers.

Cells of the mesh's top dimension form the domain: triangles and quadrilaterals in 2D (a mesh
whose z is zero everywhere), tetrahedra, hexahedra, wedges and pyramids in 3D; other types of
that dimension (second-order cells, polygons...) are an error. Blocks of one type are joined in
file order, the types in the order they first appear. Boundary groups come from the facet
blocks (lines in 2D; triangles and quadrilaterals in 3D) tagged with 'gmsh:physical', named by
the file's physical names (field_data) or else '<facet type>_<tag>'; untagged lower-dimensional
blocks are ignored. A 2D mesh whose cells all turn clockwise is turned over (a Gmsh surface with
normal -z); so is a block of wedges all in Gmsh's vertex order (the mirror of VTK's, see
cell_mesh). A mix of orientations is left to validation (inverted cells).

Every failure is a one-line MeshError that starts with the file's path: what read_mesh
(meshio_reader.py) reports for an unreadable file or an undefined Gmsh node tag, a node index
out of range, an unsupported cell type, and whatever CellMesh validation finds. The faces are
matched later, by faces.face_geometry, whose errors (boundary faces in no group, a face of
three cells) name the file too (the mesh's source).
"""

import numpy as np

from .cell_mesh import CELL_TYPES, FACET_VERTICES, CellMesh, cell_geometry
from .meshio_reader import PHYSICAL, _check_nodes, _physical_names, read_with
from .unstructured import MeshError

# Wedges in Gmsh's vertex order put into VTK's: each triangle turned over.
TURNED_OVER = {"wedge": [0, 2, 1, 3, 5, 4]}


def read_cell_mesh(path):
    """A validated CellMesh from a mesh file; MeshError (one line) for what cannot be used."""
    return read_with(cell_mesh_from_meshio, path)


def _top_dimension(raw, source):
    """The cells' dimension (meshio's topological dimension); every type of it supported."""
    types, dims = [block.type for block in raw.cells], [block.dim for block in raw.cells]
    top = max(dims, default=0)
    if top == 0:
        raise MeshError(f"{source}: no 2D or 3D cells (cell types: {', '.join(types) or 'none'})")
    unsupported = [t for t, d in zip(types, dims) if d == top and t not in CELL_TYPES[top]]
    if unsupported:
        raise MeshError(f"{source}: cell type {unsupported[0]} is not supported (the finite "
                        f"volumes take {', '.join(CELL_TYPES[top])} cells)")
    return top


def _oriented(points, blocks):
    """blocks with a 2D mesh of clockwise cells, or a block of wedges turned the other way,
    turned over."""
    signs = {kind: cell_geometry(points, kind, cells)[0] < 0 for kind, cells in blocks.items()}
    if points.shape[1] == 2 and all(s.all() for s in signs.values()):
        return {kind: cells[:, ::-1].copy() for kind, cells in blocks.items()}
    return {kind: cells[:, TURNED_OVER[kind]] if kind in TURNED_OVER and signs[kind].all()
            else cells for kind, cells in blocks.items()}


def cell_mesh_from_meshio(raw, source="mesh"):
    """A CellMesh from a meshio.Mesh (see the module docstring)."""
    top = _top_dimension(raw, source)
    points = np.asarray(raw.points, np.float64)
    if top == 2 and points.shape[1] == 3:
        if np.any(points[:, 2] != 0):
            raise MeshError(f"{source}: a mesh of 2D cells must lie in the z = 0 plane")
        points = points[:, :2]
    names = _physical_names(raw.field_data)
    tags = raw.cell_data.get(PHYSICAL)
    facet_types = FACET_VERTICES[top]

    # Cells by type, and boundary facets by group and type, in file order.
    blocks, boundaries = {}, {}
    for index, block in enumerate(raw.cells):
        block_tags = None if tags is None else np.asarray(tags[index]).ravel()
        is_cell = block.dim == top
        if not is_cell and (block.type not in facet_types or block_tags is None):
            continue  # not used: points, curves in 3D, untagged facets
        data = np.asarray(block.data, np.int64)
        _check_nodes(data, len(points), index, block.type, source)
        if is_cell:
            blocks.setdefault(block.type, []).append(data)
            continue
        for tag in np.unique(block_tags):
            name = names.get((top - 1, int(tag)), f"{block.type}_{int(tag)}")
            boundaries.setdefault(name, {}).setdefault(block.type, []).append(
                data[block_tags == tag])
    blocks = {kind: np.concatenate(parts) for kind, parts in blocks.items()}
    boundaries = {name: {kind: np.concatenate(parts) for kind, parts in facets.items()}
                  for name, facets in boundaries.items()}
    return CellMesh(points, _oriented(points, blocks), boundaries, source=source)
