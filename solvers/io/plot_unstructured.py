"""Plots of nodal fields on triangle and tetrahedron meshes (matplotlib, Agg): tripcolor
(Gouraud) in 2D; in 3D the field on the mesh's boundary surface, seen from two sides. The panel
layouts (planar_figure, surface_figure) also draw plot_cells' cell-centred fields."""

import numpy as np

from ..mesh.topology import boundary_facets
from .plot import _matplotlib

VIEWS = ((25, -60), (25, 120))  # (elevation, azimuth) of the two 3D views


def mesh_figure(mesh, fields, names, title):
    """A Figure of the nodal fields[name] (vectors by their magnitude) for each name."""
    scalars = scalar_values(fields, names)
    if mesh.dim == 2:
        x, y = mesh.points.T
        return planar_figure(scalars, title, lambda ax, values: ax.tripcolor(
            x, y, mesh.cells, values, shading="gouraud", cmap="viridis"))
    surface = boundary_facets(mesh.cells)
    return surface_figure(mesh.points, mesh.points[surface], scalars, title,
                          lambda values: values[surface].mean(axis=1))


def scalar_values(fields, names):
    """[(name, float64 values)] for each name; a vector field (a trailing axis of components)
    by its magnitude."""
    scalars = [(name, np.asarray(fields[name], np.float64)) for name in names]
    return [(n, v if v.ndim == 1 else np.linalg.norm(v, axis=1)) for n, v in scalars]


def planar_figure(scalars, title, draw):
    """A row of panels of a 2D mesh, one per (name, values) of scalars: draw(ax, values) draws
    the field and returns what its colorbar shows."""
    figure = _matplotlib()
    fig, axes, bars = figure.panel_grid(1, len(scalars), 3.75, 3.9, title)
    for ax, bar, (name, values) in zip(axes, bars, scalars):
        figure.finish_panel(fig, ax, bar, draw(ax, values), name, ("x", "y"))
    return fig


def surface_figure(points, polygons, scalars, title, face_values):
    """A row per (name, values) of scalars: the boundary polygons of a 3D mesh (vertex
    coordinates, (f, k, 3) or a list of (k, 3)) coloured by face_values(values), from each of
    VIEWS, with one colorbar."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    fig = _matplotlib().PlotFigure(figsize=(4.5 * len(VIEWS) + 1, 4.2 * len(scalars)),
                                   layout="constrained")
    lo, hi = points.min(axis=0), points.max(axis=0)
    for row, (name, values) in enumerate(scalars):
        colours = face_values(values)
        for col, (elev, azim) in enumerate(VIEWS):
            ax = fig.add_subplot(len(scalars), len(VIEWS), row * len(VIEWS) + col + 1,
                                 projection="3d")
            shade = Poly3DCollection(polygons, cmap="viridis", linewidth=0)
            shade.set_array(colours)
            shade.set_clim(values.min(), values.max())
            ax.add_collection3d(shade)
            ax.set_xlim(lo[0], hi[0])
            ax.set_ylim(lo[1], hi[1])
            ax.set_zlim(lo[2], hi[2])
            ax.set_box_aspect(hi - lo)
            ax.view_init(elev, azim)
            ax.set_title(f"{name} (boundary)")
            ax.set_xlabel("x")
            ax.set_ylabel("y")
            ax.set_zlabel("z")
        fig.colorbar(shade, ax=ax, shrink=0.7)
    fig.suptitle(title)
    return fig
