"""A steady run: one solve of a SteadySolver, with the same hooks and result as a
time-dependent Simulation, so the runner and the command line drive both."""

import time

import numpy as np

from ..solver import RunError, RunResult, SteadySolver


class SteadySolve:
    """Solve once; `on_output(sim)` is called after the solve. t and steps stay 0."""

    end_time = 0.0

    def __init__(self, solver: SteadySolver, on_output=None, on_progress=None):
        self.solver = solver
        self.on_output = on_output
        self.on_progress = on_progress
        self.t = 0.0
        self.steps = 0
        self.info = None

    @property
    def fields(self) -> dict[str, np.ndarray]:
        return self.solver.fields()

    def __repr__(self):
        state = "not solved yet" if self.info is None else repr(self.info)
        return f"<SteadySolve {type(self.solver).__name__}: {state}>"

    def run(self) -> RunResult:
        start = time.perf_counter()
        try:
            _, self.info = self.solver.solve()
        except (ValueError, ArithmeticError) as error:
            # A system the solve cannot start on (non-finite entries from extreme input), in
            # one line; the preconditioner and the Krylov solver are built only here.
            raise RunError(f"the solve could not start: {' '.join(str(error).split())}") \
                from None
        wall = time.perf_counter() - start
        if not self.info.converged:
            raise RunError(self.solver.failure_message(self.info))
        if self.on_output:
            self.on_output(self)
        return RunResult(t=0.0, steps=0, wall_seconds=wall, info=self.info)
