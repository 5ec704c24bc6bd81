"""Exact attached oblique shock of an ideal gas: a uniform supersonic stream turned by a wedge or
compression corner of angle theta.

The wave angle beta solves the theta-beta-Mach relation (Anderson, "Modern Compressible Flow",
3rd ed., section 4.3; NACA Report 1135, Ames Research Staff 1953)

    tan(theta) = 2 cot(beta) (M^2 sin^2 beta - 1) / (M^2 (gamma + cos 2 beta) + 2),

whose right side is 0 at the Mach angle asin(1/M), rises to the maximum deflection at beta_max
and falls to 0 again at 90 degrees: the weak shock is the root in (Mach angle, beta_max), the
strong shock the root in (beta_max, 90 deg), each found with scipy.optimize.brentq; above the
maximum deflection no attached shock exists (the shock detaches). Across the shock the normal
Mach number M sin(beta) obeys the normal-shock relations and the tangential velocity is
unchanged. Independent of the project's kernels: NumPy and SciPy only.
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq


@dataclass(frozen=True)
class ObliqueShock:
    """An attached oblique shock: the upstream Mach number, the deflection theta and the wave
    angle beta (radians), and the ratios downstream / upstream of density and pressure and the
    downstream Mach number."""

    mach: float
    theta: float
    beta: float
    gamma: float
    rho_ratio: float
    p_ratio: float
    mach2: float


def deflection(mach, beta, gamma=1.4):
    """theta(beta) of the theta-beta-Mach relation (radians)."""
    sin2 = np.sin(beta) ** 2
    tan_theta = (2.0 / np.tan(beta) * (mach**2 * sin2 - 1.0)
                 / (mach**2 * (gamma + np.cos(2.0 * beta)) + 2.0))
    return np.arctan(tan_theta)


def max_deflection_wave_angle(mach, gamma=1.4):
    """The wave angle beta_max of the largest deflection (radians): d theta / d beta = 0 gives
    sin^2 beta_max = ((gamma + 1) M^2 / 4 - 1 + sqrt((gamma + 1) ((gamma + 1) M^4 / 16
    + (gamma - 1) M^2 / 2 + 1))) / (gamma M^2)."""
    m2 = mach**2
    root = np.sqrt((gamma + 1.0) * ((gamma + 1.0) * m2**2 / 16.0 + (gamma - 1.0) * m2 / 2.0
                                    + 1.0))
    return np.arcsin(np.sqrt(((gamma + 1.0) * m2 / 4.0 - 1.0 + root) / (gamma * m2)))


def normal_shock_ratios(mach_normal, gamma=1.4):
    """rho2 / rho1, p2 / p1 and the downstream Mach number of a normal shock at the upstream
    Mach number mach_normal (Rankine-Hugoniot)."""
    m2 = mach_normal**2
    rho_ratio = (gamma + 1.0) * m2 / ((gamma - 1.0) * m2 + 2.0)
    p_ratio = 1.0 + 2.0 * gamma / (gamma + 1.0) * (m2 - 1.0)
    mach2 = np.sqrt((1.0 + 0.5 * (gamma - 1.0) * m2) / (gamma * m2 - 0.5 * (gamma - 1.0)))
    return rho_ratio, p_ratio, mach2


def oblique_shock(mach, theta, gamma=1.4, strong=False):
    """The oblique shock that turns a stream of Mach number `mach` > 1 by `theta` radians
    (0 <= theta <= the maximum deflection): the weak shock, or the strong one if `strong`.
    theta = 0 gives the Mach wave (weak) or the normal shock (strong). Raises ValueError for a
    subsonic stream, a negative theta or a detached shock (theta above the maximum)."""
    if not mach > 1.0:
        raise ValueError(f"an oblique shock needs a supersonic stream, got Mach {mach}")
    if theta < 0.0:
        raise ValueError(f"the deflection must be >= 0, got {theta}")
    mach_angle = np.arcsin(1.0 / mach)
    beta_max = max_deflection_wave_angle(mach, gamma)
    theta_max = deflection(mach, beta_max, gamma)
    if theta > theta_max:
        raise ValueError(f"theta = {np.degrees(theta):.4g} deg is above the maximum deflection "
                         f"{np.degrees(theta_max):.4g} deg at Mach {mach}: the shock detaches")
    # The root on the chosen branch; the ends of each bracket are the exact roots of theta = 0
    # and theta = theta_max.
    low, high = (beta_max, 0.5 * np.pi) if strong else (mach_angle, beta_max)
    if theta == 0.0:
        beta = high if strong else low
    elif theta == theta_max:
        beta = beta_max
    else:
        beta = brentq(lambda b: deflection(mach, b, gamma) - theta, low, high, xtol=1e-15,
                      rtol=4 * np.finfo(float).eps, maxiter=200)
    rho_ratio, p_ratio, mach_normal2 = normal_shock_ratios(mach * np.sin(beta), gamma)
    mach2 = mach_normal2 / np.sin(beta - theta)
    return ObliqueShock(mach=mach, theta=theta, beta=beta, gamma=gamma, rho_ratio=rho_ratio,
                        p_ratio=p_ratio, mach2=mach2)


def downstream_state(rho, u, p, theta, gamma=1.4, strong=False):
    """(rho, vx, vy, p) behind the shock that turns the stream (rho, u, p), flowing along +x
    at speed u, towards +y by theta radians (the flow over a ramp rising at theta)."""
    shock = oblique_shock(u / np.sqrt(gamma * p / rho), theta, gamma, strong)
    # The tangential velocity u cos(beta) is continuous; the flow leaves at angle theta.
    speed = u * np.cos(shock.beta) / np.cos(shock.beta - theta)
    return (rho * shock.rho_ratio, speed * np.cos(theta), speed * np.sin(theta),
            p * shock.p_ratio)
