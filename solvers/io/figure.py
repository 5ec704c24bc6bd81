"""The Figure that plots return: matplotlib's own Figure with an Agg canvas, never registered
with pyplot (no global state, nothing kept alive), which Jupyter shows inline as a PNG; and a
grid of panels, each a plot with its colorbar, placed at fixed margins."""

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 110  # of the run's PNG and of the inline picture
# A panel's margins in inches: tick labels and axis label left and below, its title above, and
# the colorbar's gap, width and tick labels on the right; the figure's title band on top.
LEFT, BOTTOM, TOP, GAP, BAR, RIGHT, TITLE = 0.75, 0.55, 0.35, 0.12, 0.18, 0.7, 0.45


class PlotFigure(Figure):
    """A matplotlib Figure drawn by Agg; `_repr_png_` lets IPython show it without pyplot."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        FigureCanvasAgg(self)

    def _repr_png_(self):
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=DPI)
        return buffer.getvalue()


def panel_grid(nrows, ncols, width, height, title):
    """(figure, axes, colorbar axes): nrows x ncols plots of width x height inches, row by row,
    each with a colorbar beside it, under `title`. The margins are fixed rather than found by
    matplotlib's constrained layout, which measures every label by drawing the figure once
    more (half of the time a run's PNG took)."""
    cell_w = LEFT + width + GAP + BAR + RIGHT
    cell_h = BOTTOM + height + TOP
    fig_w, fig_h = ncols * cell_w, nrows * cell_h + TITLE
    fig = PlotFigure(figsize=(fig_w, fig_h))
    axes, bars = [], []
    for row in range(nrows):
        for col in range(ncols):
            x0, y0 = col * cell_w + LEFT, (nrows - 1 - row) * cell_h + BOTTOM
            axes.append(fig.add_axes((x0 / fig_w, y0 / fig_h, width / fig_w, height / fig_h)))
            bars.append(fig.add_axes(((x0 + width + GAP) / fig_w, (y0 + 0.05 * height) / fig_h,
                                      BAR / fig_w, 0.9 * height / fig_h)))
    fig.suptitle(title, y=1 - 0.5 * TITLE / fig_h, va="center")
    return fig, axes, bars


def finish_panel(fig, ax, bar, mappable, title, labels):
    """A panel's colorbar of `mappable` in `bar`, equal axes (which shrink the panel's box to
    the data's shape: the colorbar follows it), its title and axis labels."""
    fig.colorbar(mappable, cax=bar)
    box = ax.get_position()
    ax.set_aspect("equal")
    ax.apply_aspect()
    shrunk, place = ax.get_position(), bar.get_position()
    bar.set_position((place.x0 - (box.x1 - shrunk.x1), shrunk.y0 + 0.05 * shrunk.height,
                      place.width, 0.9 * shrunk.height))
    ax.set_title(title)
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
