"""Case-file sections of the linear-elasticity solver (solver = "elasticity"), their checks, and
building the solver from a case. Vector data are lists of one number or expression of x, y, z
(and t) per component; a Dirichlet table {x = ..., y = ...} constrains only the components it
names (a roller)."""

from ..fe.boundary import Dirichlet, Neumann
from ..fe.elasticity import PLANES, ElasticitySolver, check_material
from ..mesh.generators import quadrilateral
from ..mesh.unstructured import MeshError
from . import poisson as poisson_case
from .bounds import check_cells, solver_errors
from .schema import Key, short

COMPONENTS = "xyz"

SOLVER = ElasticitySolver
BYTES_PER_CELL = 16000  # per simplex, host, fp64, P2 (cases.bounds: the memory a mesh needs)
SECTIONS = {
    "physics": {
        "degree": Key("choice", 1, choices=(1, 2), help="Lagrange element degree (P1 or P2)"),
        "plane": Key("choice", None, choices=PLANES, help="2D meshes: plane strain (eps_zz = 0) "
                     "or plane stress (sigma_zz = 0); 3D meshes: leave out"),
    },
    "mesh": {
        **poisson_case.SECTIONS["mesh"],
        "generator": Key("choice", None, choices=(*poisson_case.GENERATORS, "quadrilateral"),
                         help="built-in structured simplex mesh instead of a file "
                         "(quadrilateral: a rectangle mesh mapped onto `corners`)"),
        "corners": Key("any", None, help="quadrilateral: [[x, y] x 4] counter-clockwise; "
                       "left is corners 0-3, right 1-2, bottom 0-1, top 3-2"),
    },
    "material": {
        "young": Key("table_float", {}, help="Young's modulus E per material (cell group)"),
        "poisson": Key("table_float", {}, help="Poisson's ratio nu per material, in (-1, 0.5)"),
        "default_young": Key("float", 1.0, minimum=0, exclusive_minimum=True,
                             help="E of cells in no named material"),
        "default_poisson": Key("float", 0.3, help="nu of cells in no named material"),
    },
    "source": {
        "body_force": Key("any", None, help="[fx, fy(, fz)]: force per unit volume (numbers or "
                          "expressions of x, y, z)"),
        "constants": Key("table_float", {}, help="named numbers usable in the expressions"),
    },
    "boundary": {
        "dirichlet": Key("any", {}, help="{name = [ux, uy(, uz)]} prescribed displacement, or "
                         "{name = {x = ux}} for the named components only (roller)"),
        "traction": Key("any", {}, help="{name = [tx, ty(, tz)]}: sigma n, force per unit "
                        "length (2D) or area (3D)"),
    },
    "solver": poisson_case.SECTIONS["solver"],
    "time": None,
}


def mesh_of(case):
    """The case's Mesh: poisson_case's, plus the quadrilateral generator."""
    spec = case.data["mesh"]
    if spec["generator"] != "quadrilateral":
        return poisson_case.mesh_of(case)
    counts, corners = spec["cells"], spec["corners"]
    if (not isinstance(counts, list) or len(counts) != 2
            or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1
                       for c in counts)):
        raise case.error("mesh", "cells", f"expected 2 positive integers for quadrilateral, "
                         f"got {short(counts)}")
    if (not isinstance(corners, list) or len(corners) != 4
            or not all(isinstance(p, list) and len(p) == 2 for p in corners)):
        raise case.error("mesh", "corners", f"expected [[x, y] x 4], got {short(corners)}")
    check_cells(case, "cells", 2 * counts[0] * counts[1], "simplices")
    try:
        return quadrilateral(*counts, corners)
    except (ValueError, TypeError, MeshError) as error:
        raise case.error("mesh", "corners", str(error)) from None


def _vector(case, section, key, value, dim, with_time=False):
    """A tuple of dim functions from a list of numbers or expressions."""
    if not isinstance(value, list) or len(value) != dim:
        raise case.error(section, key, f"expected a list of {dim} components (the mesh is "
                         f"{dim}D), got {value!r}")
    return tuple(poisson_case._function(case, section, key, v, with_time) for v in value)


