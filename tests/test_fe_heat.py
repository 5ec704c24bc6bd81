"""Transient heat (solvers/fe/heat.py) against independent references: the decay of the
slowest mode on the unit square against the analytic exponential, first order in time for
backward Euler and second for Crank-Nicolson (against the exact semi-discrete solution, a
matrix exponential of the independent assembly), second order in space for P1 and third for
P2; one step against spsolve of the independently assembled theta-scheme system with Dirichlet,
Neumann, Robin conditions and two materials; the long-time limit against the Poisson solver;
Dirichlet, Neumann and Robin values and a source that change in time, evaluated on the device
inside the step, against an exact solution.

Rates and the one-step comparison run in fp64 with CG at rtol 1e-12, so that rounding and the
solver tolerance lie orders of magnitude below the discretisation errors being measured."""

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.fe import Dirichlet, Mesh, MeshError, Neumann, Robin, unit_cube, unit_square
from solvers.fe.heat import HeatSolver
from solvers.fe.poisson import PoissonSolver
from solvers.fe.time_values import TimeFunction
from solvers.run.simulation import Simulation
from solvers.verification.fe_independent import assemble, element_matrices, errors


def mode(x, y, t=0.0):
    return np.sin(np.pi * x) * np.sin(np.pi * y)


def walls(mesh, value=0.0):
    return {name: Dirichlet(value) for name in mesh.boundaries}


def decay(n, degree, dt, theta, end, **options):
    """The slowest mode (k = rho c = 1) run to `end` through Simulation (graph replays)."""
    mesh = unit_square(n)
    options = {"backend": "host", "precision": "fp64", "rtol": 1e-12, **options}
    solver = HeatSolver(mesh, dt, theta, degree, initial=mode, boundary=walls(mesh), **options)
    Simulation(solver, end, steps_per_graph=8).run()
    return solver


def rates(errors):
    errors = np.asarray(errors)
    return np.log2(errors[:-1] / errors[1:])


def independent_matrices(space, coefficient=1.0):
    """(M, K) of the space's cells by solvers/verification/fe_independent.py, dense."""
    mesh = space.mesh
    coefficient = np.broadcast_to(coefficient, (mesh.ncells,))
    return [assemble(space.n, space.cell_dofs, element_matrices(
        mesh.points, mesh.cells, space.degree, coefficient, kind)).toarray()
        for kind in ("mass", "stiffness")]


@pytest.mark.parametrize("theta, order", [(1.0, 1), (0.5, 2)])
def test_time_error_has_the_order_of_the_scheme(backend_name, theta, order):
    """Against the exact solution of the semi-discrete ODE M u' = -K u on the free dofs
    (expm of the independent matrices), so only the time error is measured: backward Euler
    first order, Crank-Nicolson second, within 0.1 once asymptotic (dt = T/8 .. T/64)."""
    end = 0.1
    solvers = [decay(8, 1, end / k, theta, end, backend=backend_name) for k in (8, 16, 32, 64)]
    space = solvers[0].space
    mass, stiffness = independent_matrices(space)
    free = np.setdiff1d(np.arange(space.n), space.boundary_nodes(list(space.mesh.boundaries)))
    reference = np.zeros(space.n)
    reference[free] = sla.expm(-end * np.linalg.solve(mass[np.ix_(free, free)],
                                                      stiffness[np.ix_(free, free)])
                               ) @ mode(*space.node_points[free].T)
    errors_ = [abs(s.values() - reference).max() for s in solvers]
    assert rates(errors_) == pytest.approx(order, abs=0.1)


@pytest.mark.parametrize("degree, sizes", [(1, (8, 16, 32)), (2, (4, 8, 16))])
def test_space_error_has_the_order_of_the_element(backend_name, degree, sizes):
    """L2 error against exp(-2 pi^2 t) sin(pi x) sin(pi y) at t = 0.05 with Crank-Nicolson at
    dt = 2.5e-4: its time error (about T lambda^3 dt^2 / 12 = 2e-6 relative) lies far below the
    spatial errors (P1 4e-3 .. 2e-2, P2 1.4e-4 .. 1e-2 relative), so the fit sees L2 rates 2
    (P1) and 3 (P2), within 0.1."""
    end = 0.05

    def exact(x, y):
        return np.exp(-2 * np.pi ** 2 * end) * mode(x, y)

    l2 = [errors(s.space, s.values(), exact, lambda x, y: [0 * x, 0 * y])[0]
          for s in (decay(n, degree, 2.5e-4, 0.5, end, backend=backend_name) for n in sizes)]
    assert rates(l2) == pytest.approx(degree + 1, abs=0.1)


