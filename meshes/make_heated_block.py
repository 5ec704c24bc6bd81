"""Writes meshes/heated_block.msh: a Gmsh 4.1 ASCII tetrahedral mesh of the box
[0, 2] x [0, 1] x [0, 1] with physical groups, for cases/poisson_block.toml.

Gmsh is not installed where this was made, so the mesh is generated here (solvers.fe.box, six
tetrahedra per cube, interior nodes moved by a fixed random amount so the mesh is not
structured) and written by meshio in Gmsh's format with the same physical groups Gmsh would
write: surfaces "hot" (x = 0), "cold" (x = 2), "sides" (the other four faces), volumes
"copper" (x < 1) and "steel" (x > 1).

    python meshes/make_heated_block.py
"""

from pathlib import Path

import meshio
import numpy as np

from solvers.mesh.generators import box

OUT = Path(__file__).with_name("heated_block.msh")
CELLS = (16, 8, 8)


def main():
    mesh = box(*CELLS, x=(0.0, 2.0))
    surface = np.unique(np.concatenate([f.ravel() for f in mesh.boundaries.values()]))
    rng = np.random.default_rng(7)
    h = 1.0 / CELLS[1]
    points = mesh.points.copy()
    interior = np.setdiff1d(np.arange(len(points)), surface)
    points[interior] += rng.uniform(-0.2 * h, 0.2 * h, (interior.size, 3))
    # Keep the material interface x = 1 flat.
    on_interface = np.isclose(mesh.points[:, 0], 1.0)
    points[on_interface, 0] = 1.0

    centres = points[mesh.cells].mean(axis=1)
    volumes = {"copper": centres[:, 0] < 1.0, "steel": centres[:, 0] > 1.0}
    surfaces = {"hot": mesh.boundaries["left"], "cold": mesh.boundaries["right"],
                "sides": np.concatenate([mesh.boundaries[s] for s in
                                         ("front", "back", "bottom", "top")])}
    cells, physical, geometrical, field_data = [], [], [], {}
    for tag, (name, facets) in enumerate(surfaces.items(), start=1):
        cells.append(("triangle", facets))
        physical.append(np.full(len(facets), tag))
        geometrical.append(np.full(len(facets), tag))
        field_data[name] = np.array([tag, 2])
    for tag, (name, selected) in enumerate(volumes.items(), start=len(surfaces) + 1):
        cells.append(("tetra", mesh.cells[selected]))
        physical.append(np.full(int(selected.sum()), tag))
        geometrical.append(np.full(int(selected.sum()), tag))
        field_data[name] = np.array([tag, 3])
    # Gmsh 4 files place every node on one geometric entity: (dimension, tag) per node, the
    # volume of a cell that uses it, or a surface the node lies on.
    dim_tags = np.zeros((len(points), 2), np.int64)
    for name, selected in volumes.items():
        dim_tags[mesh.cells[selected].ravel()] = (3, field_data[name][0])
    for name, facets in surfaces.items():
        dim_tags[facets.ravel()] = (2, field_data[name][0])
    out = meshio.Mesh(points, cells, point_data={"gmsh:dim_tags": dim_tags},
                      cell_data={"gmsh:physical": physical, "gmsh:geometrical": geometrical},
                      field_data=field_data)
    meshio.write(OUT, out, file_format="gmsh", binary=False)
    print(f"wrote {OUT}: {len(points)} nodes, {len(mesh.cells)} tetrahedra")


if __name__ == "__main__":
    main()
