"""The host backend's thread policy (solvers/backend/host_threads.py) is applied: the team size
and user settings, small launches on the calling thread, launches timed to choose their
threads, idle OpenMP threads sleeping, OpenBLAS serial, and the same bits on any number of
threads. Not a timing test: scripts/host_threads_under_load.py measures (docs/performance.md)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solvers.backend import BackendError, host_threads
from solvers.backend import host as host_module
from solvers.backend.host import HostBackend
from solvers.backend.host_threads import (
    PARALLEL_MIN_SECONDS,
    PARALLEL_MIN_WORK,
    PROBES,
    RECHECK,
    LaunchThreads,
)
from solvers.fv.euler import EulerSolver
from solvers.linalg import krylov
from solvers.mesh import StructuredGrid
from solvers.run.simulation import Simulation

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ("SOLVERS_HOST_THREADS", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
            "OPENBLAS_NUM_THREADS")


@pytest.fixture
def clean_env(monkeypatch):
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_team_is_the_cpus_unless_the_user_says(clean_env):
    assert host_threads.team_size() == len(os.sched_getaffinity(0))
    clean_env.setenv("OMP_NUM_THREADS", "3")
    assert host_threads.team_size() == 3
    clean_env.setenv("SOLVERS_HOST_THREADS", "5")  # ours wins over OpenMP's
    assert host_threads.team_size() == 5
    assert HostBackend().threads() == 5
    clean_env.setenv("SOLVERS_HOST_THREADS", "two")
    with pytest.raises(BackendError, match="SOLVERS_HOST_THREADS='two': expected a positive"):
        HostBackend()


def test_wait_policy_and_blas_threads_are_set_unless_the_user_set_them(clean_env):
    HostBackend()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    clean_env.setenv("OMP_WAIT_POLICY", "ACTIVE")
    clean_env.setenv("OPENBLAS_NUM_THREADS", "2")
    HostBackend()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2"
    clean_env.delenv("OMP_WAIT_POLICY")
    clean_env.setenv("GOMP_SPINCOUNT", "1000")  # a spin count chosen by the user: no policy
    HostBackend()
    assert "OMP_WAIT_POLICY" not in os.environ


PROBE = """
import ctypes, json, os
import numpy as np
import scipy.linalg  # SciPy's OpenBLAS loaded before the backend exists
from solvers.backend.host import HostBackend
from solvers.backend.host_threads import loaded_openblas
from solvers.linalg import krylov
backend = HostBackend()
backend.module(krylov.SOURCE, np.float32, krylov.kernel_defines())  # starts OpenMP
threads = {}
for path, library in loaded_openblas():
    for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                 "openblas_get_num_threads64_", "openblas_get_num_threads"):
        if hasattr(library, name):
            threads[os.path.basename(path)] = getattr(library, name)()
print(json.dumps(threads))
"""


def test_openmp_starts_passive_and_openblas_serial_in_a_fresh_process():
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    env.update(OMP_DISPLAY_ENV="TRUE", SOLVERS_HOST_THREADS="2")
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, cwd=ROOT, check=True)
    assert "OMP_WAIT_POLICY = 'PASSIVE'" in out.stderr  # what the OpenMP runtime read
    blas = json.loads(out.stdout.strip().splitlines()[-1])
    assert blas and set(blas.values()) == {1}, blas  # NumPy's and SciPy's OpenBLAS


def _run(launch, seconds):
    """One run of `launch` taking seconds[threads]; returns its threads."""
    threads, timed = launch.next_run()
    if timed:
        launch.measured(threads, seconds[threads])
    return threads


def test_large_launches_keep_the_team_only_where_it_is_faster():
    fast_team = LaunchThreads(team=2, blocks=64, threads_per_block=PARALLEL_MIN_WORK)
    slow_team = LaunchThreads(team=2, blocks=64, threads_per_block=PARALLEL_MIN_WORK)
    fast, slow = {1: 1.0, 2: 0.5}, {1: 1.0, 2: 1.5}  # under load a team can be the slower
    # The team first (a launch of many work items may run only once), then alternating.
    assert [_run(fast_team, fast) for _ in range(2 * PROBES)] == [2, 1] * PROBES
    assert [_run(slow_team, slow) for _ in range(2 * PROBES)] == [2, 1] * PROBES
    assert {_run(fast_team, fast) for _ in range(RECHECK - 1)} == {2}
    assert {_run(slow_team, slow) for _ in range(RECHECK - 1)} == {1}


def test_the_choice_is_checked_again_less_often_while_it_holds():
    launch = LaunchThreads(team=2, blocks=64, threads_per_block=1)  # serial first
    loaded = {1: 1e-3, 2: 5e-3}
    runs = [_run(launch, loaded) for _ in range(2 * PROBES + 8 * RECHECK)]
    assert runs[:2 * PROBES] == [1, 2] * PROBES
    team_runs = [k for k, threads in enumerate(runs) if threads == 2][PROBES:]
    gaps = np.diff(team_runs)  # one team run each time, ever further apart
    assert len(team_runs) >= 2 and np.all(gaps[1:] == 2 * gaps[:-1])
    idle = {1: 1e-3, 2: 0.5e-3}  # the load has gone: the next check finds the team faster
    runs = [_run(launch, idle) for _ in range(16 * RECHECK)]
    assert runs[-RECHECK:] == [2] * RECHECK


def test_launches_too_short_for_a_team_never_wake_one():
    launch = LaunchThreads(team=2, blocks=4, threads_per_block=256)
    short = {1: PARALLEL_MIN_SECONDS / 10, 2: 1.0}
    assert {_run(launch, short) for _ in range(100 * RECHECK)} == {1}


def test_a_launch_that_first_returned_at_once_is_timed_again():
    """A step's kernels return at once after the end time: one fast run decides nothing."""
    launch = LaunchThreads(team=2, blocks=4, threads_per_block=256)
    assert _run(launch, {1: 1e-6, 2: 1e-6}) == 1
    runs = [_run(launch, {1: 1e-2, 2: 0.4e-2}) for _ in range(8 * RECHECK)]
    assert runs[-RECHECK:].count(2) >= RECHECK - 1


