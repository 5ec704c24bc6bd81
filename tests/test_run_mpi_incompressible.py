"""Decomposed runs of the 2D and 3D incompressible solvers (issue 24 item 1): `mpiexec -n N
solvers run CASE --backend host` (fv/incompressible/block.py) against the single-rank run of
the case; periodic sides too (the blocks wrap), implicit viscosity in 2D and 3D, and several
runs in one launch of mpi_incompressible_driver.py; obstacles in 2D.

The steps' kernels compute every face and cell from the same inputs as on one rank (the halos
carry the neighbouring blocks' values), dt and the steady test's maxima are maxima over the
ranks (exact), but the pressure solve's distributed CG sums its dot products block by block
and then over the ranks, a different order from the single-rank sum. Its alpha and beta can
differ by rounding, and a solve may then stop an iteration earlier or later: two solves that
both meet |b - A x| <= rtol |b| differ by up to what that tolerance leaves, a change of order
rtol U_ref in the corrected velocity. Such changes add up at most linearly over the steps of
these short viscous runs (the flow damps rather than amplifies them), so a dataset may differ
from the single-rank one by steps * rtol * (its largest value). Not so the largest divergence
a step leaves: it is what the tolerance bounds, not what it resolves, and differs at its own
size. Measured (docs/verification.md): with the multigrid preconditioner in fp32 the runs are
equal bit for bit (the double sums' rounding vanishes in the fp32 alpha and beta); in fp64
they differ by rounding (about 1e-15). So are the 3D cavity's fields in fp32 (the driver's
20 steps on 2, 3 and 4 ranks), but one rounding of alpha or beta that does differ would make
them differ at the fp32 rounding level from then on.
With a periodic side the single-rank preconditioner is algebraic multigrid and the distributed
one geometric with an algebraic gathered level, so the solves differ within the tolerance
(measured: 0.05 to 0.15 of the bound). The 3D kinetic energy is a sum over the blocks, added
in another order: it differs by rounding (3e-8 relative).
The runs with implicit viscosity (2D and 3D, walls and a lid, or inflow, outflow and slip
sides) are held to bit equality (test_driver_runs_equal_single_rank says why), the 3D kinetic
energy aside; periodic ones to the bound. So are a cylinder's (block_immersed.py: a body
across a block side, explicit on 2 ranks, Crank-Nicolson on 3), but for the force on the body,
a sum over the blocks in another order (FORCE_ROUNDING).
Checkpoints (block_checkpoint.py) hold the whole grid: 2 ranks write, 3 and one continue.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solvers import load_case
from solvers.backend.mpi import mpiexec
from solvers.backend.stepper import HostWork
from solvers.io.checkpoint import read_checkpoint

h5py = pytest.importorskip("h5py")
pytest.importorskip("mpi4py")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_run_mpi import MPIEXEC, ROOT, _datasets, _env, _run  # noqa: E402

pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec")

RTOL = 1e-6  # pressure.rtol of the cases below (cavity_re100's and the default)
# A lid-driven cavity to a steady-state verdict (the ranks must stop at the same step), short.
CAVITY = ["mesh.nx=32", "mesh.ny=32", "time.end=0.5", "scheme.steady_tolerance=1.5",
          "output.interval=0.1", "run.steps_per_graph=10"]
# A channel: a parabolic inflow (ramped), an outflow, a wall and a slip side; QUICK advection
# (two ghost layers); 2 ranks split it along the flow.
DUCT = """[case]
name = "duct"
[physics]
solver = "incompressible"
nu = 0.02
[mesh]
nx = 32
ny = 16
x = [0.0, 2.0]
y = [0.0, 1.0]
[scheme]
advection = "quick"
[initial]
u = "4 * y * (1 - y)"
[boundary]
x_lo = {inflow = "6 * y * (1 - y)"}
x_hi = "outflow"
y_lo = "wall"
y_hi = "slip"
inflow_ramp = 0.2
[time]
end = 0.2
[output]
interval = 0.1
[run]
steps_per_graph = 10
"""


# The cubic cavity of cases/cavity3d_re1000.toml, small, explicit, with its lid and QUICK.
CAVITY3D = ["mesh.nx=16", "mesh.ny=16", "mesh.nz=16", 'scheme.viscous="explicit"',
            "physics.nu=0.01", "time.end=0.2", "output.interval=0.1",
            "scheme.steady_tolerance=0", "run.steps_per_graph=10"]


def _assert_close(expected, got):
    """Every dataset as the single-rank run's within steps * RTOL * its largest value (the
    largest divergence aside); the same steps (the global dt), the same output times."""
    assert sorted(got) == sorted(expected)
    steps = len(expected["series/t"])
    assert len(got["series/t"]) == steps
    for name, values in expected.items():
        if values.dtype.kind != "f" or name == "series/max_divergence":
            continue
        atol = steps * RTOL * np.max(np.abs(values), initial=0.0)
        np.testing.assert_allclose(got[name], values, rtol=0, atol=atol, err_msg=name)


@pytest.fixture(scope="module")
def cavity(tmp_path_factory):
    """The single-rank cavity run's datasets."""
    out = tmp_path_factory.mktemp("cavity")
    single = _run("cavity_re100", CAVITY, out)
    assert single.returncode == 0, single.stderr
    return _datasets(out / "cavity_re100.h5")


