"""Case-file sections of the Poisson / steady-heat solver (solver = "poisson"), their checks,
and building the solver from a case. Expressions are of x, y, z (and t for boundary values)."""

import math

import numpy as np

from ..expressions import ExpressionError, evaluate
from ..fe.boundary import Dirichlet, Neumann, Robin
from ..fe.poisson import PoissonSolver
from ..linalg.preconditioners import choices, help_text
from ..mesh.generators import box, rectangle
from ..mesh.meshio_reader import read_mesh
from ..mesh.unstructured import MeshError
from .bounds import check_cells, solver_errors
from .mesh_file import read_mesh_file
from .schema import Key, short

GENERATORS = ("rectangle", "box")

SOLVER = PoissonSolver
BYTES_PER_CELL = 4000  # per simplex, host, fp64, P2 (cases.bounds: the memory a mesh needs)
SECTIONS = {
    "physics": {
        "degree": Key("choice", 1, choices=(1, 2), help="Lagrange element degree (P1 or P2)"),
    },
    "mesh": {
        "file": Key("str", None, help="mesh file read by meshio (Gmsh .msh 2/4, .vtu, .xdmf); "
                    "relative to the case file"),
        "generator": Key("choice", None, choices=GENERATORS,
                         help="built-in structured simplex mesh instead of a file"),
        "cells": Key("any", None, help="[nx, ny] (rectangle) or [nx, ny, nz] (box): cells "
                     "along each axis"),
        "x": Key("range", (0.0, 1.0), help="[x0, x1] extent of a generated mesh"),
        "y": Key("range", (0.0, 1.0), help="[y0, y1] extent of a generated mesh"),
        "z": Key("range", (0.0, 1.0), help="[z0, z1] extent of a generated box"),
    },
    "material": {
        "conductivity": Key("table_float", {}, help="conductivity k per material (cell "
                            "group) name"),
        "default_conductivity": Key("float", 1.0, minimum=0, exclusive_minimum=True,
                                    help="k of cells in no named material"),
    },
    "source": {
        "f": Key("expr", 0.0, help="volume source f(x, y, z) of -div(k grad u) = f"),
        "exact": Key("expr", None, help="exact solution, if known: adds fields exact and "
                     "error"),
        "constants": Key("table_float", {}, help="named numbers usable in the expressions"),
    },
    "boundary": {
        "dirichlet": Key("any", {}, help="{name = value}: u = value (number or expression)"),
        "neumann": Key("any", {}, help="{name = flux}: k du/dn = flux (outward normal)"),
        "robin": Key("any", {}, help="{name = {alpha = a, ambient = u0}}: k du/dn = "
                     "a (u0 - u)"),
    },
    "solver": {
        "preconditioner": Key("choice", "amg", choices=choices("amg"),
                              help="CG preconditioner. " + help_text(
                                  "amg", "the same as amg here (an assembled matrix)")),
        "rtol": Key("float", 1e-6, minimum=0, exclusive_minimum=True, maximum=1,
                    exclusive_maximum=True,
                    help="CG stops at ||b - A u|| <= rtol ||b||"),
        "maxiter": Key("int", None, minimum=1, help="CG iteration limit (default 10 n)"),
    },
    "time": None,
}


def mesh_of(case):
    """The case's Mesh (a CaseError for a bad file or generator)."""
    spec = case.data["mesh"]
    if (spec["file"] is None) == (spec["generator"] is None):
        raise case.error("mesh", None, "give either file or generator")
    if spec["file"] is not None:
        return read_mesh_file(case, read_mesh)
    counts = spec["cells"]
    size = 2 if spec["generator"] == "rectangle" else 3
    if (not isinstance(counts, list) or len(counts) != size
            or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1
                       for c in counts)):
        raise case.error("mesh", "cells", f"expected {size} positive integers for "
                         f"{spec['generator']}, got {short(counts)}")
    check_cells(case, "cells", math.prod(counts) * (2 if size == 2 else 6), "simplices")
    try:
        if size == 2:
            return rectangle(*counts, x=spec["x"], y=spec["y"])
        return box(*counts, x=spec["x"], y=spec["y"], z=spec["z"])
    except (MeshError, ValueError) as error:
        raise case.error("mesh", "generator", str(error)) from None


