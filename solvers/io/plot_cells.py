"""Plots of cell-centred fields on meshes of mixed cell types (a CellMesh; matplotlib, Agg),
each cell flat in its value: in 2D a tripcolor of the cells (a quad as two triangles), in 3D
the boundary faces in their cells' values, seen from two sides (plot_unstructured's layouts)."""

import numpy as np

from ..mesh.cell_mesh import LOCAL_FACES
from ..mesh.topology import unique_rows
from .plot_unstructured import planar_figure, scalar_values, surface_figure

# Triangles covering each 2D cell type, as local vertex indices.
TRIANGLES = {"triangle": ((0, 1, 2),), "quad": ((0, 1, 2), (0, 2, 3))}



def cell_figure(mesh, fields, names, title):
    """A Figure of the cell fields[name] (vectors by their magnitude) for each name."""
    scalars = scalar_values(fields, names)
    if mesh.dim == 2:
        from matplotlib.tri import Triangulation

        ((triangles, owners),) = local_rows(mesh, TRIANGLES).values()
        triangulation = Triangulation(*mesh.points.T, triangles)
        return planar_figure(scalars, title, lambda ax, values: ax.tripcolor(
            triangulation, facecolors=values[owners], cmap="viridis"))
    faces = boundary_faces(mesh)
    polygons = [polygon for rows, _ in faces for polygon in mesh.points[rows]]
    owners = np.concatenate([cells for _, cells in faces])
    return surface_figure(mesh.points, polygons, scalars, title, lambda values: values[owners])


def local_rows(mesh, table):
    """{k: (rows (r, k) vertex indices, owners (r,) cell numbers)}: the vertex tuples
    table[cell type] of every cell, gathered by their length k."""
    rows, owners, first = {}, {}, 0
    for kind, cells in mesh.blocks.items():
        numbers = np.arange(first, first + len(cells))
        first += len(cells)
        for local in table[kind]:
            rows.setdefault(len(local), []).append(cells[:, list(local)])
            owners.setdefault(len(local), []).append(numbers)
    return {k: (np.concatenate(rows[k]), np.concatenate(owners[k])) for k in rows}


def boundary_faces(mesh):
    """[(faces (f, k), owners (f,))]: the triangles and quadrilaterals of a 3D mesh that belong
    to one cell only, and that cell's number."""
    out = []
    for faces, owners in local_rows(mesh, LOCAL_FACES).values():
        _, inverse, counts = unique_rows(faces)
        once = counts[inverse.ravel()] == 1
        out.append((faces[once], owners[once]))
    return out
