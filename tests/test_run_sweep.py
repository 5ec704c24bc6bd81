"""Sweeps (solvers/run/sweep*.py) on the host backend: records and the table, sweeps sharing a
folder, resuming, worker processes equal to one process bit for bit, a torn records file, the
Python API with a path and with a Case, and a sweep killed with SIGKILL and run again."""

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import h5py
import numpy as np
import psutil
import pytest

import solvers
from solvers.backend.host_threads import team_size
from solvers.cases import CaseError, load
from solvers.cli import main
from solvers.run.sweep_executors import WorkerPool
from solvers.run.sweep_plan import run_key

SOD = Path(__file__).parent.parent / "cases" / "sod.toml"
FAST = {"run.backend": "host", "output.plot": False}  # every sweep's base overrides
GRID = {"mesh.nx": [32, 48], "scheme.limiter": ["minmod", "mc"]}


def table(folder, name="sod"):
    with open(Path(folder) / f"{name}-sweep.csv") as stream:
        return list(csv.DictReader(stream))


def lines(folder, name="sod"):
    return (Path(folder) / f"{name}-sweep.jsonl").read_text().splitlines()


def run_files(records):
    return [Path(path) for record in records for path in record["files"]]


def assert_same_results(path_a, path_b):
    """Two run files hold the same datasets, bit for bit, at the same time and step count."""
    with h5py.File(path_a) as a, h5py.File(path_b) as b:
        names = []
        a.visit(lambda name: names.append(name) if isinstance(a[name], h5py.Dataset) else None)
        assert any(name.startswith("fields/") for name in names)
        for name in names:
            np.testing.assert_array_equal(a[name][()], b[name][()], err_msg=name)
        assert (a.attrs["time"], a.attrs["steps"]) == (b.attrs["time"], b.attrs["steps"])


# --- records, the table and what a run file says --------------------------------------------

def test_records_the_table_and_the_provenance_of_each_run(tmp_path):
    records = solvers.sweep(SOD, GRID, out=tmp_path, **FAST)
    assert [r["parameters"] for r in records] == [
        {"mesh.nx": 32, "scheme.limiter": "minmod"}, {"mesh.nx": 32, "scheme.limiter": "mc"},
        {"mesh.nx": 48, "scheme.limiter": "minmod"}, {"mesh.nx": 48, "scheme.limiter": "mc"}]
    for record in records:
        assert record["status"] == "ok" and not record["skipped"]
        # The key hashes the case text and the canonical override set, whichever form the
        # overrides took.
        assert record["key"] == run_key(SOD.read_text(), {**FAST, **record["parameters"]})
        assert record["name"] == f"sod-{record['key']}" and record["wall_seconds"] > 0
        assert record["figures"]["total_mass"] == pytest.approx(0.5625, rel=1e-5)
        assert [Path(p).name for p in record["files"]] == [f"{record['name']}.h5",
                                                           f"{record['name']}.xdmf"]
    assert len({r["key"] for r in records}) == 4
    assert records.table == tmp_path / "sod-sweep.csv"
    # The records file: one JSON line per run, as returned but for `skipped`.
    stored = [json.loads(line) for line in lines(tmp_path)]
    assert [{**r, "skipped": False} for r in stored] == list(records)
    rows = table(tmp_path)
    assert [(r["name"], r["mesh.nx"], r["scheme.limiter"], r["status"]) for r in rows] == [
        (r["name"], str(r["parameters"]["mesh.nx"]), r["parameters"]["scheme.limiter"], "ok")
        for r in records]
    assert list(rows[0])[:4] == ["name", "key", "mesh.nx", "scheme.limiter"]
    log = (tmp_path / "sod-sweep.log").read_text()
    assert log.count(" start ") == 4 and log.count(" ok in ") == 4
    # Each run file: the case as resolved (TOML) and the overrides (JSON).
    with h5py.File(records[3]["files"][0]) as f:
        resolved = tomllib.loads(f.attrs["resolved_case"])
        overrides = json.loads(f.attrs["overrides"])
        assert f.attrs["complete"] and "nx = 400" in f.attrs["case"]
    assert resolved["mesh"]["nx"] == 48 and resolved["scheme"]["limiter"] == "mc"
    assert resolved["case"]["name"] == records[3]["name"]
    assert {k: overrides[k] for k in (*FAST, *GRID)} == {**FAST, "mesh.nx": 48,
                                                        "scheme.limiter": "mc"}


