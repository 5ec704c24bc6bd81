"""Writes a Gmsh 4.1 ASCII tetrahedral mesh of the unit cube [0, 1]^3: tetrahedra of size h
(Delaunay), physical volume "fluid", physical surface "walls" (all six faces).

    python meshes/make_tet_box.py --h 0.2 meshes/tet_box_h020.msh

Deterministic: the session of gmsh_session.py (one thread, a fixed seed, no user configuration).
"""

import gmsh
from gmsh_session import arguments, make, name_groups


def build(h):
    """The cube, its sizes and its physical groups in the current Gmsh model."""
    volume = gmsh.model.occ.addBox(0.0, 0.0, 0.0, 1.0, 1.0, 1.0)
    gmsh.model.occ.synchronize()
    gmsh.model.mesh.setSize(gmsh.model.getEntities(0), h)
    # The walls: the cube's six faces.
    faces = [tag for _, tag in gmsh.model.getBoundary([(3, volume)], oriented=False)]
    name_groups(3, [volume], {"walls": faces})


def main(argv=None):
    parser = arguments("Tetrahedral mesh of the unit cube.", h=0.2, h_help="tetrahedron size")
    args = parser.parse_args(argv)
    make("tet_box", 3, args.out, build, args.h)


if __name__ == "__main__":
    main()
