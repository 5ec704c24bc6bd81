"""The resolved case: validated case data written back as TOML loads to the same validated data
(every shipped case, with overrides of every kind of value), and every run file stores it with
the overrides beside the original text."""

import json
import tomllib
from pathlib import Path

import h5py
import pytest

from solvers.cases import load
from solvers.cases.resolved import dumps
from solvers.cli import main

CASES = Path(__file__).resolve().parent.parent / "cases"


def _round_trip(case, tmp_path):
    text = dumps(case.data)
    copy = tmp_path / "cases" / case.path.name  # mesh files are found relative to the case
    copy.parent.mkdir()
    (tmp_path / "meshes").symlink_to(CASES.parent / "meshes")
    copy.write_text(text)
    assert load(copy).data == case.data
    return text


@pytest.mark.parametrize("path", sorted(CASES.glob("*.toml")), ids=lambda p: p.stem)
def test_every_shipped_case_round_trips(path, tmp_path):
    _round_trip(load(path), tmp_path)


def test_overrides_of_every_kind_round_trip(tmp_path):
    case = load(CASES / "sod.toml", {
        "case.description": 'quotes " and \\ backslash,\nnew line, tab\t, é, 🙂, \x7f \x01',
        "physics.gamma": 1.67, "mesh.nx": 12, "time.end": 1e-300, "time.max_steps": 10**12,
        "output.fields": ["rho", "p"], "run.graph": False,
        "boundary.x_lo": {"inflow": {"rho": 1.0, "vx": 0.5, "p": float("1e30")}},
        "initial.p": "where(x < 0.5, 1.0, 0.1)"})
    text = _round_trip(case, tmp_path)
    assert tomllib.loads(text)["physics"]["gamma"] == 1.67


def test_run_files_store_the_resolved_case_and_the_overrides(tmp_path):
    assert main(["run", str(CASES / "sod.toml"), "--backend", "host", "--quiet",
                 "--out", str(tmp_path), "--set", "mesh.nx=16", "--set", "physics.gamma=1.67",
                 "--set", "output.plot=false"]) == 0
    with h5py.File(tmp_path / "sod.h5") as f:
        resolved = tomllib.loads(f.attrs["resolved_case"])
        overrides = json.loads(f.attrs["overrides"])
        assert "gamma = 1.4" in f.attrs["case"]  # the file as written
    assert resolved["physics"]["gamma"] == 1.67 and resolved["mesh"]["nx"] == 16
    assert resolved["scheme"]["limiter"] == load(CASES / "sod.toml").data["scheme"]["limiter"]
    assert overrides == {"mesh.nx": 16, "physics.gamma": 1.67, "output.plot": False,
                         "run.backend": "host", "output.dir": str(tmp_path)}
