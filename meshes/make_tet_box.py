"""Writes a Gmsh 4.1 ASCII tetrahedral mesh of the unit cube [0, 1]^3: tetrahedra of size h
(Delaunay), physical volume "fluid", physical surface "walls" (all six faces).

    python meshes/make_tet_box.py --h 0.2 meshes/tet_box_h020.msh

Deterministic: one thread, a fixed random seed and no user configuration, so a rerun with the
same Gmsh version writes the same file.
"""

import argparse
from pathlib import Path

import gmsh


def build(h):
    """The cube, its physical groups and its 3D mesh in the current Gmsh model."""
    volume = gmsh.model.occ.addBox(0.0, 0.0, 0.0, 1.0, 1.0, 1.0)
    gmsh.model.occ.synchronize()
    gmsh.model.mesh.setSize(gmsh.model.getEntities(0), h)
    # Physical groups: only their elements are written.
    gmsh.model.addPhysicalGroup(3, [volume], name="fluid")
    faces = [tag for _, tag in gmsh.model.getBoundary([(3, volume)], oriented=False)]
    gmsh.model.addPhysicalGroup(2, faces, name="walls")
    gmsh.model.mesh.generate(3)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Tetrahedral mesh of the unit cube.")
    parser.add_argument("--h", type=float, default=0.2, help="tetrahedron size (default 0.2)")
    parser.add_argument("out", type=Path, help="the .msh file to write")
    args = parser.parse_args(argv)
    gmsh.initialize(readConfigFiles=False)
    try:
        # Quiet, one thread, a fixed seed, Frontal-Delaunay surfaces, Delaunay volume,
        # MSH 4.1 ASCII.
        for name, value in (("General.Terminal", 0), ("General.NumThreads", 1),
                            ("Mesh.RandomSeed", 1), ("Mesh.Algorithm", 6),
                            ("Mesh.Algorithm3D", 1), ("Mesh.MshFileVersion", 4.1),
                            ("Mesh.Binary", 0)):
            gmsh.option.setNumber(name, value)
        gmsh.model.add("tet_box")
        build(args.h)
        gmsh.write(str(args.out))
        _, elements, _ = gmsh.model.mesh.getElements(3)
        print(f"wrote {args.out}: {len(elements[0])} tetrahedra")
    finally:
        gmsh.finalize()


if __name__ == "__main__":
    main()