def test_another_sweep_into_the_folder_keeps_every_row(tmp_path):
    first = solvers.sweep(SOD, GRID, out=tmp_path, **FAST)
    other = solvers.sweep(SOD, {"mesh.nx": 40, "scheme.riemann": ["rusanov"]}, out=tmp_path, **FAST)
    smaller = solvers.sweep(SOD, {"mesh.nx": [32], "scheme.limiter": ["mc"]}, out=tmp_path,
                            **FAST)
    assert smaller[0]["skipped"] and smaller[0]["key"] == first[1]["key"]
    rows = {row["key"]: row for row in table(tmp_path)}
    assert len(table(tmp_path)) == 5 and set(rows) == {r["key"] for r in [*first, *other]}
    assert {"mesh.nx", "scheme.limiter", "scheme.riemann"} <= set(next(iter(rows.values())))
    assert rows[other[0]["key"]]["scheme.riemann"] == "rusanov"
    assert rows[other[0]["key"]]["scheme.limiter"] == ""  # not swept in that run
    assert all(rows[r["key"]]["scheme.limiter"] == r["parameters"]["scheme.limiter"]
               for r in first)


# --- resuming ----------------------------------------------------------------------------

def test_a_sweep_run_again_skips_finished_runs_and_rerun_redoes_them(tmp_path):
    parameters = {**GRID, "time.max_steps": [10_000]}
    first = solvers.sweep(SOD, parameters, out=tmp_path, **FAST)
    stamps = {path: path.stat().st_mtime_ns for path in run_files(first)}
    again = solvers.sweep(SOD, parameters, out=tmp_path, **FAST)
    assert all(r["skipped"] for r in again) and len(lines(tmp_path)) == 4
    assert [r["figures"] for r in again] == [r["figures"] for r in first]
    assert {path: path.stat().st_mtime_ns for path in stamps} == stamps
    time.sleep(0.01)
    forced = solvers.sweep(SOD, parameters, out=tmp_path, rerun=True, **FAST)
    assert not any(r["skipped"] for r in forced) and len(lines(tmp_path)) == 8
    assert all(path.stat().st_mtime_ns > stamps[path] for path in stamps)
    assert len(table(tmp_path)) == 4
    # A run whose file is gone, and a failed run, run again; the others do not.
    run_files(first)[0].unlink()
    failing = {"time.max_steps": [10_000, 3], **GRID}
    mixed = solvers.sweep(SOD, failing, out=tmp_path, **FAST)
    assert [r["skipped"] for r in mixed] == [False, True, True, True] + [False] * 4
    assert all(r["status"].startswith("failed: reached max_steps=3") for r in mixed[4:])
    retried = solvers.sweep(SOD, failing, out=tmp_path, **FAST)
    assert [r["skipped"] for r in retried] == [True] * 4 + [False] * 4
    assert len(lines(tmp_path)) == 8 + 5 + 4 and len(table(tmp_path)) == 8


def test_an_edited_case_file_runs_its_sweep_anew(tmp_path):
    """The key hashes the case file's text too: after an edit, no old result is taken for a
    new one."""
    case = tmp_path / "sod.toml"
    case.write_text(SOD.read_text())
    parameters = {"mesh.nx": [32]}
    first = solvers.sweep(case, parameters, out=tmp_path / "out", **FAST)
    case.write_text(SOD.read_text().replace("end = 0.2", "end = 0.1"))
    edited = solvers.sweep(case, parameters, out=tmp_path / "out", **FAST)
    assert not edited[0]["skipped"] and edited[0]["key"] != first[0]["key"]
    assert len(table(tmp_path / "out")) == 2


def test_a_torn_last_line_is_skipped_and_ended(tmp_path):
    solvers.sweep(SOD, {"mesh.nx": [32, 40]}, out=tmp_path, **FAST)
    records = tmp_path / "sod-sweep.jsonl"
    with open(records, "a") as stream:
        stream.write('{"key": "0123456789ab", "name": "sod-0123')  # killed mid-write
    again = solvers.sweep(SOD, {"mesh.nx": [32, 40, 48]}, out=tmp_path, **FAST)
    assert [r["skipped"] for r in again] == [True, True, False]
    text = records.read_text().splitlines()
    assert len(text) == 4 and text[2].endswith('"sod-0123')
    assert json.loads(text[3])["key"] == again[2]["key"]
    assert len(table(tmp_path)) == 3


# --- worker processes ----------------------------------------------------------------------

