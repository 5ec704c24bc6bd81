"""Writes a Gmsh 4.1 ASCII triangle mesh of the strip [0, 1] x [0, 0.1] (the Sod shock tube on
an unstructured mesh): triangles of size h (Frontal-Delaunay), physical surface "fluid",
physical curves "ends" (x = 0 and x = 1) and "walls" (y = 0 and y = 0.1).

    python meshes/make_strip.py --h 0.02 meshes/strip_h020.msh
    python meshes/make_strip.py --h 0.01 meshes/strip_h010.msh

Deterministic: the session of gmsh_session.py (one thread, a fixed seed, no user configuration).
"""

import gmsh
from gmsh_session import arguments, make, name_groups

LENGTH, WIDTH = 1.0, 0.1


def build(h):
    """The strip's geometry and its physical groups in the current Gmsh model."""
    geo = gmsh.model.geo
    corners = [geo.addPoint(x, y, 0.0, h) for x, y in
               ((0.0, 0.0), (LENGTH, 0.0), (LENGTH, WIDTH), (0.0, WIDTH))]
    bottom, right, top, left = (geo.addLine(corners[i], corners[(i + 1) % 4]) for i in range(4))
    loop = geo.addCurveLoop([bottom, right, top, left])
    surface = geo.addPlaneSurface([loop])
    geo.synchronize()
    name_groups(2, [surface], {"ends": [left, right], "walls": [bottom, top]})


def main(argv=None):
    args = arguments("Triangle mesh of the strip [0,1] x [0,0.1].", h=0.02).parse_args(argv)
    make("strip", 2, args.out, build, args.h)


if __name__ == "__main__":
    main()
