"""deposit(total, x0, y0, r) in initial expressions (solvers/cases/deposit.py): the total is
exact at any resolution and at least one cell gets it; cases/sedov.toml uses it, so its blast
holds E0 at every nx and its run conserves it."""

from pathlib import Path

import numpy as np
import pytest

import solvers
from solvers.cases import CaseError
from solvers.cases.advection_diffusion import initial_c
from solvers.cases.deposit import deposit
from solvers.cases.euler import initial_fields
from solvers.cases.loader import load
from solvers.cases.structured import grid_of
from solvers.expressions import ExpressionError
from solvers.mesh import StructuredGrid

ROOT = Path(__file__).resolve().parents[1]
SEDOV = ROOT / "cases" / "sedov.toml"
E0, AMBIENT_P, GAMMA = 1.0, 1e-5, 1.4


def _energy(fields, grid):
    """Total energy: the integral of p / (gamma - 1) + rho |v|^2 / 2 over the grid."""
    kinetic = 0.5 * fields["rho"] * (fields["vx"] ** 2 + fields["vy"] ** 2)
    return float(np.sum(fields["p"] / (GAMMA - 1) + kinetic)) * grid.dx * grid.dy


def _sedov(n, **overrides):
    return load(SEDOV, {"mesh": {"nx": n, "ny": n}, **overrides})


@pytest.mark.parametrize("n", [8, 32, 128, 400])
def test_sedov_holds_its_energy_at_every_resolution(n):
    case = _sedov(n)
    grid = grid_of(case)
    fields = initial_fields(case, grid)
    intended = E0 + AMBIENT_P / (GAMMA - 1) * 1.0  # the box is 1 x 1
    assert _energy(fields, grid) == pytest.approx(intended, rel=1e-13, abs=0)
    hot = fields["p"] > AMBIENT_P
    assert np.count_nonzero(hot) >= 1
    p = fields["p"]  # centred disc on a centred grid: the deposit has the grid's symmetry
    np.testing.assert_allclose(p, p[::-1, :], rtol=1e-12)
    np.testing.assert_allclose(p, p.T, rtol=1e-12)


def test_sedov_run_at_nx_32_keeps_its_energy_and_blasts(tmp_path):
    run = solvers.load_case(SEDOV, mesh={"nx": 32, "ny": 32},
                            run={"backend": "host", "precision": "fp64"},
                            output={"dir": str(tmp_path)})
    grid = StructuredGrid(32, x=(-0.5, 0.5), ny=32, y=(-0.5, 0.5))
    start = _energy(run.fields, grid)
    run.run(write=False)
    assert run.t == pytest.approx(0.15)
    assert start == pytest.approx(E0 + AMBIENT_P / (GAMMA - 1), rel=1e-13)
    assert _energy(run.fields, grid) == pytest.approx(start, rel=1e-12)  # reflective walls
    x, y = grid.centres()
    radius = np.hypot(x, y)[np.unravel_index(np.argmax(run.fields["rho"]), grid.shape)]
    assert 0.25 < radius < 0.45  # the shock near (E0 t^2 / rho)^(1/4) = 0.39


def _total(grid, density):
    return float(np.sum(density)) * grid.dx * grid.dy


def test_a_disc_smaller_than_a_cell_goes_to_the_cells_holding_its_centre():
    grid = StructuredGrid(4, x=(0, 1), ny=4, y=(0, 1))
    at_centre = deposit(grid, 2.0, (0.375, 0.625), 1e-9)  # the middle of cell (1, 2)
    assert np.count_nonzero(at_centre) == 1 and at_centre[1, 2] == pytest.approx(2.0 * 16)
    at_corner = deposit(grid, 2.0, (0.5, 0.5), 0.0)  # a point on 4 cells' shared corner
    assert np.count_nonzero(at_corner) == 4
    np.testing.assert_array_equal(at_corner[1:3, 1:3], np.full((2, 2), 2.0 * 16 / 4))
    for density in (at_centre, at_corner):
        assert _total(grid, density) == pytest.approx(2.0, rel=1e-15)


def test_cells_get_their_share_of_the_disc():
    """A disc many cells wide: cells inside get density total / (pi r^2) to the sampling's
    accuracy, those outside none, and the sampled area is near pi r^2."""
    grid = StructuredGrid(200, x=(0, 1), ny=100, y=(0, 0.5))
    r = 0.2
    density = deposit(grid, 3.0, (0.4, 0.25), r)
    assert _total(grid, density) == pytest.approx(3.0, rel=1e-14)
    x, y = grid.centres()
    distance = np.hypot(x - 0.4, y - 0.25)
    inside = distance < r - grid.dx
    assert np.ptp(density[inside]) == 0
    assert density[inside][0] == pytest.approx(3.0 / (np.pi * r * r), rel=2e-3)
    assert np.all(density[distance > r + grid.dx] == 0)


def test_a_disc_cut_by_the_boundary_keeps_its_total_inside():
    grid = StructuredGrid(50, x=(0, 1), ny=50, y=(0, 1))
    density = deposit(grid, 1.0, (0.0, 0.3), 0.1)
    assert _total(grid, density) == pytest.approx(1.0, rel=1e-14)


def test_one_dimensional_fractions_are_exact():
    grid = StructuredGrid(10, x=(0, 1))
    density = deposit(grid, 1.0, (0.5,), 0.15)  # covers cells 4, 5 wholly and 3, 6 by half
    np.testing.assert_allclose(density * grid.dx, [0, 0, 0, 1 / 6, 1 / 3, 1 / 3, 1 / 6, 0, 0, 0])
    assert float(np.sum(density)) * grid.dx == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("args, message", [
    ((1.0, (5.0, 5.0), 0.1), "does not meet the grid"),
    ((1.0, (0.5, 0.5), -0.1), "r must be >= 0"),
    ((np.ones(3), (0.5, 0.5), 0.1), "total must be a number"),
    ((1.0, (np.inf, 0.5), 0.1), "x0 must be finite"),
])
def test_bad_arguments_are_expression_errors(args, message):
    grid = StructuredGrid(8, x=(0, 1), ny=8, y=(0, 1))
    with pytest.raises(ExpressionError, match=message):
        deposit(grid, *args)


def test_case_errors_name_the_key():
    with pytest.raises(CaseError, match=r"initial.*p.*deposit: x0 must be a number"):
        _sedov(16, initial={"p": "(gamma - 1) * deposit(E0, x, 0, r0) + 1e-5"})
    with pytest.raises(CaseError, match=r"initial.*p.*deposit takes 4 arguments, got 3"):
        _sedov(16, initial={"p": "deposit(E0, 0, r0) + 1e-5"})


def test_advection_diffusion_initial_c_may_deposit():
    case = load(ROOT / "cases" / "advection_diffusion.toml",
                {"initial": {"c": "deposit(2.5, 0.5, 0.5, 0.01)"}, "mesh": {"nx": 16, "ny": 16}})
    grid = grid_of(case)
    c = initial_c(case, grid)
    assert np.count_nonzero(c) == 4  # a disc inside the 4 cells about the corner (0.5, 0.5)
    assert _total(grid, c) == pytest.approx(2.5, rel=1e-14)
