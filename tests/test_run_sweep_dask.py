"""The Dask sweep executor (solvers/run/sweep_dask.py) on a distributed.LocalCluster of two
worker processes: the adapter alone (submit, wait_first, errors, close), then a sweep of Sod
on the host backend through it, which must equal the sequential sweep bit for bit."""

import csv
import operator
import os
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

import solvers
from solvers.run.sweep_dask import MISSING, DaskExecutor

SOD = Path(__file__).parent.parent / "cases" / "sod.toml"


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes of one thread each, as `dask worker --nworkers 2 --nthreads 1`.
    `distributed` is imported here, not at the top: the test extra has it (CI runs these
    tests and fails without it), and a machine without it can still collect the others
    (`pytest -m gpu` collects every module)."""
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster


# The adapter alone, with picklable functions of the standard library.
def test_submit_runs_on_the_workers_and_reruns_are_not_deduplicated(cluster):
    with DaskExecutor(cluster.scheduler_address) as executor:
        assert executor.submit(operator.mul, 6, 7).result() == 42
        # pure=False: the same call twice is two tasks, each run (pure=True would share a key)
        twice = [executor.submit(os.urandom, 16) for _ in range(2)]
        assert twice[0].key != twice[1].key
        assert twice[0].result() != twice[1].result()
        pids = {executor.submit(os.getpid).result() for _ in range(4)}
        assert os.getpid() not in pids  # worker processes, not this one
        client = executor.client
    assert executor.client is None and client.status == "closed"  # made here: closed
    assert "closed" in repr(executor)


def test_wait_first_returns_as_soon_as_one_task_is_done(cluster):
    with DaskExecutor(cluster) as executor:  # a cluster object works as an address does
        slow = executor.submit(time.sleep, 3)
        fast = executor.submit(operator.add, 1, 2)
        done, not_done = executor.wait_first([slow, fast])
        assert done == {fast} and not_done == {slow} and fast.result() == 3
        assert slow.result() is None  # drained: a sleep on a worker is not cancelled


def test_a_failed_task_raises_its_error_from_result(cluster):
    with DaskExecutor(cluster.scheduler_address) as executor:
        future = executor.submit(operator.truediv, 1, 0)
        with pytest.raises(ZeroDivisionError):
            future.result()


def test_a_client_given_is_used_and_left_open(cluster):
    import distributed

    with distributed.Client(cluster, set_as_default=False) as client:
        with DaskExecutor(client) as executor:
            assert executor.client is client
            assert executor.submit(operator.neg, 5).result() == -5
        assert client.status == "running"


def test_without_distributed_one_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails
    with pytest.raises(ImportError, match=r"pip install 'solvers-gpu\[dask\]'") as error:
        DaskExecutor("tcp://127.0.0.1:8786")
    assert str(error.value) == MISSING


# A sweep through the executor against the sequential one.
PARAMETERS = {"scheme.limiter": ["minmod", "mc"], "scheme.riemann": ["rusanov", "hllc"]}
TIMING = ("second", "wall")  # figures that measure the run, not its result


def physics(figures):
    return {k: v for k, v in figures.items() if not any(word in k for word in TIMING)}


def datasets(path):
    """Every dataset of an HDF5 file by name, with the run's time and step count."""
    out = {}
    with h5py.File(path) as f:
        f.visititems(lambda name, item: out.__setitem__(name, item[()])
                     if isinstance(item, h5py.Dataset) else None)
        out["attrs/time"], out["attrs/steps"] = f.attrs["time"], f.attrs["steps"]
    return out


def test_a_dask_sweep_equals_the_sequential_sweep_bit_for_bit(cluster, tmp_path):
    common = dict(mesh={"nx": 64}, run={"backend": "host"})
    sequential = solvers.sweep(SOD, PARAMETERS, out=tmp_path / "sequential", **common)
    with DaskExecutor(cluster.scheduler_address) as executor:
        spread = solvers.sweep(SOD, PARAMETERS, out=tmp_path / "dask", executor=executor,
                               **common)
        # Again: every run skipped; with rerun=True every run runs again on the cluster.
        again = solvers.sweep(SOD, PARAMETERS, out=tmp_path / "dask", executor=executor,
                              **common)
        rerun = solvers.sweep(SOD, PARAMETERS, out=tmp_path / "dask", executor=executor,
                              rerun=True, **common)
    assert len(sequential) == len(spread) == 4
    assert all(r["skipped"] for r in again) and not any(r["skipped"] for r in rerun)
    assert {r["pid"] for r in spread + rerun}.isdisjoint({os.getpid()})  # on the workers
    with open(spread.table) as stream:  # one table of the runs, a column per swept key
        rows = list(csv.DictReader(stream))
    assert sorted((r["scheme.limiter"], r["scheme.riemann"]) for r in rows) == sorted(
        (r["parameters"]["scheme.limiter"], r["parameters"]["scheme.riemann"])
        for r in sequential)
    by_name = {record["name"]: record for record in spread}
    for mine in sequential:
        theirs = by_name[mine["name"]]
        assert mine["status"] == theirs["status"] == "ok"
        assert mine["parameters"] == theirs["parameters"]
        assert physics(mine["figures"]) == physics(theirs["figures"])  # exactly, not approx
        assert [Path(p).name for p in mine["files"]] == [Path(p).name for p in theirs["files"]]
        h5 = [p for p in mine["files"] if str(p).endswith(".h5")]
        assert h5, mine["files"]
        for path in h5:
            a = datasets(path)
            b = datasets(tmp_path / "dask" / Path(path).name)
            assert a.keys() == b.keys() and any(k.startswith("fields/") for k in a)
            for key in a:
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)
