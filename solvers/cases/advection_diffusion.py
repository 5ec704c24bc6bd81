"""Case-file sections of the advection-diffusion solver (solver = "advection_diffusion"), their
checks, and building the solver from a case."""

import numpy as np

from ..expressions import ExpressionError, evaluate
from ..fv.advection_diffusion import (
    BOUNDARY_KINDS,
    LIMITERS,
    RECONSTRUCTIONS,
    TIME_INTEGRATORS,
    AdvectionDiffusionSolver,
    face_velocities,
    parse_boundary,
)
from ..fv.sides import SIDES
from . import deposit, structured
from .bounds import solver_errors
from .schema import REQUIRED, Key
from .structured import MESH, grid_of

SOLVER = AdvectionDiffusionSolver
BYTES_PER_CELL = 100  # host, fp64, 2D (cases.bounds: the memory a mesh needs)
SECTIONS = {
    "mesh": MESH,
    "physics": {
        "velocity": Key("any", REQUIRED, help="[vx] (1D) or [vx, vy] (2D): numbers or "
                        "expressions of x, y (and the [initial] constants), evaluated on the "
                        "cell faces; fixed in time"),
        "diffusivity": Key("float", 0.0, minimum=0, help="D of c_t + div(a c) = D lap c"),
    },
    "scheme": {
        "reconstruction": Key("choice", "muscl", choices=tuple(RECONSTRUCTIONS),
                              help="first_order (upwind), or MUSCL on c"),
        "limiter": Key("choice", "van_leer", choices=tuple(LIMITERS),
                       help="MUSCL slope limiter"),
        "time_integrator": Key("choice", "ssp_rk2", choices=tuple(TIME_INTEGRATORS),
                               help="strong-stability-preserving Runge-Kutta"),
        "cfl": Key("float", 0.5, minimum=0, exclusive_minimum=True,
                   help="CFL number in (0, 1], dt = cfl / max(outflow speed/dx (+ /dy) + "
                   "2 D (1/dx^2 + 1/dy^2)); MUSCL stays TVD up to 0.5"),
    },
    "initial": {
        "c": Key("expr", REQUIRED, help="c: a number or an expression of x, y"),
        "constants": Key("table_float", {}, help="named numbers usable in the expressions"),
    },
    "boundary": {
        side: Key("any", None, help=f"{', '.join(BOUNDARY_KINDS)} (periodic on both sides "
                  "of an axis; outflow: zero gradient; wall: no flux)")
        for side in SIDES
    },
}


def _names(case, grid, x, y):
    names = {"x": x, "y": y, "dx": grid.dx, "dy": grid.dy}
    for constant, value in case.data["initial"]["constants"].items():
        names[constant] = float(value)
    return names


def boundary_of(case, grid):
    """The grid's {side: spec}; a one-line CaseError for a wrong or missing side."""
    return structured.boundary_of(case, grid, parse_boundary)


def velocity_of(case, grid):
    """The [physics] velocity as one component per axis (numbers, or functions of (x, y)
    evaluating its expressions), checked on the grid's faces; CaseError names the key."""
    given = case.data["physics"]["velocity"]
    axes = "[vx]" if grid.ndim == 1 else "[vx, vy]"
    if not isinstance(given, list) or len(given) != grid.ndim:
        count = len(given) if isinstance(given, list) else "not a list"
        raise case.error("physics", "velocity", f"expected {axes}, one component per axis of "
                         f"the {grid.ndim}D grid, got {given!r} ({count})")
    components = []
    for value in given:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise case.error("physics", "velocity", f"expected numbers or expression strings, "
                             f"got {value!r}")
        if isinstance(value, str):
            components.append(lambda x, y, text=value: evaluate(text, _names(case, grid, x, y)))
        else:
            components.append(float(value))
    try:
        face_velocities(grid, components, boundary_of(case, grid))
    except ExpressionError as error:
        raise case.error("physics", "velocity", str(error)) from None
    except ValueError as error:
        raise case.error("physics", "velocity", str(error)) from None
    return components


def initial_c(case, grid):
    """c evaluated at the cell centres; CaseError names the key."""
    centres = grid.centres()
    names = _names(case, grid, centres[0], centres[1] if grid.ndim == 2 else 0.0)
    try:
        value = np.broadcast_to(np.asarray(evaluate(case.data["initial"]["c"], names,
                                                    functions=deposit.functions(grid)), float),
                                grid.shape)
    except ExpressionError as error:
        raise case.error("initial", "c", str(error)) from None
    except ValueError as error:
        raise case.error("initial", "c", f"result does not fit the grid ({error})") from None
    if not np.all(np.isfinite(value)):
        raise case.error("initial", "c", "expression gives non-finite values")
    return value


def check(case):
    """Everything that can be checked before a backend exists."""
    grid = grid_of(case)
    boundary_of(case, grid)
    velocity_of(case, grid)
    initial_c(case, grid)
    structured.check_cfl(case)


def build(case):
    """The AdvectionDiffusionSolver described by a validated case, with its initial state."""
    grid = grid_of(case)
    scheme = case.data["scheme"]
    with solver_errors(case):
        solver = AdvectionDiffusionSolver(
            grid, boundary_of(case, grid), velocity_of(case, grid),
            diffusivity=case.data["physics"]["diffusivity"],
            reconstruction=scheme["reconstruction"], limiter=scheme["limiter"],
            time_integrator=scheme["time_integrator"], cfl=scheme["cfl"],
            backend=case.data["run"]["backend"], precision=case.data["run"]["precision"])
        solver.set_state(initial_c(case, grid))
    return solver
