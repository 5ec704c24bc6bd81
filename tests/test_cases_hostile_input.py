"""Hostile case files, overrides and options are one-line errors, never a traceback or a hang
(issue 18, found by a fuzzer): each input below once ended in a Python traceback (exit 1), hung,
or took unbounded memory. Through `solvers.cli.main` on the host backend: exit 2 for bad input
(one line on stderr naming the file or option, the section and key), exit 1 for a run that
stops early, and nothing else on stderr (no RuntimeWarning, no backend notice with --quiet).
"""

import os
import re
import threading
import time
from pathlib import Path

import pytest

import solvers.backend as backend
from solvers.cases import bounds
from solvers.cli import main

CASES = Path(__file__).parent.parent / "cases"
SOD = ["run", str(CASES / "sod.toml"), "--set", "mesh.nx=16"]
CHANNEL = ["run", str(CASES / "channel.toml"), "--set", "mesh.nx=16", "--set", "mesh.ny=8",
           "--set", "time.max_steps=2"]
POISSON = ["run", str(CASES / "poisson_square.toml"), "--set", "mesh.cells=[4,4]"]
HEAT = ["run", str(CASES / "heat_plate.toml"), "--set", "mesh.cells=[4,4]", "--set",
        "time.max_steps=2"]


@pytest.fixture
def cli(tmp_path, capsys):
    """run(argv) -> (exit status, stderr lines) of the command line on the host backend."""
    def run(argv, options=("--backend", "host", "--quiet")):
        try:
            code = main([*argv, *options, "--out", str(tmp_path / "out")])
        except SystemExit as exit_:  # a usage error
            code = exit_.code
        err = capsys.readouterr().err
        assert "Traceback" not in err and "Warning" not in err, err
        return code, err.strip().splitlines()
    return run


def one_line(cli, argv, code, *words):
    status, lines = cli(argv)
    assert status == code and len(lines) == 1, (status, lines)
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def write(path, data):
    path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data)
    return str(path)


# --- case files that are not text ----------------------------------------------------------

def test_a_case_file_that_is_not_utf8(cli, tmp_path):
    text = (CASES / "sod.toml").read_text().replace("Sod", "S\xf6d")
    case = write(tmp_path / "latin1.toml", text.encode("latin-1"))
    one_line(cli, ["run", case], 2, "latin1.toml: not UTF-8 text (byte ")


def test_a_device_a_folder_and_a_huge_file_are_refused(cli, tmp_path):
    one_line(cli, ["run", "/dev/zero"], 2, "/dev/zero: not a regular file")
    one_line(cli, ["run", str(tmp_path)], 2, "not a regular file")
    huge = write(tmp_path / "huge.toml", b"# " + b"x" * (5 * 2**20))
    one_line(cli, ["run", huge], 2, "huge.toml: larger than 4 MB")


def test_a_fifo_is_refused_without_waiting_for_a_writer(cli, tmp_path):
    fifo = tmp_path / "case.toml"
    os.mkfifo(fifo)
    unblock = threading.Timer(10.0, lambda: open(fifo, "w").close())  # a hang ends, and fails
    unblock.start()
    start = time.perf_counter()
    try:
        one_line(cli, ["run", str(fifo)], 2, "not a regular file")
    finally:
        unblock.cancel()
    assert time.perf_counter() - start < 5


def test_nested_toml_and_odd_keys_are_one_line(cli, tmp_path):
    deep = write(tmp_path / "deep.toml", "x = " + "[" * 5000)
    one_line(cli, ["run", deep], 2, "invalid TOML")
    text = (CASES / "sod.toml").read_text().replace("[case]", '[case]\n"a\\nb" = 1')
    one_line(cli, ["run", write(tmp_path / "odd.toml", text)], 2, "[case] 'a\\nb': unknown key")
    one_line(cli, ["run", write(tmp_path / "p.toml", "physics = 3\n")], 2, "expected solver")
    one_line(cli, ["run", write(tmp_path / "s.toml", "[physics]\nsolver = [1]\n")], 2,
             "expected solver one of", "got [1]")
    one_line(cli, [*SOD, "--set", "mesh.nx=" + "[" * 5000], 2, "--set mesh.nx: expected an "
             "integer, got '[[[[[")


# --- expressions ---------------------------------------------------------------------------

