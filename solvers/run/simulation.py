"""A time-dependent run: a solver advanced by graph replays to its end time, with output at
fixed simulated-time intervals. The host reads the device clock only between replays."""

import time

from ..backend.stepper import Stepper
from ..solver import RunError, RunResult


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
    """Advance a TimeDependentSolver to `end_time`. `on_output(sim)` is called at every output
    time (t = 0 included) and `on_progress(sim, elapsed)` after every replay."""

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
        self.stopped = None  # the solver's reason for ending the run early

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
            raise RunError(self.solver.diverged_message(r.t, r.steps))
        if self.max_steps is not None and r.steps >= self.max_steps and r.t < self.end_time:
            raise RunError(f"reached max_steps={self.max_steps} at t={r.t:.6g} before the end "
                           f"time {self.end_time:g}")

    def _observe(self):
        """The solver reads its own diagnostics between replays and may end the run."""
        self.stopped = self.solver.observe() or None
        return self.stopped

    def step(self, n=1):
        """Take n steps eagerly (stopping early at the end time); returns the clock reading."""
        self.solver.clock.set(t_stop=self.end_time)
        for _ in range(n):
            self._eager.advance()
            self._observe()
        self.reading = self.solver.clock.read()
        self._check()
        return self.reading

    def run(self):
        """Advance to the end time (or until the solver's observe() ends the run), writing
        output; returns a RunResult."""
        start = time.perf_counter()
        steps0 = self.steps
        for target in output_times(self.end_time, self.output_interval):
            if target < self.t:
                continue
            self.solver.clock.set(t_stop=target)
            while self.t < target and not self.stopped:
                self.stepper.advance()
                self.reading = self.solver.clock.read()
                self._check()
                self._observe()
                if self.on_progress:
                    self.on_progress(self, time.perf_counter() - start)
            if self.on_output:
                self.on_output(self)
            if self.stopped:
                break
        return RunResult(t=self.t, steps=self.steps, wall_seconds=time.perf_counter() - start,
                         steps_run=self.steps - steps0, stopped=self.stopped)
