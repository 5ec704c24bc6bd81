"""Output of runs: one HDF5 file per run, an XDMF sidecar, PNG plots; structured grids,
unstructured (finite-element) meshes and meshes of mixed cell types (finite volumes)."""

from .cell_output import CellRunWriter
from .hdf5 import RunWriter
from .plot import plot_fields
from .unstructured import UnstructuredRunWriter
from .xdmf import write_xdmf


def writer_class(mesh):
    """CellRunWriter for meshes of cell blocks (CellMesh), UnstructuredRunWriter for meshes
    with cells (the finite-element Mesh), RunWriter for structured grids."""
    if hasattr(mesh, "blocks"):
        return CellRunWriter
    return UnstructuredRunWriter if hasattr(mesh, "cells") else RunWriter


__all__ = ["CellRunWriter", "RunWriter", "UnstructuredRunWriter", "plot_fields", "writer_class",
           "write_xdmf"]
