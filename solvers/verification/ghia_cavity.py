"""The lid-driven cavity at Re = 100 and 1000 from Ghia, Ghia & Shin (1982), "High-Re solutions
for incompressible flow using the Navier-Stokes equations and a multigrid method", J. Comput.
Phys. 48, 387-411: Tables I and II, the velocity profiles through the cavity's centre, typed in
from the paper (their 129 x 129 grid)."""

import numpy as np

# Table I: u along the vertical line x = 0.5, at these y.
GHIA_Y = [1.0000, 0.9766, 0.9688, 0.9609, 0.9531, 0.8516, 0.7344, 0.6172, 0.5000, 0.4531,
          0.2813, 0.1719, 0.1016, 0.0703, 0.0625, 0.0547, 0.0000]
GHIA_U = [1.00000, 0.84123, 0.78871, 0.73722, 0.68717, 0.23151, 0.00332, -0.13641, -0.20581,
          -0.21090, -0.15662, -0.10150, -0.06434, -0.04775, -0.04192, -0.03717, 0.00000]
GHIA_U_RE1000 = [1.00000, 0.65928, 0.57492, 0.51117, 0.46604, 0.33304, 0.18719, 0.05702,
                 -0.06080, -0.10648, -0.27805, -0.38289, -0.29730, -0.22220, -0.20196,
                 -0.18109, 0.00000]
# Table II: v along the horizontal line y = 0.5, at these x.
GHIA_X = [1.0000, 0.9688, 0.9609, 0.9531, 0.9453, 0.9063, 0.8594, 0.8047, 0.5000, 0.2344,
          0.2266, 0.1563, 0.0938, 0.0781, 0.0703, 0.0625, 0.0000]
GHIA_V = [0.00000, -0.05906, -0.07391, -0.08864, -0.10313, -0.16914, -0.22445, -0.24533,
          0.05454, 0.17527, 0.17507, 0.16077, 0.12317, 0.10890, 0.10091, 0.09233, 0.00000]
GHIA_V_RE1000 = [0.00000, -0.21388, -0.27669, -0.33714, -0.39188, -0.51550, -0.42665,
                 -0.31966, 0.02526, 0.32235, 0.33075, 0.37095, 0.32627, 0.30353, 0.29012,
                 0.27485, 0.00000]
TABLES = {100: (GHIA_U, GHIA_V), 1000: (GHIA_U_RE1000, GHIA_V_RE1000)}


def at_table_points(u_profile, v_profile):
    """A run's centreline profiles (y, u) and (x, v) interpolated linearly, with the wall values
    (lid speed 1) at both ends, at the table's points: (u at GHIA_Y, v at GHIA_X)."""
    (y, u), (x, v) = u_profile, v_profile
    return (np.interp(GHIA_Y, np.r_[0.0, y, 1.0], np.r_[0.0, u, 1.0]),
            np.interp(GHIA_X, np.r_[0.0, x, 1.0], np.r_[0.0, v, 0.0]))


def centreline_errors(re, u_profile, v_profile):
    """Max |u - Ghia| and |v - Ghia| at the table's points for Re = 100 or 1000."""
    u_at, v_at = at_table_points(u_profile, v_profile)
    table_u, table_v = TABLES[re]
    return float(np.abs(u_at - table_u).max()), float(np.abs(v_at - table_v).max())
