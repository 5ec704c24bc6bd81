"""Steady heat conduction / Poisson: -div(k grad u) = f in the domain, with Dirichlet, Neumann
and Robin conditions on named boundaries and a conductivity k per material.

    solver = PoissonSolver(mesh, degree=2, conductivity={"steel": 45.0}, default_conductivity=1,
                           source=lambda x, y: ..., boundary={"left": Dirichlet(0.0), ...},
                           preconditioner="amg", backend="auto", precision="fp32")
    u, info = solver.solve()     # u: nodal values (host, space numbering); info: SolveInfo
    solver.fields()              # {"u": values at the mesh vertices}

Functions (source, boundary values, exact) are called as f(x, y[, z], t) on NumPy arrays.

Steps, all on the device after setup: the stiffness form over the cells (+ Robin facet mass),
the load of the nodal source (+ Neumann and Robin facet loads), the symmetric Dirichlet
elimination (system.py), then CG preconditioned by algebraic multigrid (pyamg hierarchy from
the assembled matrix) or Jacobi.
"""

import time

import numpy as np

from ..linalg import ConjugateGradient
from ..solver import SteadySolver
from .assembly import Assembler, cells, facets
from .boundary import dirichlet_values, nodal, split
from .space import FunctionSpace
from .system import DirichletSystem, algebraic_multigrid, axpby

PRECONDITIONERS = ("amg", "jacobi", "none")


class PoissonSolver(SteadySolver):
    name = "poisson"

    def __init__(self, mesh, degree=1, conductivity=None, default_conductivity=1.0,
                 source=0.0, boundary=None, preconditioner="amg", rtol=1e-8, maxiter=None,
                 exact=None, renumber=True, backend="auto", precision="fp32"):
        if preconditioner not in PRECONDITIONERS:
            raise ValueError(f"preconditioner must be one of {', '.join(PRECONDITIONERS)}, "
                             f"got {preconditioner!r}")
        boundary = dict(boundary or {})
        mesh.require_boundaries(list(boundary))
        dirichlet, neumann, robin = split(boundary)
        self.mesh = mesh
        self.exact = exact
        self.field_names = ("u", "exact", "error") if exact is not None else ("u",)
        self._platform(backend, precision)
        self.space = space = FunctionSpace(mesh, degree, renumber=renumber)
        a = self.assembler = Assembler(space, self.backend, precision)
        self.conductivity = mesh.cell_material_values(conductivity or {}, default_conductivity)
        self.scheme = {"element": f"P{degree}", "cell": mesh.cell_type, "dofs": space.n,
                       "nonzeros": a.pattern.nnz, "preconditioner": preconditioner,
                       "rtol": rtol}

        # Matrix: k grad u . grad v over the cells, plus alpha u v over Robin facets.
        full = self.full_values = a.values()
        self.stiffness = a.bilinear("stiffness", cells(space), self.conductivity)
        self.matrix_launches = [self.stiffness.bind(full)]
        if robin:
            robin_facets = facets(space, list(robin))
            alpha = np.concatenate([np.full(len(mesh.boundaries[name]), condition.alpha)
                                    for name, condition in robin.items()])
            robin_values = a.values()
            self.matrix_launches += [
                a.bilinear("mass", robin_facets, alpha).bind(robin_values),
                axpby(self.backend, full, 1.0, full, 1.0, robin_values)]

        # Right-hand side: f over the cells, fluxes over Neumann facets, alpha * ambient over
        # Robin facets, each from nodal values.
        self.b = a.vector()
        self.rhs_launches = []
        self.sources = []  # the device nodal vectors the loads read (source first)
        points = space.node_points
        self._add_load(cells(space), 1.0, nodal(source, points), add=False)
        for name, condition in neumann.items():
            self._add_load(facets(space, [name]), 1.0, nodal(condition.flux, points))
        for name, condition in robin.items():
            self._add_load(facets(space, [name]), condition.alpha,
                           nodal(condition.ambient, points))

        dofs, values = dirichlet_values(space, dirichlet)
        self.system = DirichletSystem(a, full, dofs)
        self.system.set_values(values)
        self.rhs_launches.append(self.system.bind_rhs(self.b))
        self.assemble()
        self.rtol, self.maxiter = rtol, maxiter
        self.preconditioner_name = preconditioner
        self._cg = None
        self.u = None
        self.info = None

    def _add_load(self, elements, coefficient, host_values, add=True):
        f = self.assembler.device(host_values, self.dtype)
        self.sources.append(f)
        # The launch order matters: the volume load overwrites b, facet loads add to it.
        self.rhs_launches.append(self.assembler.linear(elements, coefficient).bind(f, self.b,
                                                                                    add))

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

    def _solver(self):
        if self._cg is None:
            matrix = self.system.matrix
            preconditioner = {"amg": lambda: algebraic_multigrid(matrix),
                              "jacobi": lambda: "jacobi",
                              "none": lambda: None}[self.preconditioner_name]()
            self._cg = ConjugateGradient(matrix, preconditioner, rtol=self.rtol,
                                         maxiter=self.maxiter)
        return self._cg

    @property
    def dofs(self):
        return self.space.n

    def failure_message(self, info):
        return (f"the linear solve did not converge ({info.status} after {info.iterations} "
                f"iterations, relative residual {info.residual:.3g}); raise solver.maxiter or "
                "rtol, or use the amg preconditioner")

    def solve(self):
        """CG from u = 0 on the assembled system; returns (u host array, SolveInfo)."""
        x, self.info = self._solver().solve(self.backend.to_host(self.b))
        self.u = self.backend.to_host(x)
        return self.u, self.info

    def diagnostics(self):
        """Extremes (and the largest nodal error) of the last solve."""
        fields = self.fields()
        out = {"min_u": float(fields["u"].min()),
               "max_u": float(fields["u"].max())}
        if "error" in fields:
            out["max_nodal_error"] = float(abs(fields["error"]).max())
        return out

    def fields(self):
        """{"u": float64 values at the mesh vertices} of the last solve (and "exact", "error"
        when the exact solution is known)."""
        if self.u is None:
            self.solve()
        u = self.space.vertex_values(self.u).astype(np.float64)
        if self.exact is None:
            return {"u": u}
        exact = nodal(self.exact, self.mesh.points)
        return {"u": u, "exact": exact, "error": u - exact}
