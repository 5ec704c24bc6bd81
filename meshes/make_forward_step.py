"""Writes a Gmsh 4.1 ASCII triangle mesh of the Woodward-Colella Mach 3 forward-facing step: the
channel [0, 3] x [0, 1] with a step of height 0.2 from x = 0.6 to the outlet. Triangles of size
h (Frontal-Delaunay), optionally of size --corner-h at the step's corner (0.6, 0.2) growing
linearly to h over the distance 0.3; physical surface "fluid", physical curves "inflow"
(x = 0), "outflow" (x = 3) and "wall" (the floor, the step and the top y = 1).

    python meshes/make_forward_step.py --h 0.025 meshes/step_h025.msh

Deterministic: one thread, a fixed random seed and no user configuration, so a rerun with the
same Gmsh version writes the same file.
"""

import argparse
from pathlib import Path

import gmsh

LENGTH, HEIGHT = 3.0, 1.0
STEP_X, STEP_HEIGHT = 0.6, 0.2
CORNER_REACH = 0.3


def build(h, corner_h):
    """The channel's geometry, its physical groups and its 2D mesh in the current Gmsh model;
    corner_h (or None) the size at the step's corner."""
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
    # Physical groups: only their elements are written.
    gmsh.model.addPhysicalGroup(2, [surface], name="fluid")
    gmsh.model.addPhysicalGroup(1, [inlet], name="inflow")
    gmsh.model.addPhysicalGroup(1, [outlet], name="outflow")
    gmsh.model.addPhysicalGroup(1, [floor, face, step_top, top], name="wall")
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
    gmsh.model.mesh.generate(2)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Triangle mesh of the Mach 3 step channel.")
    parser.add_argument("--h", type=float, default=0.025, help="triangle size (default 0.025)")
    parser.add_argument("--corner-h", type=float, default=None,
                        help="triangle size at the step's corner (default: h, no refinement)")
    parser.add_argument("out", type=Path, help="the .msh file to write")
    args = parser.parse_args(argv)
    gmsh.initialize(readConfigFiles=False)
    try:
        # Quiet, one thread, a fixed seed, Frontal-Delaunay, MSH 4.1 ASCII.
        for name, value in (("General.Terminal", 0), ("General.NumThreads", 1),
                            ("Mesh.RandomSeed", 1), ("Mesh.Algorithm", 6),
                            ("Mesh.MshFileVersion", 4.1), ("Mesh.Binary", 0)):
            gmsh.option.setNumber(name, value)
        gmsh.model.add("forward_step")
        build(args.h, args.corner_h)
        gmsh.write(str(args.out))
        _, elements, _ = gmsh.model.mesh.getElements(2)
        print(f"wrote {args.out}: {len(elements[0])} triangles")
    finally:
        gmsh.finalize()


if __name__ == "__main__":
    main()
