"""The project's preconditioner table (solvers.linalg.preconditioners): every name builds and
preconditions CG on an assembled matrix and on a stencil; "multigrid" is geometric on a stencil
and algebraic on a matrix, "amg" always algebraic; on the incompressible pressure "multigrid"
is geometric without periodic axes and algebraic with one; the case files offer the table's
names, their defaults first."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse.linalg as spla

from solvers import load_case
from solvers.cases.loader import adapters
from solvers.fv.incompressible.pressure import laplacian_matrix, pressure_solver
from solvers.linalg import (
    AlgebraicMultigrid,
    ConjugateGradient,
    CsrMatrix,
    GeometricMultigrid,
    StencilLaplacian,
)
from solvers.linalg.preconditioners import (
    MULTIGRIDS,
    PRECONDITIONERS,
    choices,
    describe,
    preconditioner,
)

NAMES = ("amg", "jacobi", "none", "multigrid")
# Name -> (what it builds on a CsrMatrix, on a StencilLaplacian).
BUILDS = {"multigrid": (AlgebraicMultigrid, GeometricMultigrid),
          "amg": (AlgebraicMultigrid, AlgebraicMultigrid),
          "jacobi": (str, str),
          "none": (type(None), type(None))}
SHAPE, SPACING = (16, 16), (1 / 16, 1 / 16)


def test_the_table_names_every_preconditioner_once():
    assert tuple(PRECONDITIONERS) == NAMES
    assert all(isinstance(meaning, str) and meaning for meaning in PRECONDITIONERS.values())
    assert set(MULTIGRIDS) == {"multigrid", "amg"}


@pytest.mark.parametrize("default", NAMES)
def test_choices_are_every_name_with_the_default_first(default):
    offered = choices(default)
    assert offered[0] == default and sorted(offered) == sorted(NAMES)


def stencil_and_matrix(backend_name):
    """The 5-point Laplacian with mixed sides as a stencil and as the same assembled CSR."""
    stencil = StencilLaplacian(SHAPE, SPACING, boundary={"x_lo": "neumann", "y_hi": "neumann"},
                               backend=backend_name, precision="fp64")
    return stencil, CsrMatrix.from_scipy(stencil.to_scipy(), backend=backend_name,
                                         precision="fp64")


@pytest.mark.parametrize("name", NAMES)
def test_every_name_builds_and_preconditions_cg(backend_name, name):
    stencil, matrix = stencil_and_matrix(backend_name)
    b = np.random.default_rng(1).standard_normal(stencil.n)
    exact = spla.spsolve(stencil.to_scipy().tocsc(), b)
    for operator, kind in zip((matrix, stencil), BUILDS[name]):
        m = preconditioner(name, operator)
        assert isinstance(m, kind), (name, type(operator).__name__, m)
        x, info = ConjugateGradient(operator, m, rtol=1e-10).solve(b)
        assert info.converged
        np.testing.assert_allclose(operator.backend.to_host(x), exact, rtol=0,
                                   atol=1e-7 * abs(exact).max())


def test_multigrid_needs_fewer_iterations_than_jacobi():
    stencil, matrix = stencil_and_matrix("host")
    b = np.ones(stencil.n)
    for operator in (stencil, matrix):
        iterations = {name: ConjugateGradient(operator, preconditioner(name, operator),
                                              rtol=1e-8).solve(b)[1].iterations
                      for name in NAMES}
        assert max(iterations["multigrid"], iterations["amg"]) < iterations["jacobi"]


def test_an_unknown_name_is_a_one_line_error_listing_the_table():
    stencil, _ = stencil_and_matrix("host")
    with pytest.raises(ValueError, match="preconditioner must be one of amg, jacobi, none, "
                       "multigrid, got 'ilu'") as error:
        preconditioner("ilu", stencil)
    assert "\n" not in str(error.value)


def test_multigrid_on_a_stencil_geometric_multigrid_cannot_coarsen_names_the_others():
    stencil = StencilLaplacian((6, 16), (1 / 6, 1 / 16), backend="host", precision="fp64")
    with pytest.raises(ValueError, match="geometric multigrid needs even cell counts of at "
                       "least 8 per axis, got \\(6, 16\\); use preconditioner 'amg' or "
                       "'jacobi'"):
        preconditioner("multigrid", stencil)
    assert isinstance(preconditioner("amg", stencil), AlgebraicMultigrid)


def test_describe_names_what_was_built():
    stencil, _ = stencil_and_matrix("host")
    assert [describe(preconditioner(name, stencil)) for name in NAMES] == [
        "AlgebraicMultigrid", "jacobi", "none", "GeometricMultigrid"]


WALLS_AND_OUTFLOW = {"x_lo": "neumann", "x_hi": "dirichlet", "y_lo": "neumann",
                     "y_hi": "neumann"}
PERIODIC_X = {"x_lo": "periodic", "x_hi": "periodic", "y_lo": "neumann", "y_hi": "dirichlet"}
# (pressure sides, name) -> (operator, preconditioner) of the pressure solve.
PRESSURE = [
    (WALLS_AND_OUTFLOW, "multigrid", "StencilLaplacian", GeometricMultigrid),
    (PERIODIC_X, "multigrid", "CsrMatrix", AlgebraicMultigrid),
    (WALLS_AND_OUTFLOW, "amg", "StencilLaplacian", AlgebraicMultigrid),
    (PERIODIC_X, "amg", "CsrMatrix", AlgebraicMultigrid),
    (WALLS_AND_OUTFLOW, "jacobi", "StencilLaplacian", type(None)),
    (PERIODIC_X, "none", "CsrMatrix", type(None)),
]


@pytest.mark.parametrize("kinds, name, operator, kind", PRESSURE)
def test_pressure_multigrid_is_geometric_without_periodic_axes_and_algebraic_with_one(
        kinds, name, operator, kind):
    """The incompressible pressure system: A is a stencil, or a CSR matrix with a periodic
    axis; its solve reaches the direct solution whatever the name."""
    cg, method = pressure_solver(SHAPE, SPACING, kinds, name, 1e-10, 500, "host", "fp64", 0.0)
    assert type(cg.operator).__name__ == operator
    assert isinstance(cg.general, kind)  # the preconditioner object (jacobi is fused: None)
    assert method.startswith(f"{operator} + CG(")
    b = np.random.default_rng(2).standard_normal(SHAPE[0] * SHAPE[1])
    exact = spla.spsolve(laplacian_matrix(SHAPE, SPACING, kinds).tocsc(), b)
    x, info = cg.solve(b)
    assert info.converged
    np.testing.assert_allclose(x, exact, rtol=0, atol=1e-7 * abs(exact).max())


def test_an_unknown_pressure_preconditioner_is_refused():
    with pytest.raises(ValueError, match="pressure preconditioner must be one of multigrid, "
                       "amg, jacobi, none, got 'ilu'"):
        pressure_solver(SHAPE, SPACING, WALLS_AND_OUTFLOW, "ilu", 1e-8, 100, "host", "fp32",
                        0.0)


def preconditioner_keys():
    """(solver, its case key) for every adapter with a preconditioner key."""
    for solver, adapter in adapters().items():
        for section in adapter.SECTIONS.values():
            if section and "preconditioner" in section:
                yield solver, section["preconditioner"]


def test_every_case_schema_offers_the_table_with_its_default_first():
    defaults = {}
    for solver, key in preconditioner_keys():
        assert key.kind == "choice" and key.choices == choices(key.default), solver
        assert all(name in key.help for name in NAMES), solver
        defaults[solver] = key.default
    assert defaults["poisson"] == defaults["heat"] == defaults["elasticity"] == "amg"
    assert defaults["incompressible"] == "multigrid"


CASES = Path(__file__).parent.parent / "cases"


def incompressible_fields(case, name, **overrides):
    run = load_case(CASES / case, **{"run.backend": "host", "pressure.preconditioner": name,
                                     **overrides})
    run.step(20)
    return run.solver.pressure_method, run.fields


@pytest.mark.parametrize("name", ["amg", "jacobi", "none"])
def test_the_cavity_runs_with_every_name_to_the_multigrid_state(name):
    """Lid speed 1, fp64, pressure solves to rtol 1e-8 (and an RMS divergence of 1e-6, the
    default floor): after 20 steps the velocities agree to 1e-7 (measured 3e-8 to 1e-7 on
    32^2); with "amg" the stencil keeps the operator and the hierarchy is algebraic."""
    options = {"mesh.nx": 32, "mesh.ny": 32, "pressure.rtol": 1e-8, "run.precision": "fp64"}
    _, reference = incompressible_fields("cavity_re100.toml", "multigrid", **options)
    method, fields = incompressible_fields("cavity_re100.toml", name, **options)
    built = {"amg": "AlgebraicMultigrid", "jacobi": "jacobi", "none": "none"}[name]
    assert method == f"StencilLaplacian + CG({built})"
    for key in ("u", "v"):
        np.testing.assert_allclose(fields[key], reference[key], rtol=0, atol=2e-7)


def test_with_a_periodic_axis_multigrid_is_amg():
    """Taylor-Green (periodic both ways): "multigrid" is the algebraic hierarchy of the
    assembled pressure matrix, so the run's bits are those of "amg"."""
    runs = [incompressible_fields("taylor_green.toml", name, **{"mesh.nx": 16, "mesh.ny": 16})
            for name in ("multigrid", "amg")]
    assert runs[0][0] == runs[1][0] == "CsrMatrix + CG(AlgebraicMultigrid)"
    for key in ("u", "v", "p"):
        np.testing.assert_array_equal(runs[0][1][key], runs[1][1][key])
