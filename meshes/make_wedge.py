"""Writes a Gmsh 4.1 ASCII triangle mesh of the supersonic compression ramp: the lower wall
y = 0 for -0.5 <= x < 0, then a 15 degree ramp y = x tan(15 deg) up to the outlet x = 1.5, the
top y = 1.5. Triangles of size h (Frontal-Delaunay), physical surface "fluid", physical curves
"inflow" (x = -0.5), "outflow" (x = 1.5), "top" (y = 1.5) and "wall" (the lower wall and the
ramp).

The top is at 1.5 rather than 1.0: the Mach 2.5 oblique shock from the ramp corner (wave angle
36.94 deg, solvers/verification/oblique_shock.py) reaches x = 1.5 at y = 1.5 tan(36.94 deg)
= 1.13, so with the top at 1.0 it would leave through the top (at x = 1.33); at 1.5 it leaves
through the outlet with 0.37 to spare.

    python meshes/make_wedge.py --h 0.04 meshes/wedge_h040.msh
    python meshes/make_wedge.py --h 0.02 meshes/wedge_h020.msh

Deterministic: the session of gmsh_session.py (one thread, a fixed seed, no user configuration).
"""

import math

import gmsh
from gmsh_session import arguments, make, name_groups

X_IN, X_OUT, TOP = -0.5, 1.5, 1.5
RAMP_DEGREES = 15.0


def build(h):
    """The ramp's geometry and its physical groups in the current Gmsh model."""
    geo = gmsh.model.geo
    ramp_end = X_OUT * math.tan(math.radians(RAMP_DEGREES))
    # Counterclockwise from the inlet's foot: inlet foot, ramp corner, ramp end, outlet top,
    # inlet top.
    corners = [geo.addPoint(x, y, 0.0, h) for x, y in
               ((X_IN, 0.0), (0.0, 0.0), (X_OUT, ramp_end), (X_OUT, TOP), (X_IN, TOP))]
    floor, ramp, outlet, top, inlet = (geo.addLine(corners[i], corners[(i + 1) % 5])
                                       for i in range(5))
    surface = geo.addPlaneSurface([geo.addCurveLoop([floor, ramp, outlet, top, inlet])])
    geo.synchronize()
    name_groups(2, [surface], {"inflow": [inlet], "outflow": [outlet], "top": [top],
                               "wall": [floor, ramp]})


def main(argv=None):
    args = arguments("Triangle mesh of a 15 degree ramp.", h=0.04).parse_args(argv)
    make("wedge", 2, args.out, build, args.h)


if __name__ == "__main__":
    main()
