"""How many threads the host backend's kernels run on, and how its idle threads wait, so that
a run on a busy machine is never much slower than on one thread (measured:
docs/performance.md, "Host backend under load"; scripts/host_threads_under_load.py).

- Team: SOLVERS_HOST_THREADS if set, else OMP_NUM_THREADS if set, else the CPUs this process
  may run on. host.py's launchers take the threads of each launch as an argument.
- Per launch (LaunchThreads, one per kernel, grid and block): the calling thread alone or the
  team, whichever its timed runs found faster, checked again now and then: on a busy machine
  a team can wait milliseconds for a thread the OS has set aside for another process. A
  launch that takes under PARALLEL_MIN_SECONDS alone does not wake a team (that costs
  microseconds); work items are a poor guide (the Euler march has few, each a long column).
  Never more threads than blocks. Blocks go to the threads one at a time (schedule
  dynamic), so a thread set aside does not hold back a share of the launch: the running
  threads take its blocks.
- Idle OpenMP threads sleep (OMP_WAIT_POLICY=PASSIVE) unless OMP_WAIT_POLICY or GOMP_SPINCOUNT
  is set: a spinning thread takes the core from the thread doing the work. It is set before
  the first kernel library loads the OpenMP runtime, which reads it once.
- NumPy's and SciPy's OpenBLAS run on one thread unless OPENBLAS_NUM_THREADS or
  OMP_NUM_THREADS is set: on a busy 2-core machine their spinning threads made AMG's small
  dense eigenvalue and inverse computations many times slower than serial ones.
"""

import ctypes
import os
from collections import deque

from .base import BackendError

PARALLEL_MIN_WORK = 16384  # work items from which a launch runs on the team at once
PARALLEL_MIN_SECONDS = 2e-4  # a launch faster than this on one thread wakes no team
PARALLEL_GAIN = 0.9  # the team must take at most this fraction of one thread's time
PROBES = 2  # timed runs on each side that a choice weighs
RECHECK, MAX_RECHECK = 64, 4096  # runs between two choices: at first, and at most
WAIT_POLICY = "PASSIVE"
_BLAS_SETTERS = ("openblas_set_num_threads", "openblas_set_num_threads64_",
                 "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_")


def _positive(name):
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    first = text.split(",")[0].strip()  # OMP_NUM_THREADS may list one count per level
    if not first.isdigit() or int(first) < 1:
        raise BackendError(f"{name}={text!r}: expected a positive number of threads")
    return int(first)


def available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def team_size():
    """The most threads one launch uses: SOLVERS_HOST_THREADS, OMP_NUM_THREADS or the CPUs."""
    for name in ("SOLVERS_HOST_THREADS", "OMP_NUM_THREADS"):
        value = _positive(name)
        if value is not None:
            return value
    return available_cpus()


class LaunchThreads:
    """The threads that launches of one kernel with one grid and block run on, chosen from
    their timed runs: the first ones alternate between the calling thread alone and the team
    (PROBES each; the team first where the launch has PARALLEL_MIN_WORK work items), then
    every run is timed and, after `interval` runs, the other choice once more. The team is
    kept while the mean of its last PROBES runs is under PARALLEL_GAIN times one thread's;
    the interval starts at RECHECK and doubles, up to MAX_RECHECK, while the other choice
    keeps losing. While a launch takes under PARALLEL_MIN_SECONDS on one thread no team is
    woken for it, and only PROBES runs an interval are timed. Nothing is settled for good: a
    kernel's time can change (a step's kernels return at once after the end time). Kernels
    give the same bits on any number of threads."""

    def __init__(self, team, blocks, threads_per_block):
        self.limit = max(1, min(team, blocks))
        self.threads = self.limit if blocks * threads_per_block >= PARALLEL_MIN_WORK else 1
        self.seconds = {1: deque(maxlen=PROBES), self.limit: deque(maxlen=PROBES)}
        self.interval, self.runs = RECHECK, 0
        self.short = False  # under PARALLEL_MIN_SECONDS alone: untimed but for rechecks
        other = self.limit if self.threads == 1 else 1
        self.probes = [] if self.limit == 1 else [other, self.threads] * PROBES  # popped

    def _mean(self, threads):
        seconds = self.seconds[threads]
        return sum(seconds) / len(seconds) if seconds else None

    def next_run(self):
        """(threads, timed) for the next run; a timed run's seconds go to `measured`."""
        if self.probes:
            return self.probes.pop(), True
        if self.limit == 1:
            return 1, False
        self.runs += 1
        if self.runs >= self.interval:
            self.runs = 0
            if self.short:  # timed alone again, no team woken
                self.interval = min(2 * self.interval, MAX_RECHECK)
                self.probes = [1] * PROBES
            else:
                self.probes = [self.limit if self.threads == 1 else 1]
        return self.threads, not self.short

    def measured(self, threads, seconds):
        self.seconds[threads].append(seconds)
        if threads == 1:
            self.short = self._mean(1) < PARALLEL_MIN_SECONDS
        if self.short:
            self.threads, self.probes = 1, []
        elif self.runs == 0 and not self.probes and all(self.seconds.values()):
            serial, team = self._mean(1), self._mean(self.limit)
            choice = self.limit if team < PARALLEL_GAIN * serial else 1
            # Checked again sooner where the other choice won its last run (the load changed).
            if choice == 1:
                held = self.seconds[self.limit][-1] >= PARALLEL_GAIN * serial
            else:
                held = PARALLEL_GAIN * self.seconds[1][-1] > team
            self.interval = min(2 * self.interval, MAX_RECHECK) if held else RECHECK
            self.threads = choice


def loaded_openblas():
    """(path, CDLL) of every OpenBLAS library loaded in this process (NumPy's, SciPy's)."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if line.count(" ") >= 5}
    except OSError:
        return found
    for path in sorted(paths):
        if "openblas" in os.path.basename(path).lower():
            try:
                found.append((path, ctypes.CDLL(path, mode=os.RTLD_NOLOAD)))
            except (OSError, AttributeError):
                pass
    return found


def serial_blas():
    """OpenBLAS on one thread (the libraries loaded now, and those loaded later through the
    environment), unless the user chose its threads. Returns the libraries set."""
    if any(os.environ.get(name, "").strip() for name in ("OPENBLAS_NUM_THREADS",
                                                         "OMP_NUM_THREADS")):
        return []
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    done = []
    for path, library in loaded_openblas():
        for name in _BLAS_SETTERS:
            setter = getattr(library, name, None)
            if setter is not None:
                setter.argtypes = [ctypes.c_int]
                setter.restype = None
                setter(1)
                done.append(path)
                break
    return done


def configure():
    """Apply the policy before the first kernel library loads; returns the team size. A bad
    SOLVERS_HOST_THREADS or OMP_NUM_THREADS raises BackendError."""
    team = team_size()
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = WAIT_POLICY
    serial_blas()
    return team
