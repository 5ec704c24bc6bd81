"""The finite-element operators the solvers share: an AssembledOperator's matrix is the sum of
its forms and its load the sum of its loads (the first writes, later ones add, so assembling
again gives the same vector); the Diffusion operator is the conductivity stiffness plus the
Robin facet mass, and the heat solver takes K and F from it exactly as the Poisson solver
assembles them; Poisson and elasticity keep only their physics over the steady base."""

import numpy as np
import pytest

from solvers.fe import (
    AssembledOperator,
    Assembler,
    Diffusion,
    Dirichlet,
    ElasticitySolver,
    FunctionSpace,
    HeatSolver,
    Neumann,
    PoissonSolver,
    Robin,
    SteadyFESolver,
    cells,
    facets,
    unit_square,
)
from solvers.solver import SteadySolver, TimeDependentSolver


def assembler(degree=2, n=6):
    return Assembler(FunctionSpace(unit_square(n), degree), "host", "fp64")


def alone(a, form, elements, coefficient):
    values = a.values()
    a.bilinear(form, elements, coefficient).bind(values)()
    return values


def test_a_sum_of_forms_is_the_forms_added():
    a = assembler()
    space = a.space
    k = np.linspace(1.0, 3.0, space.mesh.ncells)
    op = AssembledOperator(a)
    op.add_form("stiffness", cells(space), k)
    op.add_form("mass", facets(space, ["top", "right"]), 2.5)
    op.assemble_matrix()
    expected = (alone(a, "stiffness", cells(space), k)
                + alone(a, "mass", facets(space, ["top", "right"]), 2.5))
    np.testing.assert_array_equal(op.values, expected)
    assert len(op.forms) == 2 and len(op.matrix_launches) == 3  # form, form + axpby


def test_the_first_load_writes_and_later_loads_add():
    a = assembler()
    space = a.space
    x, y = space.node_points.T
    op = AssembledOperator(a)
    f = op.add_load(cells(space), np.sin(x) + y)
    op.add_load(facets(space, ["left"]), 1 + y, coefficient=3.0)
    assert len(op.sources) == len(op.load_launches) == 2 and op.sources[0] is f
    op.assemble_load()
    first = op.load.copy()
    op.assemble_load()  # again: the volume load overwrites, so nothing accumulates
    np.testing.assert_array_equal(op.load, first)
    volume, facet = a.vector(), a.vector()
    a.linear(cells(space)).bind(a.device(np.sin(x) + y, a.dtype), volume)()
    a.linear(facets(space, ["left"]), 3.0).bind(a.device(1 + y, a.dtype), facet)()
    np.testing.assert_allclose(first, volume + facet, rtol=1e-14, atol=1e-15)


def conditions():
    return {"left": Dirichlet(lambda x, y, t: y),
            "top": Neumann(lambda x, y, t: 1 + x),
            "right": Robin(2.0, lambda x, y, t: 3 - y)}


def source(x, y, t):
    return np.cos(2 * x) * y


def test_diffusion_is_the_stiffness_plus_the_robin_facet_mass():
    a = assembler()
    space = a.space
    boundary = conditions()
    k = np.full(space.mesh.ncells, 0.7)
    diffusion = Diffusion(a, k, source, {"top": boundary["top"]}, {"right": boundary["right"]})
    diffusion.assemble_matrix()
    np.testing.assert_array_equal(diffusion.values,
                                  alone(a, "stiffness", cells(space), k)
                                  + alone(a, "mass", facets(space, ["right"]), 2.0))
    # The loads read the source, the flux and alpha times the ambient, in that order.
    assert len(diffusion.sources) == 3
    np.testing.assert_array_equal(diffusion.sources[2], 3 - space.node_points[:, 1])


def test_heat_takes_k_and_f_from_the_diffusion_operator_poisson_assembles():
    mesh = unit_square(6)
    boundary = conditions()
    options = {"degree": 2, "default_conductivity": 0.7, "source": source,
               "backend": "host", "precision": "fp64"}
    heat = HeatSolver(mesh, dt=1e-2, boundary=boundary, **options)
    assert isinstance(heat.diffusion, Diffusion)
    assert not any(isinstance(value, SteadySolver) for value in vars(heat).values())
    steady = PoissonSolver(mesh, boundary=boundary, **options)
    np.testing.assert_array_equal(heat.stiffness, steady.full_values)  # K (before the cut)
    # F: the Poisson load without Dirichlet conditions (no lifting).
    unlifted = PoissonSolver(mesh, boundary={"top": boundary["top"],
                                             "right": boundary["right"]}, **options)
    np.testing.assert_array_equal(heat.load, unlifted.b)


@pytest.mark.parametrize("solver", [PoissonSolver, ElasticitySolver])
def test_the_steady_solvers_declare_only_their_physics(solver):
    assert issubclass(solver, SteadyFESolver)
    for shared in ("assemble", "solve", "_solver", "failure_message", "dofs", "_setup",
                   "_impose"):
        assert shared not in vars(solver), shared
    assert issubclass(HeatSolver, TimeDependentSolver)


def test_the_steady_base_solves_in_float64_with_the_loads_then_the_lifting():
    mesh = unit_square(4)
    solver = PoissonSolver(mesh, 1, source=1.0,
                           boundary={name: Dirichlet(1.0) for name in mesh.boundaries},
                           preconditioner="jacobi", backend="host", precision="fp32")
    assert solver.rhs_launches[:-1] == solver.operator.load_launches
    assert solver.dofs == solver.space.n == 25
    u, info = solver.solve()
    assert info.converged and u.dtype == np.float64
    assert solver.scheme == {"element": "P1", "cell": mesh.cell_type, "dofs": 25,
                             "nonzeros": solver.assembler.pattern.nnz,
                             "preconditioner": "jacobi", "rtol": 1e-8, "refinement": True}