def boundary_of(case, mesh):
    """{name: Dirichlet | Neumann} with names and vector lengths checked against the mesh."""
    spec, dim, out = case.data["boundary"], mesh.dim, {}
    tables = {key: spec[key] for key in ("dirichlet", "traction")}
    for key, table in tables.items():
        if not isinstance(table, dict):
            raise case.error("boundary", key, f"expected a table {{name = ...}}, got {table!r}")
    named = [(key, name, value) for key, table in tables.items() for name, value in table.items()]
    for key, name, _ in named:
        if name not in mesh.boundaries:
            raise case.error("boundary", key, f"boundary '{name}' is not in the mesh (its "
                             f"boundaries: {', '.join(sorted(mesh.boundaries)) or 'none'})")
    for key, name, value in named:
        if name in out:
            raise case.error("boundary", key, f"boundary '{name}' has two conditions")
        out[name] = (Neumann(_vector(case, "boundary", key, value, dim, True))
                     if key == "traction" else _dirichlet(case, name, value, dim))
    return out


def _dirichlet(case, name, value, dim):
    """Dirichlet from [ux, uy(, uz)] or, for some components only, {x = ux, ...}."""
    if not isinstance(value, dict):
        return Dirichlet(_vector(case, "boundary", "dirichlet", value, dim, True))
    allowed = COMPONENTS[:dim]
    if not value or set(value) - set(allowed):
        raise case.error("boundary", "dirichlet", f"{name}: expected components among "
                         f"{', '.join(allowed)}, got {value!r}")
    components = tuple(sorted(allowed.index(c) for c in value))
    return Dirichlet(_vector(case, "boundary", "dirichlet",
                             [value[allowed[c]] for c in components], len(components), True),
                     components)


def materials_of(case, mesh):
    """(young, poisson) tables with names checked against the mesh and values physical."""
    material = case.data["material"]
    for key in ("young", "poisson"):
        missing = [name for name in material[key] if name not in mesh.materials]
        if missing:
            names = ", ".join(sorted(mesh.materials)) or "none"
            raise case.error("material", key, f"material '{missing[0]}' is not in the mesh "
                             f"(its materials: {names})")
    young, poisson = material["young"], material["poisson"]
    for name in sorted(set(young) | set(poisson)) + [None]:
        key = "poisson" if name in poisson or name is None else "young"
        try:
            check_material(name or "default", young.get(name, material["default_young"]),
                           poisson.get(name, material["default_poisson"]))
        except ValueError as error:
            raise case.error("material", key if name else "default_poisson", str(error)) \
                from None
    return young, poisson


def check(case):
    mesh = mesh_of(case)
    boundary_of(case, mesh)
    materials_of(case, mesh)
    plane = case.data["physics"]["plane"]
    if (plane is None) != (mesh.dim == 3):
        expected = "no plane for a 3D mesh" if mesh.dim == 3 else "plane = \"strain\" or " \
            "\"stress\" for a 2D mesh"
        raise case.error("physics", "plane", f"expected {expected}, got {plane!r}")
    force = case.data["source"]["body_force"]
    if force is not None:
        _vector(case, "source", "body_force", force, mesh.dim)
    return mesh


def build(case):
    mesh = check(case)
    data = case.data
    young, poisson = materials_of(case, mesh)
    force = data["source"]["body_force"]
    solver = data["solver"]
    with solver_errors(case):
        return ElasticitySolver(
            mesh, data["physics"]["degree"], young=young, poisson=poisson,
            default_young=data["material"]["default_young"],
            default_poisson=data["material"]["default_poisson"], plane=data["physics"]["plane"],
            body_force=None if force is None else _vector(case, "source", "body_force", force,
                                                          mesh.dim),
            boundary=boundary_of(case, mesh), preconditioner=solver["preconditioner"],
            rtol=solver["rtol"], maxiter=solver["maxiter"], backend=data["run"]["backend"],
            precision=data["run"]["precision"])
