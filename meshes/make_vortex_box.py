"""Writes a Gmsh 4.1 ASCII triangle mesh of the square [-5, 5]^2 for the isentropic vortex
(solvers/verification/isentropic_vortex.py): unstructured triangles of size h
(Frontal-Delaunay), physical surface "fluid", physical curve "farfield" (all four sides).

    python meshes/make_vortex_box.py --h 1.0 meshes/vortex_h100.msh
    python meshes/make_vortex_box.py --h 0.5 meshes/vortex_h050.msh
    python meshes/make_vortex_box.py --h 0.25 meshes/vortex_h025.msh

Deterministic: the session of gmsh_session.py (one thread, a fixed seed, no user configuration).
"""

import gmsh
from gmsh_session import arguments, make, name_groups

HALF_WIDTH = 5.0


def build(h):
    """The square's geometry and its physical groups in the current Gmsh model."""
    geo = gmsh.model.geo
    corners = [geo.addPoint(x, y, 0.0, h) for x, y in
               ((-HALF_WIDTH, -HALF_WIDTH), (HALF_WIDTH, -HALF_WIDTH),
                (HALF_WIDTH, HALF_WIDTH), (-HALF_WIDTH, HALF_WIDTH))]
    sides = [geo.addLine(corners[i], corners[(i + 1) % 4]) for i in range(4)]
    surface = geo.addPlaneSurface([geo.addCurveLoop(sides)])
    geo.synchronize()
    name_groups(2, [surface], {"farfield": sides})


def main(argv=None):
    args = arguments("Triangle mesh of the square [-5,5]^2.", h=0.5).parse_args(argv)
    make("vortex_box", 2, args.out, build, args.h)


if __name__ == "__main__":
    main()
