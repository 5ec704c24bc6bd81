"""Linear elasticity: -div sigma(u) = f with sigma = lambda tr(eps) I + 2 mu eps, eps = (grad u +
grad u^T) / 2, in 3D or in 2D plane strain or plane stress, for a displacement u in the P1 or
P2 vector space; Young's modulus E and Poisson's ratio nu per material.

    solver = ElasticitySolver(mesh, degree=2, young={"steel": 2e11}, poisson={"steel": 0.3},
                              plane="stress", body_force=(0.0, -9.81 * 7800),
                              boundary={"left": Dirichlet((0.0, 0.0)),
                                        "bottom": Dirichlet(0.0, components=(1,)),  # roller
                                        "right": Neumann((0.0, -1e6))},            # traction
                              preconditioner="amg", backend="auto", precision="fp32")
    u, info = solver.solve()      # u: interleaved nodal displacements (host, space numbering)
    solver.fields()               # displacement (npoints, dim), ux, uy[, uz], magnitude, von_mises

Vector data (body force, Dirichlet values, tractions) are sequences of dim numbers or
functions f(x, y[, z], t); a Dirichlet condition may constrain some components only. A
Neumann condition's value is the traction sigma n (force per unit length in 2D, area in 3D).

Lame parameters: lambda = E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 + nu)); plane stress
uses lambda* = 2 lambda mu / (lambda + 2 mu) (sigma_zz = 0), plane strain the 3D lambda
(eps_zz = 0). 2D meshes need plane; 3D meshes take none.

Steps, on the device after setup: the elasticity form over the cells (one fused kernel,
fe/assemble.cu), the loads of the nodal body force and tractions, the symmetric Dirichlet
elimination (system.py), then CG with a preconditioner of the project's table
(solvers.linalg.preconditioners): "amg" (or "multigrid", the same here) is smoothed-aggregation
AMG built on whole nodes with the rigid body modes as near-nullspace; "jacobi" or "none"; in
fp32 refined with fp64 residuals (refine=False: plain fp32 CG, which stalls near 1e-4 to 3e-3
on bending problems). Assembly, system and solve: steady.py; stresses: stress.py.
"""

from types import SimpleNamespace

import numpy as np

from ..mesh import Mesh
from ..solver import BackendLike
from .assembly import cells, facets
from .boundary import nodal
from .operator import AssembledOperator
from .steady import SteadyFESolver
from .stress import vertex_stress, von_mises

PLANES = ("strain", "stress")
DEFORMATION_SCALE = 0.1  # the plot's largest displacement, as a fraction of the mesh extent


def lame_parameters(young, poisson, plane=None):
    """(lambda, mu) arrays of Young's moduli and Poisson's ratios (plane: None, "strain" or
    "stress")."""
    young, poisson = np.asarray(young, np.float64), np.asarray(poisson, np.float64)
    lam = young * poisson / ((1 + poisson) * (1 - 2 * poisson))
    mu = young / (2 * (1 + poisson))
    if plane == "stress":
        lam = 2 * lam * mu / (lam + 2 * mu)
    return lam, mu


def check_material(name, young, poisson):
    """A one-line ValueError for a modulus or ratio outside the physical range."""
    if not young > 0:
        raise ValueError(f"material '{name}': Young's modulus must be > 0, got {young!r}")
    if not -1 < poisson < 0.5:
        raise ValueError(f"material '{name}': Poisson's ratio must be in (-1, 0.5), got "
                         f"{poisson!r} (0.5 is incompressible, which displacement elements "
                         "cannot represent)")


def rigid_body_modes(points):
    """(nodes * dim, 3 or 6) interleaved translations and rotations about the centroid: the
    displacements of zero strain, AMG's near-nullspace for elasticity."""
    x = points - points.mean(axis=0)
    n, d = x.shape
    zero = np.zeros(n)
    one = np.ones(n)
    if d == 2:
        modes = [(one, zero), (zero, one), (-x[:, 1], x[:, 0])]
    else:
        modes = [(one, zero, zero), (zero, one, zero), (zero, zero, one),
                 (-x[:, 1], x[:, 0], zero), (zero, -x[:, 2], x[:, 1]), (x[:, 2], zero, -x[:, 0])]
    return np.stack([np.stack(mode, axis=1).ravel() for mode in modes], axis=1)


def nodal_vector(value, points, what):
    """Interleaved nodal values (nodes * dim,) of a sequence of dim numbers or functions."""
    d = points.shape[1]
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != d:
        raise ValueError(f"{what} must be {d} values (one per component), got {value!r}")
    return np.stack([nodal(v, points) for v in value], axis=1).ravel()


