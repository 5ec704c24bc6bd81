"""The [mesh] section of solvers on uniform structured grids, and the grid it describes."""

from ..mesh import StructuredGrid
from .schema import REQUIRED, Key

MESH = {
    "type": Key("choice", "structured", choices=("structured",), help="mesh kind"),
    "nx": Key("int", REQUIRED, minimum=2, help="cells along x"),
    "ny": Key("int", None, minimum=2, help="cells along y (2D only)"),
    "x": Key("range", (0.0, 1.0), help="[x0, x1] domain extent along x"),
    "y": Key("range", None, help="[y0, y1] domain extent along y (makes the grid 2D)"),
}


def grid_of(case, ndims=(1, 2)):
    """The case's StructuredGrid; a CaseError unless its dimension is one of ndims."""
    mesh = case.data["mesh"]
    if (mesh["ny"] is None) != (mesh["y"] is None):
        raise case.error("mesh", None, "a 2D grid needs both ny and y, a 1D grid neither")
    ndim = 1 if mesh["y"] is None else 2
    if ndim not in ndims:
        solver = case.data["physics"]["solver"]
        raise case.error("mesh", "y", f"the {solver} solver needs a {ndims[0]}D grid"
                         + (" (ny and y)" if ndims[0] == 2 else ""))
    if ndim == 1:
        return StructuredGrid(mesh["nx"], x=mesh["x"])
    return StructuredGrid(mesh["nx"], x=mesh["x"], ny=mesh["ny"], y=mesh["y"])
