"""The Arnold-Beltrami-Childress flow, an exact solution of the incompressible Navier-Stokes
equations in a periodic cube (tests of the 3D MAC solver)."""

import numpy as np


def abc(x, y, z, axis, a=1.0, b=0.8, c=0.6):
    """Component `axis` of the Arnold-Beltrami-Childress flow (curl u = u: u . grad u =
    grad |u|^2 / 2, so u(t) = u(0) exp(-nu t) with p = -|u|^2 / 2 solves Navier-Stokes)."""
    return (a * np.sin(z) + c * np.cos(y), b * np.sin(x) + a * np.cos(z),
            c * np.sin(y) + b * np.cos(x))[axis]
