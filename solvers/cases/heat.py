"""Case-file sections of the transient heat solver (solver = "heat"), their checks, and building
the solver from a case. The mesh, boundary and solver sections are the Poisson solver's.
A source, boundary value, flux or ambient whose expression uses t becomes a TimeFunction,
evaluated on the device in every step; the others are evaluated once."""

from dataclasses import replace

from ..expressions import ExpressionError
from ..fe.heat import HeatSolver, check_scheme
from ..fe.time_values import TimeFunction, uses_time
from . import poisson as poisson_case
from .bounds import check_clock_steps, solver_errors
from .poisson import _function, boundary_of, mesh_of
from .schema import COMMON_SECTIONS, REQUIRED, Key

SOLVER = HeatSolver
BYTES_PER_CELL = 4000  # per simplex, host, fp64, P2 (cases.bounds: the memory a mesh needs)
SECTIONS = {
    **poisson_case.SECTIONS,
    "material": {
        **poisson_case.SECTIONS["material"],
        "capacity": Key("table_float", {}, help="volumetric heat capacity rho c per material "
                        "(cell group) name"),
        "default_capacity": Key("float", 1.0, minimum=0, exclusive_minimum=True,
                                help="rho c of cells in no named material"),
    },
    "source": {
        **poisson_case.SECTIONS["source"],
        "f": Key("expr", 0.0, help="volume source f(x, y, z, t) of rho c du/dt - div(k grad u) "
                 "= f"),
        "exact": Key("expr", None, help="exact solution u(x, y, z, t), if known: adds fields "
                     "exact and error"),
    },
    "initial": {
        "u": Key("expr", 0.0, help="initial temperature u(x, y, z) (Dirichlet values win on "
                 "their boundaries)"),
    },
    "time": {
        **COMMON_SECTIONS["time"],
        "dt": Key("float", REQUIRED, minimum=0, exclusive_minimum=True,
                  help="time step (the step before an output or end time is shortened to "
                  "land on it)"),
        "theta": Key("float", 1.0, help="theta scheme: 1 backward Euler, 0.5 Crank-Nicolson, "
                     "in [0.5, 1]"),
    },
}


def _value(case, section, key, text):
    """A TimeFunction for an expression of t (evaluated on the device every step), else a
    function evaluated once."""
    if not uses_time(text):
        return _function(case, section, key, text)
    try:
        return TimeFunction(text, case.data["source"]["constants"])
    except ExpressionError as error:
        raise case.error(section, key, str(error)) from None


def _boundary(case, mesh):
    """boundary_of's conditions, with TimeFunctions for the values that depend on t."""
    out = boundary_of(case, mesh)
    spec = case.data["boundary"]
    for key, field in (("dirichlet", "value"), ("neumann", "flux"), ("robin", "ambient")):
        for name, given in spec[key].items():
            text = given.get("ambient", 0.0) if key == "robin" else given
            if uses_time(text):
                out[name] = replace(out[name], **{field: _value(case, "boundary", key, text)})
    return out


def _check_materials(case, mesh, key):
    table = case.data["material"][key]
    missing = [name for name in table if name not in mesh.materials]
    if missing:
        names = ", ".join(sorted(mesh.materials)) or "none"
        raise case.error("material", key, f"material '{missing[0]}' is not in the mesh (its "
                         f"materials: {names})")
    if any(value <= 0 for value in table.values()):
        raise case.error("material", key, f"{key} values must be > 0")


def check(case):
    mesh = mesh_of(case)
    _boundary(case, mesh)
    for key in ("conductivity", "capacity"):
        _check_materials(case, mesh, key)
    time = case.data["time"]
    try:
        check_scheme(time["dt"], time["theta"])
    except ValueError as error:
        key = "theta" if "theta" in str(error) else "dt"
        raise case.error("time", key, str(error)) from None
    check_clock_steps(case, time["dt"])
    _value(case, "source", "f", case.data["source"]["f"])
    _function(case, "initial", "u", case.data["initial"]["u"])
    if case.data["source"]["exact"] is not None:
        _function(case, "source", "exact", case.data["source"]["exact"], with_time=True)
    return mesh


def build(case):
    mesh = check(case)
    data = case.data
    source, material, solver, time = (data[k] for k in ("source", "material", "solver",
                                                        "time"))
    exact = None if source["exact"] is None else _function(case, "source", "exact",
                                                           source["exact"], with_time=True)
    with solver_errors(case):
        return HeatSolver(mesh, time["dt"], time["theta"], data["physics"]["degree"],
                          conductivity=material["conductivity"],
                          default_conductivity=material["default_conductivity"],
                          capacity=material["capacity"],
                          default_capacity=material["default_capacity"],
                          source=_value(case, "source", "f", source["f"]),
                          initial=_function(case, "initial", "u", data["initial"]["u"]),
                          boundary=_boundary(case, mesh),
                          preconditioner=solver["preconditioner"], rtol=solver["rtol"],
                          maxiter=solver["maxiter"], exact=exact,
                          backend=data["run"]["backend"], precision=data["run"]["precision"])
