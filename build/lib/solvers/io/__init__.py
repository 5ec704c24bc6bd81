"""Output of structured-grid runs: one HDF5 file per run, an XDMF sidecar, PNG plots."""

from .hdf5 import RunWriter
from .plot import plot_fields
from .xdmf import write_xdmf

__all__ = ["RunWriter", "plot_fields", "write_xdmf"]
