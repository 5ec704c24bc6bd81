"""Case-file sections of the incompressible solver, their checks, and building the solver."""

import numpy as np

from ..expressions import ExpressionError, evaluate
from ..fv.incompressible.boundary import SIDES, BoundaryError, parse_boundaries
from ..fv.incompressible.distance import ObstacleError, body_distance
from ..fv.incompressible.pressure import DISTRIBUTED
from ..fv.incompressible.solver import ADVECTION, IncompressibleSolver
from ..fv.incompressible.viscous import VISCOUS
from ..linalg.block_layout import block_layout
from ..linalg.preconditioners import choices, help_text
from . import structured
from .bounds import solver_errors
from .schema import REQUIRED, Key

SOLVER = IncompressibleSolver
DECOMPOSES = True  # build() takes a decomposition: runs on several MPI ranks (block.py)
BYTES_PER_CELL = 1000  # host, fp64 (cases.bounds: the memory a mesh needs)
SECTIONS = {
    "mesh": structured.MESH,
    "physics": {
        "nu": Key("float", REQUIRED, minimum=0, exclusive_minimum=True,
                  help="kinematic viscosity (Re = reference_velocity reference_length / nu)"),
        "force_x": Key("float", 0.0, help="constant body force along x (a pressure gradient)"),
        "force_y": Key("float", 0.0, help="constant body force along y"),
        "reference_velocity": Key("float", None, minimum=0, exclusive_minimum=True,
                                  help="U_ref of the drag/lift coefficients 2F/(U_ref^2 L_ref) "
                                  "(default: the largest boundary speed)"),
        "reference_length": Key("float", None, minimum=0, exclusive_minimum=True,
                                help="L_ref of the coefficients (default: the domain height)"),
    },
    "scheme": {
        "advection": Key("choice", "central", choices=tuple(ADVECTION),
                         help="central (2nd order) or quick (upwind-biased, for high Re)"),
        "viscous": Key("choice", "explicit", choices=VISCOUS,
                       help="explicit (AB2: dt within the diffusion limit ~h^2/nu), implicit "
                       "(Crank-Nicolson) or backward_euler (first order, for steady runs): "
                       "implicit ones leave dt to the advective CFL"),
        "cfl": Key("float", 0.5, minimum=0, exclusive_minimum=True,
                   help="dt = cfl / (|u|/dx + |v|/dy + diffusion limit if explicit), on the "
                   "device"),
        "steady_tolerance": Key("float", 0.0, minimum=0,
                                help="end the run once the velocity's relative change per unit "
                                "time, max|du|/(max|u| dt) over a window, is below it (0: run "
                                "to the end time)"),
        "steady_window": Key("float", None, minimum=0, exclusive_minimum=True,
                             help="simulated time over which that change is measured (default "
                             "0.1 reference_length / reference_velocity)"),
    },
    "pressure": {
        "preconditioner": Key("choice", "multigrid", choices=choices("multigrid"),
                              help="of the pressure CG. " + help_text(
                                  "multigrid", "geometric, or algebraic with a periodic axis")),
        "rtol": Key("float", 1e-6, minimum=0, exclusive_minimum=True,
                    help="relative residual of the pressure solve, |r| <= rtol |div u*|"),
        "divergence": Key("float", 1e-6, minimum=0, exclusive_minimum=True,
                          help="the solve also stops once the RMS divergence it leaves is "
                          "below this times reference_velocity / reference_length"),
        "max_iterations": Key("int", None, minimum=1,
                              help="iteration cap of one pressure solve (default: 200 with "
                              "multigrid or amg, 20 max(nx, ny) with jacobi or none)"),
    },
    "initial": {
        "u": Key("expr", 0.0, help="x velocity: a number or an expression of x, y (at the "
                 "x faces)"),
        "v": Key("expr", 0.0, help="y velocity (at the y faces)"),
        "p": Key("expr", 0.0, help="pressure (at the cell centres)"),
        "constants": Key("table_float", {}, help="named numbers usable in every expression "
                         "of the case (initial, inflow, obstacle)"),
    },
    "boundary": {
        **{side: Key("any", REQUIRED, help="periodic, wall, {wall = speed}, slip, outflow or "
                     "{inflow = profile} (number or expression of y on x sides, of x on y "
                     "sides)") for side in SIDES},
        "inflow_ramp": Key("float", 0.0, minimum=0,
                           help="inflows rise as (1 - cos(pi t / T)) / 2 over this time T"),
    },
    "obstacle": {
        "distance": Key("expr", None, help="a body held at rest, by its signed distance: an "
                        "expression of x, y, negative inside (a sub-cell immersed boundary: "
                        "interpolated direct forcing along the normal)"),
        "inside": Key("expr", None, help="a body held at rest: an expression of x, y, true "
                      "inside; without distance, the distance comes from a distance transform "
                      "of it (16 samples a cell: within about 0.03 cells)"),
    },
}


def grid_of(case):
    return structured.grid_of(case, ndims=(2,))


def _names(case, grid, **coordinates):
    names = {"dx": grid.dx, "dy": grid.dy, "nu": case.data["physics"]["nu"], **coordinates}
    names.update({k: float(v) for k, v in case.data["initial"]["constants"].items()})
    return names


def _evaluate(case, section, key, text, names, shape, number=False):
    """The expression's values on an array of `shape`; `number`: true/false values refused."""
    try:
        raw = np.asarray(evaluate(text, names))
    except ExpressionError as error:
        raise case.error(section, key, str(error)) from None
    if number and raw.dtype == bool:
        raise case.error(section, key, "expected a number (a signed distance, negative "
                         "inside), got true/false values")
    try:
        value = np.broadcast_to(raw.astype(float), shape)
    except ValueError as error:
        raise case.error(section, key, f"result does not fit the grid ({error})") from None
    if value.dtype != bool and not np.all(np.isfinite(value)):
        raise case.error(section, key, "expression gives non-finite values")
    return value


