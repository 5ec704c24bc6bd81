"""Case-file sections of the unstructured Euler solver (solver = "euler_unstructured"), their
checks, and building the solver from a case: a mesh file read by meshio (or a generated grid
of quads, triangles, hexahedra...), boundary conditions by the mesh's boundary names."""

import math

import numpy as np

from ..fv.euler import RIEMANN_SOLVERS
from ..fv.euler_unstructured import (
    LIMITERS,
    RECONSTRUCTIONS,
    TIME_INTEGRATORS,
    UnstructuredEulerSolver,
    parse_boundary,
)
from ..fv.sides import BoundaryError
from ..mesh.cell_generators import hex_grid, quad_grid
from ..mesh.faces import face_geometry
from ..mesh.meshio_cells import read_cell_mesh
from ..mesh.unstructured import MeshError
from .bounds import check_cells, solver_errors
from .euler import INITIAL, primitive_fields
from .mesh_file import read_mesh_file
from .schema import Key, short

SOLVER = UnstructuredEulerSolver
BYTES_PER_CELL = 1500  # host, fp64, 2D triangles, geometry included (cases.bounds)
GENERATED = {"quad": 2, "triangle": 2, "mixed": 2, "hexahedron": 3, "tetra": 3, "wedge": 3}
STATE = "{rho = .., vx = .., vy = .., (vz = ..,) p = ..}"
# [boundary] keys: lists of the mesh's boundary names, or tables {name = state}.
NAMED = ("wall", "slip", "symmetry", "outflow")
STATED = {"inflow": "inflow", "farfield": "farfield", "pressure_outlet": "outflow"}
SECTIONS = {
    "mesh": {
        "file": Key("str", None, help="mesh file read by meshio (Gmsh .msh 2/4, .vtu, .xdmf) "
                    "with named boundary groups (Gmsh physical groups); relative to the case "
                    "file"),
        "generator": Key("choice", None, choices=tuple(GENERATED),
                         help="a generated grid instead of a file: quad, triangle (each quad "
                         "cut in two), mixed (rows of each) in 2D; hexahedron, tetra, wedge in "
                         "3D; boundaries x_lo, x_hi, y_lo, y_hi (z_lo, z_hi)"),
        "cells": Key("any", None, help="[nx, ny] or [nx, ny, nz]: grid cells along each axis"),
        "x": Key("range", (0.0, 1.0), help="[x0, x1] extent of a generated grid"),
        "y": Key("range", (0.0, 1.0), help="[y0, y1] extent of a generated grid"),
        "z": Key("range", (0.0, 1.0), help="[z0, z1] extent of a generated 3D grid"),
    },
    "physics": {
        "gamma": Key("float", 1.4, minimum=1, exclusive_minimum=True,
                     help="ratio of specific heats"),
    },
    "scheme": {
        "reconstruction": Key("choice", "muscl", choices=tuple(RECONSTRUCTIONS),
                              help="first_order, or MUSCL from least-squares gradients of the "
                              "primitive variables"),
        "limiter": Key("choice", "barth_jespersen", choices=tuple(LIMITERS),
                       help="barth_jespersen, venkatakrishnan (gradient limiters), or the "
                       "structured solver's minmod, van_leer, mc along each face's line"),
        "riemann": Key("choice", "hllc", choices=tuple(RIEMANN_SOLVERS),
                       help="approximate Riemann solver"),
        "time_integrator": Key("choice", "ssp_rk2", choices=tuple(TIME_INTEGRATORS),
                               help="ssp_rk2, ssp_rk3: strong-stability-preserving Runge-Kutta; "
                               "hancock: MUSCL-Hancock, one stage a step (face values "
                               "predicted half a step on from the cell gradients)"),
        "cfl": Key("float", 0.5, minimum=0, exclusive_minimum=True, maximum=1,
                   help="dt = cfl / max over cells of sum_faces (|v.n| + c) A / (2 V)"),
    },
    "initial": INITIAL,
    "boundary": {
        "wall": Key("any", [], help="[names]: boundary names of solid walls (reflective)"),
        "slip": Key("any", [], help="[names]: slip walls (reflective, as wall)"),
        "symmetry": Key("any", [], help="[names]: symmetry planes (reflective)"),
        "outflow": Key("any", [], help="[names]: transmissive outflow (zero gradient)"),
        "inflow": Key("any", {}, help=f"{{name = {STATE}}}: a fixed inflow state"),
        "farfield": Key("any", {}, help=f"{{name = {STATE}}}: characteristic far field "
                        "(Riemann invariants) with this free stream"),
        "pressure_outlet": Key("any", {}, help="{name = {p = ..}}: outflow at a fixed pressure "
                               "(subsonic), transmissive where supersonic"),
    },
}


