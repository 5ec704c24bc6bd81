"""A steady run: one solve of a SteadySolver, with the same hooks and result as a
time-dependent Simulation, so the runner and the command line drive both."""

import time

from ..solver import RunError, RunResult


class SteadySolve:
    """Solve once; `on_output(sim)` is called after the solve. t and steps stay 0."""

    end_time = 0.0

    def __init__(self, solver, on_output=None, on_progress=None):
        self.solver = solver
        self.on_output = on_output
        self.on_progress = on_progress
        self.t = 0.0
        self.steps = 0
        self.info = None

    @property
    def fields(self):
        return self.solver.fields()

    def run(self):
        start = time.perf_counter()
        _, self.info = self.solver.solve()
        wall = time.perf_counter() - start
        if not self.info.converged:
            raise RunError(self.solver.failure_message(self.info))
        if self.on_output:
            self.on_output(self)
        return RunResult(t=0.0, steps=0, wall_seconds=wall, info=self.info)
