"""The heat_plate case from the command line: snapshots at the output times in the HDF5 file
(nodal u, exact, error), an XDMF time series, a PNG; bad inputs are one-line errors with exit
status 2."""

from pathlib import Path

import h5py
import numpy as np
import pytest

from solvers.cli import main

CASES = Path(__file__).parent.parent / "cases"
FAST = ["--backend", "host", "--quiet"]


def test_heat_plate_writes_a_time_series_that_follows_the_decay(tmp_path):
    """P2 on 8 x 8, Crank-Nicolson dt = 4e-3 (the case's), fp32: nodal errors at every
    snapshot below 1e-3 of the initial amplitude (P2 at h = 1/8: about 3e-4; the time error
    about 1e-5; tests/test_fe_heat.py checks the rates)."""
    code = main(["run", str(CASES / "heat_plate.toml"), *FAST, "--out", str(tmp_path),
                 "--set", "mesh.cells=[8, 8]"])
    assert code == 0
    times = [0.0, 0.1, 0.2, 0.3, 0.4]
    with h5py.File(tmp_path / "heat_plate.h5") as f:
        points = f["mesh/points"][...]
        assert points.shape == (81, 2) and f["mesh/cells"].shape == (128, 3)
        snapshots = [f["snapshots"][key] for key in sorted(f["snapshots"])]
        assert [s.attrs["time"] for s in snapshots] == pytest.approx(times, abs=1e-15)
        assert [s.attrs["steps"] for s in snapshots] == [0, 25, 50, 75, 100]
        x, y = points.T
        for snapshot, t in zip(snapshots, times):
            exact = np.exp(-2 * np.pi ** 2 * 0.25 * t) * np.sin(np.pi * x) * np.sin(np.pi * y)
            assert abs(snapshot["u"][...] - exact).max() < 1e-3
            np.testing.assert_allclose(snapshot["exact"][...], exact, rtol=1e-6, atol=1e-7)
        assert f.attrs["solver"] == "heat" and f.attrs["complete"]
    xdmf = (tmp_path / "heat_plate.xdmf").read_text()
    assert xdmf.count("<Time ") == 5 and 'Value="0.4"' in xdmf and "/snapshots/000004/u" in xdmf
    assert (tmp_path / "heat_plate.png").stat().st_size > 0


def test_boundary_values_and_source_that_change_in_time(tmp_path):
    """The case's k = 0.5, rho c = 2 with u = (1 + x^2 + 2 y^2) exp(-t): boundary values and
    source are expressions of t, evaluated on the device every step. u(t) lies in P2, so the
    error is Crank-Nicolson's at dt = 4e-3 (about 1e-5, tests/test_fe_heat.py measures its
    order) plus fp32 rounding (1e-6): below 5e-5 at every snapshot."""
    exact = "(1 + x*x + 2*y*y) * exp(-t)"
    walls = ", ".join(f'{side} = "{exact}"' for side in ("left", "right", "bottom", "top"))
    code = main(["run", str(CASES / "heat_plate.toml"), *FAST, "--out", str(tmp_path),
                 "--set", "mesh.cells=[4, 4]", "--set", f'source.exact="{exact}"',
                 "--set", 'source.f="-(rho_c * (1 + x*x + 2*y*y) + 6 * k) * exp(-t)"',
                 "--set", f"boundary.dirichlet={{{walls}}}", "--set", 'initial.u="1 + x*x + 2*y*y"',
                 "--set", "output.plot=false"])
    assert code == 0
    with h5py.File(tmp_path / "heat_plate.h5") as f:
        errors = [abs(f["snapshots"][key]["error"][...]).max() for key in f["snapshots"]]
    assert len(errors) == 5 and max(errors) < 5e-5


@pytest.mark.parametrize("args, message", [
    (["--set", "time.theta=0.3"], "time.theta: theta must be in [0.5, 1]"),
    (["--set", "time.theta=1.5"], "time.theta: theta must be in [0.5, 1]"),
    (["--set", "time.dt=0"], "time.dt: expected a value > 0"),
    (["--set", "time.dt=-1e-3"], "time.dt: expected a value > 0"),
    (["--set", "time.step=1e-3"], "time.step: unknown key"),
    (["--set", "boundary.dirichlet={inlet = 0}"], "boundary 'inlet' is not in the mesh"),
    (["--set", "boundary.dirichlet={left = \"t * q\"}"], "unknown name 'q'"),
    (["--set", "source.f=\"x * t * q\""], "source.f: 'x * t * q': unknown name 'q'"),
    (["--set", "initial.u=\"sin(q)\""], "unknown name 'q'"),
    (["--set", "material.capacity={steel = 1.0}"], "material 'steel' is not in the mesh"),
    (["--set", "solver.preconditioner=ilu"], "expected one of amg, jacobi, none"),
])
def test_bad_inputs_are_one_line_exit_2(tmp_path, capsys, args, message):
    code = main(["run", str(CASES / "heat_plate.toml"), *FAST, "--out", str(tmp_path), *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
