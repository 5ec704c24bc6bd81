"""Checkpoints and restarts: a run continued from a checkpoint file, or from the partial file of
a run interrupted at an arbitrary replay, equals the uninterrupted run bit for bit (final
fields, every snapshot at the same times, the solver's datasets) for every time-dependent
solver; a checkpoint of another case is a one-line error naming the file and what differs."""

import signal
from pathlib import Path

import h5py
import numpy as np
import pytest

import solvers
from solvers.cli import main
from solvers.run.signals import Interrupted

CASES = Path(__file__).resolve().parent.parent / "cases"

# Small versions of shipped cases, with output times a step rarely lands on (steps clipped to
# them) and several graph replays between outputs.
RUNS = {
    "euler": ("sod.toml", {"mesh.nx": 48, "output.interval": 0.05, "run.steps_per_graph": 4},
              0.07),
    "advection_diffusion": ("advection_diffusion.toml", {
        "mesh.nx": 16, "mesh.ny": 16, "time.end": 0.3, "output.interval": 0.1,
        "run.steps_per_graph": 3}, 0.12),
    # AB2 history, the pressure, the steady window (0.05, several of them before the restart)
    # and a run that ends by reaching the steady state (at t = 0.56).
    "incompressible": ("cavity_re100.toml", {
        "mesh.nx": 8, "mesh.ny": 8, "physics.nu": 0.2, "time.end": 3.0,
        "output.interval": 0.1, "scheme.steady_window": 0.05, "scheme.steady_tolerance": 3e-2,
        "run.steps_per_graph": 5}, 0.2),
    # The same with the implicit viscous stage (its last increment is the next solve's guess).
    "incompressible:implicit": ("cavity_re100.toml", {
        "mesh.nx": 8, "mesh.ny": 8, "physics.nu": 0.2, "time.end": 3.0,
        "output.interval": 0.1, "scheme.steady_window": 0.05, "scheme.steady_tolerance": 3e-2,
        "scheme.viscous": "implicit", "run.steps_per_graph": 5}, 0.2),
    # The 3D solver: AB2 history, pressure and steady window of three components (8^3 cells,
    # geometric multigrid's least), ending at its steady state.
    "incompressible3d": ("cavity3d_re1000.toml", {
        "mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8, "physics.nu": 0.2, "time.end": 3.0,
        "output.interval": 0.1, "scheme.steady_window": 0.05, "scheme.steady_tolerance": 3e-2,
        "scheme.advection": "central", "scheme.viscous": "explicit",
        "run.steps_per_graph": 5}, 0.2),
    "incompressible3d:implicit": ("cavity3d_re1000.toml", {
        "mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8, "physics.nu": 0.2, "time.end": 3.0,
        "output.interval": 0.1, "scheme.steady_window": 0.05, "scheme.steady_tolerance": 3e-2,
        "scheme.advection": "central", "scheme.viscous": "implicit",
        "run.steps_per_graph": 5}, 0.2),
    # Unstructured cells (a triangle strip from Gmsh), reverse Cuthill-McKee order.
    "euler_unstructured": ("sod_unstructured.toml", {
        "mesh.file": str(CASES.parent / "meshes" / "strip_h020.msh"), "output.interval": 0.05,
        "run.steps_per_graph": 4}, 0.07),
    # dt = 0.012 against outputs every 0.03: clipped steps rebuild the matrix.
    "heat": ("heat_plate.toml", {"mesh.cells": [5, 5], "time.end": 0.1, "time.dt": 0.012,
                                 "output.interval": 0.03, "run.steps_per_graph": 2}, 0.04),
}


def _load(solver, backend, out, restart=None, **more):
    case, overrides, _ = RUNS[solver]
    return solvers.load_case(CASES / case, restart=restart, **overrides, **more, **{
        "run.backend": backend, "output.dir": str(out), "output.plot": False})


def _interrupt_after(run, t):
    """Make the run end as a SIGTERM would, after the first graph replay past time t."""
    observe = run.solver.observe

    def interrupting():
        reason = observe()
        if run.solver.clock.read().t > t:
            raise Interrupted(signal.SIGTERM)
        return reason

    run.solver.observe = interrupting


