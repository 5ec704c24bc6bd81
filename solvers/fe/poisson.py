"""Steady heat conduction / Poisson: -div(k grad u) = f in the domain, with Dirichlet, Neumann
and Robin conditions on named boundaries and a conductivity k per material.

    solver = PoissonSolver(mesh, degree=2, conductivity={"steel": 45.0}, default_conductivity=1,
                           source=lambda x, y: ..., boundary={"left": Dirichlet(0.0), ...},
                           preconditioner="amg", backend="auto", precision="fp32")
    u, info = solver.solve()     # u: nodal values (host, space numbering); info: SolveInfo
    solver.fields()              # {"u": values at the mesh vertices}

Functions (source, boundary values, exact) are called as f(x, y[, z], t) on NumPy arrays.

Steps, all on the device after setup: the diffusion operator (diffusion.py: the stiffness form
over the cells + Robin facet mass, the load of the nodal source + Neumann and Robin facet
loads), the symmetric Dirichlet elimination (system.py), then CG with a preconditioner of the
project's table (solvers.linalg.preconditioners: "amg" or "multigrid", both the
smoothed-aggregation hierarchy of the assembled matrix, "jacobi" or "none"), refined with
fp64 residuals in fp32 (refine=False: plain fp32 CG). Assembly, system and solve: steady.py.
"""

import numpy as np

from ..mesh import Mesh
from ..solver import BackendLike
from .boundary import nodal
from .diffusion import Diffusion
from .steady import SteadyFESolver


class PoissonSolver(SteadyFESolver):
    name = "poisson"

    def __init__(self, mesh: Mesh, degree: int = 1, conductivity: dict | None = None,
                 default_conductivity: float = 1.0, source=0.0, boundary: dict | None = None,
                 preconditioner: str = "amg", rtol: float = 1e-8, maxiter: int | None = None,
                 exact=None, renumber: bool = True, backend: BackendLike = "auto",
                 precision: str = "fp32", refine: bool = True) -> None:
        dirichlet, neumann, robin = self._setup(mesh, degree, 1, boundary, preconditioner,
                                                rtol, maxiter, renumber, backend, precision,
                                                refine)
        self.exact = exact
        self.field_names = ("u", "exact", "error") if exact is not None else ("u",)
        self.conductivity = mesh.cell_material_values(conductivity or {}, default_conductivity)
        # -div(k grad u) = f with the Neumann and Robin conditions, u = g on Dirichlet sides.
        self.operator = Diffusion(self.assembler, self.conductivity, source, neumann, robin)
        self.stiffness = self.operator.stiffness
        self._impose(dirichlet)
        self.scheme = self._scheme()

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
