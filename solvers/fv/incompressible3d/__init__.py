"""Incompressible Navier-Stokes on a 3D staggered grid: the solver, its boundary table and the
pressure system."""

from .boundary import parse_boundaries
from .solver import IncompressibleSolver3D

__all__ = ["IncompressibleSolver3D", "parse_boundaries"]
