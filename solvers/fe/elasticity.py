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
fe_assemble.cu), the loads of the nodal body force and tractions, the symmetric Dirichlet
elimination (system.py), then CG preconditioned by smoothed-aggregation AMG built on whole
nodes with the rigid body modes as near-nullspace, or by Jacobi. Stresses: stress.py.
"""

from types import SimpleNamespace

import numpy as np

from ..linalg import ConjugateGradient
from ..solver import SteadySolver
from .assembly import Assembler, cells, facets
from .boundary import dirichlet_values, nodal, split
from .poisson import PoissonSolver
from .space import FunctionSpace
from .stress import vertex_stress, von_mises
from .system import DirichletSystem, algebraic_multigrid

PRECONDITIONERS = ("amg", "jacobi", "none")
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


class ElasticitySolver(SteadySolver):
    name = "elasticity"

    def __init__(self, mesh, degree=1, young=None, poisson=None, default_young=1.0,
                 default_poisson=0.3, plane=None, body_force=None, boundary=None,
                 preconditioner="amg", rtol=1e-8, maxiter=None, renumber=True,
                 backend="auto", precision="fp32"):
        if preconditioner not in PRECONDITIONERS:
            raise ValueError(f"preconditioner must be one of {', '.join(PRECONDITIONERS)}, "
                             f"got {preconditioner!r}")
        d = mesh.dim
        if (plane is None) != (d == 3) or plane not in (None, *PLANES):
            expected = "none (3D)" if d == 3 else "'strain' or 'stress'"
            raise ValueError(f"plane must be {expected} on a {d}D mesh, got {plane!r}")
        young, poisson = dict(young or {}), dict(poisson or {})
        for name in sorted(set(young) | set(poisson)):
            check_material(name, young.get(name, default_young),
                           poisson.get(name, default_poisson))
        check_material("default", default_young, default_poisson)
        boundary = dict(boundary or {})
        mesh.require_boundaries(list(boundary))
        dirichlet, neumann, robin = split(boundary)
        if robin:
            raise ValueError(f"boundary '{next(iter(robin))}': elasticity takes Dirichlet and "
                             "Neumann (traction) conditions, not Robin")
        self.mesh = mesh
        self.plane = plane
        self.rtol, self.maxiter = rtol, maxiter
        self.preconditioner_name = preconditioner
        self.u = self.info = self._cg = None
        self._platform(backend, precision)
        self.space = space = FunctionSpace(mesh, degree, d, renumber=renumber)
        a = self.assembler = Assembler(space, self.backend, precision)
        self.lame = np.stack(lame_parameters(mesh.cell_material_values(young, default_young),
                                             mesh.cell_material_values(poisson,
                                                                       default_poisson),
                                             plane), axis=1)
        self.field_names = ("displacement", *("ux", "uy", "uz")[:d], "magnitude", "von_mises")
        self.scheme = {"element": f"P{degree}", "cell": mesh.cell_type, "plane": plane,
                       "dofs": space.n, "nonzeros": a.pattern.nnz,
                       "preconditioner": preconditioner, "rtol": rtol}

        full = self.full_values = a.values()
        self.matrix_launches = [a.bilinear("elasticity", cells(space), self.lame).bind(full)]

        # Right-hand side: the body force over the cells (overwrites b), tractions over the
        # Neumann facets (add), each from interleaved nodal values.
        self.b = a.vector()
        self.rhs_launches = []
        self.sources = []  # the device nodal vectors the loads read (body force first)
        points = space.node_points
        force = (0.0,) * d if body_force is None else body_force
        self._add_load(cells(space), nodal_vector(force, points, "body force"), add=False)
        for name, condition in neumann.items():
            self._add_load(facets(space, [name]),
                           nodal_vector(condition.flux, points, f"traction on '{name}'"))

        dofs, values = dirichlet_values(space, dirichlet)
        self.system = DirichletSystem(a, full, dofs)
        self.system.set_values(values)
        self.rhs_launches.append(self.system.bind_rhs(self.b))
        self.assemble()

    # The matrix launches, the Dirichlet cut and host copy, then the right-hand side launches:
    # the same steps on the same attributes as Poisson's.
    assemble = PoissonSolver.assemble

    def _add_load(self, elements, host_values, add=True):
        f = self.assembler.device(host_values, self.dtype)
        self.sources.append(f)
        self.rhs_launches.append(self.assembler.linear(elements).bind(f, self.b, add))

    def preconditioner(self):
        """The CG preconditioner: AMG on whole nodes with the rigid body modes, Jacobi or
        none."""
        if self.preconditioner_name == "amg":
            return algebraic_multigrid(self.system.matrix,
                                       near_nullspace=rigid_body_modes(self.space.node_points),
                                       block_size=self.mesh.dim)
        return "jacobi" if self.preconditioner_name == "jacobi" else None

    @property
    def dofs(self):
        return self.space.n

    def failure_message(self, info):
        return (f"the linear solve did not converge ({info.status} after {info.iterations} "
                f"iterations, relative residual {info.residual:.3g}); raise solver.maxiter or "
                "rtol, or use the amg preconditioner")

    def solve(self):
        """CG from u = 0 on the assembled system (the solver and its preconditioner are built
        at the first call); returns (u host array, SolveInfo)."""
        if self._cg is None:
            self._cg = ConjugateGradient(self.system.matrix, self.preconditioner(),
                                         rtol=self.rtol, maxiter=self.maxiter)
        x, self.info = self._cg.solve(self.backend.to_host(self.b))
        self.u = self.backend.to_host(x).astype(np.float64)
        return self.u, self.info

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