def boundary_of(case, grid):
    """{side: spec} with inflow expressions evaluated at the boundary faces."""
    given = {}
    for index, side in enumerate(SIDES):
        spec = case.data["boundary"][side]
        if isinstance(spec, dict) and set(spec) == {"inflow"} \
                and isinstance(spec["inflow"], str):
            along = {"y": grid.y_centres()} if index < 2 else {"x": grid.x_centres()}
            count = grid.ny if index < 2 else grid.nx
            spec = {"inflow": _evaluate(case, "boundary", side, spec["inflow"],
                                        _names(case, grid, **along), (count,))}
        given[side] = spec
    try:
        parse_boundaries(given, grid.nx, grid.ny)
    except BoundaryError as error:
        raise case.error("boundary", error.side, error.reason) from None
    return given


def obstacle_of(case, grid):
    """(inside, distance): the body's functions (x, y) -> bool, true inside, and (x, y) ->
    signed distance, each None where the case does not give it."""
    given = case.data["obstacle"]

    def inside(x, y):
        names = _names(case, grid, x=x, y=y)
        return _evaluate(case, "obstacle", "inside", given["inside"], names,
                         x.shape).astype(bool)

    def distance(x, y):
        return _evaluate(case, "obstacle", "distance", given["distance"],
                         _names(case, grid, x=x, y=y), x.shape, number=True)
    return (inside if given["inside"] is not None else None,
            distance if given["distance"] is not None else None)


def obstacle_key(case):
    """The [obstacle] key an error of the body names: distance where given, else inside."""
    return "distance" if case.data["obstacle"]["distance"] is not None else "inside"


def initial_state(case, grid, solver_faces):
    """(u at the x faces, v at the y faces, p at the centres) from the [initial] section."""
    initial = case.data["initial"]
    (ux, uy), (vx, vy) = solver_faces
    xc, yc = grid.centres()
    u = _evaluate(case, "initial", "u", initial["u"], _names(case, grid, x=ux, y=uy), ux.shape)
    v = _evaluate(case, "initial", "v", initial["v"], _names(case, grid, x=vx, y=vy), vx.shape)
    p = _evaluate(case, "initial", "p", initial["p"], _names(case, grid, x=xc, y=yc), xc.shape)
    return u, v, p


def check(case):
    """Everything that can be checked before a backend exists."""
    grid = grid_of(case)
    boundary_of(case, grid)
    inside, distance = obstacle_of(case, grid)
    if inside is not None or distance is not None:
        try:
            body_distance(grid, inside, distance)
        except ObstacleError as error:
            raise case.error("obstacle", obstacle_key(case), str(error)) from None
    cfl = case.data["scheme"]["cfl"]
    if cfl > 1:
        raise case.error("scheme", "cfl", f"expected a value in (0, 1], got {cfl}")


def check_decomposable(case, grid, decomposition):
    """A one-line CaseError naming the first key a run of the 2D or 3D solver on several MPI
    ranks does not support yet (block.py: the pressure multigrid or no
    preconditioner, a grid the block layout can split)."""
    data = case.data
    refusals = [("pressure", "preconditioner", data["pressure"]["preconditioner"]
                 not in DISTRIBUTED,
                 f'pressure.preconditioner = "{data["pressure"]["preconditioner"]}"')]
    for section, key, refused, what in refusals:
        if refused:
            raise case.error(section, key, f"the {case.adapter.SOLVER.name} solver does not "
                             f"run on several MPI ranks with {what} yet")
    try:
        block_layout(decomposition.rank, decomposition.size, grid.shape,
                     dims=decomposition.dims or None)
    except ValueError as error:
        key = ("run", "decomposition") if decomposition.dims else ("mesh", "nx")
        raise case.error(*key, str(error)) from None


def build(case, decomposition=None):
    """The IncompressibleSolver described by a validated case, with its initial state set;
    with a decomposition (mesh/decomposition.py), this rank's block of it."""
    grid = grid_of(case)
    data = case.data
    if decomposition is not None:
        check_decomposable(case, grid, decomposition)
    physics, scheme, pressure = data["physics"], data["scheme"], data["pressure"]
    inside, distance = obstacle_of(case, grid)
    with solver_errors(case):
        try:
            solver = IncompressibleSolver(
                grid, boundary_of(case, grid), physics["nu"], advection=scheme["advection"],
                viscous=scheme["viscous"], cfl=scheme["cfl"],
                force=(physics["force_x"], physics["force_y"]),
                obstacle=inside, obstacle_distance=distance,
                reference_velocity=physics["reference_velocity"],
                reference_length=physics["reference_length"],
                pressure_preconditioner=pressure["preconditioner"],
                pressure_rtol=pressure["rtol"], pressure_maxiter=pressure["max_iterations"],
                pressure_divergence=pressure["divergence"],
                steady_tolerance=scheme["steady_tolerance"],
                steady_window=scheme["steady_window"],
                inflow_ramp=data["boundary"]["inflow_ramp"], backend=data["run"]["backend"],
                precision=data["run"]["precision"], decomposition=decomposition)
        except ObstacleError as error:  # the body's geometry (image stencils, normals)
            raise case.error("obstacle", obstacle_key(case), str(error)) from None
        u, v, p = initial_state(case, grid, solver.face_coordinates())
        solver.set_state(u, v, p)
    return solver
