"""Linear elasticity (solvers/fe/elasticity.py): the patch test (a linear displacement is
reproduced exactly, with its constant stress and von Mises value), manufactured-solution
convergence rates of P1 and P2 in 2D (plane strain and plane stress) and 3D, with Dirichlet
and traction conditions, errors by an independent quadrature
(solvers/verification/fe_elasticity_independent.py); AMG with rigid body modes; bad inputs;
cuda against host.

The rate tests run in fp64 so that the finest errors stay far above rounding and the CG
tolerance (as in tests/test_fe_poisson.py)."""

import numpy as np
import pytest
from test_fe_assembly import distorted

from solvers.fe.boundary import Dirichlet, Neumann, Robin
from solvers.fe.elasticity import ElasticitySolver, lame_parameters
from solvers.fe.stress import von_mises
from solvers.linalg.preconditioners import algebraic_multigrid
from solvers.mesh.generators import box, rectangle, unit_cube, unit_square
from solvers.mesh.unstructured import MeshError
from solvers.verification.fe_elasticity_independent import vector_errors

E, NU = 2.0, 0.3

# A linear field u = u0 + G x on a distorted mesh: strain (G + G^T) / 2 everywhere.
GRADIENT = {2: np.array([[0.3, -0.2], [0.5, 0.1]]),
            3: np.array([[0.3, -0.2, 0.1], [0.5, 0.1, -0.4], [0.2, 0.0, 0.25]])}


@pytest.mark.parametrize("degree", [1, 2])
@pytest.mark.parametrize("dim, plane", [(2, "strain"), (2, "stress"), (3, None)])
def test_patch_test_reproduces_a_linear_field_and_its_stress(dim, plane, degree):
    mesh = distorted(rectangle, 5, 4) if dim == 2 else distorted(box, 3, 3, 2)
    G = GRADIENT[dim]
    u0 = np.arange(1, dim + 1) * 0.01
    exact = tuple(lambda *x, c=c: u0[c] + sum(G[c, k] * x[k] for k in range(dim))
                  for c in range(dim))
    solver = ElasticitySolver(mesh, degree, default_young=E, default_poisson=NU, plane=plane,
                              boundary={name: Dirichlet(exact) for name in mesh.boundaries},
                              preconditioner="amg", rtol=1e-13, backend="host",
                              precision="fp64")
    solver.solve()
    fields = solver.fields()
    expected = mesh.points @ G.T + u0
    np.testing.assert_allclose(fields["displacement"], expected, atol=1e-11)

    # The stress of the field, written out: sigma = lambda tr(eps) I + 2 mu eps, with
    # sigma_zz = nu (sigma_xx + sigma_yy) in plane strain and 0 in plane stress.
    strain = (G + G.T) / 2
    lam, mu = lame_parameters(E, NU, plane)
    stress = np.zeros((3, 3))
    stress[:dim, :dim] = lam * np.trace(strain) * np.eye(dim) + 2 * mu * strain
    if plane == "strain":
        stress[2, 2] = NU * (stress[0, 0] + stress[1, 1])
    np.testing.assert_allclose(solver.stress(), np.broadcast_to(stress, (mesh.npoints, 3, 3)),
                               atol=1e-10)
    deviator = stress - np.trace(stress) / 3 * np.eye(3)
    np.testing.assert_allclose(fields["von_mises"], np.sqrt(1.5 * np.sum(deviator ** 2)),
                               rtol=1e-10)
    assert von_mises(np.eye(3) * 5.0) == 0.0  # hydrostatic: no von Mises stress


class Manufactured:
    """u_c = prod_k sin(K x_k + P[c, k]) with its gradient and the body force -div sigma(u)
    = -(lambda + mu) grad div u - mu lap u, derived here by hand from the sines."""

    K = 1.3

    def __init__(self, dim, lam, mu):
        self.dim, self.lam, self.mu = dim, lam, mu
        self.phase = 0.3 + 0.4 * np.arange(dim * dim).reshape(dim, dim)

    def derivative(self, c, orders, x):
        """d^|orders| u_c / dx^orders (orders: a derivative order 0..2 per axis)."""
        out = 1.0
        for k, order in enumerate(orders):
            angle = self.K * x[k] + self.phase[c, k]
            out = out * [np.sin(angle), self.K * np.cos(angle),
                         -self.K ** 2 * np.sin(angle)][order]
        return out

    def unit(self, *axes):
        orders = [0] * self.dim
        for k in axes:
            orders[k] += 1
        return orders

    def exact(self, *x):
        return [self.derivative(c, self.unit(), x) for c in range(self.dim)]

    def gradient(self, *x):
        return [[self.derivative(c, self.unit(k), x) for k in range(self.dim)]
                for c in range(self.dim)]

    def stress(self, x, a, b):
        grad = self.gradient(*x)
        div = sum(grad[k][k] for k in range(self.dim))
        return self.lam * div * (a == b) + self.mu * (grad[a][b] + grad[b][a])

    def body_force(self, c):
        def force(*x):
            x = x[:self.dim]
            grad_div = sum(self.derivative(k, self.unit(k, c), x) for k in range(self.dim))
            lap = sum(self.derivative(c, self.unit(k, k), x) for k in range(self.dim))
            return -(self.lam + self.mu) * grad_div - self.mu * lap
        return force

    def traction(self, c, axis):
        """sigma n on the side x_axis = max (n = +e_axis)."""
        return lambda *x: self.stress(x[:self.dim], c, axis)


