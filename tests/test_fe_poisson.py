"""Poisson / steady heat: manufactured-solution convergence rates of P1 and P2 in 2D and 3D
(L2 and H1 errors by an independent quadrature, solvers/verification/fe_independent.py), with
Dirichlet, Neumann and Robin conditions and two materials; cuda against host.

The rate tests run in fp64: the finest meshes' errors (P2 3D L2 ~1e-5) must be far above the
solver's rounding and CG tolerance for the fitted slope to measure discretisation alone, which
fp32 (relative rounding ~1e-6 amplified by the condition number) does not guarantee."""

import numpy as np
import pytest

from solvers.fe.boundary import Dirichlet, Neumann, Robin
from solvers.fe.poisson import PoissonSolver
from solvers.mesh.generators import unit_cube, unit_square
from solvers.verification.fe_independent import errors

K_LEFT, K_RIGHT = 1.0, 1.0  # equal: the manufactured solution is smooth across x = 0.5


def exact(*x):
    return np.prod([np.sin(np.pi * c + 0.3) for c in x], axis=0)


def grad_exact(*x):
    out = []
    for d in range(len(x)):
        factors = [np.pi * np.cos(np.pi * c + 0.3) if k == d else np.sin(np.pi * c + 0.3)
                   for k, c in enumerate(x)]
        out.append(np.prod(factors, axis=0))
    return out


def source(*x):
    coords = x[:-1]  # (x, y[, z], t)
    return len(coords) * np.pi ** 2 * exact(*coords)


def boundary(dim):
    """Dirichlet on left and bottom, Neumann on right (x = 1, n = +x), Robin on top."""
    def flux(*x):
        return grad_exact(*x[:-1])[0]

    def ambient(*x):  # k du/dn = alpha (ambient - u) with du/dn = d/d(last axis)
        return exact(*x[:-1]) + grad_exact(*x[:-1])[-1] / 2.0

    conditions = {"left": Dirichlet(lambda *x: exact(*x[:-1])),
                  "bottom": Dirichlet(lambda *x: exact(*x[:-1])),
                  "right": Neumann(flux), "top": Robin(2.0, ambient)}
    if dim == 3:
        conditions["front"] = conditions["back"] = Dirichlet(lambda *x: exact(*x[:-1]))
    return conditions


def solve(mesh, degree, backend="host", precision="fp64"):
    solver = PoissonSolver(mesh, degree, source=source, boundary=boundary(mesh.dim),
                           preconditioner="amg", rtol=1e-11 if precision == "fp64" else 1e-6,
                           backend=backend,
                           precision=precision)
    u, info = solver.solve()
    assert info.converged, info
    return solver, u


# (dim, degree, mesh sizes): the two finest meshes fit the rate; sized for CI.
STUDIES = [(2, 1, (16, 32)), (2, 2, (8, 16)), (3, 1, (8, 16)), (3, 2, (6, 12))]
THEORY = {1: (2.0, 1.0), 2: (3.0, 2.0)}


@pytest.mark.parametrize("dim, degree, sizes", STUDIES,
                         ids=[f"{d}d-P{p}" for d, p, _ in STUDIES])
def test_manufactured_solution_converges_at_the_theoretical_rates(dim, degree, sizes):
    make = unit_square if dim == 2 else unit_cube
    results = []
    for n in sizes:
        solver, u = solve(make(n), degree)
        results.append(errors(solver.space, u, exact, grad_exact))
    (l2a, h1a), (l2b, h1b) = results
    ratio = sizes[1] / sizes[0]
    rate_l2, rate_h1 = np.log(l2a / l2b) / np.log(ratio), np.log(h1a / h1b) / np.log(ratio)
    l2_theory, h1_theory = THEORY[degree]
    assert abs(rate_l2 - l2_theory) < 0.1, (rate_l2, l2a, l2b)
    assert abs(rate_h1 - h1_theory) < 0.1, (rate_h1, h1a, h1b)


def test_materials_set_the_conductivity():
    """Two materials k = 1 (x < 1/2) and 4 (x > 1/2), u = 0 at x = 0 and 1 at x = 1, no source:
    the exact solution is piecewise linear with the flux continuous, u(1/2) = 4/5, which P1
    reproduces exactly at the nodes."""
    mesh = unit_square(8)
    centres = mesh.points[mesh.cells].mean(axis=1)
    mesh.materials = {"a": np.flatnonzero(centres[:, 0] < 0.5),
                      "b": np.flatnonzero(centres[:, 0] > 0.5)}
    solver = PoissonSolver(mesh, 1, conductivity={"a": 1.0, "b": 4.0},
                           boundary={"left": Dirichlet(0.0), "right": Dirichlet(1.0)},
                           rtol=1e-12, backend="host", precision="fp64")
    u, _ = solver.solve()
    x = solver.space.node_points[:, 0]
    expected = np.where(x < 0.5, 1.6 * x, 0.8 + 0.4 * (x - 0.5))
    np.testing.assert_allclose(u, expected, atol=1e-9)


@pytest.mark.gpu
@pytest.mark.parametrize("degree", [1, 2])
def test_cuda_equals_host(degree):
    """fp32 on both backends: the same system, solved to rtol 1e-6 by CG; the solutions agree
    within the solver tolerance times the condition number's effect (1e-4 relative)."""
    mesh = unit_cube(6)
    host = solve(mesh, degree, "host", "fp32")[1]
    cuda = solve(mesh, degree, "cuda", "fp32")[1]
    assert abs(cuda - host).max() < 1e-4 * abs(host).max()


def test_right_hand_side_and_solve_replay_from_one_graph(backend_name):
    """What a time step of a transient solver does: reassemble the right-hand side from a new
    nodal source and solve, all captured once and replayed; the replay equals a fresh
    solver's solve with that source (same launches, same bits)."""
    from solvers.fe.system import axpby
    from solvers.linalg import ConjugateGradient

    if not hasattr(ConjugateGradient, "launch_solve"):
        pytest.skip("needs KrylovSolver.launch_solve (a whole solve as launches)")
    mesh = unit_square(6)
    walls = {name: Dirichlet(0.5) for name in mesh.boundaries}

    def make(source):
        return PoissonSolver(mesh, 2, source=source, boundary=walls, preconditioner="jacobi",
                             rtol=1e-10, backend=backend_name, precision="fp64")

    solver = make(1.0)
    backend = solver.backend
    cg = ConjugateGradient(solver.system.matrix, "jacobi", rtol=1e-10)
    n = solver.space.n

    def step():
        for launch in solver.rhs_launches:
            launch()
        axpby(backend, cg.b, 1.0, solver.b, 0.0, solver.b)()
        cg.launch_solve()

    step()  # eager: compiles, warms up
    graph = backend.capture(step)
    source = np.cos(3 * solver.space.node_points[:, 0])
    backend.write(solver.sources[0], source)
    backend.write(cg.x, np.zeros(n))
    graph.replay()
    backend.synchronize()
    expected, info = make(lambda x, y, t: np.cos(3 * x)).solve()
    assert info.converged
    np.testing.assert_array_equal(backend.to_host(cg.x), expected)
