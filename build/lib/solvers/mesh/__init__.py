"""Meshes: structured grids (unstructured meshes arrive with the finite-element solvers)."""

from .structured import StructuredGrid

__all__ = ["StructuredGrid"]
