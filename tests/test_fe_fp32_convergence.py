"""fp32 finite-element solves reach the tolerance asked for on the true residual: fp64 assembly
and residuals around fp32 CG (iterative refinement, fe/steady.py; captured in every heat step,
fe/heat.py). Each check recomputes the residual with SciPy in float64 from the fp64 solver's
system (heat: from the independent assembly of solvers/verification), and compares the fp32
answer with the fp64 one: both solved to rtol 1e-8 (1e-10 or 1e-12 for the answer), so they
agree to cond(A) * rtol, under 1e-6 here."""

from pathlib import Path

import numpy as np
import pytest

from solvers import load_case
from solvers.fe import Dirichlet, PoissonSolver, unit_square
from solvers.fe.heat import HeatSolver
from solvers.run.simulation import RunError, Simulation
from solvers.verification.fe_independent import assemble, element_matrices

CASES = Path(__file__).parent.parent / "cases"
RTOL = 1e-8


def true_residual(reference, u):
    """||b - A u|| / ||b|| in float64 with the fp64 solver's matrix and right-hand side."""
    a = reference.system.matrix.to_scipy()
    b = reference.backend.to_host(reference.b).astype(np.float64)
    return np.linalg.norm(b - a @ u) / np.linalg.norm(b)


def check_fp32_against_fp64(make):
    """make(precision, rtol) -> a steady solver; the fp32 solve converges on the true
    residual and equals the fp64 answer to 1e-6."""
    solver, reference = make("fp32", RTOL), make("fp64", 1e-10)
    u, info = solver.solve()
    expected, _ = reference.solve()
    assert solver.assembler.dtype == np.float64 and solver.precision == "fp32"
    assert info.converged and info.status == "converged" and info.residual <= RTOL, info
    assert true_residual(reference, u) <= RTOL
    assert np.linalg.norm(u - expected) / np.linalg.norm(expected) < 1e-6
    return info


def poisson(degree, precision, rtol, **options):
    walls = {side: Dirichlet(0.0) for side in ("left", "right", "bottom", "top")}
    return PoissonSolver(unit_square(16), degree, source=lambda x, y, t: 1 + x * y,
                         boundary=walls, rtol=rtol, backend="host", precision=precision,
                         **options)


@pytest.mark.parametrize("degree", [1, 2])
def test_poisson_fp32_reaches_1e8(degree):
    check_fp32_against_fp64(lambda precision, rtol: poisson(degree, precision, rtol))


@pytest.mark.parametrize("case", ["cantilever", "cook_membrane"])
def test_elasticity_cases_in_fp32_reach_1e8(case):
    """The shipped cases run in fp32 (their default): fp32 CG alone stalls near 1e-4 and 3e-3
    on them."""
    def make(precision, rtol):
        return load_case(CASES / f"{case}.toml", solver={"rtol": rtol},
                         run={"backend": "host", "precision": precision}).solver
    assert make("fp32", RTOL).refine
    check_fp32_against_fp64(make)


def test_unreachable_tolerances_are_reported():
    """Too few iterations: maxiter, not converged. Plain fp32 CG (refine=False) asked for
    1e-8: stalled, with the true residual it did reach."""
    _, info = poisson(2, "fp32", RTOL, maxiter=2).solve()
    assert not info.converged and info.status == "maxiter" and info.residual > RTOL
    plain = poisson(2, "fp32", RTOL, refine=False)
    u, info = plain.solve()
    assert not plain.refine and plain.assembler.dtype == np.float32
    assert not info.converged and info.status == "stalled" and info.residual > RTOL
    assert true_residual(poisson(2, "fp64", RTOL), u) > RTOL


def heat(precision, rtol, **options):
    """P2 on 8 x 8, Crank-Nicolson dt = 0.01, k = rho c = 1, source x, u = 1 on the left;
    Jacobi-CG (AMG solves so small a system almost exactly: residuals near 1e-13)."""
    options = {"preconditioner": "jacobi", **options}
    return HeatSolver(unit_square(8), 0.01, 0.5, 2, source=lambda x, y, t: x,
                      initial=lambda x, y, t: np.cos(3 * x) * y, boundary={"left": Dirichlet(1.0)},
                      rtol=rtol, backend="host", precision=precision, **options)


def test_heat_fp32_steps_reach_1e8_on_the_true_residual():
    """Each step of (M + dt/2 K) d = dt (F - K u^n), u^{n+1} = u^n + d, the last one clipped to
    half a step (the matrix rebuilt, its fp32 copy re-rounded), meets 1e-8 on the residual of
    the independently assembled system (3e-9 to 5e-9; plain fp32 CG, refine=False, leaves 5e-7
    to 2e-6 and says converged); the state equals the fp64 run's to 1e-6 and a graph replay
    equals an eager step bit for bit."""
    solver, reference = heat("fp32", RTOL), heat("fp64", 1e-12)
    assert solver.refine and solver.u.dtype == np.float64 and solver.scheme["refinement"]
    space = solver.space
    local = {kind: element_matrices(space.mesh.points, space.mesh.cells, 2,
                                    np.ones(space.mesh.ncells), kind)
             for kind in ("mass", "stiffness")}
    mass, stiffness = (assemble(space.n, space.cell_dofs, local[kind]).tocsr()
                       for kind in ("mass", "stiffness"))
    load = mass @ space.node_points[:, 0]
    fixed = space.boundary_nodes(["left"])
    free = np.setdiff1d(np.arange(space.n), fixed)
    for simulation in (solver, reference):
        simulation.clock.set(t_stop=0.045)
    for _ in range(5):
        before = solver.values()
        solver.step()
        reference.step()
        increment, dt = solver.values() - before, solver.clock.read().dt
        b = dt * (load - stiffness @ before)
        residual = b - (mass + 0.5 * dt * stiffness) @ increment
        assert np.linalg.norm(residual[free]) <= RTOL * np.linalg.norm(b[free])
        assert not increment[fixed].any()
    assert dt == pytest.approx(0.005) and solver.observe() is None
    expected = reference.values()
    assert np.linalg.norm(solver.values() - expected) / np.linalg.norm(expected) < 1e-6
    eager = heat("fp32", RTOL)
    for one in (solver, eager):
        one.set_initial(lambda x, y, t: np.sin(2 * x) + y)
    graph = solver.backend.capture(solver.step)
    for _ in range(3):
        graph.replay()
        eager.step()
    np.testing.assert_array_equal(solver.values(), eager.values())


@pytest.mark.parametrize("options, message", [
    ({"preconditioner": "none", "maxiter": 1}, "linear solve reached maxiter"),
    ({"rtol": 1e-17}, "stayed above rtol on its fp64 residual after 4 fp32 refinement")])
def test_heat_fp32_steps_that_do_not_converge_stop_the_run(options, message):
    """One CG iteration a pass, or a tolerance below fp64's reach: the run stops."""
    with pytest.raises(RunError, match=message):
        Simulation(heat("fp32", **{"rtol": RTOL, **options}), 0.03, steps_per_graph=2).run()
