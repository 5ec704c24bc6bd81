"""Finite elements: P1/P2 Lagrange spaces on triangle and tetrahedron meshes, fused assembly
into CSR matrices on the device, boundary conditions by name, the Poisson / steady-heat
solver, the transient heat solver and linear elasticity.

    from solvers.fe import unit_square, FunctionSpace, Assembler, PoissonSolver, Dirichlet
"""

from ..linalg.preconditioners import algebraic_multigrid
from ..mesh.generators import box, quadrilateral, rectangle, unit_cube, unit_square
from ..mesh.meshio_reader import from_meshio, read_mesh
from ..mesh.unstructured import Mesh, MeshError
from .assembly import Assembler, BilinearForm, Elements, LoadForm, cells, facets, sync_host
from .boundary import Dirichlet, Neumann, Robin, dirichlet_values
from .diffusion import Diffusion
from .elasticity import ElasticitySolver
from .heat import HeatSolver
from .operator import AssembledOperator
from .poisson import PoissonSolver
from .space import FunctionSpace
from .steady import SteadyFESolver
from .system import DirichletSystem, axpby
from .time_values import TimeFunction

__all__ = ["AssembledOperator", "Assembler", "BilinearForm", "Diffusion", "Dirichlet",
           "DirichletSystem", "ElasticitySolver", "Elements", "FunctionSpace", "HeatSolver",
           "LoadForm", "Mesh", "MeshError", "Neumann", "PoissonSolver", "Robin",
           "SteadyFESolver", "TimeFunction", "algebraic_multigrid", "axpby", "box", "cells",
           "dirichlet_values", "facets", "from_meshio", "quadrilateral", "read_mesh",
           "rectangle", "sync_host", "unit_cube", "unit_square"]
