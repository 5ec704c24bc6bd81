"""Decomposed runs (issue 24): `mpiexec -n N solvers run CASE --backend host` splits the grid
among N ranks; the written fields equal the single-rank run's bit for bit (2 ranks, and 3: an
uneven split), and a failure on one rank ends all ranks with one message."""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from solvers.backend.mpi import mpiexec

h5py = pytest.importorskip("h5py")
pytest.importorskip("mpi4py")

ROOT = Path(__file__).resolve().parents[1]
MPIEXEC = mpiexec(2)
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec")

# Small, short cases: 2D (transmissive sides), 1D (Sod), 3D (periodic and walls).
CASES = {
    "riemann2d_config3": ["mesh.nx=64", "mesh.ny=64", "time.end=0.05"],
    "sod": ["mesh.nx=101", "time.end=0.05"],
}


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")


def _run(case, sets, out, ranks=None, extra=("--quiet",), timeout=240, backend="host"):
    path = case if isinstance(case, Path) else ROOT / "cases" / f"{case}.toml"
    command = [sys.executable, "-m", "solvers", "run", str(path),
               "--backend", backend, "--out", str(out), "--set",
               "output.plot=false", *(a for s in sets for a in ("--set", s)), *extra]
    if ranks:
        command = [*mpiexec(ranks), *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=_env(), cwd=ROOT)


def _datasets(path):
    """{name: array} of every dataset of an HDF5 file."""
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()])
                     if isinstance(obj, h5py.Dataset) else None)
    return out


# 2D on 2 and 3 ranks (an uneven split), 1D on 2 (3D: its own test, 2 and 3 ranks).
@pytest.mark.parametrize("case, ranks", [("riemann2d_config3", 2), ("riemann2d_config3", 3),
                                         ("sod", 2)])
def test_decomposed_run_equals_single_rank_bit_for_bit(tmp_path, case, ranks):
    sets = [*CASES[case], "output.interval=0.025"]
    single = _run(case, sets, tmp_path / "one")
    assert single.returncode == 0, single.stderr
    split = _run(case, sets, tmp_path / "many", ranks=ranks)
    assert split.returncode == 0, split.stderr
    expected = _datasets(tmp_path / "one" / f"{case}.h5")
    got = _datasets(tmp_path / "many" / f"{case}.h5")
    assert sorted(got) == sorted(expected)
    assert any(name.endswith("rho") for name in got)
    for name, values in expected.items():
        assert got[name].dtype == values.dtype, name
        assert np.array_equal(got[name], values, equal_nan=True), name


def _box_case(tmp_path):
    case = tmp_path / "box.toml"
    case.write_text(
        '[case]\nname = "box"\n[physics]\nsolver = "euler"\n'
        '[mesh]\nnx = 12\nny = 10\nnz = 11\nx = [0.0, 1.0]\ny = [0.0, 1.0]\nz = [0.0, 1.0]\n'
        '[scheme]\ntime_integrator = "ssp_rk2"\n'
        '[initial]\nrho = "1 + 0.5 * (x > 0.5) + 0.2 * sin(6 * z)"\nvx = 0.2\nvz = -0.1\n'
        'p = "1 + 0.3 * (y > 0.4)"\n'
        '[boundary]\nx_lo = "periodic"\nx_hi = "periodic"\ny_lo = "reflective"\n'
        'y_hi = "transmissive"\nz_lo = "periodic"\nz_hi = "periodic"\n'
        '[time]\nend = 0.04\n[output]\ninterval = 0.02\n')
    return case


def test_decomposed_3d_run_equals_single_rank(tmp_path):
    """3D: blocks split along z (and an uneven 3-way split), periodic and wall sides."""
    case = _box_case(tmp_path)
    single = _run(case, [], tmp_path / "one")
    assert single.returncode == 0, single.stderr
    expected = _datasets(tmp_path / "one" / "box.h5")
    for ranks in (2, 3):
        split = _run(case, [], tmp_path / f"n{ranks}", ranks=ranks)
        assert split.returncode == 0, split.stderr
        got = _datasets(tmp_path / f"n{ranks}" / "box.h5")
        assert sorted(got) == sorted(expected)
        for name, values in expected.items():
            assert np.array_equal(got[name], values, equal_nan=True), (ranks, name)


def test_a_failing_rank_ends_all_ranks_with_one_message(tmp_path):
    """Rank 0 alone writes files: an output folder it cannot make fails it alone, while the
    others step on; all must end within seconds, with one message and a non-zero status."""
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    start = time.perf_counter()
    result = _run("riemann2d_config3", ["mesh.nx=64", "mesh.ny=64", "time.end=5.0"],
                  blocker / "out", ranks=2, timeout=120)
    assert result.returncode != 0
    assert time.perf_counter() - start < 60
    lines = [line for line in result.stderr.splitlines() if line.startswith("solvers:")]
    assert len(lines) == 1, result.stderr
    assert "rank 0 of 2" in lines[0]


