"""A sweep's CUDA MPS (solvers/run/sweep_mps.py) without a GPU: a fake nvidia-cuda-mps-control
first on PATH records how it is called and makes the control pipe on -d; the workers' MPS
environment; and a sweep on the host backend that says why it runs without MPS."""

import os
from contextlib import nullcontext
from pathlib import Path

import pytest

from solvers.cli import main
from solvers.run import sweep_mps
from solvers.run.sweep_executors import WorkerPool
from solvers.run.sweep_mps import LOG, PIPE, mps_clients, off_reason

SOD = Path(__file__).parent.parent / "cases" / "sod.toml"
# The fake control binary: a line per call (arguments, the two variables, its stdin).
FAKE = """#!/bin/sh
[ "$1" = -d ] && input= || input=$(cat)
echo "$* pipe=$CUDA_MPS_PIPE_DIRECTORY log=$CUDA_MPS_LOG_DIRECTORY stdin=$input" >> {calls}
[ "$1" = -d ] && [ -z "$FAKE_MPS_NO_PIPE" ] && touch "$CUDA_MPS_PIPE_DIRECTORY/control"
exit ${{FAKE_MPS_STATUS:-0}}
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """The fake binary first on PATH, the user's pipe folder one with no daemon; returns the
    file of its calls."""
    calls, binary = tmp_path / "calls", tmp_path / "bin" / sweep_mps.CONTROL
    binary.parent.mkdir()
    binary.write_text(FAKE.format(calls=calls))
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", f"{binary.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(PIPE, str(tmp_path / "user-mps"))
    monkeypatch.delenv(LOG, raising=False)
    return calls


def test_a_private_daemon_for_the_block_quit_at_its_end_and_on_an_interrupt(fake):
    for interrupt in (False, True):
        said = []
        with pytest.raises(KeyboardInterrupt) if interrupt else nullcontext():
            with mps_clients(None, said.append) as env:
                folder = Path(env[PIPE])
                assert env == {PIPE: str(folder), LOG: str(folder)}
                assert (folder / "control").exists() and folder != Path(os.environ[PIPE])
                if interrupt:
                    raise KeyboardInterrupt
        assert said == [f"MPS: private daemon ({folder})"] and not folder.exists()
        calls = fake.read_text().splitlines()[-2:]
        fake.unlink()
        assert calls == [f"-d pipe={folder} log={folder} stdin=",
                         f" pipe={folder} log={folder} stdin=quit"]


def test_an_active_daemon_is_used_as_it_is(fake, tmp_path):
    (tmp_path / "user-mps").mkdir()
    (tmp_path / "user-mps" / "control").touch()
    said = []
    with mps_clients(None, said.append) as env:
        assert env == {PIPE: str(tmp_path / "user-mps")}
    assert said == [f"MPS: already active ({tmp_path / 'user-mps'})"] and not fake.exists()


@pytest.mark.parametrize("why", ["FAKE_MPS_STATUS", "FAKE_MPS_NO_PIPE"])
def test_a_daemon_that_does_not_start_means_no_mps(fake, monkeypatch, why):
    monkeypatch.setenv(why, "3")
    monkeypatch.setattr(sweep_mps, "START_SECONDS", 0.1)
    said = []
    with mps_clients(None, said.append) as env:
        assert env is None
    reason = "exit status 3" if why == "FAKE_MPS_STATUS" else "no control pipe after 0.1 s"
    assert said == [f"MPS: off (the MPS daemon did not start: {reason})"]
    folder = fake.read_text().split("pipe=")[1].split()[0]
    assert not Path(folder).exists()


def test_why_a_sweep_runs_without_mps(fake, monkeypatch):
    assert off_reason(2, False, None, {"cuda"}) is None
    assert off_reason(1, False, None, {"cuda"}) == "jobs=1: runs in this process"
    assert off_reason(2, True, None, {"cuda"}) == "streams: one process, one CUDA context"
    assert off_reason(2, False, object(), {"cuda"}) == "runs on an executor of the caller's"
    assert off_reason(2, False, None, {"host"}) == "the host backend"
    # auto resolves as get_backend does: cuda where CuPy sees a GPU.
    for gpu in (False, True):
        monkeypatch.setattr(sweep_mps, "cuda_available", lambda gpu=gpu: gpu)
        assert (off_reason(2, False, None, {"auto", "host"}) is None) == gpu
    monkeypatch.setenv("PATH", str(fake.parent / "empty"))
    reason = off_reason(2, False, None, {"cuda"})
    assert reason == "nvidia-cuda-mps-control not on PATH"
    said = []
    with mps_clients(reason, said.append) as env:
        assert env is None
    assert said == [f"MPS: off ({reason})"]


def test_the_workers_are_clients_of_the_daemon_they_are_given(monkeypatch):
    monkeypatch.setenv(PIPE, "/not/this")  # the forkserver may predate it anyway
    with WorkerPool(2, {PIPE: "/tmp/mps-x", LOG: "/tmp/mps-y"}) as pool:
        assert pool.submit(os.getenv, PIPE).result() == "/tmp/mps-x"
        assert pool.submit(os.getenv, LOG).result() == "/tmp/mps-y"


def test_a_sweep_on_the_host_backend_says_why_it_runs_without_mps(tmp_path, capsys):
    assert main(["sweep", str(SOD), "--backend", "host", "--out", str(tmp_path), "--jobs", "2",
                 "--mps", "--set", "mesh.nx=32", "--set", "output.plot=false"]) == 0
    assert "sweep sod: MPS: off (the host backend)\n" in capsys.readouterr().err
    assert "MPS: off (the host backend)" in (tmp_path / "sod-sweep.log").read_text()
