"""solvers: FP32 finite-volume and finite-element solvers on CuPy RawKernels and CUDA Graphs.

    import solvers
    run = solvers.load_case("cases/sod.toml", mesh={"nx": 800})
    run.run()
    run.fields["rho"]
    records = solvers.sweep("cases/sod.toml", {"mesh.nx": [200, 400]}, jobs=2)
    with solvers.SweepPool(jobs=4) as pool:    # workers kept across sweeps
        records = solvers.sweep("cases/sod.toml", {"mesh.nx": [200, 400]}, executor=pool)
"""

from ._metadata import version as _version
from .cases import CaseError, solver_class
from .run.runner import CaseRun, load_case
from .run.sweep import sweep
from .run.sweep_pool import SweepPool
from .solver import RunError, RunResult

__all__ = ["load_case", "CaseRun", "CaseError", "RunError", "RunResult", "solver_class", "sweep",
           "SweepPool"]


def __getattr__(name):
    if name == "__version__":  # read from the installed metadata only when asked
        return _version()
    raise AttributeError(f"module 'solvers' has no attribute '{name}'")
