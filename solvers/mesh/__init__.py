"""Meshes: uniform structured grids, and unstructured simplex meshes (from meshio files or the
generators) with their topology."""

from .generators import box, quadrilateral, rectangle, unit_cube, unit_square
from .meshio_reader import from_meshio, read_mesh
from .structured import StructuredGrid
from .unstructured import Mesh, MeshError

__all__ = ["Mesh", "MeshError", "StructuredGrid", "box", "from_meshio", "quadrilateral",
           "read_mesh", "rectangle", "unit_cube", "unit_square"]