def solve_manufactured(mesh, degree, plane, backend="host", precision="fp64", rtol=1e-11):
    dim = mesh.dim
    lam, mu = lame_parameters(E, NU, plane)
    m = Manufactured(dim, float(lam), float(mu))
    value = tuple(lambda *x, c=c: m.exact(*x[:dim])[c] for c in range(dim))
    boundary = {name: Dirichlet(value) for name in mesh.boundaries if name != "right"}
    boundary["right"] = Neumann(tuple(m.traction(c, 0) for c in range(dim)))
    solver = ElasticitySolver(mesh, degree, default_young=E, default_poisson=NU, plane=plane,
                              body_force=tuple(m.body_force(c) for c in range(dim)),
                              boundary=boundary, preconditioner="amg", rtol=rtol,
                              backend=backend, precision=precision)
    u, info = solver.solve()
    assert info.converged, info
    return solver, u, m


# (dim, plane, degree, mesh sizes): the two meshes fit the rate; sized for CI.
STUDIES = [(2, "strain", 1, (16, 32)), (2, "stress", 1, (16, 32)), (2, "strain", 2, (8, 16)),
           (2, "stress", 2, (8, 16)), (3, None, 1, (6, 12)), (3, None, 2, (3, 6))]
THEORY = {1: (2.0, 1.0), 2: (3.0, 2.0)}


@pytest.mark.parametrize("dim, plane, degree, sizes", STUDIES,
                         ids=[f"{d}d-{p or '3d'}-P{k}" for d, p, k, _ in STUDIES])
def test_manufactured_solution_converges_at_the_theoretical_rates(dim, plane, degree, sizes):
    make = unit_square if dim == 2 else unit_cube
    errors = np.array([vector_errors(s.space, u, m.exact, m.gradient)
                       for s, u, m in (solve_manufactured(make(n), degree, plane)
                                       for n in sizes)])  # rows: meshes; columns: L2, H1
    # The slope of log(error) against log(h) = -log(n), per norm.
    rates = np.polyfit(-np.log(sizes), np.log(errors), 1)[0]
    assert np.all(abs(rates - THEORY[degree]) < 0.1), (rates, errors)


def test_amg_with_rigid_body_modes_converges_in_few_iterations():
    """Smoothed aggregation on whole nodes with the rigid body modes: the iteration count
    stays nearly flat under refinement (Jacobi's doubles with each halving of h)."""
    counts = []
    for n in (32, 64):  # below ~300 rows the hierarchy is one dense level: one iteration
        solver, _, _ = solve_manufactured(unit_square(n), 1, "strain", rtol=1e-8)
        counts.append(solver.info.iterations)
    assert counts[1] <= 1.5 * counts[0] + 2, counts


def test_amg_block_size_must_divide_the_rows():
    solver, _, _ = solve_manufactured(unit_square(4), 1, "strain")
    with pytest.raises(ValueError, match="block_size 3 does not divide the 50 rows"):
        algebraic_multigrid(solver.system.matrix, block_size=3)


@pytest.mark.parametrize("kwargs, message", [
    ({"default_poisson": 0.5}, "Poisson's ratio must be in (-1, 0.5), got 0.5"),
    ({"poisson": {"steel": 0.3}}, "material 'steel' is not in"),
    ({"young": {"soft": -1.0}}, "material 'soft': Young's modulus must be > 0"),
    ({"boundary": {"inlet": Dirichlet(0.0)}}, "boundary 'inlet' is not in"),
    ({"body_force": (1.0, 2.0, 3.0)}, "body force must be 2 values"),
    ({"boundary": {"right": Neumann(1.0)}}, "traction on 'right' must be 2 values"),
    ({"boundary": {"left": Dirichlet((0.0, 1.0, 2.0))}}, "3 values for 2 components"),
    ({"boundary": {"left": Robin(1.0)}}, "not Robin"),
    ({"plane": None}, "plane must be 'strain' or 'stress' on a 2D mesh"),
])
def test_bad_inputs_are_one_line_errors(kwargs, message):
    mesh = unit_square(2)
    mesh.materials = {"soft": np.arange(mesh.ncells)}
    options = {"plane": "strain", "backend": "host", **kwargs}
    with pytest.raises((ValueError, MeshError)) as error:
        ElasticitySolver(mesh, 1, **options)
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.gpu
@pytest.mark.parametrize("degree", [1, 2])
def test_cuda_equals_host(degree):
    """fp64 on both backends to rtol 1e-10 (fp32 CG stalls near 1e-4 on elasticity, whose
    ||A|| ||u|| / ||b|| is large): the solutions agree to the tolerance's effect."""
    mesh = unit_cube(4)
    host = solve_manufactured(mesh, degree, None, "host", rtol=1e-10)[1]
    cuda = solve_manufactured(mesh, degree, None, "cuda", rtol=1e-10)[1]
    assert abs(cuda - host).max() < 1e-7 * abs(host).max()