@pytest.mark.parametrize("ranks", [2, 3])
def test_decomposed_cavity_equals_single_rank(tmp_path, cavity, ranks):
    """Walls and a moving lid, split along y (3 ranks: unevenly); the run stops at the steady
    state's verdict at the single-rank run's step on every rank."""
    split = _run("cavity_re100", CAVITY, tmp_path, ranks=ranks, extra=())
    assert split.returncode == 0, split.stderr
    assert "steady state reached" in split.stdout, split.stdout
    assert f"process grid 1 x {ranks}, halos host-staged" in split.stdout, split.stdout
    _assert_close(cavity, _datasets(tmp_path / "cavity_re100.h5"))


def test_decomposed_channel_equals_single_rank(tmp_path):
    """Inflow, outflow, wall and slip sides with QUICK, the blocks side by side along x; fp64,
    where the runs differ by rounding."""
    case = tmp_path / "duct.toml"
    case.write_text(DUCT)
    single = _run(case, ["run.precision=fp64"], tmp_path / "one")
    split = _run(case, ["run.precision=fp64"], tmp_path / "two", ranks=2)
    assert single.returncode == 0, single.stderr
    assert split.returncode == 0, split.stderr
    _assert_close(_datasets(tmp_path / "one" / "duct.h5"),
                  _datasets(tmp_path / "two" / "duct.h5"))


def test_decomposed_3d_cavity_on_three_ranks_equals_single_rank(tmp_path):
    """The 3D solver through the command line, 16^3 split unevenly along z (8, 4, 4 layers:
    the multigrid's alignment)."""
    single = _run("cavity3d_re1000", CAVITY3D, tmp_path / "one")
    split = _run("cavity3d_re1000", CAVITY3D, tmp_path / "three", ranks=3, extra=())
    assert single.returncode == 0, single.stderr
    assert split.returncode == 0, split.stderr
    assert "process grid 1 x 1 x 3, halos host-staged" in split.stdout, split.stdout
    _assert_close(_datasets(tmp_path / "one" / "cavity3d_re1000.h5"),
                  _datasets(tmp_path / "three" / "cavity3d_re1000.h5"))


# The driver's runs. Implicit viscosity (block_viscous.py), equal bit for bit: the cavity with
# Crank-Nicolson and backward Euler (28 steps each; 16^2: few syncs a pressure solve, as 3
# ranks share 2 cores in CI), on 2 and 3 ranks, the duct (x split, inflow, outflow, slip,
# QUICK) on 2, and the cubic cavity at 8^3 (z split), Crank-Nicolson on 2 ranks and backward
# Euler on 3, STEPS3D steps each.
IMPLICIT = {"mesh.nx": 16, "mesh.ny": 16, "time.end": 0.4, "output.interval": 0.2,
            "run.steps_per_graph": 10, "run.backend": "host"}
IMPLICIT3D = {"mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8, "physics.nu": 0.01,
              "run.backend": "host"}
