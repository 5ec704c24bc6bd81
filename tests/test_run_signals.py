"""Signals: SIGTERM and SIGHUP end a run as SIGINT does (snapshots kept in NAME.partial.h5 with
the state to restart from, no temp file left, exit 128 + the signal, one line on stderr); a
signal during a replay's bookkeeping is held until it is done; after a kill -9 the files
written before are intact and the next run removes the temp files of dead processes only."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import pytest

from solvers.cli import main
from solvers.run.signals import Interrupted, deferred, handled

SOD = Path(__file__).resolve().parent.parent / "cases" / "sod.toml"
QUICK = [str(SOD), "--backend", "host", "--quiet", "--set", "mesh.nx=32",
         "--set", "output.plot=false"]
# Long enough never to finish before the signal: 4000 cells to t = 100.
LONG = [str(SOD), "--backend", "host", "--quiet", "--set", "mesh.nx=4000", "--set",
        "time.end=100", "--set", "output.interval=0.05", "--set", "output.plot=false"]


def _start(out):
    """A `solvers run` of LONG in a subprocess, returned once its run file holds a snapshot."""
    process = subprocess.Popen([sys.executable, "-m", "solvers.cli", "run", *LONG, "--out",
                                str(out)], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    # The mesh and attributes take about 72 kB, each snapshot 48 kB more.
    while sum(p.stat().st_size for p in out.glob(".sod.h5.tmp-*")) < 110_000:
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.1)  # some replays
    return process


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_keeps_the_snapshots_and_exits_128_plus_it(tmp_path, signum):
    process = _start(tmp_path)
    process.send_signal(signum)
    err = process.stderr.read()
    assert process.wait(timeout=60) == 128 + signum
    name = signal.Signals(signum).name
    partial = tmp_path / "sod.partial.h5"
    assert err == f"solvers: interrupted by {name}; output so far kept in {partial}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sod.partial.h5",
                                                          "sod.partial.xdmf"]
    with h5py.File(partial) as f:
        assert not f.attrs["complete"] and len(f["snapshots"]) >= 1
        state = f["checkpoint"]
        assert state.attrs["steps"] >= f.attrs["steps"] and "conserved" in state["state"]


def test_after_kill_9_files_are_intact_and_stale_temps_go(tmp_path):
    assert main(["run", *QUICK, "--out", str(tmp_path)]) == 0
    earlier = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    process = _start(tmp_path)
    process.kill()
    process.wait(timeout=60)
    process.stderr.close()
    stale = list(tmp_path.glob(".sod.h5.tmp-*"))
    assert len(stale) == 1 and stale[0].name == f".sod.h5.tmp-{process.pid}"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p not in stale} == earlier

    # Temp files of a live process stay; those of dead ones (any run name) go.
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        kept = tmp_path / f".other.h5.tmp-{live.pid}"
        kept.write_bytes(b"being written")
        dead_checkpoint = tmp_path / f".sod.checkpoint.h5.tmp-{process.pid}"
        dead_checkpoint.write_bytes(b"half a checkpoint")
        assert main(["run", *QUICK, "--out", str(tmp_path)]) == 0
        assert kept.exists() and not dead_checkpoint.exists() and not stale[0].exists()
    finally:
        live.kill()
        live.wait()


def test_a_signal_is_held_until_the_block_ends():
    with handled():
        with pytest.raises(Interrupted) as error:
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.01)
                finished = True  # the block ran to its end
        assert finished and error.value.signum == signal.SIGTERM
        with pytest.raises(Interrupted):  # outside a deferred block: at once
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(1)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