def test_a_pool_kept_across_sweeps_runs_them_in_its_workers(tmp_path):
    """solvers.SweepPool starts its workers at once and keeps them: two sweeps on it run in
    those processes, with the bits of jobs=1; closed, the workers are gone."""
    one = solvers.sweep(SOD, GRID, out=tmp_path / "one", **FAST)
    with solvers.SweepPool(2, backend="host") as pool:
        assert len(pool.pids) == 2 and os.getpid() not in pool.pids
        first = solvers.sweep(SOD, GRID, out=tmp_path / "first", executor=pool, **FAST)
        second = solvers.sweep(SOD, GRID, out=tmp_path / "second", executor=pool, **FAST)
    for records in (first, second):
        assert {r["pid"] for r in records} <= pool.pids
        for mine, theirs in zip(one, records):
            assert theirs["status"] == "ok" and theirs["key"] == mine["key"]
            assert_same_results(mine["files"][0], theirs["files"][0])
    assert not any(psutil.pid_exists(pid) for pid in pool.pids)


@pytest.mark.parametrize("streams", [False, True])
def test_two_jobs_equal_one_bit_for_bit(tmp_path, streams):
    """Two runs at once, in worker processes or in threads with backends of their own (on a
    GPU a CUDA stream each), give the bits one at a time gives."""
    one = solvers.sweep(SOD, GRID, out=tmp_path / "one", **FAST)
    two = solvers.sweep(SOD, GRID, out=tmp_path / "two", jobs=2, streams=streams, **FAST)
    assert [r["key"] for r in one] == [r["key"] for r in two]
    pids = {r["pid"] for r in two}
    assert pids == {os.getpid()} if streams else pids.isdisjoint({os.getpid()})
    if not streams:  # each worker's runs counted from 1
        for pid in pids:
            counts = sorted(r["process_run"] for r in two if r["pid"] == pid)
            assert counts == list(range(1, len(counts) + 1))
    assert [r["key"] for r in table(tmp_path / "two")] == [r["key"] for r in one]  # sweep order
    for mine, theirs in zip(one, two):
        assert theirs["status"] == "ok"
        assert mine["figures"].keys() == theirs["figures"].keys()
        assert all(mine["figures"][k] == theirs["figures"][k]
                   for k in mine["figures"] if "second" not in k)
        assert_same_results(mine["files"][0], theirs["files"][0])


