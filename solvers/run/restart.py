"""Checkpoints of a CaseRun and restarts from them, through the solver contract alone
(`checkpoint()`, `restore(arrays)`).

A checkpoint (solvers/io/checkpoint.py) holds the solver's complete state, the clock included,
and the time of the last snapshot written, so a restarted run takes the same steps as the run
it continues and writes its snapshots at the same times: on the same backend its results are
the uninterrupted run's, bit for bit. It restarts from
  - `<name>.checkpoint.h5`, written every `output.checkpoint_interval` of simulated time or
    `output.checkpoint_wall_seconds`; the new run file holds the snapshots after the restart;
  - `<name>.partial.h5` of a run interrupted by a signal (or stopped early with a finite
    state), whose /checkpoint group is the state at the interruption; its snapshots are copied
    into the new run file, which then holds every snapshot of the uninterrupted run.
"""

import numpy as np

from ..cases import CaseError
from ..io.checkpoint import mesh_signature, read_checkpoint, write_checkpoint
from ..io.safe import reason


def supports_checkpoints(solver):
    try:
        solver.checkpoint_arrays()
    except NotImplementedError:
        return False
    return True


def payload(run):
    """{'attrs': ..., 'arrays': ...} of a checkpoint of the run's current state."""
    sim = run.simulation
    mesh, digest = mesh_signature(run.mesh)
    last = -1.0 if sim.last_output is None else float(sim.last_output)
    attrs = {**run.attrs(), "time": float(sim.t), "steps": int(sim.steps), "last_output": last,
             "mesh": mesh, "mesh_hash": digest}
    return {"attrs": attrs, "arrays": run.solver.checkpoint()}


def write(run, path):
    """Write the run's checkpoint to `path` atomically (an OutputError on a write error)."""
    return write_checkpoint(path, **payload(run))


def abort_state(run):
    """The checkpoint kept in a partial file when a run ends early: None for a steady run, a
    solver without checkpoints, a decomposed run (its arrays are one rank's block), or a state
    that is not finite (nothing to continue from)."""
    if run.steady or not supports_checkpoints(run.solver) or run.comm is not None:
        return None
    try:
        state = payload(run)
    except Exception:  # the device may be what failed; the partial file keeps its snapshots
        return None
    for value in state["arrays"].values():
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            return None
    return state


def _differences(attrs, run):
    """What makes a checkpoint another case's: solver, precision, mesh."""
    mesh, digest = mesh_signature(run.mesh)
    solver = run.solver
    if attrs.get("solver") != solver.name:
        return f"it is of solver '{attrs.get('solver')}', the case runs '{solver.name}'"
    if attrs.get("precision") != solver.precision:
        return f"its precision is {attrs.get('precision')}, the case runs {solver.precision}"
    if attrs.get("mesh") != mesh:
        return f"its mesh is {attrs.get('mesh')}, the case's {mesh}"
    if attrs.get("mesh_hash") != digest:
        return "its mesh has other coordinates or cells than the case's"
    return None


def restore(run, path):
    """Restore the run's solver and simulation from a checkpoint or partial run file; returns
    the Checkpoint. A CaseError (one line naming the file) if it does not belong to the case."""
    if run.steady:
        raise CaseError(f"{path}: the {run.solver.name} solver is steady: nothing to restart")
    try:
        checkpoint = read_checkpoint(path)
    except FileNotFoundError:
        raise CaseError(f"{path}: checkpoint not found") from None
    except (OSError, ValueError, KeyError) as error:
        raise CaseError(f"{path}: cannot restart from it: {reason(error)}") from None
    difference = _differences(checkpoint.attrs, run)
    if difference:
        raise CaseError(f"{path}: checkpoint of another case: {difference}")
    if not supports_checkpoints(run.solver):
        raise CaseError(f"{path}: the {run.solver.name} solver cannot restart")
    try:
        run.solver.restore(checkpoint.arrays)
    except ValueError as error:
        raise CaseError(f"{path}: checkpoint of another case: {error}") from None
    last = float(checkpoint.attrs.get("last_output", -1.0))
    run.simulation.resume(None if last < 0 else last)
    return checkpoint
