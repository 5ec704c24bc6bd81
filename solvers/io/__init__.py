"""Output of runs: one HDF5 file per run, an XDMF sidecar, PNG plots; structured grids and
unstructured (finite-element) meshes."""

from .hdf5 import RunWriter
from .plot import plot_fields
from .unstructured import UnstructuredRunWriter
from .xdmf import write_xdmf


def writer_class(mesh):
    """RunWriter for structured grids, UnstructuredRunWriter for meshes with cells."""
    return UnstructuredRunWriter if hasattr(mesh, "cells") else RunWriter


__all__ = ["RunWriter", "UnstructuredRunWriter", "plot_fields", "writer_class", "write_xdmf"]
