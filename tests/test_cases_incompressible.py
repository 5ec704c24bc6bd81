"""The incompressible solver's case files, run output and input errors: the cylinder case
(Schafer-Turek geometry) on a coarse grid writes its drag/lift series and plots; the
Taylor-Green case file reproduces the exact solution; bad input is a one-line CaseError."""

from pathlib import Path

import h5py
import numpy as np
import pytest

from solvers import load_case
from solvers.cases import CaseError
from solvers.verification.schafer_turek import PERIODIC, shedding

CASES = Path(__file__).parent.parent / "cases"


def test_cylinder_case_writes_drag_lift_series_profiles_and_plot(tmp_path):
    # 176 x 32 cells: dx = 0.0125, the cylinder (D = 0.1) 8 cells across.
    run = load_case(CASES / "cylinder.toml", **{
        "mesh.nx": 176, "mesh.ny": 32, "time.end": 0.3, "output.interval": 0.0,
        "run.backend": "host", "run.steps_per_graph": 10, "output.dir": str(tmp_path)})
    result = run.run()
    with h5py.File(tmp_path / "cylinder.h5") as f:
        drag = f["series/drag_coefficient"][:]
        lift = f["series/lift_coefficient"][:]
        t = f["series/t"][:]
        assert drag.shape == lift.shape == t.shape == (result.steps,)
        assert np.all(np.diff(t) > 0) and t[-1] == pytest.approx(0.3)
        assert f["fields/vorticity"].shape == (176, 32)
        assert f["profiles/u_vertical_centreline"].shape == (32, 2)
    # Started impulsively from rest, the flow pushes the body downstream: the drag is
    # positive once the start's impulse has passed, and the y-symmetric geometry (the cylinder
    # sits 0.01 below the channel's centre line, the benchmark's asymmetry) gives a small lift.
    # The impulse rings through the forcing for a few steps (it holds its faces incrementally,
    # with the old pressure's step, and the start's impulsive pressure enters that step once
    # more; measured: negative at steps 4-7 and 14, positive from step 15 on).
    # Schafer-Turek's 2D-2 drag oscillates around 3.2 once shedding sets in; at t = 0.3 the
    # wake is still forming and this grid is coarse, so only the order of magnitude is checked.
    assert np.all(drag[20:] > 0)
    assert 1 < drag[-1] < 10 and abs(lift[-1]) < drag[-1]
    assert (tmp_path / "cylinder.png").stat().st_size > 0


def test_taylor_green_case_matches_the_exact_solution(tmp_path):
    run = load_case(CASES / "taylor_green.toml", **{
        "mesh.nx": 32, "mesh.ny": 32, "time.end": 0.5, "run.backend": "host",
        "output.dir": str(tmp_path), "output.plot": False})
    run.run()
    x, y = run.mesh.centres()
    decay = np.exp(-2 * 0.01 * run.t)
    fields = run.fields
    # Cell-centred u is the mean of two face values: sin x cos y times cos(dx / 2) exactly,
    # an O(dx^2) = 5e-3 difference; the scheme's own error at 32^2 is 3e-4 (measured).
    assert np.abs(fields["u"] - np.sin(x) * np.cos(y) * decay).max() < 6e-3
    # Vorticity dv/dx - du/dy of the Taylor-Green field: 2 sin x sin y (times the decay). At
    # the corners the differences give it times sin(dx/2) / (dx/2) (1 - 1.6e-3), and the mean
    # of a cell's four corners times cos(dx/2)^2 (1 - 9.6e-3): 2 x 1.1e-2 = 0.0225 at most
    # (measured 0.0219).
    assert np.abs(fields["vorticity"] - 2 * np.sin(x) * np.sin(y) * decay).max() < 0.025


BAD_INPUT = [
    ({"boundary.x_lo": "wal"}, "boundary.x_lo: expected periodic, wall"),
    ({"boundary.x_lo": "wall"}, "periodic must be set on both x_lo and x_hi"),
    ({"initial.u": "sin(z)"}, "unknown name 'z'"),
    ({"pressure.rtol": 2.0}, "rtol must be in (0, 1)"),
    ({"mesh.nx": 6}, "geometric multigrid needs even cell counts"),
]


