"""Exact solution of the Riemann problem for the 1D Euler equations of an ideal gas.

Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed., chapter 4: the
star-region pressure is the root of the pressure function f(p) = f_L(p) + f_R(p) + u_R - u_L
(found here with scipy.optimize.brentq), and the self-similar solution is sampled at
S = (x - x0) / t. Independent of the project's kernels: NumPy and SciPy only.
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq


@dataclass(frozen=True)
class State:
    """A primitive state of the gas: density, velocity, pressure."""

    rho: float
    u: float
    p: float

    def sound_speed(self, gamma):
        return np.sqrt(gamma * self.p / self.rho)


@dataclass(frozen=True)
class Star:
    """The star region between the two nonlinear waves."""

    p: float
    u: float
    rho_l: float
    rho_r: float


def wave_function(p, side, gamma):
    """f_K(p) of Toro (4.6)-(4.7): the velocity jump across the wave of side K that takes the
    pressure from side.p to p (a shock when p > side.p, a rarefaction otherwise)."""
    if p > side.p:
        a_k = 2.0 / ((gamma + 1.0) * side.rho)
        b_k = (gamma - 1.0) / (gamma + 1.0) * side.p
        return (p - side.p) * np.sqrt(a_k / (p + b_k))
    c_k = side.sound_speed(gamma)
    return 2.0 * c_k / (gamma - 1.0) * ((p / side.p) ** ((gamma - 1.0) / (2.0 * gamma)) - 1.0)


def star_density(p_star, side, gamma):
    """Density behind the wave of side K: Rankine-Hugoniot for a shock (4.50), the isentropic
    law for a rarefaction (4.53)."""
    ratio = p_star / side.p
    if p_star > side.p:
        g = (gamma - 1.0) / (gamma + 1.0)
        return side.rho * (ratio + g) / (g * ratio + 1.0)
    return side.rho * ratio ** (1.0 / gamma)


def star_state(left, right, gamma):
    """p*, u* and the densities either side of the contact (Toro section 4.3)."""
    c_l, c_r = left.sound_speed(gamma), right.sound_speed(gamma)
    # Pressure positivity condition (4.40): otherwise the waves leave a vacuum between them.
    if 2.0 * (c_l + c_r) / (gamma - 1.0) <= right.u - left.u:
        raise ValueError("the initial data generate a vacuum; not handled")

    def pressure_function(p):
        return wave_function(p, left, gamma) + wave_function(p, right, gamma) + right.u - left.u

    # f is monotone increasing in p and f(0+) < 0 (positivity condition), so a sign change lies
    # in (tiny, p_hi]; grow p_hi until f(p_hi) > 0.
    p_lo = 1e-14 * min(left.p, right.p)
    p_hi = max(left.p, right.p)
    while pressure_function(p_hi) < 0.0:
        p_hi *= 2.0
    p = brentq(pressure_function, p_lo, p_hi, xtol=1e-15, rtol=1e-14, maxiter=500)
    u = 0.5 * (left.u + right.u) + 0.5 * (wave_function(p, right, gamma)
                                          - wave_function(p, left, gamma))
    return Star(p=p, u=u, rho_l=star_density(p, left, gamma), rho_r=star_density(p, right, gamma))


def _sample_side(s, side, p_star, u_star, rho_star, gamma, sign):
    """The solution at speed s on one side of the contact. sign = -1 for the left wave, +1 for
    the right; written for the left wave, the right one follows by u -> -u (Toro 4.5)."""
    c_k = side.sound_speed(gamma)
    g1 = (gamma - 1.0) / (gamma + 1.0)
    # Reflect so that the wave is a left wave moving into the state `side`.
    s_m, u_k = -sign * s, -sign * side.u
    u_star_m = -sign * u_star
    if p_star > side.p:
        # Shock with speed (4.52); ahead of it the side state, behind it the star state.
        shock = u_k - c_k * np.sqrt((gamma + 1.0) / (2.0 * gamma) * p_star / side.p
                                    + (gamma - 1.0) / (2.0 * gamma))
        if s_m <= shock:
            return side.rho, side.u, side.p
        return rho_star, u_star, p_star
    # Rarefaction: head speed u_K - c_K, tail speed u* - c*_K, the fan (4.56) in between.
    c_star = c_k * (p_star / side.p) ** ((gamma - 1.0) / (2.0 * gamma))
    head, tail = u_k - c_k, u_star_m - c_star
    if s_m <= head:
        return side.rho, side.u, side.p
    if s_m >= tail:
        return rho_star, u_star, p_star
    factor = 2.0 / (gamma + 1.0) + g1 / c_k * (u_k - s_m)
    rho = side.rho * factor ** (2.0 / (gamma - 1.0))
    u = 2.0 / (gamma + 1.0) * (c_k + (gamma - 1.0) / 2.0 * u_k + s_m)
    p = side.p * factor ** (2.0 * gamma / (gamma - 1.0))
    return rho, -sign * u, p


def sample(s, left, right, star, gamma):
    """(rho, u, p) of the self-similar solution at speed s = (x - x0) / t."""
    if s <= star.u:
        return _sample_side(s, left, star.p, star.u, star.rho_l, gamma, sign=-1)
    return _sample_side(s, right, star.p, star.u, star.rho_r, gamma, sign=+1)


def exact_riemann(x, left, right, x0, t, gamma=1.4):
    """Density, velocity and pressure arrays at the points x and time t > 0 of the Riemann
    problem with `left` for x < x0 and `right` for x > x0 (each a State or (rho, u, p))."""
    left, right = (side if isinstance(side, State) else State(*side) for side in (left, right))
    if not t > 0:
        raise ValueError(f"t must be > 0, got {t}")
    star = star_state(left, right, gamma)
    x = np.asarray(x, dtype=np.float64)
    values = np.array([sample(s, left, right, star, gamma) for s in ((x.ravel() - x0) / t)])
    return tuple(values[:, k].reshape(x.shape) for k in range(3))
