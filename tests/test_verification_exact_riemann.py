"""The exact Riemann solver of solvers/verification/exact_riemann.py, checked against Toro's
published values and against the conservation laws it must satisfy. The Euler tests trust it as
their reference."""

import numpy as np
import pytest

from solvers.verification.exact_riemann import State, exact_riemann, star_state

GAMMA = 1.4

# Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed.: Table 4.1 (initial
# data, left and right (rho, u, p)) and Table 4.2 (exact p*, u*, rho*_L, rho*_R). The star
# values are strings so that the tolerance can follow the digits Toro printed.
TORO_TESTS = {
    "test1_sod": ((1.0, 0.0, 1.0), (0.125, 0.0, 0.1),
                  ("0.30313", "0.92745", "0.42632", "0.26557")),
    "test2_123": ((1.0, -2.0, 0.4), (1.0, 2.0, 0.4),
                  ("0.00189", "0.00000", "0.02185", "0.02185")),
    "test3_left_blast": ((1.0, 0.0, 1000.0), (1.0, 0.0, 0.01),
                         ("460.894", "19.5975", "0.57506", "5.99924")),
    "test4_right_blast": ((1.0, 0.0, 0.01), (1.0, 0.0, 100.0),
                          ("46.0950", "-6.19633", "5.99242", "0.57511")),
    "test5_shock_collision": ((5.99924, 19.5975, 460.894), (5.99242, -6.19633, 46.0950),
                              ("1691.64", "8.68975", "14.2823", "31.0426")),
}


def table_tolerance(printed):
    """Half a unit in the last printed digit, or 1e-5 relative, whichever is larger. The relative
    part covers test 5, whose initial data are themselves Toro's 6-digit roundings of the star
    states of tests 3 and 4 (that rounding moves u* by 2e-5, 2.7e-6 relative)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return max(0.5 * 10.0**-decimals, 1e-5 * abs(float(printed)))


@pytest.mark.parametrize("name", TORO_TESTS)
def test_star_region_matches_toro_table(name):
    left, right, expected = TORO_TESTS[name]
    star = star_state(State(*left), State(*right), GAMMA)
    for value, printed in zip((star.p, star.u, star.rho_l, star.rho_r), expected):
        assert abs(value - float(printed)) <= table_tolerance(printed), (name, value, printed)


def fluxes(rho, u, p):
    """Mass, momentum and energy fluxes of the 1D Euler equations."""
    energy = p / (GAMMA - 1) + 0.5 * rho * u**2
    return np.array([rho * u, rho * u**2 + p, u * (energy + p)])


def conserved(rho, u, p):
    return np.array([rho, rho * u, p / (GAMMA - 1) + 0.5 * rho * u**2])


@pytest.mark.parametrize("name", TORO_TESTS)
def test_sampled_solution_conserves_mass_momentum_energy(name):
    """Integrated over [-L, L] (which the waves have not left), the sampled solution must hold
    the initial totals plus t times the net inflow of the two constant end states. This checks
    the whole sampling (shock speeds, fans, contact) and not only the star values."""
    left, right, _ = TORO_TESTS[name]
    # Twice the largest |u| + c of the initial states: an end time that keeps the waves inside
    # [-1, 1] (the end-state assertion below checks that it did).
    speed = 2.0 * max(abs(s[1]) + np.sqrt(GAMMA * s[2] / s[0]) for s in (left, right))
    t = 0.5 / speed
    n = 200_000
    x = -1.0 + (np.arange(n) + 0.5) * (2.0 / n)
    solution = exact_riemann(x, left, right, 0.0, t, GAMMA)
    np.testing.assert_array_equal([f[0] for f in solution], left)
    np.testing.assert_array_equal([f[-1] for f in solution], right)
    u = conserved(*solution)
    total = u.sum(axis=1) * (2.0 / n)
    expected = conserved(*left) + conserved(*right) + t * (fluxes(*left) - fluxes(*right))
    # Midpoint quadrature is exact on constant pieces and second order on fans; each of the
    # three discontinuities costs at most its jump (<= 2 max|U|) times one cell (1e-5 of the
    # length 2), 3e-5 max|U| per quantity in all, so 1e-4 * max|U| * length bounds it.
    scale = np.abs(u).max(axis=1) * 2.0
    assert np.all(np.abs(total - expected) <= 1e-4 * scale), (total, expected)


def test_symmetric_problem_has_symmetric_solution():
    """Toro's test 2 is symmetric about x0: rho and p even, u odd."""
    x = np.linspace(-0.5, 0.5, 201)
    rho, u, p = exact_riemann(x, (1.0, -2.0, 0.4), (1.0, 2.0, 0.4), 0.0, 0.15, GAMMA)
    np.testing.assert_allclose(rho, rho[::-1], rtol=1e-12)
    np.testing.assert_allclose(p, p[::-1], rtol=1e-12)
    np.testing.assert_allclose(u, -u[::-1], rtol=0, atol=1e-12)


def test_end_states_are_untouched():
    """Far ahead of the waves the solution is the initial data."""
    left, right = (1.0, 0.0, 1.0), (0.125, 0.0, 0.1)
    rho, u, p = exact_riemann(np.array([0.0, 1.0]), left, right, 0.5, 0.2, GAMMA)
    np.testing.assert_array_equal(np.stack([rho, u, p]).T, [left, right])


def test_vacuum_generating_data_are_refused():
    with pytest.raises(ValueError, match="vacuum"):
        star_state(State(1.0, -20.0, 0.4), State(1.0, 20.0, 0.4), GAMMA)
