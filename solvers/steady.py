"""A steady run: one solve of a steady solver (solver.steady is True), with the same hooks
and result as a time-dependent Simulation, so the runner and the command line drive both."""

import time

from .simulation import RunError, RunResult


class SteadySolve:
    """Solve once; `on_output(sim)` is called after the solve. t is 0 and steps counts the
    linear-solver iterations."""

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
        self.steps = self.info.iterations
        if not self.info.converged:
            raise RunError(f"the linear solve did not converge ({self.info.status} after "
                           f"{self.info.iterations} iterations, relative residual "
                           f"{self.info.residual:.3g}); raise solver.maxiter or rtol, or use "
                           "the amg preconditioner")
        if self.on_output:
            self.on_output(self)
        return RunResult(t=0.0, steps=self.steps, wall_seconds=wall,
                         cell_updates_per_second=self.solver.space.n / wall if wall else 0.0)
