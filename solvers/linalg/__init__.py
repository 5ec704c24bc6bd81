"""Sparse linear algebra on the device: operators (CSR and SELL-C-sigma matrices, matrix-free
stencils) and Krylov solvers whose whole iteration replays from a CUDA graph."""

from .amg import AlgebraicMultigrid
from .csr import CsrMatrix
from .krylov import BiCGStab, ConjugateGradient, SolveInfo
from .multigrid import GeometricMultigrid
from .operator import LinearOperator
from .preconditioners import PRECONDITIONERS, preconditioner
from .refinement import IterativeRefinement, RefinementInfo
from .sell import SellMatrix
from .stencil import StencilLaplacian

__all__ = ["AlgebraicMultigrid", "BiCGStab", "ConjugateGradient", "CsrMatrix",
           "GeometricMultigrid", "IterativeRefinement", "LinearOperator", "PRECONDITIONERS",
           "RefinementInfo", "SellMatrix", "SolveInfo", "StencilLaplacian", "preconditioner"]
