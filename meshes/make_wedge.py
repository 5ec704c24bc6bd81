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

Deterministic: one thread, a fixed random seed and no user configuration, so a rerun with the
same Gmsh version writes the same file.
"""

import argparse
import math
from pathlib import Path

import gmsh

X_IN, X_OUT, TOP = -0.5, 1.5, 1.5
RAMP_DEGREES = 15.0


def build(h):
    """The ramp's geometry, its physical groups and its 2D mesh in the current Gmsh model."""
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
    # Physical groups: only their elements are written.
    gmsh.model.addPhysicalGroup(2, [surface], name="fluid")
    gmsh.model.addPhysicalGroup(1, [inlet], name="inflow")
    gmsh.model.addPhysicalGroup(1, [outlet], name="outflow")
    gmsh.model.addPhysicalGroup(1, [top], name="top")
    gmsh.model.addPhysicalGroup(1, [floor, ramp], name="wall")
    gmsh.model.mesh.generate(2)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Triangle mesh of a 15 degree ramp.")
    parser.add_argument("--h", type=float, default=0.04, help="triangle size (default 0.04)")
    parser.add_argument("out", type=Path, help="the .msh file to write")
    args = parser.parse_args(argv)
    gmsh.initialize(readConfigFiles=False)
    try:
        # Quiet, one thread, a fixed seed, Frontal-Delaunay, MSH 4.1 ASCII.
        for name, value in (("General.Terminal", 0), ("General.NumThreads", 1),
                            ("Mesh.RandomSeed", 1), ("Mesh.Algorithm", 6),
                            ("Mesh.MshFileVersion", 4.1), ("Mesh.Binary", 0)):
            gmsh.option.setNumber(name, value)
        gmsh.model.add("wedge")
        build(args.h)
        gmsh.write(str(args.out))
        _, elements, _ = gmsh.model.mesh.getElements(2)
        print(f"wrote {args.out}: {len(elements[0])} triangles")
    finally:
        gmsh.finalize()


if __name__ == "__main__":
    main()
