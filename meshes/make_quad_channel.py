"""Writes a Gmsh 4.1 ASCII structured quadrilateral mesh of the channel [0, 1] x [0, 0.25]:
nx x ny equal cells (a transfinite surface, recombined), physical surface "fluid", physical
curves "x_lo" (x = 0), "x_hi" (x = 1), "y_lo" (y = 0) and "y_hi" (y = 0.25).

    python meshes/make_quad_channel.py --nx 40 --ny 10 meshes/quad_channel_40x10.msh

Deterministic: the session of gmsh_session.py (one thread, a fixed seed, no user configuration).
"""

import gmsh
from gmsh_session import arguments, make, name_groups

LENGTH, WIDTH = 1.0, 0.25


def build(nx, ny):
    """The channel's geometry, its structured meshing and its physical groups in the current
    Gmsh model."""
    geo = gmsh.model.geo
    corners = [geo.addPoint(x, y, 0.0) for x, y in
               ((0.0, 0.0), (LENGTH, 0.0), (LENGTH, WIDTH), (0.0, WIDTH))]
    y_lo, x_hi, y_hi, x_lo = (geo.addLine(corners[i], corners[(i + 1) % 4]) for i in range(4))
    surface = geo.addPlaneSurface([geo.addCurveLoop([y_lo, x_hi, y_hi, x_lo])])
    # Structured: nx (ny) segments along the x (y) sides, a transfinite surface of quads.
    for curve, cells in ((y_lo, nx), (y_hi, nx), (x_lo, ny), (x_hi, ny)):
        geo.mesh.setTransfiniteCurve(curve, cells + 1)
    geo.mesh.setTransfiniteSurface(surface, cornerTags=corners)
    geo.mesh.setRecombine(2, surface)
    geo.synchronize()
    name_groups(2, [surface], {"x_lo": [x_lo], "x_hi": [x_hi], "y_lo": [y_lo], "y_hi": [y_hi]})


def main(argv=None):
    parser = arguments("Quad mesh of the channel [0,1] x [0,0.25].")
    parser.add_argument("--nx", type=int, default=40, help="cells along x (default 40)")
    parser.add_argument("--ny", type=int, default=10, help="cells along y (default 10)")
    args = parser.parse_args(argv)
    make("quad_channel", 2, args.out, build, args.nx, args.ny)


if __name__ == "__main__":
    main()
