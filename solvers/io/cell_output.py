"""Output of runs on meshes of mixed cell types (a solvers.mesh.cell_mesh.CellMesh: the
finite-volume solvers): the run file of hdf5.RunWriter with the mesh as points and cells and
cell-centred fields, and its XDMF sidecar (unstructured.write_unstructured_xdmf).

    /mesh              attrs: ndim; cell_type, the meshio name of the cells or "mixed";
                       block_types, the meshio names of the mesh's blocks in order, and
                       block_sizes, the cells of each (cells are numbered block by block)
    /mesh/points       (n, dim) float64 vertex coordinates
    /mesh/cells        one cell type: (m, k) int64 vertex indices in meshio's (VTK's) order;
                       mixed: XDMF's Mixed topology, flat int64, for each cell in turn its XDMF
                       type code (triangle 4, quad 5, tetra 6, pyramid 7, wedge 8,
                       hexahedron 9) then its vertex indices
    /mesh/cell_types   mixed only: (m,) int8, the XDMF type code of each cell
    /mesh/offsets      mixed only: (m + 1,) int64, cell c is cells[offsets[c]] (its code)
                       followed by its vertices cells[offsets[c] + 1:offsets[c + 1]]
    /fields/<name>     the final state as the solver gives it: (m,), or (m, k) for a vector,
                       k = 3, or 2 on a 2D mesh                                  layout "cell"
    /snapshots/NNNNNN/<name>   (m,) or (m, 3): a 2D vector gets a zero third component, as
                       ParaView takes only 3 components for a Vector attribute's glyphs and
                       streamlines                                               layout "cell"
"""

import numpy as np

from ..mesh.cell_mesh import CELL_VERTICES
from .hdf5 import RunWriter
from .unstructured import write_unstructured_xdmf

# XDMF's name and Mixed-topology type code of each cell type (XdmfTopologyType).
XDMF_TYPES = {"triangle": ("Triangle", 4), "quad": ("Quadrilateral", 5),
              "tetra": ("Tetrahedron", 6), "pyramid": ("Pyramid", 7), "wedge": ("Wedge", 8),
              "hexahedron": ("Hexahedron", 9)}


def mixed_cells(mesh):
    """(XDMF Mixed array, (m,) int8 type codes, (m + 1,) offsets) of a CellMesh's cells."""
    codes = np.concatenate([np.full(len(cells), XDMF_TYPES[kind][1], np.int8)
                            for kind, cells in mesh.blocks.items()])
    rows = [np.column_stack([np.full(len(cells), XDMF_TYPES[kind][1]), cells]).ravel()
            for kind, cells in mesh.blocks.items()]
    lengths = np.concatenate([np.full(len(cells), CELL_VERTICES[kind] + 1)
                              for kind, cells in mesh.blocks.items()])
    return np.concatenate(rows), codes, np.concatenate([[0], np.cumsum(lengths)])


class CellRunWriter(RunWriter):
    """RunWriter for a CellMesh: fields are cell-centred, (ncells,) or (ncells, k) vectors with
    k = 3, or k = 2 on a 2D mesh."""

    def __init__(self, out_dir, name, mesh, attrs, targets=()):
        super().__init__(out_dir, name, mesh, attrs, targets)
        self.vector_components = ((2,), (3,)) if mesh.dim == 2 else ((3,),)

    def _single(self):
        """(cell type, cells) of a mesh of one cell type; None for a mixed mesh."""
        blocks = self.grid.blocks
        return next(iter(blocks.items())) if len(blocks) == 1 else None

    def _write_mesh(self, group):
        mesh, single = self.grid, self._single()
        group.attrs.update({"ndim": mesh.dim, "cell_type": single[0] if single else "mixed",
                            "block_types": list(mesh.blocks),
                            "block_sizes": [len(cells) for cells in mesh.blocks.values()]})
        group["points"] = mesh.points
        if single:
            group["cells"] = single[1]
            return
        group["cells"], group["cell_types"], group["offsets"] = mixed_cells(mesh)

    def _stored(self, value, final):
        """A field as given; in a snapshot, a 2D vector with a zero third component."""
        if final or value.shape[1:] != (2,):
            return value, "cell"
        return np.column_stack([value, np.zeros(len(value), value.dtype)]), "cell"

    def _write_xdmf(self, xdmf_path, h5_name):
        mesh, single = self.grid, self._single()
        count = {"NumberOfElements": str(mesh.ncells)}
        if single:
            topology = {"TopologyType": XDMF_TYPES[single[0]][0], **count}, single[1].shape
        else:
            flat = sum(cells.size + len(cells) for cells in mesh.blocks.values())
            topology = {"TopologyType": "Mixed", **count}, (flat,)
        # Snapshots hold vectors of 3 components (_stored).
        shapes = {name: shape[:1] + (3,) * (len(shape) - 1)
                  for name, shape in self._field_shapes.items()}
        return write_unstructured_xdmf(xdmf_path, h5_name, mesh.points.shape, topology,
                                       self.snapshots, self.field_dtypes, shapes, "Cell")
