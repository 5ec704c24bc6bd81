"""Plots of structured-grid fields (matplotlib, Agg; never touches pyplot's state): a Figure
built by `field_figure` (what `solver.plot()` and `run.plot()` return, shown inline in Jupyter),
written to a PNG by `save_png`; `plot_fields` does both for a run's NAME.png."""

import math
import os
import warnings
from pathlib import Path

import numpy as np

MAX_PANEL_CELLS = 512  # per axis: about one a pixel


def _matplotlib():
    """The module of the figures plots build (solvers.io.figure: matplotlib's, drawn by Agg)."""
    try:
        import matplotlib.figure  # noqa: F401  (raises here, not only at figure's first import)

        from . import figure
    except ImportError as error:
        raise ImportError("plotting needs matplotlib: pip install matplotlib") from error
    return figure


def _coarsen(values, x_nodes, y_nodes, limit=MAX_PANEL_CELLS):
    """Average (ny, nx) values over blocks of k x k cells so that at most `limit` blocks remain
    along each axis (pcolormesh takes seconds for millions of cells, more than a PNG shows).
    A last, narrower block takes the remainder; NaN cells are ignored unless a block is all NaN.
    """
    k = -(-max(values.shape) // limit)
    if k == 1:
        return values, x_nodes, y_nodes
    ny, nx = values.shape
    by, bx = -(-ny // k), -(-nx // k)
    padded = np.full((by * k, bx * k), np.nan)
    padded[:ny, :nx] = np.where(np.isfinite(values), values, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN blocks stay NaN
        blocks = np.nanmean(padded.reshape(by, k, bx, k), axis=(1, 3))
    return blocks, np.append(x_nodes[:-1:k], x_nodes[-1]), np.append(y_nodes[:-1:k], y_nodes[-1])


def _draw_streamlines(ax, grid, u, v):
    """Streamlines of the cell-centred velocity (u, v) ([i, j] arrays), on a grid of at most
    MAX_PANEL_CELLS points a side (streamplot interpolates; more points only cost time)."""
    step = max(1, -(-max(grid.nx, grid.ny) // MAX_PANEL_CELLS))
    x, y = grid.x_centres()[::step], grid.y_centres()[::step]
    ax.streamplot(x, y, np.asarray(u)[::step, ::step].T, np.asarray(v)[::step, ::step].T,
                  color="white", linewidth=0.5, density=1.2, arrowsize=0.6)


def plot_fields(png_path, grid, fields, names, title, streamlines=None):
    """Plot fields into one PNG (see field_figure); returns its path."""
    return save_png(field_figure(grid, fields, names, title, streamlines), png_path)


def field_figure(grid, fields, names, title, streamlines=None):
    """A Figure of fields[name] for each name: lines against x in 1D, one pcolormesh with a
    colorbar per field in 2D, its three mid-planes in 3D, a tripcolor or the boundary surface on
    an unstructured mesh. Fields are arrays of grid.shape indexed [i, j(, k)] (nodal values on a
    finite-element mesh, cell values on a CellMesh; a vector field, a trailing axis of
    components, by its magnitude). streamlines: None or cell-centred (u, v) of a 2D grid, drawn
    over every panel."""
    if hasattr(grid, "blocks"):  # a mesh of mixed cell types: cell-centred fields
        from .plot_cells import cell_figure
        return cell_figure(grid, fields, names, title)
    if hasattr(grid, "cells"):  # an unstructured mesh of the finite-element solvers
        from .plot_unstructured import mesh_figure
        return mesh_figure(grid, fields, names, title)
    figure = _matplotlib()
    # A vector field (a trailing axis of components) is drawn as its magnitude.
    fields = {name: np.linalg.norm(fields[name], axis=-1)
              if np.ndim(fields[name]) > grid.ndim else fields[name] for name in names}
    if grid.ndim == 3:
        return _midplane_figure(figure, grid, fields, names, title)
    n = len(names)

    if grid.ndim == 1:
        fig = figure.PlotFigure(figsize=(7, 1.0 + 2.0 * n), layout="constrained")
        axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
        x = grid.x_centres()
        for ax, name in zip(axes, names):
            ax.plot(x, np.asarray(fields[name]), lw=1.2)
            ax.set_ylabel(name)
            ax.grid(alpha=0.3)
        axes[-1].set_xlabel("x")
        fig.suptitle(title)
        return fig

    # Panel layout from the domain's aspect: wide domains in one column, tall ones side by
    # side; each panel's longer side is `size` inches.
    aspect = min(max((grid.y[1] - grid.y[0]) / (grid.x[1] - grid.x[0]), 0.1), 5.0)
    ncols = min(n, 1 if aspect < 0.5 else 2 if aspect <= 1.5 else 4)
    size = 7.0 if ncols == 1 else 4.5
    width, height = (size, size * aspect) if aspect <= 1 else (size / aspect, size)
    fig, axes, bars = figure.panel_grid(math.ceil(n / ncols), ncols, width, height, title)
    xn, yn = grid.x_nodes(), grid.y_nodes()
    for ax, bar, name in zip(axes, bars, names):
        # pcolormesh wants (ny, nx); fields are (nx, ny). NaN/inf cells are left blank.
        values, xc, yc = _coarsen(np.asarray(fields[name], np.float64).T, xn, yn)
        _panel(fig, ax, bar, xc, yc, values, name, ("x", "y"))
        if streamlines is not None:
            _draw_streamlines(ax, grid, *streamlines)
    for ax in axes[n:] + bars[n:]:
        ax.set_visible(False)
    return fig


def _panel(fig, ax, bar, x_nodes, y_nodes, values, name, labels):
    """One panel: values ((vertical, horizontal) cells) flat in their cells, NaN left blank,
    with its colorbar in `bar`."""
    from .figure import finish_panel

    mesh = ax.pcolormesh(x_nodes, y_nodes, np.ma.masked_invalid(values), shading="flat",
                         cmap="viridis")
    finish_panel(fig, ax, bar, mesh, name, labels)


def _midplane_figure(figure, grid, fields, names, title):
    """A row per field of a 3D grid: its planes of cells through the middle of the box normal
    to z, y and x (index n // 2 along that axis), each a pcolormesh with its colorbar."""
    nodes = {"x": grid.x_nodes(), "y": grid.y_nodes(), "z": grid.z_nodes()}
    middle = {"x": grid.nx // 2, "y": grid.ny // 2, "z": grid.nz // 2}
    centres = {"x": grid.x_centres(), "y": grid.y_centres(), "z": grid.z_centres()}
    planes = (("z", "x", "y"), ("y", "x", "z"), ("x", "y", "z"))  # normal, horizontal, vertical
    fig, axes, bars = figure.panel_grid(len(names), 3, 2.7, 2.7, title)
    for row, name in enumerate(names):
        values = np.asarray(fields[name], np.float64)
        for col, (normal, across, up) in enumerate(planes):
            cut = [slice(None)] * 3
            cut["xyz".index(normal)] = middle[normal]
            # pcolormesh wants (vertical, horizontal); the plane is [across, up].
            plane, hn, vn = _coarsen(values[tuple(cut)].T, nodes[across], nodes[up])
            where = f"{name}, {normal} = {centres[normal][middle[normal]]:.3g}"
            _panel(fig, axes[3 * row + col], bars[3 * row + col], hn, vn, plane, where,
                   (across, up))
    return fig


def save_png(fig, png_path):
    """Write a Figure to png_path atomically (a temporary file renamed); returns the path."""
    from .figure import DPI

    png_path = Path(png_path)
    temp = png_path.with_name(f".{png_path.name}.tmp-{os.getpid()}")
    try:
        fig.savefig(temp, format="png", dpi=DPI)
        os.replace(temp, png_path)
    finally:
        temp.unlink(missing_ok=True)
    return png_path