def test_heat_plate_amplitude_follows_the_exponential(backend_name):
    """P2 on 16 x 16, Crank-Nicolson, dt = 1e-3 to t = 0.1 (amplitude 0.139), fp32: the nodal
    error is the sum of the spatial (P2 at the nodes: 3.2e-5 relative, measured at dt = 1e-4),
    temporal (CN: T lambda^3 dt^2 / 12 = 6.4e-5 relative) and fp32 rounding (~1e-6) errors,
    9e-5 relative in all; 2e-4 bounds it with a margin of 2 and lies 100 times below the
    decay of one step (lambda dt = 2e-2)."""
    end = 0.1
    solver = decay(16, 2, 1e-3, 0.5, end, precision="fp32", rtol=1e-6, backend=backend_name)
    nodes = solver.space.node_points
    exact = np.exp(-2 * np.pi ** 2 * end) * mode(*nodes.T)
    assert abs(solver.values() - exact).max() < 2e-4 * exact.max()
    assert solver.clock.read().t == end and solver.clock.read().steps == 100


def two_materials():
    """The 6 x 6 unit square with material 'a' left of x = 0.5, 'b' right."""
    mesh = unit_square(6)
    left = mesh.points[mesh.cells].mean(axis=1)[:, 0] < 0.5
    materials = {"a": np.flatnonzero(left), "b": np.flatnonzero(~left)}
    return Mesh(mesh.points, mesh.cells, mesh.boundaries, materials, source="two materials")


def test_one_step_equals_spsolve_of_the_independent_system(backend_name):
    """One Crank-Nicolson step of P2 with two materials (k and rho c), a source, Dirichlet
    (left), Neumann (right), Robin (top) and natural (bottom) conditions equals spsolve of
    (M + dt/2 K) u1 = (M - dt/2 K) u0 + dt F assembled by solvers/verification/fe_independent.py:
    fp64, CG to 1e-12, so they agree to 1e-9 of u."""
    mesh = two_materials()
    k, rho_c = {"a": 1.0, "b": 3.0}, {"a": 2.0, "b": 0.5}
    dt, theta, alpha = 0.02, 0.5, 4.0

    def source(x, y, t):
        return 1 + x * y

    def initial(x, y, t):
        return np.cos(2 * x) + y ** 2

    def ambient(x, y, t):
        return 1 - x

    boundary = {"left": Dirichlet(0.5), "right": Neumann(lambda x, y, t: 2 * y),
                "top": Robin(alpha, ambient)}
    solver = HeatSolver(mesh, dt, theta, 2, conductivity=k, capacity=rho_c, source=source,
                        initial=initial, boundary=boundary, rtol=1e-12, backend=backend_name,
                        precision="fp64")
    solver.step()
    space = solver.space
    points = space.node_points

    # Independent: cells with per-cell k and rho c, Robin facet mass, loads of nodal data.
    def facet_matrix(name, coefficient):
        facet = mesh.boundaries[name]
        dofs = space.node_dofs(space.facet_nodes(facet))
        local = element_matrices(mesh.points, facet, 2, np.full(len(facet), coefficient),
                                 "mass")
        return assemble(space.n, dofs, local).toarray()

    mass = independent_matrices(space, mesh.cell_material_values(rho_c, 1.0))[0]
    stiffness = independent_matrices(space, mesh.cell_material_values(k, 1.0))[1]
    unit_mass = independent_matrices(space)[0]
    stiffness = stiffness + facet_matrix("top", alpha)
    load = (unit_mass @ source(*points.T, 0) + facet_matrix("right", 1.0) @ (2 * points[:, 1])
            + facet_matrix("top", alpha) @ ambient(*points.T, 0))
    fixed = space.boundary_nodes(["left"])
    free = np.setdiff1d(np.arange(space.n), fixed)
    u0 = initial(*points.T, 0)
    u0[fixed] = 0.5
    matrix = mass + theta * dt * stiffness
    rhs = (mass - (1 - theta) * dt * stiffness) @ u0 + dt * load
    expected = u0.copy()
    expected[free] = spla.spsolve(sp.csr_matrix(matrix[np.ix_(free, free)]),
                                  rhs[free] - matrix[np.ix_(free, fixed)] @ u0[fixed])
    np.testing.assert_allclose(solver.values(), expected, rtol=0, atol=1e-9)


def test_long_time_limit_is_the_poisson_solution(backend_name):
    """Neumann, Robin and a source with no Dirichlet condition: backward Euler steps of dt = 5
    (slowest mode decays by 1 / (1 + 5 lambda_min) per step, lambda_min ~ 1 from the Robin
    terms) reach the steady state of the Poisson solver with the same data to 1e-8."""
    mesh = two_materials()
    k = {"a": 1.0, "b": 3.0}
    boundary = {"right": Neumann(1.0), "top": Robin(2.0, lambda x, y, t: 1 + x),
                "left": Robin(0.5, 0.0)}
    options = {"conductivity": k, "source": lambda x, y, t: 4 * x, "boundary": boundary,
               "rtol": 1e-12, "backend": backend_name, "precision": "fp64"}
    heat = HeatSolver(mesh, 5.0, 1.0, 2, capacity={"a": 2.0}, initial=0.0, **options)
    Simulation(heat, 200.0, steps_per_graph=10).run()
    steady, info = PoissonSolver(mesh, 2, preconditioner="amg", **options).solve()
    assert info.converged
    np.testing.assert_allclose(heat.values(), steady, rtol=0, atol=1e-8 * abs(steady).max())