def test_workers_share_the_cores(monkeypatch):
    monkeypatch.delenv("SOLVERS_HOST_THREADS", raising=False)
    with WorkerPool(2) as pool:
        threads = pool.submit(os.getenv, "SOLVERS_HOST_THREADS").result()
    assert threads == str(max(1, team_size() // 2))
    monkeypatch.setenv("SOLVERS_HOST_THREADS", "3")  # the user's choice stands
    with WorkerPool(2) as pool:
        assert pool.submit(os.getenv, "SOLVERS_HOST_THREADS").result() == "3"


# --- the Python API --------------------------------------------------------------------------

def test_a_case_object_sweeps_from_its_file_and_overrides(tmp_path):
    case = load(SOD, {"mesh": {"nx": 32}, "run.backend": "host", "output.plot": False})
    records = solvers.sweep(case, {"scheme.limiter": ["minmod", "mc"]}, out=tmp_path)
    assert all(r["status"] == "ok" for r in records)
    with h5py.File(records[0]["files"][0]) as f:
        assert tomllib.loads(f.attrs["resolved_case"])["mesh"]["nx"] == 32
    # The same runs from the path with the same overrides, in the other form: found done.
    again = solvers.sweep(SOD, {"scheme.limiter": ["minmod", "mc"]}, out=tmp_path,
                          mesh={"nx": 32}, **FAST)
    assert [r["key"] for r in again] == [r["key"] for r in records]
    assert all(r["skipped"] for r in again)


def test_bad_input_fails_before_any_run(tmp_path):
    with pytest.raises(CaseError, match="--set scheme.limiter"):
        solvers.sweep(SOD, {"scheme.limiter": ["mc", "nope"]}, out=tmp_path, **FAST)
    with pytest.raises(CaseError, match="'section.key'"):
        solvers.sweep(SOD, {"nx": [1]}, out=tmp_path, **FAST)
    with pytest.raises(CaseError, match="output.dir cannot be swept"):
        solvers.sweep(SOD, {"output.dir": ["a", "b"]}, out=tmp_path, **FAST)
    with pytest.raises(ValueError, match="jobs"):
        solvers.sweep(SOD, {}, jobs=0, out=tmp_path, **FAST)
    assert not (tmp_path / "sod-sweep.jsonl").exists()


# --- the command line ------------------------------------------------------------------------

def test_cli_options_and_a_missing_dask(tmp_path, capsys, monkeypatch):
    argv = ["sweep", str(SOD), "--backend", "host", "--quiet", "--out", str(tmp_path),
            "--set", "mesh.nx=32,40", "--set", "output.plot=false"]
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--jobs", "0"])
    assert exit_.value.code == 2 and "--jobs" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)  # dask.distributed not installed
    assert main([*argv, "--dask", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("solvers: error: --dask: ")
    monkeypatch.setitem(sys.modules, "solvers.run.sweep_dask", None)  # no adapter at all
    assert main([*argv, "--dask", "tcp://127.0.0.1:1"]) == 2
    assert capsys.readouterr().err.startswith("solvers: error: --dask: ")
    assert main([*argv, "--jobs", "2"]) == 0 and len(table(tmp_path)) == 2
    assert main([*argv, "--rerun"]) == 0 and len(lines(tmp_path)) == 4


# --- killed with SIGKILL, run again ------------------------------------------------------------

def test_a_sweep_killed_with_sigkill_and_run_again_completes(tmp_path):
    """Eight runs of a few tenths of a second on two workers, the sweep killed at a random
    moment once a record exists; run again, every run is in the table once, ok, and every run
    file is whole. Its worker processes end with it."""
    rnd = random.Random(23)
    argv = [sys.executable, "-m", "solvers", "sweep", str(SOD), "--backend", "host", "--quiet",
            "--out", str(tmp_path), "--jobs", "2", "--set", "output.plot=false",
            "--set", "mesh.nx=" + ",".join(str(n) for n in range(1000, 1008))]
    records = tmp_path / "sod-sweep.jsonl"
    process = subprocess.Popen(argv, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (records.exists() and records.read_text().strip()):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.02)
    time.sleep(rnd.uniform(0.0, 0.6))
    workers = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stderr.close()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, alive  # orphaned workers notice and end
    finished = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    rows = table(tmp_path)
    keys = [run_key(SOD.read_text(), {"run.backend": "host", "output.plot": False,
                                      "mesh.nx": n}) for n in range(1000, 1008)]
    assert sorted(row["key"] for row in rows) == sorted(keys)
    assert all(row["status"] == "ok" for row in rows)
    for key in keys:
        with h5py.File(tmp_path / f"sod-{key}.h5") as f:
            assert f.attrs["complete"] and f["fields/rho"].shape == (int(
                tomllib.loads(f.attrs["resolved_case"])["mesh"]["nx"]),)


def sweep_workers(process):
    """The sweep's workers: the Python processes forked by its pool's server process (not
    their short-lived compilers), some of which may end while listed."""
    for child in psutil.Process(process.pid).children(recursive=True):
        try:
            if child.ppid() != process.pid and child.name().startswith("python"):
                yield child
        except psutil.NoSuchProcess:
            continue


def kill_a_worker(process):
    """SIGKILL to one of the sweep's workers: whether one was killed."""
    for worker in sweep_workers(process):
        try:
            worker.kill()
            return True
        except psutil.NoSuchProcess:  # ended between listing and killing
            continue
    return False


def test_a_worker_killed_fails_its_runs_and_the_sweep_goes_on(tmp_path):
    """A worker killed (the OOM killer, a crash) breaks the process pool: the runs in flight
    are failed records, the rest run on a new pool, the exit status is 1; run again, the failed
    runs run and every row is ok."""
    argv = [sys.executable, "-m", "solvers", "sweep", str(SOD), "--backend", "host", "--quiet",
            "--out", str(tmp_path), "--jobs", "2", "--set", "output.plot=false",
            "--set", "mesh.nx=" + ",".join(str(n) for n in range(2000, 2006))]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ((tmp_path / "sod-sweep.log").exists() and any(sweep_workers(process))):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.3)  # a worker that has started a run
    while not kill_a_worker(process):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1 and "BrokenProcessPool" in err, err
    rows = table(tmp_path)
    assert len(rows) == 6 and any(row["status"] != "ok" for row in rows)
    assert subprocess.run(argv, timeout=120).returncode == 0
    assert len(table(tmp_path)) == 6 and all(row["status"] == "ok" for row in table(tmp_path))


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_ends_the_runs_in_flight_and_keeps_the_records(tmp_path, jobs):
    argv = [sys.executable, "-m", "solvers", "sweep", str(SOD), "--backend", "host", "--quiet",
            "--out", str(tmp_path), "--jobs", str(jobs), "--set", "output.plot=false",
            "--set", "mesh.nx=" + ",".join(str(n) for n in range(1000, 1006))]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    records = tmp_path / "sod-sweep.jsonl"
    deadline = time.monotonic() + 60
    while not (records.exists() and records.read_text().strip()):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    workers = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err.startswith("solvers: interrupted by SIGINT"), err
    assert not psutil.wait_procs(workers, timeout=10)[1]
    done = [json.loads(line) for line in lines(tmp_path)]
    assert 1 <= len(done) < 6 and all(record["status"] == "ok" for record in done)
    assert sorted(row["key"] for row in table(tmp_path)) == sorted(r["key"] for r in done)
