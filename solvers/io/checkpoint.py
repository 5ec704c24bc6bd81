"""Checkpoints: a solver's complete state (solver.checkpoint(), exact bits) with what it belongs
to, written atomically, and read back for a restart.

Layout, at the root of `<name>.checkpoint.h5` or in the group /checkpoint of a run's
`<name>.partial.h5` (the state when the run was interrupted):
    attrs     format, time, steps, last_output (time of the last snapshot written; -1: none),
              solver, precision, mesh (JSON: shape and extent, or point and cell counts),
              mesh_hash, case, resolved_case, overrides, and the run's other attrs
    state/    one dataset per array, at its stored dtype; names with '/' are subgroups
"""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from .safe import GuardedFile, OutputError, reason, temp_path, unlink_quietly

FORMAT = "solvers.checkpoint/1"
GROUP = "checkpoint"


def mesh_signature(mesh):
    """(a JSON description of the mesh, a hash of its coordinates and connectivity)."""
    digest = hashlib.sha256()
    if hasattr(mesh, "blocks"):  # cells of mixed types
        description = {"cell_types": list(mesh.blocks), "points": int(len(mesh.points)),
                       "cells": [int(len(cells)) for cells in mesh.blocks.values()]}
        arrays = (np.asarray(mesh.points, np.float64),
                  *(np.asarray(cells, np.int64) for cells in mesh.blocks.values()))
    elif hasattr(mesh, "cells"):
        description = {"cell_type": mesh.cell_type, "points": int(len(mesh.points)),
                       "cells": int(len(mesh.cells))}
        arrays = (np.asarray(mesh.points, np.float64), np.asarray(mesh.cells, np.int64))
    else:
        axes = "xyz"[:mesh.ndim]
        description = {"shape": list(mesh.shape),
                       **{axis: [float(v) for v in getattr(mesh, axis)] for axis in axes}}
        arrays = mesh.axis_nodes()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return json.dumps(description), digest.hexdigest()


def write_state(group, attrs, arrays):
    """Write a checkpoint into an open h5py group (the root of a file, or /checkpoint)."""
    group.attrs["format"] = FORMAT
    for key, value in attrs.items():
        group.attrs[key] = value
    state = group.create_group("state")
    for name, value in arrays.items():
        state.create_dataset(name, data=np.asarray(value))


def write_checkpoint(path, attrs, arrays):
    """Write `<path>` atomically (a temporary file renamed over it when complete); an
    OutputError on any write error, with the earlier checkpoint untouched and no temp left."""
    path = Path(path)
    temp = temp_path(path)
    try:
        guard = GuardedFile(temp)
    except OSError as error:
        raise OutputError(path, reason(error)) from None
    failure = None
    try:
        with h5py.File(guard, "w") as f:
            write_state(f, attrs, arrays)
    except Exception as error:  # HDF5's own errors; the disk's are in guard.error
        failure = error
    guard.close()
    failure = guard.error or failure
    if failure is None:
        try:
            Path(temp).replace(path)
            return path
        except OSError as error:
            failure = error
    unlink_quietly(temp)
    raise OutputError(path, reason(failure))


@dataclass
class Checkpoint:
    """A checkpoint read back: its attrs, the state arrays, and where it came from."""

    path: Path
    attrs: dict
    arrays: dict
    in_run_file: bool  # from the /checkpoint group of a (partial) run file


def read_checkpoint(path):
    """Read a checkpoint file or the /checkpoint group of a run file. ValueError (one line)
    if the file holds none; OSError if it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(2, "file not found", str(path))
    try:
        f = h5py.File(path, "r")
    except OSError:
        raise ValueError("not an HDF5 file (expected a checkpoint or a partial run file)") \
            from None
    with f:
        if f.attrs.get("format") == FORMAT:
            group, in_run_file = f, False
        elif GROUP in f and f[GROUP].attrs.get("format") == FORMAT:
            group, in_run_file = f[GROUP], True
        elif "snapshots" in f:
            raise ValueError("a run file without a restart state (only runs interrupted by a "
                             "signal or stopped with a finite state keep one)")
        else:
            raise ValueError("not a checkpoint or a partial run file")
        attrs = {key: _plain(value) for key, value in group.attrs.items()}
        arrays = {}
        if "state" in group:
            group["state"].visititems(
                lambda name, item: arrays.__setitem__(name, item[()])
                if isinstance(item, h5py.Dataset) else None)
    return Checkpoint(path, attrs, arrays, in_run_file)


def _plain(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.generic):
        return value.item()
    return value
