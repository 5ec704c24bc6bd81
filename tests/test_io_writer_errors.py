"""Write errors never damage earlier results: a full disk or a file-size limit while a run
writes (snapshots, final fields, XDMF, checkpoint) ends it with one line and exit 1, leaves the
earlier NAME.h5 and NAME.xdmf untouched and no temp file, and keeps the snapshots that fit in
NAME.partial.h5; an output path that cannot be written is one line, exit 2, before the run."""

import errno
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import h5py
import pytest

from solvers.cli import main
from solvers.io import safe
from solvers.io.hdf5 import RunWriter

SOD = Path(__file__).resolve().parent.parent / "cases" / "sod.toml"
QUICK = [str(SOD), "--backend", "host", "--quiet", "--set", "mesh.nx=32",
         "--set", "output.plot=false"]
NO_SPACE = "No space left on device"


def _earlier_run(out):
    """A complete earlier run in `out`; returns its files' bytes."""
    assert main(["run", *QUICK, "--out", str(out)]) == 0
    return {p.name: p.read_bytes() for p in out.iterdir()}


def _untouched(out, earlier):
    assert not list(out.glob(".*")), "a temp file was left"
    assert {name: (out / name).read_bytes() for name in earlier} == earlier


def _readable_partial(out):
    with h5py.File(out / "sod.partial.h5") as f:
        assert not f.attrs["complete"]
        snapshots = list(f["snapshots"].values())
        assert snapshots and all(set(g) == {"rho", "vx", "p"} for g in snapshots)
        for g in snapshots:
            assert g["rho"][...].shape == (int(f["mesh"].attrs["shape"][0]),)
        return len(snapshots)


def _limited(limit):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


@pytest.mark.parametrize("limit, kept", [(150_000, True), (10_000, False)])
def test_a_file_size_limit_is_one_line_and_keeps_earlier_results(tmp_path, limit, kept):
    earlier = _earlier_run(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "solvers.cli", "run", str(SOD), "--backend", "host", "--quiet",
         "--set", "mesh.nx=2000", "--set", "output.interval=0.02", "--set",
         "output.plot=false", "--out", str(tmp_path)],
        capture_output=True, text=True, preexec_fn=_limited(limit), timeout=120)
    message = f"solvers: error writing {tmp_path}/sod.h5: File too large"
    if kept:
        message += f"; output so far kept in {tmp_path}/sod.partial.h5"
    assert (result.returncode, result.stderr) == (1, message + "\n")
    _untouched(tmp_path, earlier)
    if kept:
        assert 1 <= _readable_partial(tmp_path) < 11
    else:
        assert not (tmp_path / "sod.partial.h5").exists()


@pytest.fixture
def full_disk(monkeypatch):
    """full_disk(when) makes every write of a GuardedFile fail with ENOSPC once when(guard)
    is true."""
    def install(when):
        write = safe.GuardedFile.write

        def failing(self, data):
            if when(self):
                self.error = self.error or OSError(errno.ENOSPC, NO_SPACE)
            return write(self, data)
        monkeypatch.setattr(safe.GuardedFile, "write", failing)
    return install


def test_a_full_disk_while_finishing_keeps_the_earlier_file(tmp_path, capsys, full_disk,
                                                            monkeypatch):
    earlier = _earlier_run(tmp_path)
    finish = RunWriter.finish

    def finishing(self, *args):
        self._guard.disk_full = True
        return finish(self, *args)
    monkeypatch.setattr(RunWriter, "finish", finishing)
    full_disk(lambda guard: getattr(guard, "disk_full", False))
    capsys.readouterr()
    assert main(["run", *QUICK, "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (f"solvers: error writing {tmp_path}/sod.h5: {NO_SPACE}; "
                                       f"output so far kept in {tmp_path}/sod.partial.h5\n")
    _untouched(tmp_path, earlier)
    assert _readable_partial(tmp_path) == 5  # the final fields did not fit


def test_an_xdmf_that_cannot_be_written_keeps_the_earlier_pair(tmp_path, capsys, monkeypatch):
    earlier = _earlier_run(tmp_path)

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, NO_SPACE)
    monkeypatch.setattr("solvers.io.hdf5.write_xdmf", no_space)
    capsys.readouterr()
    assert main(["run", *QUICK, "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (f"solvers: error writing {tmp_path}/sod.xdmf: "
                                       f"{NO_SPACE}; output so far kept in "
                                       f"{tmp_path}/sod.partial.h5\n")
    _untouched(tmp_path, earlier)
    assert _readable_partial(tmp_path) == 5


def test_a_checkpoint_that_does_not_fit_keeps_the_earlier_one(tmp_path, capsys, full_disk):
    checkpointing = ["--set", "output.checkpoint_interval=0.05"]
    assert main(["run", *QUICK, *checkpointing, "--out", str(tmp_path)]) == 0
    earlier = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    full_disk(lambda guard: guard.path.name.startswith(".sod.checkpoint.h5"))
    capsys.readouterr()
    assert main(["run", *QUICK, *checkpointing, "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"solvers: error writing {tmp_path}/sod.checkpoint.h5: {NO_SPACE}; "
        f"output so far kept in {tmp_path}/sod.partial.h5\n")
    _untouched(tmp_path, earlier)
    with h5py.File(tmp_path / "sod.partial.h5") as f:  # the state to restart from
        assert f["checkpoint"].attrs["time"] > 0


@pytest.mark.parametrize("make, message", [
    (lambda out: (out / "sod.h5").mkdir(), "{out}/sod.h5: exists and is a folder"),
    (lambda out: (out / "sod.png").mkdir(), "{out}/sod.png: exists and is a folder"),
    (lambda out: (out / "sub").write_text("a file"), "{out}/sub: the output folder is a file"),
])
def test_an_output_path_that_cannot_be_written_fails_before_the_run(tmp_path, capsys, make,
                                                                    message):
    make(tmp_path)
    out = tmp_path / "sub" if "sub" in message else tmp_path
    before = sorted(tmp_path.iterdir())
    assert main(["run", *QUICK, "--set", "time.end=50", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"solvers: error: {message.format(out=tmp_path)}\n"
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in read-only folders")
def test_an_output_folder_without_write_permission_fails_before_the_run(tmp_path, capsys):
    tmp_path.chmod(0o555)
    try:
        assert main(["run", *QUICK, "--out", str(tmp_path)]) == 2
    finally:
        tmp_path.chmod(0o755)
    assert capsys.readouterr().err == (f"solvers: error: {tmp_path}: the output folder is not "
                                       "writable\n")


def test_an_os_error_without_a_path_names_no_empty_path(capsys, monkeypatch):
    def failing(_args):
        raise OSError(errno.ENOSPC, NO_SPACE)
    monkeypatch.setattr("solvers.cli.command_run", failing)
    assert main(["run", *QUICK]) == 2
    assert capsys.readouterr().err == f"solvers: error: {NO_SPACE}\n"
