"""What the steady finite-element solvers share: a function space and its assembler, an
AssembledOperator (the matrix and load of the subclass's forms), the symmetric Dirichlet
elimination (system.py) and a CG solve with a preconditioner from the project's table
(solvers.linalg.preconditioners; on an assembled matrix "multigrid" is algebraic).

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

from ..linalg import ConjugateGradient
from ..linalg.preconditioners import check, choices, preconditioner
from ..solver import SteadySolver
from .assembly import Assembler
from .boundary import dirichlet_values, split
from .space import FunctionSpace
from .system import DirichletSystem

PRECONDITIONERS = choices("amg")  # every name, the default of the FE solvers first


class SteadyFESolver(SteadySolver):
    operator = None
    u = info = _cg = None

    def _setup(self, mesh, degree, components, boundary, preconditioner, rtol, maxiter,
               renumber, backend, precision):
        """Check the preconditioner and the boundary names, resolve the platform, make the
        space and its assembler; returns the (dirichlet, neumann, robin) conditions."""
        check(preconditioner, PRECONDITIONERS)
        boundary = dict(boundary or {})
        mesh.require_boundaries(list(boundary))
        self.mesh = mesh
        self.preconditioner_name = preconditioner
        self.rtol, self.maxiter = rtol, maxiter
        self._platform(backend, precision)
        self.space = FunctionSpace(mesh, degree, components, renumber=renumber)
        self.assembler = Assembler(self.space, self.backend, precision)
        return split(boundary)

    def _scheme(self, **extra):
        """The scheme record: element and cell, `extra` (such as the plane), then dofs,
        nonzeros, preconditioner and rtol."""
        return {"element": f"P{self.space.degree}", "cell": self.mesh.cell_type, **extra,
                "dofs": self.space.n, "nonzeros": self.assembler.pattern.nnz,
                "preconditioner": self.preconditioner_name, "rtol": self.rtol}

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

    def preconditioner(self):
        """The CG preconditioner of the assembled system, by its name in the table."""
        return preconditioner(self.preconditioner_name, self.system.matrix,
                              **self.preconditioner_options())

    def _solver(self):
        if self._cg is None:
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
        """CG from u = 0 on the assembled system (the solver and its preconditioner are built
        at the first call); returns (u: host float64 values in the space's numbering,
        SolveInfo)."""
        x, self.info = self._solver().solve(self.backend.to_host(self.b))
        self.u = self.backend.to_host(x).astype(np.float64)
        return self.u, self.info