def _snapshots(path):
    with h5py.File(path) as f:
        return {round(float(g.attrs["time"]), 12): (int(g.attrs["steps"]),
                                                    {k: g[k][...] for k in g})
                for g in f["snapshots"].values()}


def _same_run(reference, other, all_snapshots=True):
    """other's files hold reference's bits: final fields, datasets, snapshots (all of them,
    or those other has, at the same times and steps)."""
    with h5py.File(reference) as a, h5py.File(other) as b:
        assert b.attrs["complete"] and a.attrs["steps"] == b.attrs["steps"]
        assert a.attrs["time"] == b.attrs["time"]
        datasets = []
        for group in set(a) - {"snapshots", "mesh"}:
            a[group].visititems(lambda name, item, group=group: datasets.append(
                f"{group}/{name}") if isinstance(item, h5py.Dataset) else None)
        for name in datasets:  # final fields and the solver's datasets
            np.testing.assert_array_equal(a[name][...], b[name][...], err_msg=name)
    ours, theirs = _snapshots(reference), _snapshots(other)
    assert set(theirs) <= set(ours) and (set(theirs) == set(ours) or not all_snapshots)
    for t, (steps, fields) in theirs.items():
        assert steps == ours[t][0]
        for name, values in fields.items():
            np.testing.assert_array_equal(values, ours[t][1][name])
    return sorted(theirs)


@pytest.mark.parametrize("solver", list(RUNS))
def test_restart_equals_the_uninterrupted_run_bit_for_bit(tmp_path, backend_name, solver):
    reference = _load(solver, backend_name, tmp_path / "whole")
    result = reference.run()
    name = reference.name

    interval = RUNS[solver][2]
    interrupted = _load(solver, backend_name, tmp_path / "cut",
                        **{"output.checkpoint_interval": interval})
    _interrupt_after(interrupted, 1.5 * interval)
    with pytest.raises(Interrupted) as error:
        interrupted.run()
    partial = error.value.partial_output
    checkpoint = tmp_path / "cut" / f"{name}.checkpoint.h5"
    with h5py.File(checkpoint) as f, h5py.File(partial) as p:
        assert 0 < f.attrs["time"] < p["checkpoint"].attrs["time"] < result.t
        assert f.attrs["solver"] == solver.partition(":")[0] and "clock/ctrl" in f["state"]

    # From the checkpoint: the snapshots after it; from the partial file: all of them.
    from_checkpoint = _load(solver, backend_name, tmp_path / "a", restart=checkpoint)
    assert from_checkpoint.steps > 0
    assert from_checkpoint.run().stopped == result.stopped
    times = _same_run(tmp_path / "whole" / f"{name}.h5", tmp_path / "a" / f"{name}.h5",
                      all_snapshots=False)
    assert times[0] > 0
    from_partial = _load(solver, backend_name, tmp_path / "cut", restart=partial)
    restarted = from_partial.run()
    assert (restarted.t, restarted.steps) == (result.t, result.steps)
    _same_run(tmp_path / "whole" / f"{name}.h5", tmp_path / "cut" / f"{name}.h5")
    with h5py.File(tmp_path / "cut" / f"{name}.h5") as f:
        assert f.attrs["restart_from"] == str(partial)
    if solver.startswith("incompressible"):
        assert result.stopped == "steady state reached"


@pytest.mark.parametrize("solver", list(RUNS))
def test_a_state_restored_at_any_step_continues_bit_for_bit(tmp_path, backend_name, solver):
    """checkpoint() holds all a step reads: restored into a fresh solver after any of the
    first steps, it continues to the same bits as the solver it came from (the incompressible
    steady window's refresh flag, set between steps, included)."""
    steps = 24
    run = _load(solver, backend_name, tmp_path)
    states = []
    for _ in range(steps):
        states.append(run.solver.checkpoint())
        run.step(1)
    final = run.solver.checkpoint()
    for k in range(0, steps, 3 if backend_name == "host" else 7):
        fresh = _load(solver, backend_name, tmp_path)
        fresh.solver.restore(states[k])
        fresh.simulation.resume(None)
        fresh.step(steps - k)
        again = fresh.solver.checkpoint()
        assert set(again) == set(final)
        for name in final:
            np.testing.assert_array_equal(again[name], final[name], err_msg=f"{name} from {k}")


