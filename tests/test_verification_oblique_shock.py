"""The exact oblique shock (solvers/verification/oblique_shock.py) against published numbers
(where each comes from is cited beside it), against the closed-form root of the
theta-beta-Mach cubic, and against the normal-shock limit; its downstream state conserves mass,
momentum and energy across the shock."""

import numpy as np
import pytest

from solvers.verification.oblique_shock import (
    deflection,
    downstream_state,
    max_deflection_wave_angle,
    oblique_shock,
)

GAMMA = 1.4


def closed_form_wave_angle(mach, theta, weak, gamma=GAMMA):
    """The theta-beta-Mach relation as a cubic in tan(beta), solved in closed form (Thompson,
    "Compressible-Fluid Dynamics", 1972; Anderson, "Modern Compressible Flow", 3rd ed.,
    section 4.3): delta = 1 the weak root, delta = 0 the strong one. An independent method:
    no root finder."""
    m2 = mach**2
    half_minus, half_plus = 1.0 + 0.5 * (gamma - 1.0) * m2, 1.0 + 0.5 * (gamma + 1.0) * m2
    tan2 = np.tan(theta) ** 2
    lam = np.sqrt((m2 - 1.0) ** 2 - 3.0 * half_minus * half_plus * tan2)
    chi = ((m2 - 1.0) ** 3 - 9.0 * half_minus * (half_minus + 0.25 * (gamma + 1.0) * m2**2)
           * tan2) / lam**3
    delta = 1.0 if weak else 0.0
    tan_beta = ((m2 - 1.0 + 2.0 * lam * np.cos((4.0 * np.pi * delta + np.arccos(chi)) / 3.0))
                / (3.0 * half_minus * np.tan(theta)))
    return np.arctan(tan_beta)


@pytest.mark.parametrize("mach, theta_deg", [(2.5, 15.0), (2.0, 10.0), (3.0, 20.0), (1.5, 5.0),
                                             (5.0, 30.0), (10.0, 40.0)])
@pytest.mark.parametrize("strong", [False, True])
def test_wave_angle_is_the_closed_form_root(mach, theta_deg, strong):
    theta = np.radians(theta_deg)
    shock = oblique_shock(mach, theta, strong=strong)
    assert shock.beta == pytest.approx(closed_form_wave_angle(mach, theta, weak=not strong),
                                       abs=1e-11)
    assert deflection(mach, shock.beta) == pytest.approx(theta, abs=1e-13)
    # Weak: supersonic behind the shock here; strong: subsonic.
    assert (shock.mach2 < 1.0) == strong


def test_mach_2_5_ramp_of_15_degrees():
    """The wedge case (meshes/make_wedge.py): the wave angle the mesh's height was chosen for,
    and the ratios from the normal-shock relations at M sin(beta)."""
    shock = oblique_shock(2.5, np.radians(15.0))
    assert np.degrees(shock.beta) == pytest.approx(36.9449, abs=1e-4)
    normal = 2.5 * np.sin(shock.beta)
    assert shock.p_ratio == pytest.approx((2.0 * GAMMA * normal**2 - (GAMMA - 1.0))
                                          / (GAMMA + 1.0), rel=1e-14)
    assert shock.rho_ratio == pytest.approx(1.86655, rel=1e-5)
    assert shock.p_ratio == pytest.approx(2.46750, rel=1e-5)
    assert shock.mach2 == pytest.approx(1.87353, rel=1e-5)


def test_anderson_modern_compressible_flow_mach_3():
    """Anderson, "Modern Compressible Flow", 3rd ed. (McGraw-Hill 2003), solutions manual,
    problem 4.9: M1 = 3, theta = 20 deg: beta = 37.8 deg (read from the theta-beta-M chart),
    Mn1 = 3 sin(37.8 deg) = 1.839, p2/p1 = 3.783 and Mn2 = 0.6078 (Table A.2 at Mn1 = 1.84),
    M2 = Mn2 / sin(beta - theta); theta = 15 deg: beta = 32.2 deg. Chart reading limits beta
    to about 0.1 deg, and the table's entry at Mn1 = 1.84 (exactly 1.837) the ratios to 0.5 %."""
    shock = oblique_shock(3.0, np.radians(20.0))
    assert np.degrees(shock.beta) == pytest.approx(37.8, abs=0.1)
    assert 3.0 * np.sin(shock.beta) == pytest.approx(1.839, abs=0.003)
    assert shock.p_ratio == pytest.approx(3.783, rel=5e-3)
    assert shock.mach2 == pytest.approx(0.6078 / np.sin(np.radians(37.8 - 20.0)), rel=5e-3)
    assert np.degrees(oblique_shock(3.0, np.radians(15.0)).beta) == pytest.approx(32.2, abs=0.1)


def test_anderson_fundamentals_of_aerodynamics_mach_2():
    """Anderson, "Fundamentals of Aerodynamics", chapter 9, Example 9.2: M1 = 2, theta = 20 deg:
    beta = 53.4 deg (chart), then at Mn1 = 1.60 (table) p2/p1 = 2.82, T2/T1 = 1.388,
    M2 = 1.21. The table entry is at Mn1 rounded to 1.60 (exactly 1.606): within 1 %."""
    shock = oblique_shock(2.0, np.radians(20.0))
    assert np.degrees(shock.beta) == pytest.approx(53.4, abs=0.1)
    assert shock.p_ratio == pytest.approx(2.82, rel=1e-2)
    assert shock.p_ratio / shock.rho_ratio == pytest.approx(1.388, rel=1e-2)
    assert shock.mach2 == pytest.approx(1.21, rel=1e-2)


