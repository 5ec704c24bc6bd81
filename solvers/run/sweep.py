"""`solvers.sweep` and `solvers sweep`: run the cartesian product of case values, resumably,
one run at a time or several at once, and tabulate the results.

    records = solvers.sweep("cases/sod.toml", {"mesh.nx": [128, 256],
                            "scheme.limiter": ["minmod", "mc"]}, jobs=2, out="out")

The plan (sweep_plan.py) validates every run before the first starts and names run k
<case name>-<key>, its key a hash of its overrides. Each finished run's record is appended to
OUT/<case name>-sweep.jsonl and the table OUT/<case name>-sweep.csv regenerated from every
record of the folder (sweep_records.py); a sweep run again skips the runs whose record is ok
and whose files exist. Runs run in this process, in worker processes or on an executor
(sweep_executors.py); only this process writes records, the log and the progress line
(sweep_progress.py).
"""

import itertools
import sys
from contextlib import nullcontext
from pathlib import Path

from ..backend import BackendError
from .signals import Interrupted, deferred, handled
from .sweep_executors import (
    InProcess,
    StreamThreads,
    WorkerPool,
    check_jobs,
    new_record,
    run_task,
    wait_first,
)
from .sweep_mps import mps_clients, off_reason
from .sweep_plan import make_plan, parameters_from_sets
from .sweep_progress import SweepLog, SweepProgress
from .sweep_records import RecordStore

__all__ = ["SweepRecords", "exit_status", "parameters_from_sets", "sweep"]


class SweepRecords(list):
    """A sweep's records in its order (dicts: name, key, parameters, status, figures,
    wall_seconds, files, skipped, ...), with the paths of its table (`table`, CSV), records
    (`jsonl`) and log (`log`)."""

    table: Path
    jsonl: Path
    log: Path


def sweep(case, parameters, *, jobs=1, out=None, rerun=False, executor=None, quiet=True,
          streams=False, mps=False, **overrides):
    """Run `case` (a case file's path, or a Case from solvers.cases.load: swept from its file
    and the overrides it was loaded with) for every combination of `parameters`
    ({'section.key': [values...]}; a value that is not a list fixes that key), with
    `overrides` ({section: {key: value}} or 'section.key'=value, as load_case takes them)
    applied to every run. Returns a SweepRecords list, one record per run.

    jobs: runs at once, each in a worker process of its own (jobs=1: in this process), or with
    streams=True each in a thread of this process with its own backend (on a GPU its own CUDA
    stream: the runs' kernels overlap in one context). mps: the worker processes share the GPU
    through CUDA MPS, so that their kernels overlap too (a daemon already active is used, else
    a private one runs for the sweep; sweep_mps.py): the log says whether MPS ran and if not
    why.
    out: the output folder (default: the case's output.dir). rerun: run again the runs done
    earlier (by default skipped). executor: an object with submit(fn, *args) -> future (and
    optionally wait_first(futures) -> (done, not_done)) that runs them instead, such as
    solvers.run.sweep_dask.DaskExecutor; with it, jobs > 1 caps the runs in flight (default:
    all submitted at once). quiet: no progress line on stderr.

    Raises CaseError before any run if a combination is invalid; a failed run is a record with
    status 'failed: <reason>'. An interrupt (KeyboardInterrupt) ends the runs in flight and
    keeps the records of the finished ones."""
    check_jobs(jobs)
    plan = make_plan(case, parameters, overrides, out)
    plan.folder.mkdir(parents=True, exist_ok=True)
    store = RecordStore(plan.folder, plan.name)
    log = SweepLog(plan.folder / f"{plan.name}-sweep.log")
    try:
        with handled():
            runs = _Sweep(plan, store, log, rerun, quiet)
            reason = off_reason(jobs, streams, executor, plan.backends) if mps else None
            with mps_clients(reason, runs.say) if mps else nullcontext() as mps_env:
                records = runs.run(executor, jobs, streams, mps_env)
    finally:
        log.close()
    records.table, records.jsonl, records.log = store.table, store.jsonl, log.path
    return records


