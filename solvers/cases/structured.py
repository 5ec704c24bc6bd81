"""The [mesh] section of solvers on uniform structured grids, the grid it describes, and the
checked boundary table of its sides."""

from ..fv.sides import BoundaryError
from ..mesh import StructuredGrid
from .bounds import check_cells
from .schema import REQUIRED, Key

MESH = {
    "type": Key("choice", "structured", choices=("structured",), help="mesh kind"),
    "nx": Key("int", REQUIRED, minimum=2, help="cells along x"),
    "ny": Key("int", None, minimum=2, help="cells along y (2D and 3D)"),
    "nz": Key("int", None, minimum=2, help="cells along z (3D only)"),
    "x": Key("range", (0.0, 1.0), help="[x0, x1] domain extent along x"),
    "y": Key("range", None, help="[y0, y1] domain extent along y (makes the grid 2D)"),
    "z": Key("range", None, help="[z0, z1] domain extent along z (with y: makes the grid 3D)"),
}


def grid_of(case, ndims=(1, 2)):
    """The case's StructuredGrid; a CaseError unless its dimension is one of ndims."""
    mesh = case.data["mesh"]
    if (mesh["ny"] is None) != (mesh["y"] is None):
        raise case.error("mesh", None, "a 2D grid needs both ny and y, a 1D grid neither")
    if (mesh["nz"] is None) != (mesh["z"] is None):
        raise case.error("mesh", None, "a 3D grid needs both nz and z, a 1D or 2D grid neither")
    if mesh["z"] is not None and mesh["y"] is None:
        raise case.error("mesh", "z", "a 3D grid needs ny and y as well")
    ndim = 1 if mesh["y"] is None else 2 if mesh["z"] is None else 3
    if ndim not in ndims:
        solver = case.data["physics"]["solver"]
        dims = " or ".join(f"{n}D" for n in ndims)
        raise case.error("mesh", "z" if ndim == 3 else "y",
                         f"the {solver} solver needs a {dims} grid, got {ndim}D")
    check_cells(case, ("nx", "ny", "nz")[ndim - 1],
                mesh["nx"] * (mesh["ny"] or 1) * (mesh["nz"] or 1))
    axes = {"nx": mesh["nx"], "x": mesh["x"]}
    if ndim >= 2:
        axes.update(ny=mesh["ny"], y=mesh["y"])
    if ndim == 3:
        axes.update(nz=mesh["nz"], z=mesh["z"])
    return StructuredGrid(**axes)


def boundary_of(case, grid, parse):
    """The case's {side: spec} of the grid's sides, checked by the solver's `parse(specs,
    ndim)`; its BoundaryError becomes a one-line CaseError naming the side."""
    given = {side: spec for side, spec in case.data["boundary"].items() if spec is not None}
    try:
        parse(given, grid.ndim)
    except BoundaryError as error:
        raise case.error("boundary", error.side, error.reason) from None
    return given


def check_cfl(case):
    """An explicit scheme's [scheme] cfl must be in (0, 1] (the schema checks > 0)."""
    cfl = case.data["scheme"]["cfl"]
    if cfl > 1:
        raise case.error("scheme", "cfl", f"expected a value in (0, 1], got {cfl}")