@pytest.mark.parametrize("mach, theta_deg, beta_deg, mach2, p_ratio", [
    (1.20, 2.0, 61.05, 1.111, 1.120),
    (1.25, 4.0, 61.99, 1.072, 1.254),
    (1.30, 5.0, 59.96, 1.090, 1.311),
    (1.35, 4.0, 53.97, 1.199, 1.224),
])
def test_sydney_oblique_shock_table(mach, theta_deg, beta_deg, mach2, p_ratio):
    """University of Sydney, "Aerodynamics for Students", Compressible Flow Tables, Part 4:
    Oblique Shock Waves (gamma = 7/5), weak solution rows, printed to 0.01 deg and 3 decimals."""
    shock = oblique_shock(mach, np.radians(theta_deg))
    assert np.degrees(shock.beta) == pytest.approx(beta_deg, abs=0.006)
    assert shock.mach2 == pytest.approx(mach2, abs=6e-4)
    assert shock.p_ratio == pytest.approx(p_ratio, abs=6e-4)


@pytest.mark.parametrize("mach, theta_max_deg, beta_max_deg", [
    (2.0, 22.9735, 64.6465), (3.0, 34.0734, 65.2309), (5.0, 41.1177, 66.5671),
    (10.0, 44.4290, 67.4419),
])
def test_maximum_deflection_and_detachment(mach, theta_max_deg, beta_max_deg):
    """Bar-Meir, "Fundamentals of Compressible Fluid Mechanics" (Potto Project), section
    "Maximum Value of Oblique Shock", table of the maximum deflection and its wave angle. The
    table's wave angles are 0.01 to 0.02 deg off the exact maximum, where theta is flat in beta
    (d theta / d beta = 0 is checked here directly); its deflections agree to 1e-4 deg."""
    beta_max = max_deflection_wave_angle(mach)
    assert np.degrees(deflection(mach, beta_max)) == pytest.approx(theta_max_deg, abs=1e-4)
    assert np.degrees(beta_max) == pytest.approx(beta_max_deg, abs=0.03)
    slope = (deflection(mach, beta_max + 1e-5) - deflection(mach, beta_max - 1e-5)) / 2e-5
    assert abs(slope) < 1e-8
    # At the maximum both branches meet; just above it the shock detaches.
    theta_max = deflection(mach, beta_max)
    for strong in (False, True):
        assert oblique_shock(mach, theta_max, strong=strong).beta == beta_max
        with pytest.raises(ValueError, match="detaches"):
            oblique_shock(mach, theta_max + 1e-6, strong=strong)


@pytest.mark.parametrize("mach, p_ratio, rho_ratio, mach2", [
    (2.0, 4.5, 8.0 / 3.0, 0.57735), (3.0, 10.333, 3.857, 0.47519),
])
def test_strong_branch_tends_to_the_normal_shock(mach, p_ratio, rho_ratio, mach2):
    """theta -> 0 on the strong branch: beta -> 90 deg and the normal-shock ratios (NACA Report
    1135, normal-shock table: M1 = 2: p2/p1 = 4.500, rho2/rho1 = 2.667, M2 = 0.5774; M1 = 3:
    10.33, 3.857, 0.4752). On the weak branch the shock tends to the Mach wave."""
    for theta in (1e-4, 1e-7, 0.0):
        strong = oblique_shock(mach, theta, strong=True)
        assert strong.beta == pytest.approx(0.5 * np.pi, abs=10 * theta + 1e-15)
        assert strong.p_ratio == pytest.approx(p_ratio, rel=1e-4 + 10 * theta)
        assert strong.rho_ratio == pytest.approx(rho_ratio, rel=1e-4 + 10 * theta)
        assert strong.mach2 == pytest.approx(mach2, rel=1e-4 + 10 * theta)
        weak = oblique_shock(mach, theta)
        assert weak.beta == pytest.approx(np.arcsin(1.0 / mach), abs=100 * theta + 1e-15)
        assert weak.p_ratio == pytest.approx(1.0, abs=100 * theta + 1e-15)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="supersonic"):
        oblique_shock(0.9, 0.1)
    with pytest.raises(ValueError, match=">= 0"):
        oblique_shock(2.0, -0.1)


@pytest.mark.parametrize("strong", [False, True])
def test_downstream_state_conserves_across_the_shock(strong):
    rho, u, p, theta = 1.4, 2.5 * 1.0, 1.0, np.radians(15.0)  # Mach 2.5: c = 1
    rho2, vx2, vy2, p2 = downstream_state(rho, u, p, theta, strong=strong)
    shock = oblique_shock(2.5, theta, strong=strong)
    # Normal n and tangent t of the shock (the shock line at angle beta through the corner).
    n = np.array([np.sin(shock.beta), -np.cos(shock.beta)])
    t = np.array([np.cos(shock.beta), np.sin(shock.beta)])
    v1, v2 = np.array([u, 0.0]), np.array([vx2, vy2])
    un1, un2 = v1 @ n, v2 @ n
    assert rho2 * un2 == pytest.approx(rho * un1, rel=1e-13)
    assert rho2 * un2**2 + p2 == pytest.approx(rho * un1**2 + p, rel=1e-13)
    assert v2 @ t == pytest.approx(v1 @ t, rel=1e-13)
    enthalpy = GAMMA / (GAMMA - 1.0)
    assert enthalpy * p2 / rho2 + 0.5 * v2 @ v2 == pytest.approx(enthalpy * p / rho
                                                                  + 0.5 * v1 @ v1, rel=1e-13)
    # Turned by theta, at the downstream Mach number.
    assert np.arctan2(vy2, vx2) == pytest.approx(theta, abs=1e-13)
    assert np.hypot(vx2, vy2) / np.sqrt(GAMMA * p2 / rho2) == pytest.approx(shock.mach2,
                                                                            rel=1e-13)