def test_insulated_body_gains_exactly_the_boundary_inflow(backend_name):
    """Only Neumann conditions (flux 2 in through the left side, 0.5 out through the top, the
    rest insulated) and a source 3: K has constant vectors in its kernel, so every theta step
    changes the heat content int rho c u (by the independent mass matrix) by exactly dt times
    the inflow 2 - 0.5 + 3 = 4.5 per unit time; to the CG tolerance (1e-12 of the step)."""
    mesh = two_materials()
    boundary = {"left": Neumann(2.0), "top": Neumann(-0.5)}
    solver = HeatSolver(mesh, 0.01, 0.5, 2, conductivity={"a": 1.0, "b": 3.0},
                        capacity={"a": 2.0}, source=3.0, initial=lambda x, y, t: x * y,
                        boundary=boundary, rtol=1e-12, backend=backend_name,
                        precision="fp64")
    mass = independent_matrices(solver.space, mesh.cell_material_values({"a": 2.0}, 1.0))[0]
    before = mass.sum(axis=0) @ solver.values()
    Simulation(solver, 0.25, steps_per_graph=5).run()
    after = mass.sum(axis=0) @ solver.values()
    assert after - before == pytest.approx(4.5 * 0.25, rel=1e-9)


# u = q(x) exp(-t) with q = 1 + x^2 + 2 y^2 (+ 3 z^2), k = 0.5, rho c = 2: the source
# -(rho c q + k lap q) exp(-t), the flux k dq/dx exp(-t) on x = 1 (Neumann) and the ambient
# u + k dq/dn exp(-t) / alpha on the top (Robin, alpha = 3), Dirichlet elsewhere.
CHANGING = {
    2: {"q": "(1 + x*x + 2*y*y)", "lap": 6, "mesh": lambda: unit_square(4),
        "top": "4 * y", "dirichlet": ("left", "bottom")},
    3: {"q": "(1 + x*x + 2*y*y + 3*z*z)", "lap": 12, "mesh": lambda: unit_cube(2),
        "top": "6 * z", "dirichlet": ("left", "bottom", "front", "back")},
}


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("theta, order", [(1.0, 1), (0.5, 2)])
def test_data_that_change_in_time_follow_the_exact_solution(backend_name, theta, order, dim):
    """Dirichlet values, a Neumann flux, a Robin ambient and the source all change in time
    (CHANGING) and are evaluated on the device inside each step (TimeFunction). u(t) lies in
    P2 for every t, so the spatial error vanishes and the nodal error is the time error alone:
    order 1 (backward Euler) and 2 (Crank-Nicolson, loads at the midpoint), within 0.1."""
    case = CHANGING[dim]
    mesh = case["mesh"]()
    constants = {"k": 0.5, "rc": 2.0, "alpha": 3.0}
    exact = f"{case['q']} * exp(-t)"

    def timed(text):
        return TimeFunction(text, constants)

    boundary = {name: Dirichlet(timed(exact)) for name in case["dirichlet"]}
    boundary.update(right=Neumann(timed("2 * k * x * exp(-t)")),
                    top=Robin(3.0, timed(f"{exact} + k * {case['top']} * exp(-t) / alpha")))
    source = timed(f"-(rc * {case['q']} + {case['lap']} * k) * exp(-t)")
    end, errors_ = 0.5, []
    for steps in (8, 16, 32, 64):
        solver = HeatSolver(mesh, end / steps, theta, 2, default_conductivity=0.5,
                            default_capacity=2.0, source=source, initial=timed(exact),
                            boundary=boundary, rtol=1e-12, backend=backend_name,
                            precision="fp64")
        Simulation(solver, end, steps_per_graph=4).run()
        expected = timed(exact)(*solver.space.node_points.T, end)
        errors_.append(abs(solver.values() - expected).max())
    assert rates(errors_) == pytest.approx(order, abs=0.1)


@pytest.mark.parametrize("options, error, message", [
    ({"theta": 0.3}, ValueError, r"theta must be in \[0.5, 1\]"),
    ({"theta": 1.2}, ValueError, r"theta must be in \[0.5, 1\]"),
    ({"dt": 0.0}, ValueError, "dt must be a number > 0"),
    ({"dt": -1e-3}, ValueError, "dt must be a number > 0"),
    ({"preconditioner": "ilu"}, ValueError, "preconditioner must be one of amg, jacobi, none"),
    ({"boundary": {"inlet": Dirichlet(0.0)}}, MeshError, "inlet"),
    ({"capacity": {"steel": 2.0}}, MeshError, "steel"),
])
def test_bad_arguments_are_one_line_errors(options, error, message):
    arguments = {"dt": 1e-3, "theta": 0.5, "backend": "host", **options}
    with pytest.raises(error, match=message) as raised:
        HeatSolver(unit_square(2), **arguments)
    assert "\n" not in str(raised.value)