def test_a_case_error_is_reported_once(tmp_path):
    """An error every rank meets alike (a bad case) is printed once, by rank 0."""
    result = _run("riemann2d_config3", ["mesh.nx=64", "mesh.ny=64", "scheme.cfl=-1"],
                  tmp_path, ranks=2)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("solvers:")]
    assert len(lines) == 1, result.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("ranks", [2, 3])
def test_decomposed_run_on_one_gpu_equals_single_rank(tmp_path, ranks):
    """Ranks sharing one GPU (halos staged through pinned host memory: NCCL refuses two
    ranks on a GPU) equal the single-rank GPU run bit for bit, 1D and 3D (the march kernels
    both ways; small 2D grids run the tile kernel on one rank)."""
    for case, sets in ((_box_case(tmp_path), []), ("sod", CASES["sod"])):
        name = case.stem if isinstance(case, Path) else case
        single = _run(case, sets, tmp_path / f"{name}1", backend="cuda")
        assert single.returncode == 0, single.stderr
        split = _run(case, sets, tmp_path / f"{name}{ranks}", ranks=ranks, backend="cuda")
        assert split.returncode == 0, split.stderr
        expected = _datasets(tmp_path / f"{name}1" / f"{name}.h5")
        got = _datasets(tmp_path / f"{name}{ranks}" / f"{name}.h5")
        for key, values in expected.items():
            assert np.array_equal(got[key], values, equal_nan=True), (name, key)


def test_process_grid_from_the_case(tmp_path):
    """run.decomposition picks the process grid (here across x, where the one chosen from the
    shape splits y); the result is still the single-rank run's."""
    sets = [*CASES["riemann2d_config3"], "output.interval=0.05"]
    single = _run("riemann2d_config3", sets, tmp_path / "one")
    split = _run("riemann2d_config3", [*sets, "run.decomposition=[2, 1]"], tmp_path / "x",
                 ranks=2, extra=())
    assert single.returncode == 0 and split.returncode == 0, split.stderr
    expected = _datasets(tmp_path / "one" / "riemann2d_config3.h5")
    got = _datasets(tmp_path / "x" / "riemann2d_config3.h5")
    assert "process grid 2 x 1, halos host-staged" in split.stdout, split.stdout
    for name, values in expected.items():
        assert np.array_equal(got[name], values, equal_nan=True), name


def test_a_process_grid_that_does_not_fit_is_a_case_error(tmp_path):
    result = _run("riemann2d_config3", ["run.decomposition=[3, 1]"], tmp_path, ranks=2)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("solvers:")]
    assert len(lines) == 1 and "decomposition" in lines[0], result.stderr


def test_checkpoints_restart_on_another_rank_count(tmp_path):
    """A checkpoint holds the whole grid's state whatever the rank count that wrote it: one
    written by 2 ranks continues on 3 ranks and on one (as one written by one rank would),
    each to the fields of the uninterrupted single-rank run, bit for bit."""
    case, sets = "riemann2d_config3", [*CASES["riemann2d_config3"], "output.interval=0.025"]
    straight = _run(case, sets, tmp_path / "straight")
    assert straight.returncode == 0, straight.stderr
    expected = _datasets(tmp_path / "straight" / f"{case}.h5")
    first = [*sets, "output.checkpoint_interval=0.02"]  # the last one: after t = 0.04
    for writers, readers in ((2, 3), (2, None)):
        out = tmp_path / f"w{writers}r{readers}"
        wrote = _run(case, first, out / "a", ranks=writers)
        assert wrote.returncode == 0, wrote.stderr
        checkpoint = out / "a" / f"{case}.checkpoint.h5"
        resumed = _run(case, sets, out / "b", ranks=readers,
                       extra=("--quiet", "--restart", str(checkpoint)))
        assert resumed.returncode == 0, resumed.stderr
        got = _datasets(out / "b" / f"{case}.h5")
        # It continued: its file holds only the snapshots after the checkpoint.
        assert len([n for n in got if n.startswith("snapshots/")]) < len(
            [n for n in expected if n.startswith("snapshots/")])
        final = [name for name in expected if name.startswith("fields/")]
        assert final, sorted(expected)
        for name in final:
            assert np.array_equal(got[name], expected[name], equal_nan=True), (writers, name)


def test_wall_clock_checkpoints_are_refused_on_several_ranks(tmp_path):
    result = _run("sod", ["output.checkpoint_wall_seconds=60"], tmp_path, ranks=2)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("solvers:")]
    assert len(lines) == 1 and "checkpoint_wall_seconds" in lines[0], result.stderr
