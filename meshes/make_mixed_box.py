"""Writes a Gmsh 4.1 ASCII mixed 3D mesh of the unit cube [0, 1]^3: the lower half z < 0.5 is
n x n x n/2 hexahedra (an extruded transfinite quad mesh), the upper half tetrahedra of size
1/n (Delaunay), joined by the pyramids Gmsh builds on the quadrilaterals of the interface
z = 0.5. Physical volume "fluid" (both halves), physical surface "walls" (all six faces).

    python meshes/make_mixed_box.py --n 6 meshes/mixed_box_n6.msh

Deterministic: the session of gmsh_session.py (one thread, a fixed seed, no user configuration).
"""

import gmsh
from gmsh_session import arguments, make, name_groups


def build(n):
    """The two halves of the cube, their meshing and their physical groups in the current Gmsh
    model."""
    geo = gmsh.model.geo
    # The floor z = 0: an n x n transfinite quad mesh.
    corners = [geo.addPoint(x, y, 0.0, 1.0 / n) for x, y in
               ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))]
    edges = [geo.addLine(corners[i], corners[(i + 1) % 4]) for i in range(4)]
    floor = geo.addPlaneSurface([geo.addCurveLoop(edges)])
    for edge in edges:
        geo.mesh.setTransfiniteCurve(edge, n + 1)
    geo.mesh.setTransfiniteSurface(floor)
    geo.mesh.setRecombine(2, floor)
    # The lower half: the floor extruded to z = 0.5 in n / 2 layers of hexahedra. extrude
    # returns the top surface, the volume, then the four sides.
    interface, lower, *lower_sides = geo.extrude([(2, floor)], 0.0, 0.0, 0.5,
                                                 numElements=[n // 2], recombine=True)
    # The upper half: the interface extruded to z = 1 as geometry only, meshed with tetrahedra.
    lid, upper, *upper_sides = geo.extrude([interface], 0.0, 0.0, 0.5)
    geo.synchronize()
    # Physical groups: the interface's quadrilaterals are in none, so they are not written.
    walls = [floor] + [tag for _, tag in (*lower_sides, *upper_sides, lid)]
    name_groups(3, [lower[1], upper[1]], {"walls": walls})


def main(argv=None):
    parser = arguments("Hexahedra below, tetrahedra above, in a cube.")
    parser.add_argument("--n", type=int, default=6,
                        help="cells along an edge, even (default 6)")
    args = parser.parse_args(argv)
    if args.n < 2 or args.n % 2:
        parser.error("--n must be an even number, at least 2")
    make("mixed_box", 3, args.out, build, args.n)


if __name__ == "__main__":
    main()