def test_never_more_threads_than_blocks():
    assert LaunchThreads(team=8, blocks=1, threads_per_block=1 << 20).next_run() == (1, False)
    assert LaunchThreads(team=8, blocks=3, threads_per_block=1 << 20).limit == 3


def _backend(monkeypatch, threads):
    """A fresh host backend of 2 threads whose launches all run on `threads`."""
    monkeypatch.setenv("SOLVERS_HOST_THREADS", "2")

    class Forced(LaunchThreads):
        def next_run(self):
            return min(threads, self.limit), False

    monkeypatch.setattr(host_module, "LaunchThreads", Forced)
    return HostBackend()


def _last_threads(backend):
    """The most threads the last launch of any of the backend's libraries ran on."""
    return max(library.solvers_last_threads() for library in backend._libraries)


def test_launches_run_on_the_threads_chosen(monkeypatch):
    """What OpenMP ran: a small launch on the calling thread alone, a large one on the team
    (2 threads even on a 1-CPU machine)."""
    monkeypatch.setenv("SOLVERS_HOST_THREADS", "2")
    backend = HostBackend()
    kernels = backend.module(krylov.SOURCE, np.float32, krylov.kernel_defines())
    done = backend.zeros((1,), np.int32)
    for n in (1000, 1 << 22):
        src, dst = backend.zeros((n,), np.float32), backend.zeros((n,), np.float32)
        src[:] = 1
        launch = kernels.copy_vector.bind((n + 255) // 256, 256, dst, src, done, n)
        launch()
        assert _last_threads(backend) == (1 if n == 1000 else 2)
        assert np.all(dst == 1)


def _euler_fields(backend):
    grid = StructuredGrid(96, x=(0, 1), ny=80, y=(0, 1))
    solver = EulerSolver(grid, dict.fromkeys(("x_lo", "x_hi", "y_lo", "y_hi"), "periodic"),
                         backend=backend, precision="fp64")
    x, y = grid.centres()
    solver.set_primitive(1 + 0.2 * np.sin(2 * np.pi * (x + y)), 1.0, 1.0, vy=0.5)
    Simulation(solver, end_time=0.05).run()
    return solver.fields()


def test_same_bits_on_one_and_two_threads(monkeypatch):
    """The timed choice may differ from run to run; the results may not."""
    one = _euler_fields(_backend(monkeypatch, 1))
    two_backend = _backend(monkeypatch, 2)
    two = _euler_fields(two_backend)
    assert _last_threads(two_backend) == 2
    for name in one:
        np.testing.assert_array_equal(one[name], two[name])


def test_the_measuring_script_runs(tmp_path):
    out = tmp_path / "threads.json"
    status = subprocess.run([sys.executable, "scripts/host_threads_under_load.py", "--cases",
                             "sod", "--rounds", "1", "--repeats", "1", "--load", "1",
                             "--load-seconds", "120", "--json", str(out)],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert status.returncode == 0, status.stderr[-2000:]
    report = json.loads(out.read_text())
    assert {(m["setting"], m["loaded"]) for m in report["medians"]} == {
        ("1 thread", False), ("default", False), ("1 thread", True), ("default", True)}
    assert "| sod |" in status.stdout
