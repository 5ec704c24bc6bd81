"""Writes a Gmsh 4.1 ASCII triangle mesh of the flow about a circular cylinder: the annulus
between the cylinder (radius 0.5 about the origin) and a circular far field of radius R.
Triangles (Frontal-Delaunay) of size h at the cylinder growing linearly with the radius to
R / 10 at the far field (a MathEval size field); physical surface "fluid", physical curves
"cylinder" and "farfield".

    python meshes/make_cylinder.py --h 0.05 meshes/cylinder_1.msh
    python meshes/make_cylinder.py --h 0.025 meshes/cylinder_2.msh
    python meshes/make_cylinder.py --h 0.0125 meshes/cylinder_3.msh

Deterministic: the session of gmsh_session.py (one thread, a fixed seed, no user configuration).
"""

import gmsh
from gmsh_session import arguments, make, name_groups

CYLINDER_RADIUS = 0.5


def circle(radius, size):
    """A circle about the origin in the geo kernel: four quarter arcs (each below pi)."""
    geo = gmsh.model.geo
    centre = geo.addPoint(0.0, 0.0, 0.0, size)
    ends = [geo.addPoint(radius * x, radius * y, 0.0, size)
            for x, y in ((1, 0), (0, 1), (-1, 0), (0, -1))]
    return [geo.addCircleArc(ends[i], centre, ends[(i + 1) % 4]) for i in range(4)]


def build(h, far_radius):
    """The annulus, its physical groups and its size field in the current Gmsh model."""
    geo = gmsh.model.geo
    far_size = far_radius / 10.0
    cylinder = circle(CYLINDER_RADIUS, h)
    farfield = circle(far_radius, far_size)
    surface = geo.addPlaneSurface([geo.addCurveLoop(farfield), geo.addCurveLoop(cylinder)])
    geo.synchronize()
    name_groups(2, [surface], {"cylinder": cylinder, "farfield": farfield})
    # The size: linear in the radius, h at the cylinder and far_size at the far field; the
    # field alone sets it (not the points' sizes, not extended from the boundary).
    field = gmsh.model.mesh.field
    size = field.add("MathEval")
    slope = (far_size - h) / (far_radius - CYLINDER_RADIUS)
    field.setString(size, "F", f"{h!r} + {slope!r} * (Sqrt(x * x + y * y) - {CYLINDER_RADIUS})")
    field.setAsBackgroundMesh(size)
    for name in ("Mesh.MeshSizeFromPoints", "Mesh.MeshSizeExtendFromBoundary"):
        gmsh.option.setNumber(name, 0)


def main(argv=None):
    parser = arguments("Triangle mesh about a circular cylinder.", h=0.05,
                       h_help="triangle size at the cylinder")
    parser.add_argument("--far-radius", type=float, default=20.0,
                        help="radius R of the far field (default 20)")
    args = parser.parse_args(argv)
    make("cylinder", 2, args.out, build, args.h, args.far_radius)


if __name__ == "__main__":
    main()