def test_the_cli_restarts_and_continues_the_snapshot_times(tmp_path, capsys):
    base = [str(CASES / "sod.toml"), "--backend", "host", "--quiet", "--set", "mesh.nx=48",
            "--set", "output.plot=false"]
    assert main(["run", *base, "--out", str(tmp_path / "whole")]) == 0
    assert main(["run", *base, "--out", str(tmp_path / "cut"), "--set",
                 "output.checkpoint_interval=0.12"]) == 0
    checkpoint = tmp_path / "cut" / "sod.checkpoint.h5"
    assert main(["run", *base, "--out", str(tmp_path / "b"), "--restart", str(checkpoint)]) == 0
    times = _same_run(tmp_path / "whole" / "sod.h5", tmp_path / "b" / "sod.h5",
                      all_snapshots=False)
    assert times == [0.15, 0.2]  # the checkpoint was taken at the first replay past 0.12


@pytest.mark.parametrize("change, message", [
    ({"mesh.nx": 32}, "its mesh is {\"shape\": [48]"),
    ({"run.precision": "fp64"}, "its precision is fp32, the case runs fp64"),
    ({"mesh.x": [0.0, 2.0]}, "its mesh is"),
])
def test_a_checkpoint_of_another_case_is_one_line_exit_2(tmp_path, capsys, change, message):
    sod = [str(CASES / "sod.toml"), "--backend", "host", "--quiet", "--set", "mesh.nx=48",
           "--set", "output.plot=false", "--out", str(tmp_path)]
    assert main(["run", *sod, "--set", "output.checkpoint_interval=0.1"]) == 0
    checkpoint = tmp_path / "sod.checkpoint.h5"
    capsys.readouterr()
    sets = [item for key, value in change.items()
            for item in ("--set", f"{key}={value}".replace("'", '"'))]
    assert main(["run", *sod, *sets, "--restart", str(checkpoint)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"solvers: error: {checkpoint}: checkpoint of another case: ")
    assert message in err and err.count("\n") == 1


def test_restart_from_something_else_is_one_line_exit_2(tmp_path, capsys):
    sod = [str(CASES / "sod.toml"), "--backend", "host", "--quiet", "--set", "mesh.nx=48",
           "--set", "output.plot=false", "--out", str(tmp_path)]
    assert main(["run", *sod, "--set", "output.checkpoint_interval=0.1"]) == 0
    text = tmp_path / "notes.txt"
    text.write_text("not a checkpoint")
    other = [str(CASES / "advection_diffusion.toml"), "--backend", "host", "--quiet",
             "--set", "mesh.nx=8", "--set", "mesh.ny=8", "--out", str(tmp_path)]
    for args, message in [
            (other + ["--restart", str(tmp_path / "sod.checkpoint.h5")],
             "checkpoint of another case: it is of solver 'euler', the case runs "
             "'advection_diffusion'"),
            (sod + ["--restart", str(text)], "not an HDF5 file"),
            (sod + ["--restart", str(tmp_path / "sod.h5")], "a run file without a restart state"),
            (sod + ["--restart", str(tmp_path / "nope.h5")], "checkpoint not found")]:
        capsys.readouterr()
        assert main(["run", *args]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_steady_solver_has_no_checkpoints(tmp_path):
    with pytest.raises(solvers.CaseError, match="the poisson solver does not write checkpoints"):
        solvers.load_case(CASES / "poisson_square.toml", **{
            "output.checkpoint_interval": 1.0, "run.backend": "host"}).run(write=False)


def test_wall_clock_checkpoints(tmp_path):
    run = _load("euler", "host", tmp_path, **{"output.checkpoint_wall_seconds": 1e-9})
    written = []
    run.simulation.on_checkpoint = None  # set by run(); count its calls instead
    write = run.write_checkpoint
    run.write_checkpoint = lambda path=None: written.append(run.t) or write(path)
    result = run.run()
    assert len(written) == len(set(written)) > 10 and max(written) < result.t
    with h5py.File(run.checkpoint_path) as f:
        assert f.attrs["time"] == max(written) and f.attrs["steps"] < result.steps
