"""The simulated clock of an explicit solver, kept in device memory.

A solver leaves in `rates` one partial maximum of the stability rate (largest stable 1/dt) per
block of its last kernel; a step starts with `finish_dt` (raw_kernels/core/control.cu), which
turns them into dt, clips it to the stop time and advances t. It also flips `parity` (an int on
the device) with every step taken, for solvers that alternate their state between two buffers.
A solver whose step is one launch (one-launch steps, raw_kernels/core/clock.h) does neither:
its kernel reads dt from the clock at its start and its last block advances the clock at its
end (with `tickets`, `cfl`); after setting a state it launches `next_dt` instead.
The host reads the clock only between graph replays. The layout of the clock's `ctrl` array is
defined once, in raw_kernels/core/clock.h, and read from there.
"""

from dataclasses import dataclass

import numpy as np

from .source import integer_defines

SOURCE = "core/control.cu"
LAYOUT = "core/clock.h"
CTRL_T, CTRL_DT, CTRL_T_STOP, CTRL_STEPS, CTRL_STATUS, CTRL_SIZE = (
    integer_defines(LAYOUT)[name]
    for name in ("CTRL_T", "CTRL_DT", "CTRL_T_STOP", "CTRL_STEPS", "CTRL_STATUS", "CTRL_SIZE"))
RATE_BLOCK = 256  # threads per block of the rate kernels (a solver passes it to its kernels)
FINISH_THREADS = 1024  # most threads of the control kernels' one block (8192^2 Euler: ~10^4)


def kernel_defines():
    return {"FINISH_THREADS": FINISH_THREADS}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside): control.cu."""
    yield SOURCE, kernel_defines()


def finish_threads(partials):
    """Threads of finish_dt's block: a power of two from 32 up, about one a partial (each of the
    first 32 threads folds threads / 32 values): a small grid's few partials are not spread
    over a block mostly idle, which shortens the reduction where finish_dt is a visible part of
    a step (measurements: docs/performance.md)."""
    return min(FINISH_THREADS, max(32, 1 << (int(partials) - 1).bit_length()))


@dataclass(frozen=True)
class ClockReading:
    t: float
    dt: float
    t_stop: float
    steps: int
    diverged: bool
    parity: int


class DeviceClock:
    """t, dt, stop time, step count and a divergence flag on the device, plus the dt kernel."""

    def __init__(self, backend, real_dtype, partials, cfl):
        if not 0 < cfl <= 1:
            raise ValueError(f"cfl must be in (0, 1], got {cfl}")
        self.backend = backend
        # No stop time until one is set: a bare solver.step() advances.
        ctrl = np.zeros(CTRL_SIZE)
        ctrl[CTRL_T_STOP] = np.inf
        self.ctrl = backend.to_device(ctrl)
        self.dt = backend.zeros((1,), real_dtype)
        self.partials = int(partials)
        self.rates = backend.zeros((self.partials,), real_dtype)
        self.parity = backend.zeros((1,), np.int32)
        self.tickets = backend.zeros((1,), np.int32)  # the last-block counter of one-launch steps
        kernels = backend.module(SOURCE, real_dtype, kernel_defines())
        threads = finish_threads(partials)
        self._finish = kernels.finish_dt.bind(1, threads, self.rates, self.partials, self.ctrl,
                                              self.dt, self.parity, cfl)
        self._next_dt = kernels.next_dt.bind(1, threads, self.rates, self.partials, self.ctrl,
                                             cfl)
        self._fold = kernels.fold_rates.bind(1, threads, self.rates, self.partials)

    def arrays(self):
        """The clock's device arrays, all of its state (for checkpoints; tickets are 0 between
        launches)."""
        return {"ctrl": self.ctrl, "dt": self.dt, "rates": self.rates, "parity": self.parity}

    def partials_of(self, rates):
        """Stored partial rates as this clock's: the same where they fit, else their largest
        first and zeros (a step reads only their maximum; a checkpoint of another launch
        shape or rank count restores the same dt)."""
        rates = np.asarray(rates)
        if rates.shape == (self.partials,) or rates.size == 0:
            return rates
        out = np.zeros(self.partials, rates.dtype)
        out[0] = rates.max()
        return out

    def finish_dt(self):
        """Launch: dt from self.rates (filled by the solver), then advance t."""
        self._finish()

    def fold_rates(self):
        """Launch: the largest of self.rates into self.rates[0] (a decomposed grid's block
        then shares that one value with the other blocks)."""
        self._fold()

    def next_dt(self):
        """Launch, for one-launch steps: the next dt from self.rates, the rates of a state the
        host has just set (the step kernels advance the clock themselves)."""
        self._next_dt()

    def read(self):
        ctrl = self.backend.to_host(self.ctrl)
        return ClockReading(t=float(ctrl[CTRL_T]), dt=float(ctrl[CTRL_DT]),
                            t_stop=float(ctrl[CTRL_T_STOP]), steps=int(ctrl[CTRL_STEPS]),
                            diverged=bool(ctrl[CTRL_STATUS]),
                            parity=int(self.backend.to_host(self.parity)[0]))

    def set(self, t=None, t_stop=None, steps=None, parity=None):
        """Change the clock between replays (never inside a captured step). Setting t starts
        from a new state: the divergence flag of the old one is cleared."""
        ctrl = self.backend.to_host(self.ctrl)
        for index, value in ((CTRL_T, t), (CTRL_T_STOP, t_stop), (CTRL_STEPS, steps)):
            if value is not None:
                ctrl[index] = value
        if t is not None:
            ctrl[CTRL_STATUS] = 0.0
        self.backend.write(self.ctrl, ctrl)
        if parity is not None:
            self.backend.write(self.parity, np.array([parity], np.int32))
