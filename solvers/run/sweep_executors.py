"""Where a sweep's runs run: `run_task` (one run, from a plain task to a plain record), in this
process (`InProcess`, jobs=1), in worker processes (`WorkerPool`, jobs=N), in threads of this
process with backends of their own (`StreamThreads`, jobs=N, streams=True: on a GPU a CUDA
stream each), or on any executor with `submit(fn, *args) -> future` (a Dask adapter:
solvers/run/sweep_dask.py).

run_task is a top-level function of plain, picklable data both ways, so that any executor can
send it to another process or machine. Only the sweep's parent writes records.
"""

import itertools
import os
import signal
import socket
import threading
import time
import traceback
from concurrent.futures import (
    FIRST_COMPLETED,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from contextlib import nullcontext
from datetime import datetime

from ..backend import BackendError, get_backend, notices, own_backends
from ..backend.host_threads import team_size
from ..cases import CaseError, load
from ..cases.loader import adapters
from ..solver import RunError
from .runner import CaseRun
from .signals import handled

PARENT_POLL_SECONDS = 0.2  # how often a worker checks that its sweep is still alive
_runs_here = itertools.count(1)  # this process's runs: a worker's first pays for its start
# What the workers' server imports before it forks them (a module that is missing is skipped).
PRELOAD = ["solvers.run.sweep_executors", "solvers.io.plot", "solvers.io.figure"]


def check_jobs(jobs):
    """A clear error for a `jobs` that is not a positive integer."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")


def _one_line(error):
    return str(error).replace("\r", " ").replace("\n", " ")


def _plain(value):
    """A NumPy scalar as the Python number it holds; anything else as it is."""
    return value.item() if hasattr(value, "item") and not isinstance(value, str) else value


def new_record(task, status=None):
    """A record of the run of `task` with no figures or files yet."""
    return {"key": task["key"], "name": task["name"], "parameters": task["parameters"],
            "status": status, "overrides": task["keyed"], "figures": {}, "files": []}


def run_task(task):
    """Run one planned run (its `task` dict, sweep_plan.py) and return its record (a plain dict,
    sweep_records.py). A run that fails (RunError, CaseError, any other error) gives a record
    with status 'failed: <reason>'. Two outcomes are not records: {'interrupted': signal
    number, 'partial': path} when a signal ended the run (its snapshots kept in
    NAME.partial.h5), {'abort': 'BackendError' or 'OSError', 'message': ...} for what would
    fail every run alike (no GPU, an output folder that cannot be written)."""
    record = new_record(task)
    start = time.monotonic()
    try:
        # A worker's runs stay quiet about the backend; in-process runs keep the caller's say.
        with handled(), notices(False) if task.get("quiet_backend") else nullcontext():
            run = CaseRun(load(task["case"], task["overrides"]))
            result = run.run()
            figures = run.solver.report(result).figures
        record.update(status="ok", figures={k: _plain(v) for k, v in figures.items()},
                      files=[str(path) for path in result.files])
    except KeyboardInterrupt as error:
        partial = getattr(error, "partial_output", None)
        return {"key": task["key"], "interrupted": getattr(error, "signum", signal.SIGINT),
                "partial": str(partial) if partial else None}
    except (BackendError, OSError) as error:
        where = f"{error.filename}: " if getattr(error, "filename", None) else ""
        text = getattr(error, "strerror", None) or error
        return {"key": task["key"], "abort": type(error).__name__,
                "message": _one_line(f"{where}{text}")}
    except (RunError, CaseError) as error:
        record["status"] = f"failed: {_one_line(error)}"
    except Exception as error:  # a bug or a library's error: this run fails, the sweep goes on
        record["status"] = f"failed: {type(error).__name__}: {_one_line(error)}"
        record["traceback"] = traceback.format_exc()
    record.update(wall_seconds=round(time.monotonic() - start, 4),
                  finished=datetime.now().isoformat(timespec="seconds"),
                  host=socket.gethostname(), pid=os.getpid(), process_run=next(_runs_here))
    return record


class InProcess:
    """jobs=1: a run runs in this process when submitted; its future is already done."""

    def submit(self, fn, *args):
        future = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def start_worker(threads, parent, mps=None, warm=None):
    """A worker's initializer, before it imports a backend or compiles a kernel: its OpenMP
    team (SOLVERS_HOST_THREADS), the MPS daemon it is a client of (`mps`: CUDA_MPS_* variables
    from sweep_mps.py, set here: the server it is forked from may predate them), its own
    process group (Ctrl-C at a terminal reaches the sweep's parent, which passes SIGINT on
    once), SIGINT ignored between runs (a run's own handlers take it), and a thread that ends
    the worker if the sweep's process (`parent`) or the server it was forked from dies (a
    SIGKILL, the OOM killer). With `warm`, the case adapters imported (every solver) and the
    backend of that name made now (a CUDA context); one that cannot be made is left to the
    runs to report."""
    os.environ["SOLVERS_HOST_THREADS"] = str(threads)
    os.environ.update(mps or {})
    os.setpgrp()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent, os.getppid()), daemon=True).start()
    if warm is not None:
        adapters()
        try:
            get_backend(warm, notify=False)
        except BackendError:
            pass


def _watch_parent(sweep, server):
    while _alive(sweep) and os.getppid() == server:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)  # orphaned: the run in flight is lost; its temporary files are removed later


def _alive(pid):
    """Whether process `pid` exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, another user's (the pid was reused)
        pass
    return True


class WorkerPool(ProcessPoolExecutor):
    """jobs worker processes, each running whole runs (on a GPU each with its own CUDA
    context); on the host backend each gets max(1, cores // jobs) OpenMP threads, unless
    SOLVERS_HOST_THREADS says how many; with `mps` (sweep_mps.py) each is a client of that
    MPS daemon, so that their kernels overlap; with `warm` (a backend name) each makes that
    backend as it starts (on a GPU its CUDA context). Workers are forked from a server process
    started once with the run's modules imported (PRELOAD; never a GPU context, which a fork
    cannot carry), so that a worker starts in milliseconds rather than importing them anew
    ('spawn')."""

    def __init__(self, jobs, mps=None, warm=None):
        import multiprocessing

        threads = os.environ.get("SOLVERS_HOST_THREADS") or max(1, team_size() // jobs)
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        super().__init__(jobs, mp_context=context, initializer=start_worker,
                         initargs=(threads, os.getpid(), mps, warm))
        self.jobs = jobs

    @property
    def broken(self):
        """Whether a worker died (killed, out of memory): the pool takes no more runs."""
        return bool(getattr(self, "_broken", False))

    def interrupt(self):
        """SIGINT to every worker: a run in flight ends, its snapshots kept (idle ones ignore
        it)."""
        for process in list((getattr(self, "_processes", None) or {}).values()):
            try:
                os.kill(process.pid, signal.SIGINT)
            except (OSError, AttributeError, TypeError):
                pass


class StreamThreads(ThreadPoolExecutor):
    """jobs threads of this process, each with backends of its own: on a GPU each run's kernels
    and graphs go to its thread's CUDA stream, so runs overlap on the card within one context
    (no MPS needed). Runs share the process's host threads; a signal reaches the main thread
    only, so an interrupt lets the runs in flight finish."""

    def __init__(self, jobs):
        super().__init__(jobs, thread_name_prefix="sweep", initializer=own_backends)
        self.jobs = jobs


def wait_first(executor, futures):
    """(done, not_done) once at least one of `futures` is done: the executor's own
    wait_first where it has one (Dask's futures), else concurrent.futures.wait."""
    if hasattr(executor, "wait_first"):
        return executor.wait_first(futures)
    return wait(futures, return_when=FIRST_COMPLETED)
