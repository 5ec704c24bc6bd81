"""The Figure that plots return: matplotlib's own Figure with an Agg canvas, never registered
with pyplot (no global state, nothing kept alive), which Jupyter shows inline as a PNG."""

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 110  # of the run's PNG and of the inline picture


class PlotFigure(Figure):
    """A matplotlib Figure drawn by Agg; `_repr_png_` lets IPython show it without pyplot."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        FigureCanvasAgg(self)

    def _repr_png_(self):
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=DPI)
        return buffer.getvalue()
