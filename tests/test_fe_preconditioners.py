"""The finite-element solvers take their preconditioners from the project's table
(solvers.linalg.preconditioners): every name solves the Poisson system to the same solution;
on an assembled matrix "multigrid" is the algebraic multigrid "amg" builds, so it gives the
same bits (elasticity: on whole nodes with the rigid body modes; heat: in every step); a case
file with preconditioner = "multigrid" runs to the solution of "amg"; an unknown name is a
one-line error listing the table."""

from pathlib import Path

import numpy as np
import pytest

from solvers import load_case
from solvers.fe import Dirichlet, HeatSolver, Neumann, PoissonSolver, unit_square
from solvers.fe.elasticity import ElasticitySolver, rigid_body_modes
from solvers.linalg import AlgebraicMultigrid
from solvers.linalg.preconditioners import algebraic_multigrid
from solvers.mesh.generators import rectangle

CASES = Path(__file__).parent.parent / "cases"
NAMES = ("amg", "jacobi", "none", "multigrid")


def poisson(preconditioner):
    mesh = unit_square(8)
    walls = {name: Dirichlet(lambda x, y, t: x * y) for name in mesh.boundaries}
    return PoissonSolver(mesh, 2, source=lambda x, y, t: np.sin(3 * x) + y, boundary=walls,
                         preconditioner=preconditioner, rtol=1e-12, backend="host",
                         precision="fp64")


def test_poisson_every_name_reaches_the_same_solution():
    solutions = {}
    for name in NAMES:
        solver = poisson(name)
        solutions[name], info = solver.solve()
        assert info.converged, name
    np.testing.assert_array_equal(solutions["multigrid"], solutions["amg"])
    scale = abs(solutions["amg"]).max()
    for name in ("jacobi", "none"):
        np.testing.assert_allclose(solutions[name], solutions["amg"], rtol=0,
                                   atol=1e-9 * scale)


def test_poisson_multigrid_builds_the_algebraic_multigrid_of_the_system():
    solver = poisson("multigrid")
    built = solver.preconditioner()
    assert isinstance(built, AlgebraicMultigrid)
    assert built.sizes == algebraic_multigrid(solver.system.matrix).sizes


def cantilever(preconditioner):
    mesh = rectangle(16, 4, x=(0.0, 4.0), y=(-0.5, 0.5))
    return ElasticitySolver(mesh, 2, default_young=1e3, plane="stress",
                            boundary={"left": Dirichlet((0.0, 0.0)),
                                      "right": Neumann((0.0, -1.0))},
                            preconditioner=preconditioner, rtol=1e-10, backend="host",
                            precision="fp64")


def test_elasticity_multigrid_is_amg_on_whole_nodes_with_the_rigid_body_modes():
    amg, multigrid = cantilever("amg"), cantilever("multigrid")
    np.testing.assert_array_equal(multigrid.solve()[0], amg.solve()[0])
    built = multigrid.preconditioner()
    expected = algebraic_multigrid(multigrid.system.matrix,
                                   near_nullspace=rigid_body_modes(multigrid.space.node_points),
                                   block_size=2)
    assert built.sizes == expected.sizes
    assert all(n % 3 == 0 for n in built.sizes[1:])  # 3 rigid body modes per aggregate


def heat(preconditioner):
    mesh = unit_square(6)
    return HeatSolver(mesh, dt=1e-2, theta=0.5, degree=2,
                      initial=lambda x, y, t: np.sin(np.pi * x) * np.sin(np.pi * y),
                      boundary={name: Dirichlet(0.0) for name in mesh.boundaries},
                      preconditioner=preconditioner, rtol=1e-10, backend="host",
                      precision="fp64")


def test_heat_multigrid_steps_as_amg():
    values = []
    for name in ("amg", "multigrid"):
        solver = heat(name)
        assert isinstance(solver.cg.general, AlgebraicMultigrid)
        for _ in range(3):
            solver.step()
        values.append(solver.values())
    np.testing.assert_array_equal(values[1], values[0])


@pytest.mark.parametrize("make", [poisson, cantilever, heat])
def test_an_unknown_name_is_a_one_line_error_listing_the_table(make):
    with pytest.raises(ValueError, match="preconditioner must be one of amg, jacobi, none, "
                       "multigrid, got 'ilu'") as error:
        make("ilu")
    assert "\n" not in str(error.value)


CASE_RUNS = [
    ("poisson_square", {"mesh.cells": [8, 8]}, "u"),
    ("cantilever", {"mesh.cells": [16, 4]}, "displacement"),
    ("heat_plate", {"mesh.cells": [8, 8], "time.end": 0.02, "output.interval": 0.0}, "u"),
]


@pytest.mark.parametrize("name, overrides, field", CASE_RUNS)
def test_a_case_with_multigrid_gives_the_amg_solution(name, overrides, field):
    fields = []
    for preconditioner in ("amg", "multigrid"):
        run = load_case(CASES / f"{name}.toml", **{"run.backend": "host", **overrides,
                                                    "solver.preconditioner": preconditioner})
        assert run.solver.scheme["preconditioner"] == preconditioner
        run.run(write=False)
        fields.append(run.fields[field])
    np.testing.assert_array_equal(fields[1], fields[0])
