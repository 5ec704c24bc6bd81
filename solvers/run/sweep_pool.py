"""Worker processes kept across sweeps (issue 23). A worker's first run pays for the worker's
start (its CUDA context, the kernels' modules loaded): on a GPU several times what a run of a
small case takes (docs/performance.md). A pool that outlives one sweep pays it once:

    with solvers.SweepPool(jobs=8, mps=True) as pool:
        first = solvers.sweep("cases/kelvin_helmholtz.toml", {...}, executor=pool)
        second = solvers.sweep("cases/kelvin_helmholtz.toml", {...}, executor=pool)

The pool starts its `jobs` workers at once, each making `backend` as it starts (a CUDA context
on a GPU), and waits for them; with mps it keeps an MPS daemon (sweep_mps.py) for its lifetime,
the workers its clients. A sweep given the pool submits every run at once and leaves the pool
running. A worker that dies breaks the pool: its runs fail, and the pool is to be made anew.
"""

import multiprocessing
import os
from concurrent.futures import wait
from contextlib import ExitStack

from .sweep_executors import WorkerPool, check_jobs
from .sweep_mps import mps_clients, off_reason

START_SECONDS = 600  # the most a worker waits for the others to start


def _meet(barrier):
    """A worker's first task: wait until every worker of the pool has started; its pid."""
    barrier.wait(START_SECONDS)
    return os.getpid()


class SweepPool:
    """`jobs` worker processes for sweeps (solvers.sweep(..., executor=pool)), started now and
    kept until close(); mps: the workers share the GPU through CUDA MPS where it can run
    (`mps_said`: the line saying which way, as a sweep's log says it). `pids`: the workers'
    process ids."""

    def __init__(self, jobs, mps=False, backend="auto"):
        check_jobs(jobs)
        self.jobs, self._stack, said = jobs, ExitStack(), []
        try:
            env = None
            if mps:
                reason = off_reason(jobs, False, None, [backend])
                env = self._stack.enter_context(mps_clients(reason, said.append))
            self._pool = WorkerPool(jobs, env, warm=backend)
            self._stack.callback(self._pool.shutdown, wait=True)
            # Every worker started now: a submission finding none idle starts one.
            # Every worker started now: `jobs` tasks that wait for each other, so that none
            # finds an idle worker and each submission starts one.
            with multiprocessing.get_context("forkserver").Manager() as manager:
                barrier = manager.Barrier(jobs)
                started = [self._pool.submit(_meet, barrier) for _ in range(jobs)]
                wait(started)
                self.pids = {future.result() for future in started}
        except BaseException:
            self._stack.close()
            raise
        self.mps_said = said[0] if said else "MPS: not asked for"

    def submit(self, fn, *args):
        return self._pool.submit(fn, *args)

    def interrupt(self):
        """SIGINT to every worker: a run in flight ends (a sweep's Ctrl-C)."""
        self._pool.interrupt()

    def close(self):
        """The workers end (after their runs), then the MPS daemon the pool started."""
        self._stack.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