STEPS3D = 6
# Within the bound, on 2 ranks (name, case file, overrides, steps): a cubic cavity (walls, a
# lid, QUICK), and periodic Taylor-Green vortices in 2D (explicit and Crank-Nicolson) and 3D
# (central; every axis periodic: the blocks wrap, the pressure is singular).
BOUNDED = [
    ("cavity3d", "cavity3d_re1000", {"mesh.nx": 16, "mesh.ny": 16, "mesh.nz": 16,
                                     "scheme.viscous": "explicit", "physics.nu": 0.01}, 20),
    ("taylor_green", "taylor_green", {"mesh.nx": 16, "mesh.ny": 16}, 10),
    ("taylor_green_implicit", "taylor_green", {"mesh.nx": 16, "mesh.ny": 16,
                                               "scheme.viscous": "implicit"}, 10),
    ("taylor_green3d", "taylor_green3d_re1600", {"mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8,
                                                 "physics.nu": 0.02}, 5),
]
# Bodies (block_immersed.py), equal bit for bit but the force: cases/cylinder.toml at 88 x 16
# (D = 4 cells), CYLINDER_STEPS steps, its centre moved onto a block side: on 2 ranks (2 x 1,
# explicit) x = 1.1, the side at 44 cells through the middle of the body (both blocks force
# the faces on it); on 3 ranks (3 x 1, 30, 30 and 28 cells, Crank-Nicolson) x = 0.79, the
# side at 30 cells along the body's upstream edge (forcing points on it, stencils reaching 5
# faces into the block beyond).
CYLINDER = {"mesh.nx": 88, "mesh.ny": 16, "run.backend": "host"}
CYLINDER_STEPS = 30
CENTRED = "sqrt((x - {})**2 + (y - 0.2)**2) - 0.05"
# The force is summed block by block, then over the ranks, and rounded to fp32 once: its
# records within FORCE_ROUNDING of the largest |force| component (measured: 7e-9 and 3e-8 for
# these runs, up to 1.1e-7 on other splits: an fp32 rounding of the sum).
FORCE_ROUNDING = 1e-6
# In the step graph (run.halo_exchange "nccl": on the host backend, MPI calls as launches, the
# code path of NCCL in the graph): runs of the above whose single-rank run they share (name,
# its twin, rank counts). Held as their twins are: the exchanges' way changes no bit.
IN_GRAPH = [("implicit_in_graph", "implicit", (2, 3)),
            ("cavity3d_backward_euler_in_graph", "cavity3d_backward_euler", (3,)),
            ("cylinder_explicit_in_graph", "cylinder_explicit", (2,)),
            ("taylor_green3d_in_graph", "taylor_green3d", (2,))]
# What the solvers refuse on several ranks: (ranks, case, overrides, the words of the one line):
# the 3D solver's preconditioner; a body whose stencils reach further than a block holds
# (88 x 16 on 1 x 3 ranks: 6, 6 and 4 cells along y).
REFUSALS = [
    (2, "cavity3d_re1000", {**BOUNDED[0][2], "pressure.preconditioner": "amg"},
     ("preconditioner", "incompressible3d", "several MPI ranks")),
    (3, "cylinder", {**CYLINDER, "run.decomposition": [1, 3]},
     ("decomposition", "block (0, 2)", "stencils")),
]


def _runs(folder):
    """The driver's runs: (problem {name, case, overrides[, steps]}, its rank counts, exact:
    its fields and series equal the single rank's bit for bit, else within the bound)."""
    duct = folder / "duct.toml"
    duct.write_text(DUCT)
    cavity = str(ROOT / "cases" / "cavity_re100.toml")
    runs = [({"name": viscous, "case": cavity,
              "overrides": {**IMPLICIT, "scheme.viscous": viscous}}, (2, 3), True)
            for viscous in ("implicit", "backward_euler")]
    runs.append(({"name": "duct", "case": str(duct), "overrides": {
        "scheme.viscous": "implicit", "run.backend": "host"}}, (2,), True))
    runs += [({"name": f"cavity3d_{viscous}", "case": str(ROOT / "cases" / "cavity3d_re1000.toml"),
               "overrides": {**IMPLICIT3D, "scheme.viscous": viscous}, "steps": STEPS3D},
              (ranks,), True) for viscous, ranks in (("implicit", 2), ("backward_euler", 3))]
    runs += [({"name": f"cylinder_{viscous}", "case": str(ROOT / "cases" / "cylinder.toml"),
               "overrides": {**CYLINDER, "scheme.viscous": viscous,
                             "obstacle.distance": CENTRED.format(x)}, "steps": CYLINDER_STEPS},
              (ranks,), True)
             for viscous, x, ranks in (("explicit", 1.1, 2), ("implicit", 0.79, 3))]
    runs += [({"name": name, "case": str(ROOT / "cases" / f"{case}.toml"),
               "overrides": {**overrides, "run.backend": "host"}, "steps": steps}, (2,), False)
             for name, case, overrides, steps in BOUNDED]
    twins = {problem["name"]: (problem, exact) for problem, _, exact in runs}
    for name, twin, counts in IN_GRAPH:
        problem, exact = twins[twin]
        runs.append(({**problem, "name": name, "single": twin, "overrides": {
            **problem["overrides"], "run.halo_exchange": "nccl"}}, counts, exact))
    return runs


