"""The project's CG preconditioners: one table of names, the same in every solver and case
file, and one function that builds the preconditioner a name stands for on an operator.

    PRECONDITIONERS["amg"]                         # what the name means
    M = preconditioner("multigrid", operator)      # what ConjugateGradient takes
    ConjugateGradient(operator, M, rtol=1e-8)
    choices("amg")                                 # a case key's names, its default first

Names:
    multigrid  the best multigrid for the operator: geometric (GeometricMultigrid) on a
               structured-grid stencil (StencilLaplacian), algebraic (as amg) on an assembled
               matrix. A stencil whose grid cannot be coarsened is an error that names the
               alternatives.
    amg        algebraic multigrid: smoothed aggregation of the assembled matrix (a stencil's
               from its to_scipy()), built on the backend, whatever the operator.
    jacobi     the inverse diagonal, fused into CG's vector kernels.
    none       plain CG.
A vector problem (elasticity) passes its near-nullspace (the rigid body modes) and its block
size (the components per node), which the algebraic hierarchy uses.
"""

from .amg import AlgebraicMultigrid
from .multigrid import MIN_COARSE_CELLS, GeometricMultigrid, coarse_shapes
from .stencil import StencilLaplacian

# Name -> meaning; the order is that of error messages and case-file choices (after the
# default). A case key offers every name.
PRECONDITIONERS = {
    "amg": "algebraic multigrid (smoothed aggregation of the assembled matrix)",
    "jacobi": "Jacobi (the inverse diagonal)",
    "none": "plain CG",
    "multigrid": "the best multigrid for the operator: geometric on a structured-grid "
                 "stencil, else algebraic (amg)",
}
MULTIGRIDS = ("multigrid", "amg")  # the names of hierarchies (a few iterations suffice)


def choices(default):
    """Every name, `default` first: the choices of a case-file key."""
    check(default)
    return (default, *(name for name in PRECONDITIONERS if name != default))


def check(name, names=tuple(PRECONDITIONERS), what="preconditioner"):
    """A one-line ValueError for a name outside `names`."""
    if name not in names:
        raise ValueError(f"{what} must be one of {', '.join(names)}, got {name!r}")


def help_text(default, multigrid):
    """A case key's help: each name and its meaning, with what multigrid is for this
    solver's operator."""
    meanings = {**PRECONDITIONERS, "multigrid": multigrid}
    return "; ".join(f"{name}: {meanings[name]}" for name in choices(default))


def geometric_multigrid_fits(operator):
    """Whether the operator is a stencil whose grid geometric multigrid can coarsen."""
    return isinstance(operator, StencilLaplacian) and len(coarse_shapes(operator.shape)) >= 2


def algebraic_multigrid(operator, near_nullspace=None, block_size=1):
    """An AlgebraicMultigrid of an operator's assembled matrix: a CsrMatrix's device arrays
    (no host copy), another operator's to_scipy() (a stencil's formula), in its backend and
    precision. The hierarchy drops the stored zeros (amg_input.py)."""
    return AlgebraicMultigrid(operator, near_nullspace=near_nullspace, block_size=block_size)


def preconditioner(name, operator, near_nullspace=None, block_size=1):
    """The preconditioner `name` stands for on `operator` (a CsrMatrix, a StencilLaplacian or
    another operator with to_scipy()): an object with bind(r, z), "jacobi" or None, as
    ConjugateGradient takes it. near_nullspace and block_size go to the algebraic
    hierarchy."""
    check(name)
    if name == "none":
        return None
    if name == "jacobi":
        return "jacobi"
    if name == "multigrid" and isinstance(operator, StencilLaplacian):
        if not geometric_multigrid_fits(operator):
            raise ValueError(f"geometric multigrid needs even cell counts of at least "
                             f"{2 * MIN_COARSE_CELLS} per axis, got {operator.shape}; use "
                             "preconditioner 'amg' or 'jacobi'")
        return GeometricMultigrid(operator)
    return algebraic_multigrid(operator, near_nullspace, block_size)


def describe(preconditioner):
    """A short name of a built preconditioner: its class, 'jacobi' or 'none'."""
    if preconditioner is None:
        return "none"
    return preconditioner if isinstance(preconditioner, str) else \
        type(preconditioner).__name__
