"""Meshes of mixed cell types for the finite-volume solvers: triangles and quadrilaterals in
2D; tetrahedra, hexahedra, wedges (prisms) and pyramids in 3D, with named boundary facet
groups.

    mesh = CellMesh(points, {"triangle": tri, "quad": quads},
                    boundaries={"wall": {"line": segments}})

Vertex order within a cell is meshio's (VTK's). Cells are numbered block by block in the order
of `blocks`; cell fields are arrays of shape (ncells,) in that order.
"""

from dataclasses import dataclass, field

import numpy as np

from .unstructured import MeshError

# Vertices of each cell type, and the spatial dimension it lives in.
CELL_VERTICES = {"triangle": 3, "quad": 4, "tetra": 4, "hexahedron": 8, "wedge": 6,
                 "pyramid": 5}
CELL_DIM = {"triangle": 2, "quad": 2, "tetra": 3, "hexahedron": 3, "wedge": 3, "pyramid": 3}
# Facet types of a boundary group, by the mesh's dimension.
FACET_VERTICES = {2: {"line": 2}, 3: {"triangle": 3, "quad": 4}}

__all__ = ["CELL_DIM", "CELL_VERTICES", "FACET_VERTICES", "CellMesh", "MeshError"]


@dataclass
class CellMesh:
    """points (n, dim) float64; blocks {cell type: (m, k) int64 vertex indices}; boundaries
    {name: {facet type: (f, k) int64 vertex indices}}; source names the mesh in errors."""

    points: np.ndarray
    blocks: dict
    boundaries: dict = field(default_factory=dict)
    source: str = "mesh"

    def __post_init__(self):
        self.points = np.ascontiguousarray(self.points, dtype=np.float64)
        self.blocks = {kind: np.ascontiguousarray(cells, dtype=np.int64)
                       for kind, cells in self.blocks.items()}
        self.boundaries = {name: {kind: np.ascontiguousarray(f, dtype=np.int64)
                                  for kind, f in facets.items()}
                           for name, facets in self.boundaries.items()}

    @property
    def dim(self):
        return self.points.shape[1]

    @property
    def npoints(self):
        return self.points.shape[0]

    @property
    def ncells(self):
        return sum(len(cells) for cells in self.blocks.values())

    @property
    def shape(self):
        """The shape of a scalar cell field (what output writers check against)."""
        return (self.ncells,)

    @property
    def cell_types(self):
        return tuple(self.blocks)