class _Sweep:
    """One sweep's loop: runs submitted in order, at most `window` in flight, each finished
    one recorded before the next is submitted."""

    def __init__(self, plan, store, log, rerun, quiet):
        self.plan, self.store, self.log = plan, store, log
        self.results, self.todo = {}, []
        latest = store.latest()
        # Runs done earlier: their latest record, the files where the folder is now.
        for run in plan.runs:
            earlier = latest.get(run.key)
            if earlier is not None and not rerun and store.complete(earlier):
                files = [str(plan.folder / Path(path).name) for path in earlier["files"]]
                self.results[run.key] = {**earlier, "files": files, "skipped": True}
                log.line("skip", run.name, "done earlier")
            else:
                self.todo.append(run)
        self.progress = SweepProgress(plan.name, len(plan.runs), len(self.results), quiet)

    def say(self, line):
        """A line about the whole sweep, in its log and (unless quiet) on stderr."""
        self.log.line("note", self.plan.name, line)
        self.progress.note(line)

    def run(self, executor, jobs, streams=False, mps=None):
        owned = executor is None
        pool = executor or (InProcess() if jobs == 1 else StreamThreads(jobs) if streams
                            else WorkerPool(jobs, mps))
        window = jobs if owned or jobs > 1 else max(len(self.todo), 1)
        quiet_backend = not isinstance(pool, InProcess)
        queue, flight = iter(self.todo), {}
        try:
            while True:
                # Fill the window in the sweep's order; each run's start goes to the log.
                for run in itertools.islice(queue, window - len(flight)):
                    if owned and getattr(pool, "broken", False):  # a worker died: a new pool
                        pool.shutdown(wait=False)
                        pool = WorkerPool(jobs, mps)
                    self.log.start(run)
                    self.progress.started()
                    task = {**run.task, "quiet_backend": quiet_backend}
                    flight[pool.submit(run_task, task)] = run
                if not flight:
                    break
                # Record each run as it finishes, before the next is submitted.
                done, _ = wait_first(pool, list(flight))
                for future in done:
                    self._finish(flight.pop(future), future)
        except BaseException:
            self._stop(pool, flight, owned)
            raise
        finally:
            self.progress.close()
            if owned:
                pool.shutdown(wait=True)
        return SweepRecords(self.results[run.key] for run in self.plan.runs)

    def _outcome(self, run, future):
        """What a finished future gave: run_task's dict, or a failed record where it raised
        (a worker that died: BrokenProcessPool; an executor's own error)."""
        try:
            return future.result()
        except Exception as error:
            reason = str(error).splitlines()[0] if str(error) else "no reason given"
            status = f"failed: {type(error).__name__}: {reason}"
            return {**new_record(run.task, status), "wall_seconds": 0.0}

    def _finish(self, run, future):
        """Record a finished run (JSONL, then the table), or raise what ended it."""
        outcome = self._outcome(run, future)
        if "interrupted" in outcome:
            self.log.line("stopped", run.name, "interrupted")
            error = Interrupted(outcome["interrupted"])
            error.partial_output = outcome["partial"]
            raise error
        if "abort" in outcome:
            kind = BackendError if outcome["abort"] == "BackendError" else OSError
            raise kind(outcome["message"])
        self._record(outcome)

    def _record(self, record):
        with deferred():  # a signal now waits until the record and the table are written
            self.store.append(record)
            self.store.write_table([run.key for run in self.plan.runs])
        self.results[record["key"]] = {**record, "skipped": False}
        self.log.end(record)
        self.progress.finished(record["status"] == "ok")

    def _stop(self, pool, flight, owned):
        """After an interrupt or an abort: cancel what has not started, end the runs in
        flight (worker processes get SIGINT), let an owned pool end and keep the records of
        runs that finished meanwhile. A foreign executor's running tasks are left to it."""
        for future in flight:
            future.cancel()
        if hasattr(pool, "interrupt"):
            pool.interrupt()
        if not owned:
            for run in flight.values():
                self.log.line("stopped", run.name, "left to the executor: no record")
            return
        pool.shutdown(wait=True, cancel_futures=True)
        for future, run in flight.items():
            outcome = {}
            if future.done() and not future.cancelled():
                outcome = self._outcome(run, future)
            if "status" in outcome:
                self._record(outcome)
            else:
                self.log.line("stopped", run.name, "not finished: no record")


def exit_status(records, quiet=False):
    """The command line's account of a sweep: a summary on stdout (unless quiet), one line on
    stderr if any run failed (quiet or not: the exit status alone does not say why); 1 if any
    failed, else 0."""
    failed = [record for record in records if record["status"] != "ok"]
    skipped = sum(record["skipped"] for record in records)
    if not quiet:
        earlier = f" ({skipped} done earlier)" if skipped else ""
        print(f"sweep: {len(records) - len(failed)} of {len(records)} runs ok{earlier}; "
              f"table {records.table}")
    if failed:
        first = failed[0]
        reason = first["status"].removeprefix("failed: ")
        print(f"solvers: sweep: {len(failed)} of {len(records)} runs failed (the first, "
              f"{first['name']}: {reason}); table {records.table}", file=sys.stderr)
    return 1 if failed else 0