def _single(problem):
    """(fields, series) of a problem's single-rank run, in this process."""
    run = load_case(problem["case"], **problem["overrides"])
    if "steps" in problem:
        run.step(problem["steps"])
    else:
        run.run(write=False)
    return run.fields, run.solver.series


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """{name: (fields, series)} of the single-rank runs."""
    return {problem["name"]: _single(problem)
            for problem, _, _ in _runs(tmp_path_factory.mktemp("single"))
            if "single" not in problem}


def _assert_bounded(name, fields, series, got):
    """u, v(, w), p and the kinetic energy series within steps * RTOL * their largest value."""
    steps = len(series["t"])
    assert len(got[f"{name}/series/t"]) == steps, name
    pairs = [(fields[key], got[f"{name}/fields/{key}"]) for key in ("u", "v", "w", "p")
             if key in fields]
    if "kinetic_energy" in series:
        pairs.append((np.array(series["kinetic_energy"]), got[f"{name}/series/kinetic_energy"]))
    for expected, value in pairs:
        bound = steps * RTOL * np.abs(expected).max()
        assert np.abs(value - expected).max() <= bound, (name, np.abs(value - expected).max())


@pytest.mark.parametrize("ranks", [2, 3])
def test_driver_runs_equal_single_rank(tmp_path, ranks, single):
    """One mpiexec launch a rank count (mpi_incompressible_driver.py) against single-rank runs
    in this process. With implicit viscosity every field and recorded series (dt, viscous and
    pressure iterations included) equals the single rank's bit for bit, in fp32: each face is
    one row of the distributed viscous CG, whose rows are the single-rank operator's (read
    from exchanged halos), so its vectors are the single rank's, and only its dot products add
    in another order (blocks, then ranks). That changes the double sums by rounding (~1e-16),
    which vanishes in alpha and beta, fp32 numbers, as in the pressure solve (see the module
    docstring). Should one round the other way, both solves still meet |r| <= 1e-5 |b| (b =
    dt x the rates: the increment), so a step's increment would differ by up to about 1e-5 of
    a velocity, adding up at most linearly: steps * 1e-5 * a field's largest value is the
    bound this test would then use. fp64 keeps the sums' rounding (the fields within 1.1e-15
    of their largest value, measured: docs/distributed_poisson.md). The 3D kinetic energy is a
    sum over the blocks (the module docstring), so the implicit 3D cavities hold it to the
    bound. The cylinders (a body across a block side, explicit on 2 ranks, Crank-Nicolson on
    3): every field and series bit for bit, the forcing reading the single rank's stencil
    values from the swapped halos, but the force on the body, a sum over the blocks' forced
    faces (each counted once) in another order, to FORCE_ROUNDING. The explicit 3D cavity and
    the periodic runs are held to the bound of the module docstring. The refusals are one
    line each, with the words REFUSALS gives."""
    runs = [(problem, exact) for problem, counts, exact in _runs(tmp_path) if ranks in counts]
    refusals = [(str(ROOT / "cases" / f"{case}.toml"), overrides, words)
                for count, case, overrides, words in REFUSALS if count == ranks]
    problems = {"runs": [problem for problem, _ in runs],
                "refusals": [{"case": case, "overrides": {**overrides, "run.backend": "host"}}
                             for case, overrides, _ in refusals]}
    (tmp_path / "problems.json").write_text(json.dumps(problems))
    driver = ROOT / "tests" / "mpi_incompressible_driver.py"
    result = subprocess.run([*mpiexec(ranks), sys.executable, str(driver),
                             str(tmp_path / "problems.json"), str(tmp_path / "results.npz")],
                            capture_output=True, text=True, timeout=240, env=_env(), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    got = np.load(tmp_path / "results.npz")
    for problem, exact in runs:
        name = problem["name"]
        fields, series = single[problem.get("single", name)]
        assert np.prod(got[f"{name}/dims"]) == ranks, name
        # In the graph, a step's host work is its solves' status reads (one a solve).
        path, host_work = str(got[f"{name}/path"]), int(got[f"{name}/host_work"])
        if "single" in problem:
            solves = 1 + (problem["overrides"].get("scheme.viscous", "explicit") != "explicit")
            assert path.startswith("in the step graph") and host_work == solves, (name, path)
        else:
            assert path.startswith("host-staged"), (name, path)
        if not exact:
            _assert_bounded(name, fields, series, got)
            continue
        dims = tuple(got[f"{name}/dims"])
        along_x = name == "duct" or name.startswith("cylinder")
        assert dims == ((ranks, 1) if along_x else (*[1] * (len(dims) - 1), ranks)), name
        for key, values in fields.items():
            assert np.array_equal(got[f"{name}/fields/{key}"], values), (name, key)
        assert len(series["t"]) >= problem.get("steps", 20), name
        if problem["overrides"].get("scheme.viscous", "explicit") != "explicit":
            assert min(series["viscous_iterations"]) >= 1, name
        force = max(np.abs(series.get(column, [0.0])).max() for column in ("force_x", "force_y"))
        for column, values in series.items():
            other = got[f"{name}/series/{column}"]
            if column == "kinetic_energy":
                _assert_bounded(name, {}, {"t": series["t"], column: values}, got)
            elif column in ("force_x", "force_y"):
                assert np.abs(other - values).max() <= FORCE_ROUNDING * force, (name, column)
            else:
                assert np.array_equal(other, values), (name, column)
        if name.startswith("cylinder"):
            assert force > 1, name  # a drag of order one: the body is there
    for index, (_, _, words) in enumerate(refusals):
        message = str(got[f"refusal/{index}"])
        assert message and "\n" not in message, (words, message)
        assert all(word in message for word in words), message


@pytest.mark.parametrize("setting, key", [
    ('pressure.preconditioner="amg"', "preconditioner"),
])
def test_an_unsupported_feature_is_one_case_error(tmp_path, setting, key):
    """What the decomposed solver does not do yet ends every rank at once with status 2 and
    one line naming the key."""
    result = _run("cavity_re100", [*CAVITY[:3], setting], tmp_path, ranks=2, timeout=60)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("solvers:")]
    assert len(lines) == 1, result.stderr
    assert key in lines[0] and "several MPI ranks" in lines[0], lines[0]


