"""A time-dependent run: a solver advanced by graph replays to its end time, with output at
fixed simulated-time intervals. The host reads the device clock only between replays."""

import time
from dataclasses import dataclass, field

from .stepper import Stepper


class RunError(RuntimeError):
    """A run stopped before its end time (divergence, step limit); output so far is kept."""


@dataclass
class RunResult:
    t: float
    steps: int
    wall_seconds: float
    cell_updates_per_second: float
    files: list = field(default_factory=list)


def output_times(end_time, interval):
    """Times at which snapshots are written: 0, interval, 2 interval, ..., end_time."""
    times = [0.0]
    if interval > 0:
        k = 1
        while k * interval < end_time * (1 - 1e-12):
            times.append(k * interval)
            k += 1
    times.append(end_time)
    return times


class Simulation:
    """Advance `solver` to `end_time`. `on_output(sim)` is called at every output time (t = 0
    included) and `on_progress(sim, elapsed)` after every replay."""

    def __init__(self, solver, end_time, output_interval=0.0, steps_per_graph=10, graph=True,
                 max_steps=None, on_output=None, on_progress=None):
        if not end_time > 0:
            raise ValueError(f"end time must be > 0, got {end_time}")
        self.solver = solver
        self.end_time = float(end_time)
        self.output_interval = float(output_interval)
        self.max_steps = max_steps
        self.on_output = on_output
        self.on_progress = on_progress
        self.stepper = Stepper(solver.backend, solver.step, steps_per_graph, graph)
        self._eager = Stepper(solver.backend, solver.step, 1, graph=False)
        self.reading = solver.clock.read()
        self.stopped_early = False

    @property
    def t(self):
        return self.reading.t

    @property
    def steps(self):
        return self.reading.steps

    @property
    def fields(self):
        """Host NumPy copies of the solver's output fields."""
        return self.solver.fields()

    def _check(self):
        r = self.reading
        if r.diverged:
            raise RunError(f"the solution became non-finite or non-physical (rho or p <= 0) at "
                           f"t={r.t:.6g} after {r.steps} steps; try a smaller cfl or a more "
                           "dissipative scheme")
        if self.max_steps is not None and r.steps >= self.max_steps and r.t < self.end_time:
            raise RunError(f"reached max_steps={self.max_steps} at t={r.t:.6g} before the end "
                           f"time {self.end_time:g}")

    def step(self, n=1):
        """Take n steps eagerly (stopping early at the end time); returns the clock reading."""
        self.solver.clock.set(t_stop=self.end_time)
        for _ in range(n):
            self._eager.advance()
            self._solver_finished()
        self.reading = self.solver.clock.read()
        self._check()
        return self.reading

    def _solver_finished(self):
        """A solver with observe() reads its own diagnostics between replays (force series,
        say) and may end the run early by returning True (a steady state reached)."""
        observe = getattr(self.solver, "observe", None)
        self.stopped_early = bool(observe and observe())
        return self.stopped_early

    def run(self):
        """Advance to the end time (or until the solver's observe() says it is done), writing
        output; returns a RunResult."""
        start = time.perf_counter()
        steps0 = self.steps
        for target in output_times(self.end_time, self.output_interval):
            if target < self.t:
                continue
            self.solver.clock.set(t_stop=target)
            while self.t < target and not self.stopped_early:
                self.stepper.advance()
                self.reading = self.solver.clock.read()
                self._check()
                self._solver_finished()
                if self.on_progress:
                    self.on_progress(self, time.perf_counter() - start)
            if self.on_output:
                self.on_output(self)
            if self.stopped_early:
                break
        wall = time.perf_counter() - start
        updates = (self.steps - steps0) * self.solver.grid.ncells
        return RunResult(t=self.t, steps=self.steps, wall_seconds=wall,
                         cell_updates_per_second=updates / wall if wall > 0 else 0.0)
