"""Incompressible Navier-Stokes on a 2D staggered grid: the solver, its boundary table, the
pressure system and the derived fields."""

from .boundary import BoundaryError, parse_boundaries
from .solver import IncompressibleSolver

__all__ = ["BoundaryError", "IncompressibleSolver", "parse_boundaries"]
