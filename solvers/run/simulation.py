"""A time-dependent run: a solver advanced by graph replays to its end time, with output at
fixed simulated-time intervals and checkpoints at fixed simulated or wall-clock intervals. The
host reads the device clock only between replays."""

import math
import time

import numpy as np

from ..backend.clock import ClockReading
from ..backend.stepper import Stepper
from ..cases.bounds import MAX_CLOCK_STEPS
from ..solver import RunError, RunResult, TimeDependentSolver
from .signals import deferred


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
    time (t = 0 included), `on_progress(sim, elapsed)` after every replay and
    `on_checkpoint(sim)` after a replay that ends `checkpoint_interval` of simulated time or
    `checkpoint_wall_seconds` of wall time after the last checkpoint (0: never). A signal is
    held while a replay and its bookkeeping, an output or a checkpoint runs (signals.py)."""

    def __init__(self, solver: TimeDependentSolver, end_time: float,
                 output_interval: float = 0.0, steps_per_graph: int = 10, graph: bool = True,
                 max_steps: int | None = None, on_output=None, on_progress=None,
                 checkpoint_interval=0.0,
                 checkpoint_wall_seconds=0.0, on_checkpoint=None) -> None:
        if not end_time > 0:
            raise ValueError(f"end time must be > 0, got {end_time}")
        self.solver = solver
        self.end_time = float(end_time)
        self.output_interval = float(output_interval)
        self.max_steps = max_steps
        self.on_output = on_output
        self.on_progress = on_progress
        self.stepper = Stepper(solver.backend, solver.step, steps_per_graph, graph,
                               segments=solver.step_segments())
        self._eager = Stepper(solver.backend, solver.step, 1, graph=False)
        self.checkpoint_interval = float(checkpoint_interval or 0.0)
        self.checkpoint_wall_seconds = float(checkpoint_wall_seconds or 0.0)
        self.on_checkpoint = on_checkpoint
        self.reading = solver.clock.read()
        self.stopped = None  # the solver's reason for ending the run early
        self.last_output = None  # the time of the last output written (None: none yet)

    def resume(self, last_output):
        """Continue from a state restored into the solver: the clock is read again and output
        times up to `last_output` (None: none) are not written again."""
        self.reading = self.solver.clock.read()
        self.last_output = last_output
        self.stopped = None

    def _next_checkpoint(self):
        """The simulated time of the next checkpoint: the next multiple of the interval."""
        if self.checkpoint_interval <= 0:
            return math.inf
        intervals = self.t / self.checkpoint_interval
        if not math.isfinite(intervals):  # an interval too small to count: every replay
            return self.t
        return self.checkpoint_interval * (math.floor(intervals) + 1)

    def _checkpoint(self, marks):
        """Call on_checkpoint if one is due; marks = [next simulated time, last wall time]."""
        now = time.perf_counter()
        due = self.t >= marks[0] or (self.checkpoint_wall_seconds > 0
                                     and now - marks[1] >= self.checkpoint_wall_seconds)
        if self.on_checkpoint and due and self.t < self.end_time:
            self.on_checkpoint(self)
            marks[:] = [self._next_checkpoint(), time.perf_counter()]

    @property
    def t(self) -> float:
        return self.reading.t

    @property
    def steps(self) -> int:
        return self.reading.steps

    def __repr__(self):
        every = self.output_interval
        return (f"<Simulation {type(self.solver).__name__}: t={self.t:.6g} of {self.end_time:g}, "
                f"{self.steps} steps, output {f'every {every:g}' if every > 0 else 'at the end'}>")

    @property
    def fields(self) -> dict[str, np.ndarray]:
        """Host NumPy copies of the solver's output fields."""
        return self.solver.fields()

    def _check(self):
        r = self.reading
        if r.diverged:
            raise RunError(self.solver.diverged_message(r.t, r.steps))
        if self.max_steps is not None and r.steps >= self.max_steps and r.t < self.end_time:
            raise RunError(f"reached max_steps={self.max_steps} at t={r.t:.6g} before the end "
                           f"time {self.end_time:g}")
        # dt of a step not shortened to land on the stop time: the clock's pace from here
        if 0 < r.dt < r.t_stop - r.t and (self.end_time - r.t) / r.dt > MAX_CLOCK_STEPS:
            raise RunError(f"the end time {self.end_time:g} is out of reach: at dt={r.dt:.3g} "
                           f"it is {(self.end_time - r.t) / r.dt:.3g} steps away, more than "
                           "the 2^52 that advance an fp64 clock")

    def _observe(self):
        """The solver reads its own diagnostics between replays and may end the run."""
        self.stopped = self.solver.observe() or None
        return self.stopped

    def step(self, n: int = 1) -> ClockReading:
        """Take n steps eagerly (stopping early at the end time); returns the clock reading."""
        self.solver.clock.set(t_stop=self.end_time)
        for _ in range(n):
            self._eager.advance()
            self._observe()
        self.reading = self.solver.clock.read()
        self._check()
        return self.reading

    def run(self) -> RunResult:
        """Advance to the end time (or until the solver's observe() ends the run), writing
        output; returns a RunResult."""
        start = time.perf_counter()
        steps0 = self.steps
        marks = [self._next_checkpoint(), start]
        for target in output_times(self.end_time, self.output_interval):
            if target < self.t or (self.last_output is not None and target <= self.last_output):
                continue
            self.solver.clock.set(t_stop=target)
            while self.t < target and not self.stopped:
                with deferred():
                    self.stepper.advance()
                    self.reading = self.solver.clock.read()
                    self._check()
                    self._observe()
                    if self.on_progress:
                        self.on_progress(self, time.perf_counter() - start)
                    self._checkpoint(marks)
            with deferred():
                if self.on_output:
                    self.on_output(self)
                self.last_output = self.t
            if self.stopped:
                break
        return RunResult(t=self.t, steps=self.steps, wall_seconds=time.perf_counter() - start,
                         steps_run=self.steps - steps0, stopped=self.stopped)
