"""What the steady finite-element solvers share: a function space and its assembler, an
AssembledOperator (the matrix and load of the subclass's forms), the symmetric Dirichlet
elimination (system.py) and a CG solve with a preconditioner from the project's table
(solvers.linalg.preconditioners; on an assembled matrix "multigrid" is algebraic).

In fp32 (refine=True, the default) the system is assembled in fp64 and solved by iterative
refinement (solvers.linalg.refinement): fp32 CG with the preconditioner on the rounded matrix,
to INNER_RTOL, inside fp64 residuals, so the solve reaches rtol on the true fp64 residual,
which fp32 CG alone cannot below about eps32 ||A|| ||u|| / ||b|| (1e-4 to 3e-3 on the
elasticity cases). Memory: the fp64 values (matrix and unconstrained copy) and the fp32 copy,
24 bytes a nonzero with the columns, against 12 for plain fp32. refine=False is plain fp32
CG, whose status says stalled where rtol lies below that floor.

A subclass declares its physics in __init__:

    dirichlet, neumann, robin = self._setup(mesh, degree, components, boundary, ...)
    self.operator = ...              # an AssembledOperator: its forms and loads
    self._impose(dirichlet)          # the Dirichlet system; assembles everything
    self.scheme = self._scheme(...)  # element, cell, dofs, nonzeros, preconditioner, rtol

and its fields and diagnostics; `preconditioner_options()` passes what the algebraic
hierarchy needs of a vector problem (near-nullspace, block size).
"""

import time

import numpy as np

from ..linalg import ConjugateGradient, SolveInfo
from ..linalg.preconditioners import check, choices, preconditioner
from ..linalg.refinement import IterativeRefinement, inner_matrix
from ..solver import SteadySolver
from .assembly import Assembler
from .boundary import dirichlet_values, split
from .space import FunctionSpace
from .system import DirichletSystem

PRECONDITIONERS = choices("amg")  # every name, the default of the FE solvers first
INNER_RTOL = 1e-3  # the relative tolerance of refinement's inner fp32 solves (at most)


class SteadyFESolver(SteadySolver):
    operator = None
    u = info = _cg = None

    def _setup(self, mesh, degree, components, boundary, preconditioner, rtol, maxiter,
               renumber, backend, precision, refine=True):
        """Check the preconditioner and the boundary names, resolve the platform, make the
        space and its assembler (fp64 where an fp32 solve refines); returns the (dirichlet,
        neumann, robin) conditions."""
        check(preconditioner, PRECONDITIONERS)
        boundary = dict(boundary or {})
        mesh.require_boundaries(list(boundary))
        self.mesh = mesh
        self.preconditioner_name = preconditioner
        self.rtol, self.maxiter = rtol, maxiter
        self._platform(backend, precision)
        self.refine = bool(refine) and precision == "fp32"
        self.space = FunctionSpace(mesh, degree, components, renumber=renumber)
        self.assembler = Assembler(self.space, self.backend,
                                   "fp64" if self.refine else precision)
        return split(boundary)

    def _scheme(self, **extra):
        """The scheme record: element and cell, `extra` (such as the plane), then dofs,
        nonzeros, preconditioner and rtol."""
        return {"element": f"P{self.space.degree}", "cell": self.mesh.cell_type, **extra,
                "dofs": self.space.n, "nonzeros": self.assembler.pattern.nnz,
                "preconditioner": self.preconditioner_name, "rtol": self.rtol,
                "refinement": self.refine}

    def _impose(self, dirichlet):
        """The Dirichlet system on the operator's matrix with the conditions' values, the
        right-hand side launches (the loads, then the lifting), and a first assembly."""
        op = self.operator
        dofs, values = dirichlet_values(self.space, dirichlet)
        self.system = DirichletSystem(self.assembler, op.values, dofs)
        self.system.set_values(values)
        # The system's matrix values before the cut, the right-hand side and its launches.
        self.full_values, self.b, self.sources = op.values, op.load, op.sources
        self.matrix_launches = op.matrix_launches
        self.rhs_launches = [*op.load_launches, self.system.bind_rhs(self.b)]
        self.assemble()

    def assemble(self):
        """The matrix launches, the Dirichlet cut (and the host copy AMG and Jacobi read), then
        the right-hand side launches (loads, Dirichlet lifting). Both lists are capturable:
        a time-dependent solver replays its right-hand side (and a solve) from a graph."""
        start = time.perf_counter()
        for launch in self.matrix_launches:
            launch()
        self.system.apply_matrix()
        for launch in self.rhs_launches:
            launch()
        self.backend.synchronize()
        self.assembly_seconds = time.perf_counter() - start

    def preconditioner_options(self):
        """Keyword arguments of the algebraic hierarchy (near_nullspace, block_size)."""
        return {}

    def preconditioner(self, matrix=None):
        """The CG preconditioner of the assembled system (or of `matrix`, its fp32 copy), by
        its name in the table."""
        matrix = self.system.matrix if matrix is None else matrix
        return preconditioner(self.preconditioner_name, matrix, **self.preconditioner_options())

    def _solver(self):
        """CG on the system, or refinement around fp32 CG on its rounded copy (built once)."""
        if self._cg is None and self.refine:
            matrix = inner_matrix(self.system.matrix)
            inner = ConjugateGradient(matrix, self.preconditioner(matrix),
                                      rtol=max(self.rtol, INNER_RTOL), maxiter=self.maxiter)
            self._cg = IterativeRefinement(self.system.matrix, inner)
        elif self._cg is None:
            self._cg = ConjugateGradient(self.system.matrix, self.preconditioner(),
                                         rtol=self.rtol, maxiter=self.maxiter)
        return self._cg

    @property
    def dofs(self):
        return self.space.n

    def failure_message(self, info):
        return (f"the linear solve did not converge ({info.status} after {info.iterations} "
                f"iterations, relative residual {info.residual:.3g}); raise solver.maxiter or "
                "rtol, or use the amg preconditioner")

    def solve(self):
        """CG (refined in fp32) from u = 0 on the assembled system (the solver and its
        preconditioner are built at the first call); returns (u: host float64 values in the
        space's numbering, SolveInfo: iterations are the inner ones when refined)."""
        b = self.backend.to_host(self.b)
        if self.refine:
            x, info = self._solver().solve(b, rtol=self.rtol)
            self.info = SolveInfo(converged=info.converged, iterations=info.inner_iterations,
                                  residual=info.residual, status=info.status)
        else:
            x, self.info = self._solver().solve(b)
        self.u = self.backend.to_host(x).astype(np.float64)
        return self.u, self.info
