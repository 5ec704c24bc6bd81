"""The command line: a case runs end to end and writes its files; bad input is one line on
stderr with exit status 2 and leaves earlier results alone; sweeps tabulate every run."""

import csv
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import solvers
from solvers.cli import main

SOD = Path(__file__).parent.parent / "cases" / "sod.toml"
FAST = ["--backend", "host", "--set", "mesh.nx=64", "--quiet"]


def test_run_writes_hdf5_xdmf_and_png(tmp_path):
    assert main(["run", str(SOD), *FAST, "--out", str(tmp_path)]) == 0
    with h5py.File(tmp_path / "sod.h5") as f:
        assert f.attrs["time"] == pytest.approx(0.2)
        assert f["fields/rho"].shape == (64,)
        assert f.attrs["backend"] == "host" and f.attrs["precision"] == "fp32"
        assert "limiter" in f.attrs["scheme"] and "[initial]" in f.attrs["case"]
        assert len(f["snapshots"]) == 5  # t = 0, 0.05, 0.1, 0.15, 0.2
    assert (tmp_path / "sod.xdmf").exists() and (tmp_path / "sod.png").exists()


def test_python_api_matches_the_cli(tmp_path):
    run = solvers.load_case(SOD, mesh={"nx": 64}, run={"backend": "host"},
                            output={"dir": str(tmp_path)})
    assert run.solver_class.__name__ == "EulerSolver" and run.mesh.nx == 64
    run.step(3)
    assert run.steps == 3 and run.t > 0
    run.run()
    main(["run", str(SOD), *FAST, "--out", str(tmp_path / "cli")])
    with h5py.File(tmp_path / "cli" / "sod.h5") as f:
        np.testing.assert_array_equal(f["fields/rho"][...], run.fields["rho"].astype(np.float32))


@pytest.mark.parametrize("args, message", [
    (["--set", "mesh.nx=abc"], "--set mesh.nx: expected an integer, got 'abc'"),
    (["--set", "scheme.limiter=superbee"], "--set scheme.limiter: expected one of"),
    (["--set", "nx=10"], "--set nx=10: expected section.key=value"),
    (["--backend", "cuda"], "backend 'cuda' was asked for but"),
])
def test_bad_input_is_one_line_exit_2_and_keeps_old_results(tmp_path, capsys, args, message):
    if args[0] == "--backend" and solvers.backend.cuda.cuda_available():
        pytest.skip("a GPU is present, so cuda is not bad input here")
    old = tmp_path / "sod.h5"
    old.write_bytes(b"earlier result")
    code = main(["run", str(SOD), "--out", str(tmp_path), "--quiet", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert old.read_bytes() == b"earlier result"


def test_missing_case_file_from_the_console_script(tmp_path):
    result = subprocess.run([sys.executable, "-m", "solvers.cli", "run", "nope.toml"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "solvers: error: nope.toml: case file not found\n"


def test_non_finite_initial_state_is_bad_input(tmp_path, capsys):
    code = main(["run", str(SOD), *FAST, "--out", str(tmp_path),
                 "--set", 'initial.p="where(x < 0.5, 1.0, 0.1) + 0 * log(x - 0.4)"'])
    err = capsys.readouterr().err
    assert code == 2 and "--set initial.p: expression gives non-finite values" in err


def test_stopped_run_exits_1_and_keeps_snapshots(tmp_path, capsys):
    (tmp_path / "sod.h5").write_bytes(b"earlier result")
    code = main(["run", str(SOD), *FAST, "--out", str(tmp_path), "--set", "time.max_steps=30",
                 "--set", "run.steps_per_graph=5"])
    err = capsys.readouterr().err
    assert code == 1 and "reached max_steps=30" in err and "sod.partial.h5" in err
    assert (tmp_path / "sod.h5").read_bytes() == b"earlier result"
    with h5py.File(tmp_path / "sod.partial.h5") as f:
        assert len(f["snapshots"]) >= 1


def test_sweep_writes_one_row_per_run(tmp_path):
    code = main(["sweep", str(SOD), "--backend", "host", "--quiet", "--out", str(tmp_path),
                 "--set", "mesh.nx=32,64", "--set", "scheme.limiter=minmod,mc"])
    assert code == 0
    with open(tmp_path / "sod-sweep.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["mesh.nx"], r["scheme.limiter"]) for r in rows] == [
        ("32", "minmod"), ("32", "mc"), ("64", "minmod"), ("64", "mc")]
    assert all(r["status"] == "ok" for r in rows)
    # The total mass of a shock tube with transmissive ends changes only by boundary fluxes,
    # which are zero until the waves arrive: 0.5 * 1 + 0.5 * 0.125.
    assert all(float(r["total_mass"]) == pytest.approx(0.5625, rel=1e-5) for r in rows)
    assert all(Path(r["output"]) == tmp_path / f"{r['name']}.h5" for r in rows)
    assert all((tmp_path / f"sod-{r['key']}.h5").exists() for r in rows)


def test_info_lists_backends(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "cuda backend:" in out and "host backend:" in out and "NVRTC" in out
