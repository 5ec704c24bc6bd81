"""solvers: FP32 finite-volume and finite-element solvers on CuPy RawKernels and CUDA Graphs.

    import solvers
    run = solvers.load_case("cases/sod.toml", mesh={"nx": 800})
    run.run()
    run.fields["rho"]
"""

from .cases import CaseError, solver_class
from .run.runner import load_case
from .solver import RunError

__all__ = ["load_case", "CaseError", "RunError", "solver_class"]