@pytest.mark.parametrize("expression,words", [
    ("1/0", "non-finite"), ("sin", "sin is a function"), ("sin(1,2)", "takes 1 argument"),
    ("where()", "takes 3 arguments"), ("10**400", "non-finite"), ("9**9**9", "non-finite"),
    ("~x", "must be > 0 in every cell"), ("-" * 3000 + "x", "nested too deeply"),
    ("+".join(["x"] * 3000), "at most"), ("sin(x, x) + 2", "takes 1 argument"),
])
def test_bad_expressions(cli, expression, words):
    one_line(cli, [*SOD, "--set", f"initial.rho={expression!r}"], 2, "--set initial.rho: ",
             words)


def test_a_time_dependent_fe_expression_is_checked_before_compiling(cli):
    one_line(cli, [*HEAT, "--set", "source.f='1e999 * t'"], 2, "--set source.f:",
             "out of the float64 range")
    one_line(cli, [*HEAT, "--set", "source.f='1/0 + t'"], 2, "non-finite")


# --- sizes and times -----------------------------------------------------------------------

def test_huge_meshes_are_refused_before_any_allocation(cli, monkeypatch):
    one_line(cli, ["run", str(CASES / "sod.toml"), "--set", "mesh.nx=10000000000"], 2,
             "--set mesh.nx: 1e+10 cells: more than the 2147483647")
    one_line(cli, [*POISSON, "--set", "mesh.cells=[100000,100000]"], 2,
             "--set mesh.cells: 2e+10 simplices")
    monkeypatch.setattr(bounds, "memory_bytes", lambda: 10**6)  # a machine with 1 MB
    one_line(cli, ["run", str(CASES / "sod.toml"), "--set", "mesh.nx=100000"], 2,
             "--set mesh.nx: 1e+05 cells need about 25 MB (250 bytes each), more than this "
             "machine's 1 MB")
    one_line(cli, ["run", str(CASES / "cantilever.toml"), "--set", "mesh.cells=[64,64]"], 2,
             "--set mesh.cells: 8.19e+03 simplices need about")


@pytest.mark.parametrize("argv,words", [
    (SOD + ["--set", "time.end=nan"], "--set time.end: expected a finite number, got nan"),
    (SOD + ["--set", "time.end=inf"], "--set time.end: expected a finite number, got inf"),
    (SOD + ["--set", "output.interval=1e-9"], "--set output.interval: 2e+08 snapshots"),
    (SOD + ["--set", "run.steps_per_graph=1000000000"], "expected a value <= 10000"),
    (HEAT + ["--set", "time.end=1e30", "--set", "output.interval=0"],
     "--set time.end: 1e+30 is out of reach: 2.5e+32 steps of 0.004"),
    (SOD + ["--set", "mesh.x=[0, 1e-320]"], "--set mesh.x: expected [lo, hi] within"),
    (CHANNEL + ["--set", "mesh.x=[0, 1e-320]"], "--set mesh.x: expected [lo, hi] within"),
    (POISSON + ["--set", "mesh.y=[0, 1e-320]"], "--set mesh.y: expected [lo, hi] within"),
    (SOD + ["--set", "mesh.x=[1e10, 1.000000000000001e10]"],
     "hi - lo at least 1e-9 max(|lo|, |hi|)"),
    (SOD + ["--set", "physics.gamma=inf"], "--set physics.gamma: expected a finite number"),
    (SOD + ["--set", "initial.constants={a = nan}"], "a table of finite numbers"),
])
def test_infinite_or_absurd_times_and_extents(cli, argv, words):
    one_line(cli, argv, 2, words)


def test_an_end_time_the_clock_cannot_reach_stops_after_the_first_replay(cli):
    start = time.perf_counter()
    one_line(cli, [*SOD, "--set", "time.end=1e30", "--set", "output.interval=0"], 1,
             "the end time 1e+30 is out of reach", "more than the 2^52")
    assert time.perf_counter() - start < 10


# --- boundary tables, choices, solver settings ---------------------------------------------

@pytest.mark.parametrize("spec", ["[]", "{inflow = {}}", "{inflow = [1, 2]}", "3", "{}"])
def test_odd_incompressible_boundary_tables(cli, spec):
    one_line(cli, [*CHANNEL, "--set", f"boundary.x_lo={spec}", "--set", "boundary.x_hi=wall"],
             2, "--set boundary.x_lo: ")


def test_odd_euler_boundary_tables(cli):
    one_line(cli, [*SOD, "--set", "boundary.x_lo=[]"], 2, "--set boundary.x_lo: expected")
    one_line(cli, [*SOD, "--set", "boundary.x_lo={inflow = {rho = 1, p = inf}}"], 2,
             "--set boundary.x_lo: expected {inflow")