def mesh_of(case):
    """The case's CellMesh (a CaseError for a bad file or generator)."""
    spec = case.data["mesh"]
    if (spec["file"] is None) == (spec["generator"] is None):
        raise case.error("mesh", None, "give either file or generator")
    if spec["file"] is not None:
        return read_mesh_file(case, read_cell_mesh)
    kind, counts = spec["generator"], spec["cells"]
    size = GENERATED[kind]
    if (not isinstance(counts, list) or len(counts) != size
            or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1
                       for c in counts)):
        raise case.error("mesh", "cells", f"expected {size} positive integers for "
                         f"generator {kind}, got {short(counts)}")
    check_cells(case, "cells", math.prod(counts) * (6 if kind == "tetra" else 2))
    if size == 2:
        return quad_grid(*counts, x=spec["x"], y=spec["y"], cells=kind)
    return hex_grid(*counts, x=spec["x"], y=spec["y"], z=spec["z"], cells=kind)


def boundary_of(case, mesh):
    """{boundary name: spec} for the solver, from the [boundary] lists and tables."""
    table = case.data["boundary"]
    out = {}

    def put(key, name, spec):
        if name in out:
            raise case.error("boundary", key, f"boundary '{name}' has two conditions")
        out[name] = spec

    for key in NAMED:
        names = table[key]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise case.error("boundary", key, f"expected a list of boundary names, got "
                             f"{short(names)}")
        for name in names:
            put(key, name, key)
    for key, kind in STATED.items():
        if not isinstance(table[key], dict):
            raise case.error("boundary", key, f"expected a table {{name = {STATE}}}, got "
                             f"{short(table[key])}")
        for name, state in table[key].items():
            put(key, name, {kind: state})
    return out


def _checked_boundary(case, mesh, names):
    """The solver's boundary table, with the mesh's names checked (a CaseError naming the key:
    an unknown name, a name with no condition, a wrong state)."""
    boundary = boundary_of(case, mesh)
    try:
        parse_boundary(boundary, names, mesh.dim, mesh.source)
    except BoundaryError as error:
        spec = boundary.get(error.side)
        key = next((k for k in (*NAMED, *STATED) if spec == k or (
            isinstance(spec, dict) and STATED.get(k) in spec)), None)
        raise case.error("boundary", key, str(error)) from None
    return boundary


def initial_fields(case, centroids):
    """{rho, vx, vy, vz, p} at the cell centroids; CaseError names the offending key."""
    names = dict(zip("xyz", centroids.T))
    names.setdefault("z", 0.0)
    fields = primitive_fields(case, names, (len(centroids),))
    if centroids.shape[1] == 2 and np.any(fields["vz"] != 0):
        raise case.error("initial", "vz", "a 2D mesh has no z velocity")
    return fields


def check(case):
    """Everything that can be checked before a backend exists; returns the mesh and its
    geometry."""
    mesh = mesh_of(case)
    try:
        geometry = face_geometry(mesh)
    except MeshError as error:
        raise case.error("mesh", "file" if case.data["mesh"]["file"] else "generator",
                         str(error)) from None
    _checked_boundary(case, mesh, geometry.boundary_names)
    initial_fields(case, geometry.centroids)
    return mesh, geometry


def build(case):
    """The UnstructuredEulerSolver of a validated case, with its initial state set."""
    mesh, geometry = check(case)
    scheme = case.data["scheme"]
    with solver_errors(case):
        solver = UnstructuredEulerSolver(
            mesh, boundary_of(case, mesh), gamma=case.data["physics"]["gamma"],
            reconstruction=scheme["reconstruction"], limiter=scheme["limiter"],
            riemann=scheme["riemann"], time_integrator=scheme["time_integrator"],
            cfl=scheme["cfl"], backend=case.data["run"]["backend"],
            precision=case.data["run"]["precision"], geometry=geometry)
        fields = initial_fields(case, geometry.centroids)
        solver.set_primitive(fields["rho"], fields["vx"], fields["p"], vy=fields["vy"],
                             vz=fields["vz"])
    return solver
