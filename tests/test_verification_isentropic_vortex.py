"""The exact isentropic vortex (solvers/verification/isentropic_vortex.py): isentropic, the free
stream far away, carried unchanged by the stream, a divergence-free swirl whose centripetal
acceleration the pressure gradient balances, and a solution of the time-dependent Euler
equations (finite differences, converging at second order)."""

import numpy as np
import pytest

from solvers.verification.isentropic_vortex import isentropic_vortex

GAMMA = 1.4
VELOCITY = (0.5, -0.25)
CENTRE = (1.0, 2.0)


def vortex(x, y, t=0.0):
    return isentropic_vortex(x, y, t, centre=CENTRE, velocity=VELOCITY)


def test_isentropic_with_the_free_stream_far_away():
    x, y = np.meshgrid(np.linspace(-9.0, 11.0, 81), np.linspace(-8.0, 12.0, 81))
    rho, vx, vy, p = vortex(x, y, 0.7)
    assert np.allclose(p / rho**GAMMA, 1.0, rtol=1e-14)
    # The density dip at the centre: T = 1 - (gamma - 1) b^2 e / (8 gamma pi^2).
    rho_centre = vortex(*CENTRE)[0]
    assert rho_centre == pytest.approx((1.0 - 0.4 * 25.0 * np.e / (8.0 * GAMMA * np.pi**2))
                                       ** 2.5, rel=1e-14)
    assert 0.49 < rho_centre < 0.50
    # Eight radii from the centre the perturbation is below exp(-31).
    far = np.hypot(x - CENTRE[0] - 0.7 * VELOCITY[0], y - CENTRE[1] - 0.7 * VELOCITY[1]) > 8.0
    for value, free in zip((rho, vx, vy, p), (1.0, *VELOCITY, 1.0)):
        assert np.allclose(value[far], free, atol=1e-12)


def test_carried_unchanged_by_the_stream():
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-5.0, 5.0, (2, 200))
    t = 3.3
    later = vortex(x + VELOCITY[0] * t, y + VELOCITY[1] * t, t)
    for now, then in zip(vortex(x, y), later):
        assert np.allclose(now, then, rtol=0, atol=1e-14)


def central_differences(f, h):
    """d/dx and d/dy of f on a grid indexed [y, x] of spacing h, at the interior points."""
    return ((f[1:-1, 2:] - f[1:-1, :-2]) / (2.0 * h), (f[2:, 1:-1] - f[:-2, 1:-1]) / (2.0 * h))


def grid(h, half_width=4.0):
    """A square grid of spacing h about the vortex's centre."""
    axis = np.arange(-half_width, half_width + 0.5 * h, h)
    x, y = np.meshgrid(CENTRE[0] + axis, CENTRE[1] + axis)
    return x, y


def interior(f):
    return f[1:-1, 1:-1]


def test_the_swirl_is_divergence_free():
    errors = []
    for h in (0.1, 0.05):
        x, y = grid(h)
        _, vx, vy, _ = vortex(x, y)
        errors.append(np.abs(central_differences(vx, h)[0] + central_differences(vy, h)[1]).max())
    # Zero up to the differences' O(h^2) error.
    assert errors[1] < 5e-4
    assert 3.8 < errors[0] / errors[1] < 4.2


def test_radial_balance_in_the_moving_frame():
    """dp/dr = rho v_theta^2 / r along a ray from the centre: second-order central differences
    of p, the error (relative to the largest dp/dr) falling four times when h halves."""
    errors = []
    direction = np.array([0.6, 0.8])
    for h in (0.02, 0.01):
        r = np.arange(0.2, 3.0, h)
        x, y = np.array(CENTRE)[:, None] + np.outer(direction, r)
        rho, vx, vy, p = vortex(x, y)
        # The swirl speed is the velocity in the moving frame, normal to the ray.
        v_theta = -(vx - VELOCITY[0]) * direction[1] + (vy - VELOCITY[1]) * direction[0]
        dp_dr = (p[2:] - p[:-2]) / (2.0 * h)
        residual = dp_dr - rho[1:-1] * v_theta[1:-1] ** 2 / r[1:-1]
        errors.append(np.abs(residual).max() / np.abs(dp_dr).max())
    assert errors[1] < 1e-4
    assert 3.8 < errors[0] / errors[1] < 4.2


def conserved_and_fluxes(x, y, t):
    """The conserved variables and the x and y fluxes of the Euler equations at time t."""
    rho, vx, vy, p = vortex(x, y, t)
    energy = p / (GAMMA - 1.0) + 0.5 * rho * (vx**2 + vy**2)
    u = np.stack([rho, rho * vx, rho * vy, energy])
    f = np.stack([rho * vx, rho * vx**2 + p, rho * vx * vy, (energy + p) * vx])
    g = np.stack([rho * vy, rho * vx * vy, rho * vy**2 + p, (energy + p) * vy])
    return u, f, g


def test_solves_the_time_dependent_euler_equations():
    """Mass, momentum and energy: d/dt U + d/dx F + d/dy G = 0 at t = 0.4 by central
    differences in x, y and t; the residual falls at second order."""
    t = 0.4
    errors = []
    for h in (0.1, 0.05):
        x, y = grid(h)
        u_next, _, _ = conserved_and_fluxes(x, y, t + h)
        u_prev, _, _ = conserved_and_fluxes(x, y, t - h)
        _, f, g = conserved_and_fluxes(x, y, t)
        residual = [interior(u_next[k] - u_prev[k]) / (2.0 * h)
                    + central_differences(f[k], h)[0] + central_differences(g[k], h)[1]
                    for k in range(4)]
        errors.append(max(np.abs(r).max() for r in residual))
    assert errors[1] < 5e-3
    assert 3.5 < errors[0] / errors[1] < 4.5
