"""The lid-driven cavity at Re = 100 from Ghia, Ghia & Shin (1982), "High-Re solutions for
incompressible flow using the Navier-Stokes equations and a multigrid method", J. Comput. Phys.
48, 387-411: Tables I and II, the velocity profiles through the cavity's centre, typed in from
the paper (their 129 x 129 grid)."""

# Table I, Re = 100: u along the vertical line x = 0.5.
GHIA_Y = [1.0000, 0.9766, 0.9688, 0.9609, 0.9531, 0.8516, 0.7344, 0.6172, 0.5000, 0.4531,
          0.2813, 0.1719, 0.1016, 0.0703, 0.0625, 0.0547, 0.0000]
GHIA_U = [1.00000, 0.84123, 0.78871, 0.73722, 0.68717, 0.23151, 0.00332, -0.13641, -0.20581,
          -0.21090, -0.15662, -0.10150, -0.06434, -0.04775, -0.04192, -0.03717, 0.00000]
# Table II, Re = 100: v along the horizontal line y = 0.5.
GHIA_X = [1.0000, 0.9688, 0.9609, 0.9531, 0.9453, 0.9063, 0.8594, 0.8047, 0.5000, 0.2344,
          0.2266, 0.1563, 0.0938, 0.0781, 0.0703, 0.0625, 0.0000]
GHIA_V = [0.00000, -0.05906, -0.07391, -0.08864, -0.10313, -0.16914, -0.22445, -0.24533,
          0.05454, 0.17527, 0.17507, 0.16077, 0.12317, 0.10890, 0.10091, 0.09233, 0.00000]
