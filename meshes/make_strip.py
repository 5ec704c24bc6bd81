"""Writes a Gmsh 4.1 ASCII triangle mesh of the strip [0, 1] x [0, 0.1] (the Sod shock tube on
an unstructured mesh): triangles of size h (Frontal-Delaunay), physical surface "fluid",
physical curves "ends" (x = 0 and x = 1) and "walls" (y = 0 and y = 0.1).

    python meshes/make_strip.py --h 0.02 meshes/strip_h020.msh
    python meshes/make_strip.py --h 0.01 meshes/strip_h010.msh

Deterministic: one thread, a fixed random seed and no user configuration, so a rerun with the
same Gmsh version writes the same file.
"""

import argparse
from pathlib import Path

import gmsh

LENGTH, WIDTH = 1.0, 0.1


def build(h):
    """The strip's geometry, its physical groups and its 2D mesh in the current Gmsh model."""
    geo = gmsh.model.geo
    corners = [geo.addPoint(x, y, 0.0, h) for x, y in
               ((0.0, 0.0), (LENGTH, 0.0), (LENGTH, WIDTH), (0.0, WIDTH))]
    bottom, right, top, left = (geo.addLine(corners[i], corners[(i + 1) % 4]) for i in range(4))
    loop = geo.addCurveLoop([bottom, right, top, left])
    surface = geo.addPlaneSurface([loop])
    geo.synchronize()
    # Physical groups: only their elements are written.
    gmsh.model.addPhysicalGroup(2, [surface], name="fluid")
    gmsh.model.addPhysicalGroup(1, [left, right], name="ends")
    gmsh.model.addPhysicalGroup(1, [bottom, top], name="walls")
    gmsh.model.mesh.generate(2)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Triangle mesh of the strip [0,1] x [0,0.1].")
    parser.add_argument("--h", type=float, default=0.02, help="triangle size (default 0.02)")
    parser.add_argument("out", type=Path, help="the .msh file to write")
    args = parser.parse_args(argv)
    gmsh.initialize(readConfigFiles=False)
    try:
        # Quiet, one thread, a fixed seed, Frontal-Delaunay, MSH 4.1 ASCII.
        for name, value in (("General.Terminal", 0), ("General.NumThreads", 1),
                            ("Mesh.RandomSeed", 1), ("Mesh.Algorithm", 6),
                            ("Mesh.MshFileVersion", 4.1), ("Mesh.Binary", 0)):
            gmsh.option.setNumber(name, value)
        gmsh.model.add("strip")
        build(args.h)
        gmsh.write(str(args.out))
        _, elements, _ = gmsh.model.mesh.getElements(2)
        print(f"wrote {args.out}: {len(elements[0])} triangles")
    finally:
        gmsh.finalize()


if __name__ == "__main__":
    main()