def _function(case, section, key, text, with_time=False):
    """A function of (x, y[, z], t) evaluating a case expression; t is a name in it only
    with_time (boundary values)."""
    constants = {k: float(v) for k, v in case.data["source"]["constants"].items()}

    def names(coords, t):
        out = dict(zip("xyz", coords), **constants)
        out.setdefault("z", 0.0)
        out.setdefault("y", 0.0)
        if with_time:
            out["t"] = t
        return out

    def function(*args):
        coords, t = args[:-1], args[-1]
        try:
            return evaluate(text, names(coords, t))
        except ExpressionError as error:
            raise case.error(section, key, str(error)) from None

    try:  # fail early; values at the origin, which need not be in the mesh, may be infinite
        evaluate(text, names([np.zeros(1)] * 3, 0.0), finite=False)
    except ExpressionError as error:
        raise case.error(section, key, str(error)) from None
    return function


def boundary_of(case, mesh):
    """{name: Dirichlet | Neumann | Robin} with the names checked against the mesh."""
    spec = case.data["boundary"]
    out = {}
    for key, make in (("dirichlet", Dirichlet), ("neumann", Neumann), ("robin", Robin)):
        table = spec[key]
        if not isinstance(table, dict):
            raise case.error("boundary", key, f"expected a table {{name = ...}}, got {table!r}")
        for name, value in table.items():
            if name not in mesh.boundaries:
                names = ", ".join(sorted(mesh.boundaries)) or "none"
                raise case.error("boundary", key, f"boundary '{name}' is not in the mesh "
                                 f"(its boundaries: {names})")
            if name in out:
                raise case.error("boundary", key, f"boundary '{name}' has two conditions")
            if key == "robin":
                if not isinstance(value, dict) or set(value) - {"alpha", "ambient"} or \
                        not isinstance(value.get("alpha"), (int, float)) or value["alpha"] <= 0:
                    raise case.error("boundary", key, f"{name}: expected {{alpha = a > 0, "
                                     f"ambient = u0}}, got {value!r}")
                ambient = _function(case, "boundary", key, value.get("ambient", 0.0), True)
                out[name] = Robin(float(value["alpha"]), ambient)
            else:
                out[name] = make(_function(case, "boundary", key, value, True))
    return out


def check(case):
    mesh = mesh_of(case)
    boundary_of(case, mesh)
    material = case.data["material"]
    missing = [name for name in material["conductivity"] if name not in mesh.materials]
    if missing:
        names = ", ".join(sorted(mesh.materials)) or "none"
        raise case.error("material", "conductivity", f"material '{missing[0]}' is not in the "
                         f"mesh (its materials: {names})")
    if any(value <= 0 for value in material["conductivity"].values()):
        raise case.error("material", "conductivity", "conductivities must be > 0")
    for key in ("f", "exact"):
        if case.data["source"][key] is not None:
            _function(case, "source", key, case.data["source"][key])
    return mesh


def build(case):
    mesh = check(case)
    source, run = case.data["source"], case.data["run"]
    solver_spec, material = case.data["solver"], case.data["material"]
    exact = None if source["exact"] is None else _function(case, "source", "exact",
                                                           source["exact"])
    with solver_errors(case):
        return PoissonSolver(mesh, case.data["physics"]["degree"],
                             conductivity=material["conductivity"],
                             default_conductivity=material["default_conductivity"],
                             source=_function(case, "source", "f", source["f"]),
                             boundary=boundary_of(case, mesh),
                             preconditioner=solver_spec["preconditioner"],
                             rtol=solver_spec["rtol"], maxiter=solver_spec["maxiter"],
                             exact=exact, backend=run["backend"], precision=run["precision"])
