"""Plots of nodal fields on triangle and tetrahedron meshes (matplotlib, Agg): tripcolor
(Gouraud) in 2D; in 3D the field on the mesh's boundary surface, seen from two sides."""

import numpy as np

from ..mesh.topology import boundary_facets
from .plot import _matplotlib

VIEWS = ((25, -60), (25, 120))  # (elevation, azimuth) of the two 3D views


def mesh_figure(mesh, fields, names, title):
    """A Figure of the nodal fields[name] (vectors by their magnitude) for each name."""
    Figure = _matplotlib()
    scalars = [(name, np.asarray(fields[name], np.float64)) for name in names]
    scalars = [(n, v if v.ndim == 1 else np.linalg.norm(v, axis=1)) for n, v in scalars]
    if mesh.dim == 2:
        fig = Figure(figsize=(5.5 * len(scalars), 4.8), layout="constrained")
        axes = fig.subplots(1, len(scalars), squeeze=False)[0]
        x, y = mesh.points.T
        for ax, (name, values) in zip(axes, scalars):
            shade = ax.tripcolor(x, y, mesh.cells, values, shading="gouraud", cmap="viridis")
            fig.colorbar(shade, ax=ax, shrink=0.9)
            ax.set_aspect("equal")
            ax.set_title(name)
            ax.set_xlabel("x")
            ax.set_ylabel("y")
    else:
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        surface = boundary_facets(mesh.cells)
        fig = Figure(figsize=(4.5 * len(VIEWS) + 1, 4.2 * len(scalars)), layout="constrained")
        for row, (name, values) in enumerate(scalars):
            face_values = values[surface].mean(axis=1)
            for col, (elev, azim) in enumerate(VIEWS):
                ax = fig.add_subplot(len(scalars), len(VIEWS), row * len(VIEWS) + col + 1,
                                     projection="3d")
                shade = Poly3DCollection(mesh.points[surface], cmap="viridis", linewidth=0)
                shade.set_array(face_values)
                shade.set_clim(values.min(), values.max())
                ax.add_collection3d(shade)
                lo, hi = mesh.points.min(axis=0), mesh.points.max(axis=0)
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