@pytest.mark.parametrize("overrides,message", BAD_INPUT)
def test_bad_input_is_a_one_line_case_error(overrides, message):
    case = CASES / ("taylor_green.toml" if "boundary.x_lo" in overrides else "cavity_re100.toml")
    with pytest.raises(CaseError) as error:
        load_case(case, **{"run.backend": "host", "mesh.nx": 16, "mesh.ny": 16, **overrides})
    assert message in str(error.value) and "\n" not in str(error.value)


CIRCLE = "sqrt((x - 0.2)**2 + (y - 0.2)**2) - 0.05"  # the cylinder's signed distance
BAD_OBSTACLE = [  # on the cylinder case (distance given) or the cavity (none: inside alone)
    ({"obstacle.distance": "sqrt(z)"}, "obstacle.distance", "unknown name 'z'"),
    ({"obstacle.distance": "log(x - 1)"}, "obstacle.distance", "non-finite"),
    ({"obstacle.distance": "x < 0.2"}, "obstacle.distance", "expected a number"),
    ({"obstacle.distance": "1.0"}, "obstacle.distance", "covers no face of the grid"),
    ({"obstacle.distance": CIRCLE.replace("0.05", "0.08"), "obstacle.inside":
      "(x - 0.2)**2 + (y - 0.2)**2 < 0.05**2"}, "obstacle.distance", "disagree"),
    ({"obstacle.distance": "(x - 0.2)**2 + (y - 0.2)**2 - 0.05**2"}, "obstacle.distance",
     "not a signed distance"),
    ({"obstacle.distance": CIRCLE.replace("(y - 0.2)", "(y - 0.06)")}, "obstacle.distance",
     "no fluid stencil"),
    ({"obstacle.inside": "x > 5"}, "obstacle.inside", "covers no point of the grid"),
]


@pytest.mark.parametrize("overrides,key,message", BAD_OBSTACLE)
def test_bad_obstacle_is_a_one_line_case_error_naming_its_key(overrides, key, message):
    case = CASES / ("cavity_re100.toml" if "obstacle.distance" not in overrides
                    else "cylinder.toml")
    with pytest.raises(CaseError) as error:
        load_case(case, **{"run.backend": "host", "mesh.nx": 176, "mesh.ny": 32, **overrides})
    text = str(error.value)
    assert f"{key}: " in text and message in text and "\n" not in text


def schafer_turek_2d1(tmp_path, backend, n, end):
    """The cylinder case as Schafer-Turek 2D-1 (Um = 0.3, Re = 20, steady) on n cells across
    the channel (D = n / 4.1 cells), started from the inflow's Poiseuille flow: its drag and
    lift coefficient series."""
    run = load_case(CASES / "cylinder.toml", **{
        "mesh.nx": 11 * n // 2, "mesh.ny": n, "time.end": end, "output.interval": 0.0,
        "initial.constants": {"Um": 0.3, "H": 0.41}, "initial.u": "4 * Um * y * (H - y) / H**2",
        "physics.reference_velocity": 0.2, "run.backend": backend, "run.steps_per_graph": 50,
        "output.dir": str(tmp_path), "output.plot": False})
    run.run()
    return run.solver.coefficients()


# (backend, cells on the channel height, end time, drag relative bound, lift bound). Reference
# (Schafer & Turek 1996, the mean of the best results): drag 5.5795, lift 0.0106. Measured
# (docs/immersed_lift.md): on the host, n = 40 (10 cells across D) Cd 5.6317, Cl 0.0038 at
# t = 8; on an NVIDIA H100 (fp32, to t = 7), n = 192 and 256 (47 and 62 cells across D) Cd
# 5.58040, 5.58012 and Cl 0.010637, 0.010654 (+0.2 %, +0.3 %; every grid from 43 cells up
# within 1.1 %). At <= 40 cells the lift depends on where the body sits in its cells, +1.4 %
# to +11.7 % at 31-39 cells: test_schafer_turek_2d1_lift_target, not met. The finer grids'
# bounds: the drag within Schafer & Turek's interval 5.57-5.59, the lift within the 5 %.
SCHAFER_TUREK_2D1 = [
    ("host", 40, 3.0, 0.015, 0.01),
    pytest.param("cuda", 160, 6.0, 0.01, None, marks=pytest.mark.gpu),
    pytest.param("cuda", 192, 7.0, 0.002, 0.05 * 0.0106, marks=pytest.mark.gpu),
    pytest.param("cuda", 256, 7.0, 0.002, 0.05 * 0.0106, marks=pytest.mark.gpu),
]


