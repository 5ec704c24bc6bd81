"""Case-file sections of the Euler solver, their checks, and building the solver from a case."""

import numpy as np

from ..expressions import ExpressionError, evaluate
from ..fv.euler import (
    LIMITERS,
    RECONSTRUCTIONS,
    RIEMANN_SOLVERS,
    TIME_INTEGRATORS,
    EulerSolver,
    parse_boundary,
)
from ..fv.euler_fields import VELOCITIES
from ..fv.sides import SIDES_3D
from ..mesh.decomposition import check_dims
from . import deposit, structured
from .bounds import solver_errors
from .schema import REQUIRED, Key
from .structured import MESH, grid_of

SOLVER = EulerSolver
DECOMPOSES = True  # build() takes a decomposition: runs on several MPI ranks
NDIMS = (1, 2, 3)  # the grids it runs on
BYTES_PER_CELL = 250  # host, fp64, 2D (cases.bounds: the memory a mesh needs)
# [initial] of the Euler solvers, structured and unstructured: expressions of the cell centres.
INITIAL = {
    "rho": Key("expr", REQUIRED, help="density: a number or an expression of x, y, z"),
    "vx": Key("expr", 0.0, help="x velocity"),
    "vy": Key("expr", 0.0, help="y velocity (2D and 3D)"),
    "vz": Key("expr", 0.0, help="z velocity (3D)"),
    "p": Key("expr", REQUIRED, help="pressure"),
    "constants": Key("table_float", {}, help="named numbers usable in the expressions"),
}
SECTIONS = {
    "mesh": MESH,
    "physics": {
        "gamma": Key("float", 1.4, minimum=1, exclusive_minimum=True,
                     help="ratio of specific heats"),
    },
    "scheme": {
        "reconstruction": Key("choice", "muscl", choices=tuple(RECONSTRUCTIONS),
                              help="first_order, or MUSCL on primitive variables"),
        "limiter": Key("choice", "mc", choices=tuple(LIMITERS), help="MUSCL slope limiter"),
        "riemann": Key("choice", "hllc", choices=tuple(RIEMANN_SOLVERS),
                       help="approximate Riemann solver"),
        "time_integrator": Key("choice", "ssp_rk3", choices=tuple(TIME_INTEGRATORS),
                               help="ssp_rk2, ssp_rk3: strong-stability-preserving Runge-Kutta; "
                               "hancock: MUSCL-Hancock, one kernel a step (stable up to "
                               "cfl 1)"),
        "cfl": Key("float", 0.5, minimum=0, exclusive_minimum=True,
                   help="CFL number, dt = cfl / max((|vx|+c)/dx + (|vy|+c)/dy + (|vz|+c)/dz)"),
    },
    "initial": INITIAL,
    "boundary": {
        side: Key("any", None, help="periodic, transmissive, reflective or "
                  "{inflow = {rho, vx, vy, vz, p}}")
        for side in SIDES_3D
    },
}


def boundary_of(case, grid):
    """The grid's {side: spec}; a one-line CaseError for a wrong or missing side."""
    return structured.boundary_of(case, grid, parse_boundary)


def initial_fields(case, grid):
    """{rho, vx, vy, vz, p} evaluated at the cell centres; CaseError names the offending key."""
    centres = grid.centres()
    names = {"x": centres[0], "y": centres[1] if grid.ndim >= 2 else 0.0,
             "z": centres[2] if grid.ndim == 3 else 0.0, "dx": grid.dx, "dy": grid.dy,
             "dz": grid.dz}
    return primitive_fields(case, names, grid.shape, deposit.functions(grid))


def primitive_fields(case, names, shape, functions=None):
    """{rho, vx, vy, vz, p} of [initial], evaluated with `names` (and gamma and the constants)
    and broadcast to `shape`; a CaseError names the offending key (non-finite values, rho or p
    not > 0)."""
    initial = case.data["initial"]
    names = {**names, "gamma": case.data["physics"]["gamma"]}
    for constant, value in initial["constants"].items():
        names[constant] = float(value)
    fields = {}
    for key in ("rho", *VELOCITIES, "p"):
        try:
            value = np.broadcast_to(np.asarray(evaluate(initial[key], names,
                                                        functions=functions), float), shape)
        except ExpressionError as error:
            raise case.error("initial", key, str(error)) from None
        except ValueError as error:
            raise case.error("initial", key, f"result does not fit the mesh ({error})") from None
        if not np.all(np.isfinite(value)):
            raise case.error("initial", key, "expression gives non-finite values")
        fields[key] = value
    for key in ("rho", "p"):
        if not np.all(fields[key] > 0):
            raise case.error("initial", key, "must be > 0 in every cell")
    return fields


def check(case):
    """Everything that can be checked before a backend exists."""
    grid = grid_of(case, NDIMS)
    boundary_of(case, grid)
    fields = initial_fields(case, grid)
    for name in VELOCITIES[grid.ndim:]:
        if np.any(fields[name] != 0):
            raise case.error("initial", name, f"a {grid.ndim}D grid has no {name[1]} velocity")
    structured.check_cfl(case)


def build(case, decomposition=None):
    """The EulerSolver described by a validated case, with its initial state set; with a
    decomposition (mesh/decomposition.py), this rank's block of it."""
    grid = grid_of(case, NDIMS)
    scheme = case.data["scheme"]
    if decomposition is not None and decomposition.dims:
        try:
            check_dims(decomposition.dims, decomposition.size, grid.shape)
        except ValueError as error:
            raise case.error("run", "decomposition", str(error)) from None
    with solver_errors(case):
        solver = EulerSolver(grid, boundary_of(case, grid), gamma=case.data["physics"]["gamma"],
                             reconstruction=scheme["reconstruction"], limiter=scheme["limiter"],
                             riemann=scheme["riemann"],
                             time_integrator=scheme["time_integrator"], cfl=scheme["cfl"],
                             backend=case.data["run"]["backend"],
                             precision=case.data["run"]["precision"],
                             decomposition=decomposition)
        fields = initial_fields(case, grid)
        solver.set_primitive(fields["rho"], fields["vx"], fields["p"], vy=fields["vy"],
                             vz=fields["vz"])
    return solver
