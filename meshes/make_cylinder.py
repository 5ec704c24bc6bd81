"""Writes a Gmsh 4.1 ASCII triangle mesh of the flow about a circular cylinder: the annulus
between the cylinder (radius 0.5 about the origin) and a circular far field of radius R.
Triangles (Frontal-Delaunay) of size h at the cylinder growing linearly with the radius to
R / 10 at the far field (a MathEval size field); physical surface "fluid", physical curves
"cylinder" and "farfield".

    python meshes/make_cylinder.py --h 0.05 meshes/cylinder_1.msh
    python meshes/make_cylinder.py --h 0.025 meshes/cylinder_2.msh
    python meshes/make_cylinder.py --h 0.0125 meshes/cylinder_3.msh

Deterministic: one thread, a fixed random seed and no user configuration, so a rerun with the
same Gmsh version writes the same file.
"""

import argparse
from pathlib import Path

import gmsh

CYLINDER_RADIUS = 0.5


def circle(radius, size):
    """A circle about the origin in the geo kernel: four quarter arcs (each below pi)."""
    geo = gmsh.model.geo
    centre = geo.addPoint(0.0, 0.0, 0.0, size)
    ends = [geo.addPoint(radius * x, radius * y, 0.0, size)
            for x, y in ((1, 0), (0, 1), (-1, 0), (0, -1))]
    return [geo.addCircleArc(ends[i], centre, ends[(i + 1) % 4]) for i in range(4)]


def build(h, far_radius):
    """The annulus, its physical groups and its 2D mesh in the current Gmsh model."""
    geo = gmsh.model.geo
    far_size = far_radius / 10.0
    cylinder = circle(CYLINDER_RADIUS, h)
    farfield = circle(far_radius, far_size)
    surface = geo.addPlaneSurface([geo.addCurveLoop(farfield), geo.addCurveLoop(cylinder)])
    geo.synchronize()
    # Physical groups: only their elements are written.
    gmsh.model.addPhysicalGroup(2, [surface], name="fluid")
    gmsh.model.addPhysicalGroup(1, cylinder, name="cylinder")
    gmsh.model.addPhysicalGroup(1, farfield, name="farfield")
    # The size: linear in the radius, h at the cylinder and far_size at the far field; the
    # field alone sets it (not the points' sizes, not extended from the boundary).
    field = gmsh.model.mesh.field
    size = field.add("MathEval")
    slope = (far_size - h) / (far_radius - CYLINDER_RADIUS)
    field.setString(size, "F", f"{h!r} + {slope!r} * (Sqrt(x * x + y * y) - {CYLINDER_RADIUS})")
    field.setAsBackgroundMesh(size)
    for name in ("Mesh.MeshSizeFromPoints", "Mesh.MeshSizeExtendFromBoundary"):
        gmsh.option.setNumber(name, 0)
    gmsh.model.mesh.generate(2)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Triangle mesh about a circular cylinder.")
    parser.add_argument("--h", type=float, default=0.05,
                        help="triangle size at the cylinder (default 0.05)")
    parser.add_argument("--far-radius", type=float, default=20.0,
                        help="radius R of the far field (default 20)")
    parser.add_argument("out", type=Path, help="the .msh file to write")
    args = parser.parse_args(argv)
    gmsh.initialize(readConfigFiles=False)
    try:
        # Quiet, one thread, a fixed seed, Frontal-Delaunay, MSH 4.1 ASCII.
        for name, value in (("General.Terminal", 0), ("General.NumThreads", 1),
                            ("Mesh.RandomSeed", 1), ("Mesh.Algorithm", 6),
                            ("Mesh.MshFileVersion", 4.1), ("Mesh.Binary", 0)):
            gmsh.option.setNumber(name, value)
        gmsh.model.add("cylinder")
        build(args.h, args.far_radius)
        gmsh.write(str(args.out))
        _, elements, _ = gmsh.model.mesh.getElements(2)
        print(f"wrote {args.out}: {len(elements[0])} triangles")
    finally:
        gmsh.finalize()


if __name__ == "__main__":
    main()