@pytest.mark.gpu
def test_decomposed_cavity_on_one_gpu_equals_single_rank(tmp_path):
    """Two ranks sharing one GPU (host-staged) against the single-rank GPU run, whose pressure
    solve loops on the device inside the step graph."""
    single = _run("cavity_re100", CAVITY, tmp_path / "one", backend="cuda")
    split = _run("cavity_re100", CAVITY, tmp_path / "two", ranks=2, backend="cuda")
    assert single.returncode == 0, single.stderr
    assert split.returncode == 0, split.stderr
    _assert_close(_datasets(tmp_path / "one" / "cavity_re100.h5"),
                  _datasets(tmp_path / "two" / "cavity_re100.h5"))


@pytest.mark.gpu
@pytest.mark.parametrize("case, overrides", [
    ("taylor_green", {"mesh.nx": 16, "mesh.ny": 16, "scheme.viscous": "implicit"}),
    ("taylor_green3d_re1600", {"mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8, "physics.nu": 0.02})])
def test_decomposed_step_in_the_graph_on_one_gpu(case, overrides):
    """One rank (MPI.COMM_SELF), every axis periodic and not split: each block swaps its
    velocity and pressure halos with itself, the dot products and the step's maxima go through
    all-gathers, by NCCL inside the step graph (graph and eager) and host-staged on the same
    GPU: the same fields bit for bit; in the graph a step's only host work is a solve's status
    read (2D: the viscous and the pressure solve). Without NCCL asking for it fails."""
    from mpi4py import MPI

    fields, host_work = {}, {}
    for exchange, graph in (("host", True), ("nccl", True), ("nccl", False)):
        run = load_case(ROOT / "cases" / f"{case}.toml", comm=MPI.COMM_SELF, **overrides,
                        **{"run.backend": "cuda", "run.halo_exchange": exchange,
                           "run.graph": graph})
        run.step(10)
        fields[exchange, graph] = run.fields
        host_work[exchange] = sum(isinstance(part, HostWork)
                                  for part in run.solver.step_segments())
        assert run.solver.parallel.path.startswith(
            "NCCL" if exchange == "nccl" else "host-staged"), run.solver.parallel.path
    assert host_work["nccl"] == (2 if "scheme.viscous" in overrides else 1)
    for key, value in fields["host", True].items():
        assert np.array_equal(fields["nccl", True][key], value), key
        assert np.array_equal(fields["nccl", False][key], value), key


# Checkpointed at t = 0.1 (an output time) by 2 ranks, restarted on 3 and on one: the 2D cavity
# (16^2, 18 steps) and the 3D one (8^3, 8 steps), explicit, fp32.
RESTARTS = [("cavity", "cavity_re100", {"mesh.nx": 16, "mesh.ny": 16}),
            ("cavity3d", "cavity3d_re1000", {"mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8,
                                             "scheme.viscous": "explicit", "physics.nu": 0.01,
                                             "scheme.steady_tolerance": 0})]


def test_checkpoints_restart_on_another_rank_count(tmp_path):
    """A decomposed run's checkpoint holds the whole grid in the single-rank layout
    (block_checkpoint.py): written by 2 ranks (the uninterrupted run, to t = 0.2), it continues
    on 3 ranks and on one to the uninterrupted run's fields and series, and to the single-rank
    run's, bit for bit: the fp32 cavities' decomposed steps are the single rank's (module
    docstring), so a restart that misses any state a step reads (AB2's last advection terms,
    the pressure, the steady test's reference, the clock, the series) would show. The 3D
    kinetic energy series aside, a sum over the blocks in their order: within 1e-6 of its
    largest value (rounding: 3e-8 measured). Wall-clock checkpoints stay refused (one line)."""
    common = {"time.end": 0.2, "output.interval": 0.1, "run.steps_per_graph": 10,
              "run.backend": "host", "output.plot": False}
    problems = [(name, str(ROOT / "cases" / f"{case}.toml"), {**overrides, **common},
                 tmp_path / name / f"{case}.checkpoint.h5")
                for name, case, overrides in RESTARTS]
    wall = {"output.checkpoint_wall_seconds": 60, **common}
    writes = [{"name": name, "case": case, "write": True, "overrides": {
        **overrides, "output.dir": str(tmp_path / name), "output.checkpoint_interval": 0.1}}
        for name, case, overrides, _ in problems]
    restarts = [{"name": name, "case": case, "overrides": overrides, "restart": str(checkpoint)}
                for name, case, overrides, checkpoint in problems]
    launches = {2: {"runs": writes, "refusals": [{"case": problems[0][1], "overrides": wall}]},
                3: {"runs": restarts}}
    got = {}
    driver = ROOT / "tests" / "mpi_incompressible_driver.py"
    for ranks, launch in launches.items():
        (tmp_path / f"{ranks}.json").write_text(json.dumps(launch))
        result = subprocess.run([*mpiexec(ranks), sys.executable, str(driver),
                                 str(tmp_path / f"{ranks}.json"), str(tmp_path / f"{ranks}.npz")],
                                capture_output=True, text=True, timeout=120, env=_env(), cwd=ROOT)
        assert result.returncode == 0, result.stderr
        got[ranks] = np.load(tmp_path / f"{ranks}.npz")
    message = str(got[2]["refusal/0"])
    assert "checkpoint_wall_seconds" in message and "\n" not in message, message
    for name, case, overrides, checkpoint in problems:
        straight = load_case(case, **overrides)
        straight.run(write=False)
        one = load_case(case, restart=checkpoint, **overrides)
        assert one.t == pytest.approx(0.1) and one.steps > 0, name
        one.run(write=False)
        # The single rank's arrays (the clock's rates folded to one, the series shorter).
        layouts = [{key: (value.shape, value.dtype) for key, value in arrays.items()
                    if key != "clock/rates" and not key.startswith("series/")}
                   for arrays in (read_checkpoint(checkpoint).arrays, straight.solver.checkpoint())]
        assert layouts[0] == layouts[1], name
        fields, series = straight.fields, straight.solver.series
        runs = {2: got[2], 3: got[3], 1: {
            **{f"{name}/fields/{key}": value for key, value in one.fields.items()},
            **{f"{name}/series/{key}": np.array(v) for key, v in one.solver.series.items()}}}
        for ranks, values in runs.items():
            for key, value in fields.items():
                assert np.array_equal(values[f"{name}/fields/{key}"], value), (name, ranks, key)
            for key, value in series.items():
                value, other = np.array(value), values[f"{name}/series/{key}"]
                bound = 1e-6 * np.abs(value).max() if key == "kinetic_energy" else 0.0
                assert other.shape == value.shape, (name, ranks, key)
                assert np.abs(other - value).max() <= bound, (name, ranks, key)
