"""Writes a Gmsh 4.1 ASCII structured quadrilateral mesh of the channel [0, 1] x [0, 0.25]:
nx x ny equal cells (a transfinite surface, recombined), physical surface "fluid", physical
curves "x_lo" (x = 0), "x_hi" (x = 1), "y_lo" (y = 0) and "y_hi" (y = 0.25).

    python meshes/make_quad_channel.py --nx 40 --ny 10 meshes/quad_channel_40x10.msh

Deterministic: one thread and no user configuration; a structured mesh has no random part.
"""

import argparse
from pathlib import Path

import gmsh

LENGTH, WIDTH = 1.0, 0.25


def build(nx, ny):
    """The channel's geometry, its physical groups and its quadrilateral mesh in the current
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
    # Physical groups: only their elements are written.
    gmsh.model.addPhysicalGroup(2, [surface], name="fluid")
    for name, curve in (("x_lo", x_lo), ("x_hi", x_hi), ("y_lo", y_lo), ("y_hi", y_hi)):
        gmsh.model.addPhysicalGroup(1, [curve], name=name)
    gmsh.model.mesh.generate(2)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Quad mesh of the channel [0,1] x [0,0.25].")
    parser.add_argument("--nx", type=int, default=40, help="cells along x (default 40)")
    parser.add_argument("--ny", type=int, default=10, help="cells along y (default 10)")
    parser.add_argument("out", type=Path, help="the .msh file to write")
    args = parser.parse_args(argv)
    gmsh.initialize(readConfigFiles=False)
    try:
        # Quiet, one thread, MSH 4.1 ASCII.
        for name, value in (("General.Terminal", 0), ("General.NumThreads", 1),
                            ("Mesh.MshFileVersion", 4.1), ("Mesh.Binary", 0)):
            gmsh.option.setNumber(name, value)
        gmsh.model.add("quad_channel")
        build(args.nx, args.ny)
        gmsh.write(str(args.out))
        _, elements, _ = gmsh.model.mesh.getElements(2)
        print(f"wrote {args.out}: {len(elements[0])} quadrilaterals")
    finally:
        gmsh.finalize()


if __name__ == "__main__":
    main()
