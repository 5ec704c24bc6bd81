"""Meshes: uniform structured grids; unstructured simplex meshes (from meshio files or the
generators) with their topology, for the finite elements; and meshes of mixed cell types with
their face geometry, for the finite volumes."""

from .cell_generators import hex_grid, quad_grid
from .cell_mesh import CellMesh
from .faces import FaceGeometry, face_geometry
from .generators import box, quadrilateral, rectangle, unit_cube, unit_square
from .meshio_cells import read_cell_mesh
from .meshio_reader import from_meshio, read_mesh
from .renumber import locality_order
from .structured import StructuredGrid
from .unstructured import Mesh, MeshError

__all__ = ["CellMesh", "FaceGeometry", "Mesh", "MeshError", "StructuredGrid", "box",
           "face_geometry", "from_meshio", "hex_grid", "locality_order", "quad_grid",
           "quadrilateral", "read_cell_mesh", "read_mesh", "rectangle", "unit_cube",
           "unit_square"]