class ElasticitySolver(SteadyFESolver):
    name = "elasticity"

    def __init__(self, mesh: Mesh, degree: int = 1, young: dict | None = None,
                 poisson: dict | None = None, default_young: float = 1.0,
                 default_poisson: float = 0.3, plane: str | None = None, body_force=None,
                 boundary: dict | None = None, preconditioner: str = "amg", rtol: float = 1e-8,
                 maxiter: int | None = None, renumber: bool = True,
                 backend: BackendLike = "auto", precision: str = "fp32",
                 refine: bool = True) -> None:
        d = mesh.dim
        if (plane is None) != (d == 3) or plane not in (None, *PLANES):
            expected = "none (3D)" if d == 3 else "'strain' or 'stress'"
            raise ValueError(f"plane must be {expected} on a {d}D mesh, got {plane!r}")
        young, poisson = dict(young or {}), dict(poisson or {})
        for name in sorted(set(young) | set(poisson)):
            check_material(name, young.get(name, default_young),
                           poisson.get(name, default_poisson))
        check_material("default", default_young, default_poisson)
        dirichlet, neumann, robin = self._setup(mesh, degree, d, boundary, preconditioner,
                                                rtol, maxiter, renumber, backend, precision,
                                                refine)
        if robin:
            raise ValueError(f"boundary '{next(iter(robin))}': elasticity takes Dirichlet and "
                             "Neumann (traction) conditions, not Robin")
        self.plane = plane
        self.lame = np.stack(lame_parameters(mesh.cell_material_values(young, default_young),
                                             mesh.cell_material_values(poisson,
                                                                       default_poisson),
                                             plane), axis=1)
        self.field_names = ("displacement", *("ux", "uy", "uz")[:d], "magnitude", "von_mises")

        # -div sigma(u) = f: the elasticity form over the cells; the body force f over the
        # cells and the tractions sigma n over the Neumann facets, from interleaved nodal
        # values; u = g on the Dirichlet sides.
        space, points = self.space, self.space.node_points
        op = self.operator = AssembledOperator(self.assembler)
        op.add_form("elasticity", cells(space), self.lame)
        op.add_load(cells(space), nodal_vector((0.0,) * d if body_force is None else body_force,
                                               points, "body force"))
        for name, condition in neumann.items():
            op.add_load(facets(space, [name]),
                        nodal_vector(condition.flux, points, f"traction on '{name}'"))
        self._impose(dirichlet)
        self.scheme = self._scheme(plane=plane)

    def preconditioner_options(self):
        """AMG on whole nodes (block size dim) with the rigid body modes as near-nullspace."""
        return {"near_nullspace": rigid_body_modes(self.space.node_points),
                "block_size": self.mesh.dim}

    def stress(self):
        """(npoints, 3, 3) stress at the mesh vertices (stress.py) of the last solve."""
        if self.u is None:
            self.solve()
        return vertex_stress(self.space, self.u, self.lame, self.plane)

    def fields(self):
        """Displacement (npoints, dim), its components and magnitude, and the von Mises
        stress, at the mesh vertices (float64) of the last solve."""
        if self.u is None:
            self.solve()
        u = self.space.vertex_values(self.u)
        out = {"displacement": u}
        out.update({name: u[:, c] for c, name in enumerate(("ux", "uy", "uz")[:u.shape[1]])})
        out["magnitude"] = np.linalg.norm(u, axis=1)
        out["von_mises"] = von_mises(self.stress())
        return out

    def plot_mesh(self):
        """(the deformed mesh, a title note) for the PNG: the vertices moved by the
        displacement scaled so that its largest value is DEFORMATION_SCALE of the mesh's
        extent (a plotting stand-in with points and cells, not a validated Mesh)."""
        u = self.fields()["displacement"]
        extent = np.ptp(self.mesh.points, axis=0).max()
        largest = np.abs(u).max()
        scale = DEFORMATION_SCALE * extent / largest if largest > 0 else 0.0
        deformed = SimpleNamespace(points=self.mesh.points + scale * u, cells=self.mesh.cells,
                                   dim=self.mesh.dim)
        return deformed, f" (deformed, displacement x {scale:.3g})"

    def diagnostics(self):
        """The largest displacement and von Mises stress of the last solve."""
        fields = self.fields()
        return {"max_displacement": float(fields["magnitude"].max()),
                "max_von_mises": float(fields["von_mises"].max())}

