"""Writes a Gmsh 4.1 ASCII triangle mesh of the square [-5, 5]^2 for the isentropic vortex
(solvers/verification/isentropic_vortex.py): unstructured triangles of size h
(Frontal-Delaunay), physical surface "fluid", physical curve "farfield" (all four sides).

    python meshes/make_vortex_box.py --h 1.0 meshes/vortex_h100.msh
    python meshes/make_vortex_box.py --h 0.5 meshes/vortex_h050.msh
    python meshes/make_vortex_box.py --h 0.25 meshes/vortex_h025.msh

Deterministic: one thread, a fixed random seed and no user configuration, so a rerun with the
same Gmsh version writes the same file.
"""

import argparse
from pathlib import Path

import gmsh

HALF_WIDTH = 5.0


def build(h):
    """The square's geometry, its physical groups and its 2D mesh in the current Gmsh model."""
    geo = gmsh.model.geo
    corners = [geo.addPoint(x, y, 0.0, h) for x, y in
               ((-HALF_WIDTH, -HALF_WIDTH), (HALF_WIDTH, -HALF_WIDTH),
                (HALF_WIDTH, HALF_WIDTH), (-HALF_WIDTH, HALF_WIDTH))]
    sides = [geo.addLine(corners[i], corners[(i + 1) % 4]) for i in range(4)]
    surface = geo.addPlaneSurface([geo.addCurveLoop(sides)])
    geo.synchronize()
    # Physical groups: only their elements are written.
    gmsh.model.addPhysicalGroup(2, [surface], name="fluid")
    gmsh.model.addPhysicalGroup(1, sides, name="farfield")
    gmsh.model.mesh.generate(2)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Triangle mesh of the square [-5,5]^2.")
    parser.add_argument("--h", type=float, default=0.5, help="triangle size (default 0.5)")
    parser.add_argument("out", type=Path, help="the .msh file to write")
    args = parser.parse_args(argv)
    gmsh.initialize(readConfigFiles=False)
    try:
        # Quiet, one thread, a fixed seed, Frontal-Delaunay, MSH 4.1 ASCII.
        for name, value in (("General.Terminal", 0), ("General.NumThreads", 1),
                            ("Mesh.RandomSeed", 1), ("Mesh.Algorithm", 6),
                            ("Mesh.MshFileVersion", 4.1), ("Mesh.Binary", 0)):
            gmsh.option.setNumber(name, value)
        gmsh.model.add("vortex_box")
        build(args.h)
        gmsh.write(str(args.out))
        _, elements, _ = gmsh.model.mesh.getElements(2)
        print(f"wrote {args.out}: {len(elements[0])} triangles")
    finally:
        gmsh.finalize()


if __name__ == "__main__":
    main()