def test_integer_choices(cli):
    one_line(cli, [*POISSON, "--set", "physics.degree=3"], 2,
             "--set physics.degree: expected one of 1, 2, got 3")
    one_line(cli, [*POISSON, "--set", "physics.degree=true"], 2, "expected one of 1, 2, got True")
    one_line(cli, [*POISSON, "--set", "physics.degree=1.0"], 2, "expected one of 1, 2, got 1.0")


def test_solver_settings_the_solver_refuses_name_the_key(cli):
    one_line(cli, [*POISSON, "--set", "solver.rtol=2"], 2, "--set solver.rtol: expected a value "
             "< 1")
    one_line(cli, [*CHANNEL, "--set", "pressure.rtol=2"], 2,
             "--set pressure.rtol: rtol must be in (0, 1)")
    one_line(cli, [*CHANNEL, "--set", "pressure.divergence=1e300"], 2, "channel.toml: ")
    one_line(cli, ["run", str(CASES / "cantilever.toml"), "--set", "mesh.cells=[4,2]", "--set",
                   "material.default_young=1e300"], 1, "the solve could not start")


def test_numpy_warnings_give_way_to_the_one_line_error(cli):
    one_line(cli, [*CHANNEL, "--set", "physics.nu=1e300"], 1, "run stopped")


# --- the command line ----------------------------------------------------------------------

def test_usage_errors_are_one_line(cli):
    one_line(cli, ["run", str(CASES / "sod.toml"), "--precision", "fp16"], 2,
             "invalid choice: 'fp16'", "(see solvers run --help)")
    with pytest.raises(SystemExit):
        main(["run", "--bogus"])


def test_a_failing_quiet_sweep_says_why(cli):
    status, lines = cli(["sweep", str(CASES / "sod.toml"), "--set", "mesh.nx=16",
                         "--set", "time.max_steps=1,2"])
    assert status == 1 and len(lines) == 1, lines
    assert re.match(r"solvers: sweep: 2 of 2 runs failed \(the first, sod-[0-9a-f]{12}: "
                    "reached max_steps=1", lines[0]), lines[0]
    one_line(cli, ["sweep", str(CASES / "sod.toml"), "--set", "mesh.nx=" + ",".join(
        str(n) for n in range(16, 216)), "--set", "scheme.cfl=" + ",".join(
        str(k / 100) for k in range(1, 61))], 2, "1.2e+04 combinations, at most 10000")


def test_quiet_silences_the_backend_notice(cli, monkeypatch):
    monkeypatch.setattr(backend, "cuda_available", lambda: False)
    monkeypatch.setattr(backend, "_instances", {})  # the host backend not made yet
    status, lines = cli(SOD, options=("--quiet",))
    assert status == 0 and lines == []
    monkeypatch.setattr(backend, "_instances", {})
    status, lines = cli(SOD, options=("--set", "output.interval=0"))
    assert status == 0 and lines[0].startswith("solvers: no CUDA GPU found")
    with backend.notices(False):
        monkeypatch.setattr(backend, "_instances", {})
        backend.get_backend("auto")
        assert backend.get_backend("auto", notify=True) is backend.get_backend("host")


def test_reference_scales_whose_square_is_not_finite(cli):
    one_line(cli, [*CHANNEL, "--set", "physics.reference_velocity=1e-300"], 2,
             "--set physics.reference_velocity: reference_velocity must be in [1e-100, 1e100]")
    cavity = ["run", str(CASES / "cavity_re100.toml"), "--set", "mesh.nx=16", "--set",
              "mesh.ny=16"]
    one_line(cli, [*cavity, "--set", "boundary.y_hi={wall = 1e-300}"], 2,
             "[physics] reference_velocity: reference_velocity must be in")


def test_a_mesh_file_that_is_not_a_regular_file(cli, tmp_path):
    block = ["run", str(CASES / "poisson_block.toml")]
    one_line(cli, [*block, "--set", "mesh.file='/dev/zero'"], 2,
             "--set mesh.file: /dev/zero: not found or not a regular file")
    os.mkfifo(tmp_path / "mesh.msh")
    one_line(cli, [*block, "--set", f"mesh.file='{tmp_path / 'mesh.msh'}'"], 2,
             "not found or not a regular file")


def test_a_strongly_anisotropic_grid_does_not_stall_the_pressure_multigrid(cli):
    start = time.perf_counter()  # the coarsest-level solve took ~10^6 steps a cycle
    one_line(cli, ["run", str(CASES / "cavity_re1000.toml"), "--set", "mesh.nx=8", "--set",
                   "mesh.ny=8", "--set", "mesh.x=[0, 1e6]", "--set", "time.max_steps=2"], 1,
             "reached max_steps=2")
    assert time.perf_counter() - start < 10
