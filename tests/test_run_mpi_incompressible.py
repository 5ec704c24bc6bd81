"""Decomposed runs of the 2D and 3D incompressible solvers (issue 24 item 1): `mpiexec -n N
solvers run CASE --backend host` (fv/incompressible/block.py) against the single-rank run of
the case; periodic sides too (the blocks wrap), and several runs in one launch of
mpi_incompressible_driver.py.

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
they differ by rounding (about 1e-15). Not always: one rounding of alpha or beta that does
differ makes the fields differ at the fp32 rounding level from then on (the driver's 20 steps
of the 3D cavity: 6e-8, a fifth of the bound; the CLI runs of 30 steps measured equal bits).
With a periodic side the single-rank preconditioner is algebraic multigrid and the distributed
one geometric with an algebraic gathered level, so the solves differ within the tolerance
(measured: 0.05 to 0.15 of the bound). The 3D kinetic energy is a sum over the blocks, added
in another order: it differs by rounding (3e-8 relative).
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

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


def test_driver_runs_on_two_ranks_equal_single_rank():
    """One launch of two ranks (mpi_incompressible_driver.py): the 3D cavity, and the periodic
    Taylor-Green vortices in 2D (16^2) and 3D (8^3, every axis periodic: the blocks wrap, the
    pressure is singular), each within the bound of the module docstring of its single-rank
    run; and the 3D solver's refusals, one line naming the key each."""
    driver = Path(__file__).resolve().parent / "mpi_incompressible_driver.py"
    result = subprocess.run([*MPIEXEC, sys.executable, str(driver)], capture_output=True,
                            text=True, timeout=120, env=_env(), cwd=ROOT)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    for name in ("cavity3d", "taylor_green", "taylor_green3d"):
        assert out[name]["ratio"] <= 1, (name, out[name])
    for key, message in out["refusals"]:
        assert message is not None and "\n" not in message, (key, message)
        assert key in message and "incompressible3d" in message, message
        assert "several MPI ranks" in message, message


@pytest.mark.parametrize("setting, key", [
    ('scheme.viscous="implicit"', "viscous"),
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


def test_checkpoints_are_refused_on_several_ranks(tmp_path):
    """Its checkpoint would hold one block: refused with one line before any run."""
    result = _run("cavity_re100", [*CAVITY[:3], "output.checkpoint_interval=0.1"], tmp_path,
                  ranks=2, timeout=60)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("solvers:")]
    assert len(lines) == 1 and "checkpoint" in lines[0] and "several MPI ranks" in lines[0]
