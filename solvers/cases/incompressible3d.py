"""Case-file sections of the 3D incompressible solver, their checks, and building the solver.
The 2D adapter's sections (cases/incompressible.py) with a z axis and no obstacle."""

import numpy as np

from ..fv.incompressible3d.boundary import parse_boundaries, tangential_axes
from ..fv.incompressible3d.solver import ADVECTION, IncompressibleSolver3D
from ..fv.sides import SIDES_3D, BoundaryError
from ..linalg.preconditioners import choices, help_text
from . import structured
from .bounds import solver_errors
from .incompressible import SECTIONS as SECTIONS_2D
from .incompressible import _evaluate, check_decomposable
from .schema import REQUIRED, Key

SOLVER = IncompressibleSolver3D
DECOMPOSES = True  # build() takes a decomposition (fv/incompressible/block.py)
BYTES_PER_CELL = 1500  # host, fp64 (cases.bounds: the memory a mesh needs)
AXES = "xyz"
SECTIONS = {
    "mesh": structured.MESH,
    "physics": {
        **{key: SECTIONS_2D["physics"][key]
           for key in ("nu", "force_x", "force_y")},
        "reference_velocity": Key("float", None, minimum=0, exclusive_minimum=True,
                                  help="U_ref of the steady test and the pressure solve's "
                                  "divergence floor (default: the largest boundary speed)"),
        "force_z": Key("float", 0.0, help="constant body force along z"),
        "reference_length": Key("float", None, minimum=0, exclusive_minimum=True,
                                help="L_ref of the steady test (default: the domain height "
                                "along y)"),
    },
    "scheme": {
        **SECTIONS_2D["scheme"],
        "advection": Key("choice", "central", choices=tuple(ADVECTION),
                         help="central (2nd order) or quick (upwind-biased, for high Re)"),
        "cfl": Key("float", 0.5, minimum=0, exclusive_minimum=True,
                   help="dt = cfl / (|u|/dx + |v|/dy + |w|/dz + the diffusion limit if "
                   "explicit), on the device"),
    },
    "pressure": {
        **SECTIONS_2D["pressure"],
        "preconditioner": Key("choice", "multigrid", choices=choices("multigrid"),
                              help="of the pressure CG. " + help_text(
                                  "multigrid", "geometric, or algebraic with a periodic axis")),
    },
    "initial": {
        "u": Key("expr", 0.0, help="x velocity: a number or an expression of x, y, z (at the "
                 "x faces)"),
        "v": Key("expr", 0.0, help="y velocity (at the y faces)"),
        "w": Key("expr", 0.0, help="z velocity (at the z faces)"),
        "p": Key("expr", 0.0, help="pressure (at the cell centres)"),
        "constants": SECTIONS_2D["initial"]["constants"],
    },
    "boundary": {
        **{side: Key("any", REQUIRED,
                     help="periodic, wall, {wall = [speed, speed]} (along the side's two "
                     "tangential axes in x, y, z order), slip, outflow or {inflow = profile} "
                     "(number or expression of the side's two tangential coordinates)")
           for side in SIDES_3D},
        "inflow_ramp": SECTIONS_2D["boundary"]["inflow_ramp"],
    },
}


def grid_of(case):
    return structured.grid_of(case, ndims=(3,))


def _names(case, grid, **coordinates):
    names = {"dx": grid.dx, "dy": grid.dy, "dz": grid.dz, "nu": case.data["physics"]["nu"],
             **coordinates}
    names.update({k: float(v) for k, v in case.data["initial"]["constants"].items()})
    return names


def boundary_of(case, grid):
    """{side: spec} with inflow expressions evaluated at the boundary faces."""
    given = {}
    centres = (grid.x_centres(), grid.y_centres(), grid.z_centres())
    for index, side in enumerate(SIDES_3D):
        spec = case.data["boundary"][side]
        if isinstance(spec, dict) and set(spec) == {"inflow"} \
                and isinstance(spec["inflow"], str):
            b, c = tangential_axes(index // 2)
            along = dict(zip((AXES[b], AXES[c]), np.meshgrid(centres[b], centres[c],
                                                             indexing="ij")))
            spec = {"inflow": _evaluate(case, "boundary", side, spec["inflow"],
                                        _names(case, grid, **along),
                                        (grid.shape[b], grid.shape[c]))}
        given[side] = spec
    try:
        parse_boundaries(given, grid.shape)
    except BoundaryError as error:
        raise case.error("boundary", error.side, error.reason) from None
    return given


def initial_state(case, grid, solver_faces):
    """(u, v, w at their faces, p at the centres) from the [initial] section."""
    initial = case.data["initial"]
    values = []
    for name, (x, y, z) in zip("uvw", solver_faces):
        values.append(_evaluate(case, "initial", name, initial[name],
                                _names(case, grid, x=x, y=y, z=z), x.shape))
    xc, yc, zc = grid.centres()
    values.append(_evaluate(case, "initial", "p", initial["p"],
                            _names(case, grid, x=xc, y=yc, z=zc), xc.shape))
    return values


def check(case):
    """Everything that can be checked before a backend exists."""
    boundary_of(case, grid_of(case))
    cfl = case.data["scheme"]["cfl"]
    if cfl > 1:
        raise case.error("scheme", "cfl", f"expected a value in (0, 1], got {cfl}")


def build(case, decomposition=None):
    """The IncompressibleSolver3D described by a validated case, with its initial state set;
    with a decomposition (mesh/decomposition.py), this rank's block of it."""
    grid = grid_of(case)
    data = case.data
    if decomposition is not None:
        check_decomposable(case, grid, decomposition)
    physics, scheme, pressure = data["physics"], data["scheme"], data["pressure"]
    with solver_errors(case):
        solver = IncompressibleSolver3D(
            grid, boundary_of(case, grid), physics["nu"], advection=scheme["advection"],
            viscous=scheme["viscous"], cfl=scheme["cfl"],
            force=tuple(physics[f"force_{a}"] for a in AXES),
            reference_velocity=physics["reference_velocity"],
            reference_length=physics["reference_length"],
            pressure_preconditioner=pressure["preconditioner"], pressure_rtol=pressure["rtol"],
            pressure_maxiter=pressure["max_iterations"],
            pressure_divergence=pressure["divergence"],
            steady_tolerance=scheme["steady_tolerance"], steady_window=scheme["steady_window"],
            inflow_ramp=data["boundary"]["inflow_ramp"], backend=data["run"]["backend"],
            precision=data["run"]["precision"], decomposition=decomposition)
        solver.set_state(*initial_state(case, grid, solver.face_coordinates()))
    return solver
