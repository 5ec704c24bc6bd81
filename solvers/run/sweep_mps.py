"""CUDA MPS for a sweep's worker processes (`solvers sweep --jobs N --mps`): without it the
CUDA contexts of different processes time-slice on the card; with it their kernels overlap.

`mps_clients` uses the user's MPS daemon where one is active (its control pipe exists in
CUDA_MPS_PIPE_DIRECTORY, default /tmp/nvidia-mps), else starts a private one for the sweep's
duration (`nvidia-cuda-mps-control -d`, its pipe and log folder a fresh temporary one) and
stops it at the end (`quit`), also on an error or an interrupt. It yields the environment the
workers set before any CUDA call (start_worker in sweep_executors.py), or None for no MPS.
"""

import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from ..backend.cuda import cuda_available

CONTROL = "nvidia-cuda-mps-control"
PIPE, LOG = "CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"
DEFAULT_PIPE = "/tmp/nvidia-mps"
START_SECONDS = 2.0  # how long the control pipe may take to appear after `-d`
COMMAND_SECONDS = 30.0  # at most this for `-d` to return, or `quit` to end the daemon
SHORT_TEMP = 40  # a longer temporary folder is replaced by /tmp: socket paths are limited


def off_reason(jobs, streams, executor, backends):
    """Why a sweep runs without MPS (None: it may use it): `backends` are its runs'
    run.backend values, 'auto' resolved as get_backend does (in this process: CuPy asked
    whether it sees a GPU, no CUDA context made)."""
    if executor is not None:
        return "runs on an executor of the caller's"
    if jobs == 1:
        return "jobs=1: runs in this process"
    if streams:
        return "streams: one process, one CUDA context"
    if "cuda" not in backends and not ("auto" in backends and cuda_available()):
        return "the host backend"
    if shutil.which(CONTROL) is None:
        return f"{CONTROL} not on PATH"
    return None


@contextmanager
def mps_clients(reason, say):
    """Within the block, MPS for the sweep's workers unless `reason` (off_reason) says why not;
    yields the workers' MPS environment ({PIPE: ..., LOG: ...}) or None. `say(line)` gets one
    line: 'MPS: private daemon (its pipe folder)', 'MPS: already active (its pipe folder)' or
    'MPS: off (reason)'."""
    env, folder = None, None
    if reason is None:
        env, folder, reason = _daemon()
    say(f"MPS: off ({reason})" if env is None else
        f"MPS: {'private daemon' if folder else 'already active'} ({env[PIPE]})")
    try:
        yield env
    finally:
        # A private daemon ends after the workers (shut down in the block), its folder too.
        if folder:
            error = _control(env, "quit\n")
            if error:
                say(f"MPS: the private daemon did not quit: {error}")
            shutil.rmtree(folder, ignore_errors=True)


def _daemon():
    """(env, folder, reason): the active daemon's env (folder None), a private daemon's env and
    folder, or (None, None, why it did not start)."""
    pipe = os.environ.get(PIPE) or DEFAULT_PIPE
    if Path(pipe, "control").exists():
        return {k: v for k, v in ((PIPE, pipe), (LOG, os.environ.get(LOG))) if v}, None, None
    base = tempfile.gettempdir()
    folder = tempfile.mkdtemp(prefix="mps-", dir=base if len(base) <= SHORT_TEMP else "/tmp")
    env = {PIPE: folder, LOG: folder}
    error = _control(env, "", "-d")
    # The daemon forks and returns at once; its control pipe shows that it listens.
    deadline = time.monotonic() + START_SECONDS
    while error is None and not Path(folder, "control").exists():
        if time.monotonic() > deadline:
            error = f"no control pipe after {START_SECONDS:g} s"
        else:
            time.sleep(0.02)
    if error is None:
        return env, folder, None
    shutil.rmtree(folder, ignore_errors=True)
    return None, None, f"the MPS daemon did not start: {error}"


def _control(env, text, *args):
    """Run the control binary with `env` added, `text` on its stdin: None if it exited with 0,
    else why not (one line). Its stderr goes to a file: a pipe would be held by the daemon."""
    with tempfile.TemporaryFile("w+") as errors:
        try:
            done = subprocess.run([CONTROL, *args], input=text, env={**os.environ, **env},
                                  stdout=subprocess.DEVNULL, stderr=errors, text=True,
                                  timeout=COMMAND_SECONDS)
        except (OSError, subprocess.SubprocessError) as error:
            return f"{type(error).__name__}: {error}"
        errors.seek(0)
        first = (errors.read().strip().splitlines() or [""])[0]
    return None if done.returncode == 0 else f"exit status {done.returncode} {first}".strip()