@pytest.mark.parametrize("backend,n,end,drag_tol,lift_tol", SCHAFER_TUREK_2D1)
def test_schafer_turek_2d1_drag_and_lift(tmp_path, backend, n, end, drag_tol, lift_tol):
    drag, lift = schafer_turek_2d1(tmp_path, backend, n, end)
    assert drag[-1] == pytest.approx(5.5795, rel=drag_tol)
    if lift_tol is not None:
        assert abs(lift[-1] - 0.0106) < lift_tol
    assert abs(drag[-1] - drag[-21]) < 1e-3 * drag[-1]  # steady


@pytest.mark.gpu
@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="the lift is 7-12 % high at 39 cells across D: 0.011394 and 0.011866 "
                   "on an NVIDIA H100 with the body at two places half a cell apart "
                   "(docs/immersed_lift.md)")
def test_schafer_turek_2d1_lift_target(tmp_path):
    """The issue's lift target, within 5 % of 0.0106 at <= 40 cells across D."""
    _, lift = schafer_turek_2d1(tmp_path, "cuda", 160, 6.0)
    assert lift[-1] == pytest.approx(0.0106, rel=0.05)


def schafer_turek_2d2(tmp_path, **overrides):
    """cases/cylinder.toml (Re = 100) with `overrides` on the GPU from rest to t = 8, measured
    over its last 2 time units (6 periods): its figures (solvers/verification/schafer_turek.py)
    and them in words."""
    run = load_case(CASES / "cylinder.toml", **{
        "output.interval": 0.0, "run.backend": "cuda", "output.dir": str(tmp_path),
        "output.plot": False, **overrides})
    run.run()
    drag, lift = run.solver.coefficients()
    figures = shedding(run.solver.series["t"], drag, lift, window=2.0)
    return figures, str({k: v if v is None else round(v, 4) for k, v in figures.items()})


# Reference (Schafer & Turek 1996): max drag 3.22-3.24, max lift 0.99-1.01, Strouhal number
# 0.295-0.305; the targets: within 2 %, 3 % and 1 % of 3.23, 1.00 and 0.300. Measured
# on an NVIDIA H100 (2026-12-06), the case as shipped (62 cells across D along y): max drag
# 3.2212, max lift 0.9742, St 0.3019, the last lift peaks 0.9740 and 0.9742; at 39 cells (880
# x 160): 3.2123, 0.9572, 0.3020 (the max lift -4.3 %; it converges at first order:
# docs/immersed_lift.md section 7).
TARGETS_2D2 = {"max_drag": 0.02, "max_lift": 0.03, "strouhal": 0.01}


@pytest.mark.gpu
def test_schafer_turek_2d2_shedding_matches_the_reference(tmp_path):
    """Periodic vortex shedding: max drag, max lift and Strouhal number within the issue's 2 %,
    3 % and 1 %, the last period's lift peak within 1 % of the one 4 periods earlier."""
    figures, words = schafer_turek_2d2(tmp_path)
    for name, value in PERIODIC.items():
        assert figures[name] == pytest.approx(value, rel=TARGETS_2D2[name]), words
    assert figures["lift_peak_last"] == pytest.approx(figures["lift_peak_earlier"],
                                                       rel=0.01), words


@pytest.mark.gpu
@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="the max lift is 4.3 % low at 39 cells across D: 0.9572 on an NVIDIA "
                   "H100 (docs/immersed_lift.md section 7)")
def test_schafer_turek_2d2_lift_target_at_40_cells_across(tmp_path):
    """The issue's lift target, within 3 % of 1.00 at <= 40 cells across D (880 x 160)."""
    figures, words = schafer_turek_2d2(tmp_path, **{"mesh.nx": 880, "mesh.ny": 160})
    assert figures["max_lift"] == pytest.approx(PERIODIC["max_lift"], rel=0.03), words


def test_cli_reports_a_run_that_reached_its_steady_state(tmp_path, capsys):
    """The cavity at 16^2 reaches its steady tolerance long before time.end = 60: the run
    stops early, exit status 0, and the summary says why it ended before the end time."""
    from solvers.cli import main

    status = main(["run", str(CASES / "cavity_re100.toml"), "--backend", "host",
                   "--out", str(tmp_path), "--set", "mesh.nx=16", "--set", "mesh.ny=16"])
    assert status == 0
    assert "(steady state reached)" in capsys.readouterr().out
    with h5py.File(tmp_path / "cavity_re100.h5") as f:
        assert f.attrs["time"] < 60
