"""Spherically symmetric Euler equations of an ideal gas in 1D, as a reference for 3D runs of
blasts about a point: U_t + F(U)_r = -(2 / r) S(U), U = (rho, rho u, E), F = (rho u,
rho u^2 + p, (E + p) u), S = (rho u, rho u^2, (E + p) u).

A plain scheme, independent of the project's kernels (NumPy only): finite volumes on [0, r_max]
with cell-centred sources, minmod-limited linear reconstruction of primitive variables, the HLL
flux with Davis wave speeds, SSP-RK2 in time, a mirror at r = 0 (velocity reversed) and
zero-gradient ghost cells at r_max.
"""

import numpy as np


def _primitive(u, gamma):
    rho = u[0]
    v = u[1] / rho
    return np.stack([rho, v, (gamma - 1) * (u[2] - 0.5 * rho * v * v)])


def _conserved(w, gamma):
    rho, v, p = w
    return np.stack([rho, rho * v, p / (gamma - 1) + 0.5 * rho * v * v])


def _flux(w, gamma):
    rho, v, p = w
    energy = p / (gamma - 1) + 0.5 * rho * v * v
    return np.stack([rho * v, rho * v * v + p, (energy + p) * v])


def _minmod(a, b):
    return np.where(a * b > 0, np.sign(a) * np.minimum(abs(a), abs(b)), 0.0)


def _rate(w, gamma, dr):
    return np.max(abs(w[1]) + np.sqrt(gamma * w[2] / w[0])) / dr


def _tendency(u, r, dr, gamma):
    """-(F_{i+1/2} - F_{i-1/2}) / dr - (2 / r) S at every cell."""
    w = _primitive(u, gamma)
    # Two ghost cells a side: mirrored at r = 0, copied at r_max.
    mirror = w[:, 1::-1] * np.array([1.0, -1.0, 1.0])[:, None]
    padded = np.concatenate([mirror, w, w[:, -1:], w[:, -1:]], axis=1)
    slope = _minmod(padded[:, 1:-1] - padded[:, :-2], padded[:, 2:] - padded[:, 1:-1])
    centre = padded[:, 1:-1]
    left, right = (centre + 0.5 * slope)[:, :-1], (centre - 0.5 * slope)[:, 1:]
    cl, cr = (np.sqrt(gamma * s[2] / s[0]) for s in (left, right))
    sl = np.minimum(left[1] - cl, right[1] - cr)
    sr = np.maximum(left[1] + cl, right[1] + cr)
    fl, fr = _flux(left, gamma), _flux(right, gamma)
    ul, ur = _conserved(left, gamma), _conserved(right, gamma)
    hll = (sr * fl - sl * fr + sl * sr * (ur - ul)) / (sr - sl)
    face = np.where(sl >= 0, fl, np.where(sr <= 0, fr, hll))
    source = np.stack([u[1], u[1] * w[1], (u[2] + w[2]) * w[1]])
    return -(face[:, 1:] - face[:, :-1]) / dr - 2.0 / r * source


def radial_solution(rho, u, p, r_max, cells, t_end, gamma=1.4, cfl=0.4):
    """(cell centres r, rho, u, p at t_end) from initial functions rho(r), u(r), p(r)."""
    dr = r_max / cells
    r = (np.arange(cells) + 0.5) * dr
    state = _conserved(np.stack([np.broadcast_to(f(r), r.shape).astype(float)
                                 for f in (rho, u, p)]), gamma)
    t = 0.0
    while t < t_end:
        dt = min(cfl / _rate(_primitive(state, gamma), gamma, dr), t_end - t)
        stage = state + dt * _tendency(state, r, dr, gamma)
        state = 0.5 * (state + stage + dt * _tendency(stage, r, dr, gamma))
        t += dt
    return (r, *_primitive(state, gamma))
