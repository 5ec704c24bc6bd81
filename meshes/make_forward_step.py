"""Writes a Gmsh 4.1 ASCII triangle mesh of the Woodward-Colella Mach 3 forward-facing step: the
channel [0, 3] x [0, 1] with a step of height 0.2 from x = 0.6 to the outlet. Triangles of size
h (Frontal-Delaunay), optionally of size --corner-h at the step's corner (0.6, 0.2) growing
linearly to h over the distance 0.3; physical surface "fluid", physical curves "inflow"
(x = 0), "outflow" (x = 3) and "wall" (the floor, the step and the top y = 1).

    python meshes/make_forward_step.py --h 0.025 meshes/step_h025.msh

Deterministic: the session of gmsh_session.py (one thread, a fixed seed, no user configuration).
"""

import gmsh
from gmsh_session import arguments, make, name_groups

LENGTH, HEIGHT = 3.0, 1.0
STEP_X, STEP_HEIGHT = 0.6, 0.2
CORNER_REACH = 0.3


def build(h, corner_h):
    """The channel's geometry, its physical groups and its size field in the current Gmsh
    model; corner_h (or None) the size at the step's corner."""
    geo = gmsh.model.geo
    # Counterclockwise from the origin: floor, step face, step top, outlet, top, inlet.
    corners = [geo.addPoint(x, y, 0.0, h) for x, y in
               ((0.0, 0.0), (STEP_X, 0.0), (STEP_X, STEP_HEIGHT), (LENGTH, STEP_HEIGHT),
                (LENGTH, HEIGHT), (0.0, HEIGHT))]
    floor, face, step_top, outlet, top, inlet = (geo.addLine(corners[i], corners[(i + 1) % 6])
                                                 for i in range(6))
    surface = geo.addPlaneSurface([geo.addCurveLoop([floor, face, step_top, outlet, top,
                                                     inlet])])
    geo.synchronize()
    name_groups(2, [surface], {"inflow": [inlet], "outflow": [outlet],
                               "wall": [floor, face, step_top, top]})
    # The corner refinement: size corner_h at the corner, h from CORNER_REACH away.
    if corner_h is not None:
        field = gmsh.model.mesh.field
        distance = field.add("Distance")
        field.setNumbers(distance, "PointsList", [corners[2]])
        threshold = field.add("Threshold")
        field.setNumber(threshold, "InField", distance)
        for name, value in (("SizeMin", corner_h), ("SizeMax", h), ("DistMin", 0.0),
                            ("DistMax", CORNER_REACH)):
            field.setNumber(threshold, name, value)
        field.setAsBackgroundMesh(threshold)


def main(argv=None):
    parser = arguments("Triangle mesh of the Mach 3 step channel.", h=0.025)
    parser.add_argument("--corner-h", type=float, default=None,
                        help="triangle size at the step's corner (default: h, no refinement)")
    args = parser.parse_args(argv)
    make("forward_step", 2, args.out, build, args.h, args.corner_h)


if __name__ == "__main__":
    main()
