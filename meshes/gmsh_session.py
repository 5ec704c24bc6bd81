"""What the Gmsh scripts of meshes/ (make_*.py but make_heated_block.py) share, so that each
keeps only its geometry: the command line (`--h` and the output file), a deterministic Gmsh
session, the physical groups and the meshing and writing.

A script imports this module as a sibling (`from gmsh_session import ...`): run as
`python meshes/make_x.py`, Python puts meshes/ first on the path (the wheel ships it beside the
scripts in solvers/_data/meshes).

    def build(h):
        ...  # the geometry, synchronized, then:
        name_groups(2, [surface], {"ends": [left, right], "walls": [bottom, top]})

    def main(argv=None):
        args = arguments("Triangle mesh of the strip.", h=0.02).parse_args(argv)
        make("strip", 2, args.out, build, args.h)

make is session, build and write_mesh in one; a script can use those three on their own.

Deterministic: one thread, a fixed random seed and no user configuration, so a rerun with the
same Gmsh version writes the same file.
"""

import argparse
from contextlib import contextmanager
from pathlib import Path

import gmsh

# Quiet, one thread, a fixed seed, Frontal-Delaunay surfaces, Delaunay volumes, MSH 4.1 ASCII.
OPTIONS = (("General.Terminal", 0), ("General.NumThreads", 1), ("Mesh.RandomSeed", 1),
           ("Mesh.Algorithm", 6), ("Mesh.Algorithm3D", 1), ("Mesh.MshFileVersion", 4.1),
           ("Mesh.Binary", 0))
# Plural names of Gmsh's element types (the first word of getElementProperties' name).
PLURALS = {"Triangle": "triangles", "Quadrilateral": "quadrilaterals",
           "Tetrahedron": "tetrahedra", "Hexahedron": "hexahedra", "Prism": "prisms",
           "Pyramid": "pyramids"}


def arguments(description, h=None, h_help="triangle size"):
    """A parser with the output file and, where h (its default) is given, the size `--h`; a
    script adds its own options to it."""
    parser = argparse.ArgumentParser(description=description)
    # The size, for the scripts that have one.
    if h is not None:
        parser.add_argument("--h", type=float, default=h, help=f"{h_help} (default {h:g})")
    parser.add_argument("out", type=Path, help="the .msh file to write")
    return parser


@contextmanager
def session(model):
    """A Gmsh session with the deterministic OPTIONS and an empty model of that name; Gmsh is
    finalized on the way out, also after an error."""
    gmsh.initialize(readConfigFiles=False)
    try:
        # The options before any geometry, then the model.
        for name, value in OPTIONS:
            gmsh.option.setNumber(name, value)
        gmsh.model.add(model)
        yield
    finally:
        gmsh.finalize()


def name_groups(dim, fluid, boundaries):
    """The physical groups: "fluid", the entities fluid of dimension dim, then each of
    boundaries ({name: entities of dimension dim - 1}) in its order. Only the physical groups'
    elements are written."""
    gmsh.model.addPhysicalGroup(dim, list(fluid), name="fluid")
    for name, tags in boundaries.items():
        gmsh.model.addPhysicalGroup(dim - 1, list(tags), name=name)


def write_mesh(dim, out):
    """Meshes the synchronized model in dim dimensions, writes it to out and says how many
    cells of each type it wrote."""
    gmsh.model.mesh.generate(dim)
    gmsh.write(str(out))
    # The cells by type, as "608 triangles" or "108 hexahedra, 36 pyramids, 629 tetrahedra".
    types, elements, _ = gmsh.model.mesh.getElements(dim)
    counts = []
    for kind, tags in zip(types, elements):
        name = gmsh.model.mesh.getElementProperties(kind)[0].split()[0]
        counts.append(f"{len(tags)} {PLURALS.get(name, name)}")
    print(f"wrote {out}: {', '.join(counts)}")


def make(model, dim, out, build, *params):
    """build(*params) in a session with the model of that name, then write_mesh(dim, out)."""
    with session(model):
        build(*params)
        write_mesh(dim, out)
