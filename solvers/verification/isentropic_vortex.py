"""Exact solution of the 2D compressible Euler equations of an ideal gas: an isentropic vortex
carried by a uniform stream (Shu, "Essentially non-oscillatory and weighted essentially
non-oscillatory schemes for hyperbolic conservation laws", ICASE Report 97-65, 1997 / Lecture
Notes in Mathematics 1697, 1998; Yee, Sandham and Djomehri, J. Comput. Phys. 150, 1999).

Nondimensionalisation: the free stream has density 1, pressure 1 and so temperature
T = p / rho = 1 (the gas constant is 1) and sound speed sqrt(gamma); its velocity (u_inf,
v_inf) is given (Mach number |v_inf| / sqrt(gamma); (1, 0) gives 0.845). About the centre
carried with the stream, x' = x - x0 - u_inf t, y' = y - y0 - v_inf t, r^2 = x'^2 + y'^2, a
vortex of strength b perturbs the velocity and the temperature by

    (du, dv) = (b / (2 pi)) exp((1 - r^2) / 2) (-y', x'),
    dT = -(gamma - 1) b^2 / (8 gamma pi^2) exp(1 - r^2),

with the entropy p / rho^gamma = 1 everywhere: rho = T^(1 / (gamma - 1)), p = rho^gamma. In the
frame moving with the stream this is a steady solution: the pressure gradient balances the
centripetal acceleration, dp/dr = rho v_theta^2 / r. Independent of the project's kernels:
NumPy only.
"""

import numpy as np


def isentropic_vortex(x, y, t, strength=5.0, centre=(0.0, 0.0), velocity=(1.0, 0.0),
                      gamma=1.4):
    """Density, x and y velocity and pressure (arrays of the shape of x and y) at the points
    (x, y) and time t of the vortex of strength b = `strength` that was at `centre` at t = 0,
    carried by the free stream of velocity `velocity` (density and pressure 1)."""
    x_rel = np.asarray(x, dtype=float) - centre[0] - velocity[0] * t
    y_rel = np.asarray(y, dtype=float) - centre[1] - velocity[1] * t
    r2 = x_rel**2 + y_rel**2
    # The swirl and the temperature drop, both Gaussian in r about the carried centre.
    swirl = strength / (2.0 * np.pi) * np.exp(0.5 * (1.0 - r2))
    temperature = 1.0 - ((gamma - 1.0) * strength**2 / (8.0 * gamma * np.pi**2)
                         * np.exp(1.0 - r2))
    rho = temperature ** (1.0 / (gamma - 1.0))
    return rho, velocity[0] - swirl * y_rel, velocity[1] + swirl * x_rel, rho**gamma
