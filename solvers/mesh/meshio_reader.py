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
"""

import numpy as np

from .unstructured import CELL_TYPES, FACET_TYPES, Mesh, MeshError, signed_measures

PHYSICAL = "gmsh:physical"
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


def read_mesh(path):
    """A validated Mesh from a mesh file; MeshError (one line) for what cannot be used."""
    meshio = _import_meshio()
    try:
        raw = meshio.read(path)
    except Exception as error:  # meshio raises many types for unreadable files
        raise MeshError(f"{path}: cannot read mesh ({type(error).__name__}: {error})") from None
    try:
        return from_meshio(raw, str(path))
    except MeshError as error:
        message = str(error)
        raise MeshError(message if message.startswith(str(path)) else f"{path}: {message}") \
            from None


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
        data = np.asarray(block.data, np.int64)
        block_tags = None if tags is None else np.asarray(tags[index]).ravel()
        if block.type == wanted:
            cells.append(data)
            if block_tags is not None:
                for tag in np.unique(block_tags):
                    name = names.get((top, int(tag)), f"{wanted}_{int(tag)}")
                    ids = offset + np.flatnonzero(block_tags == tag)
                    materials[name] = np.concatenate([materials.get(name, []), ids])
            offset += data.shape[0]
        elif block.type == facet_type and block_tags is not None:
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
