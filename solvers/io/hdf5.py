"""One HDF5 file per structured-grid run, written safely while the run goes on.

Layout of `<name>.h5` (see RunWriter):
    /                      attrs: format, complete, time, steps, and the caller's attrs
    /mesh/x, /mesh/y       cell centres (y in 2D only), float64
    /mesh/x_nodes, y_nodes cell faces (y_nodes in 2D only), float64
    /snapshots/NNNNNN      attrs time, steps; one dataset per field, (ny, nx) in 2D (x fastest,
                           for ParaView; dataset attr layout="y,x"), (nx,) in 1D
    /fields/<field>        the final state, grid.shape: (nx,) or (nx, ny) [i, j] (layout="x,y")
    /<group>/<name>        a solver's extra results (datasets()): time series, profiles
"""

import json
import os
from pathlib import Path

import h5py
import numpy as np

from .xdmf import write_xdmf

FORMAT = "solvers.run/1"
RESERVED_ATTRS = ("format", "complete", "time", "steps")


def _attr_value(value):
    """Strings, numbers and arrays as they are; paths as strings; anything else as JSON."""
    if isinstance(value, str | bool | int | float | np.generic | np.ndarray):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return json.dumps(value, default=str)


def _float_dtype(array):
    """float32 and float64 are kept; anything else is stored as float64."""
    dtype = np.asarray(array).dtype
    return dtype if dtype in (np.float32, np.float64) else np.dtype(np.float64)


class RunWriter:
    """Writes snapshots of a run to a hidden temporary file in `out_dir`; `finish` renames it to
    `<name>.h5` (and writes `<name>.xdmf`), `abort` to `<name>.partial.h5`. A previous result of
    the same name is untouched until one of those renames.

    Fields are {name: array of grid.shape}, indexed [i, j] as solver.fields() returns them; their
    dtype (float32 or float64) is kept. Every snapshot must have the same field names.
    """

    def __init__(self, out_dir, name, grid, attrs):
        clash = set(attrs) & set(RESERVED_ATTRS)
        if clash:
            raise ValueError(f"attrs {sorted(clash)} are reserved by the run file")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.grid = grid
        self.path = self.out_dir / f"{name}.h5"
        self.temp_path = self.out_dir / f".{name}.h5.tmp-{os.getpid()}"
        self.snapshots = []  # [(index, time)]
        self.field_dtypes = None  # {field: dtype}, fixed by the first snapshot
        self.vector_fields = False  # fields of grid.shape + (components,) allowed
        self._last_steps = None
        self._file = h5py.File(self.temp_path, "w")

        # Mesh and run description first, so that even a partial file is self-describing.
        f = self._file
        f.attrs.update({"format": FORMAT, "complete": False, "time": 0.0, "steps": 0})
        for key, value in attrs.items():
            f.attrs[key] = _attr_value(value)
        self._write_mesh(f.create_group("mesh"))
        f.create_group("snapshots")
        f.flush()

    def _write_mesh(self, mesh):
        """The /mesh group of a structured grid (subclasses write other meshes)."""
        grid = self.grid
        mesh.attrs.update({"ndim": grid.ndim, "shape": np.array(grid.shape)})
        mesh["x"] = grid.x_centres()
        mesh["x_nodes"] = grid.x_nodes()
        if grid.ndim == 2:
            mesh["y"] = grid.y_centres()
            mesh["y_nodes"] = grid.y_nodes()

    def _stored(self, value, final):
        """(array, layout) of a field as a snapshot (final=False) or final dataset: snapshots
        of 2D grids are transposed to (ny, nx) so that x runs fastest (XDMF)."""
        if self.grid.ndim != 2:
            return value, "x"
        return (value, "x,y") if final else (np.ascontiguousarray(value.T), "y,x")

    # -- writing -----------------------------------------------------------------------------
    def _checked(self, fields):
        """Fields as float arrays of grid.shape, in the dtypes of the first snapshot."""
        if self._file is None:
            raise RuntimeError(f"run file '{self.name}' is already finished or aborted")
        if self.field_dtypes is None:
            self.field_dtypes = {key: _float_dtype(value) for key, value in fields.items()}
        if set(fields) != set(self.field_dtypes):
            raise ValueError(f"fields {sorted(fields)} differ from the first snapshot's "
                             f"{sorted(self.field_dtypes)}")
        out = {}
        for key, dtype in self.field_dtypes.items():
            value = np.asarray(fields[key], dtype=dtype)
            if value.shape[:len(self.grid.shape)] != self.grid.shape or (
                    value.ndim > len(self.grid.shape) and not self.vector_fields):
                raise ValueError(f"field '{key}' has shape {value.shape}, the grid "
                                 f"{self.grid.shape}")
            out[key] = value
        return out

    def snapshot(self, t, steps, fields):
        """Append /snapshots/NNNNNN with the fields at time t, then flush the file."""
        fields = self._checked(fields)
        index = len(self.snapshots)
        group = self._file.create_group(f"snapshots/{index:06d}")
        group.attrs.update({"time": float(t), "steps": int(steps)})
        # One contiguous, uncompressed dataset per field and snapshot: a snapshot is one write
        # and one read.
        for key, value in fields.items():
            stored, layout = self._stored(value, final=False)
            group.create_dataset(key, data=stored).attrs["layout"] = layout
        self._file.attrs.update({"time": float(t), "steps": int(steps)})
        self.snapshots.append((index, float(t)))
        self._last_steps = int(steps)
        self._file.flush()

    def datasets(self, groups):
        """Write a solver's extra results {group: {name: array}} as /<group>/<name> (time
        series, line profiles), replacing earlier ones of the same name."""
        if self._file is None:
            raise RuntimeError(f"run file '{self.name}' is already finished or aborted")
        for group, arrays in groups.items():
            target = self._file.require_group(group)
            for name, values in arrays.items():
                if name in target:
                    del target[name]
                target.create_dataset(name, data=np.asarray(values, np.float64))
        self._file.flush()

    def finish(self, t, steps, fields):
        """Write the final state, rename to `<name>.h5`, write `<name>.xdmf`; returns
        {'h5': path, 'xdmf': path}. The final state is also appended as a snapshot unless the
        last snapshot was taken at the same step."""
        if not self.snapshots or self._last_steps != int(steps):
            self.snapshot(t, steps, fields)
        final = self._file.create_group("fields")
        for key, value in self._checked(fields).items():
            stored, layout = self._stored(value, final=True)
            final.create_dataset(key, data=stored).attrs["layout"] = layout
        self._file.attrs.update({"time": float(t), "steps": int(steps), "complete": True})
        self._close()
        os.replace(self.temp_path, self.path)
        xdmf = self._write_xdmf(self.path)
        return {"h5": self.path, "xdmf": xdmf}

    def abort(self):
        """Keep what was written as `<name>.partial.h5` (+ .partial.xdmf), complete=False.
        Returns its path, or None when there is nothing to keep (no snapshot, or the file is
        already finished or aborted)."""
        if self._file is None:
            return None
        self._close()
        if not self.snapshots:
            self.temp_path.unlink(missing_ok=True)
            return None
        partial = self.out_dir / f"{self.name}.partial.h5"
        os.replace(self.temp_path, partial)
        self._write_xdmf(partial)
        return partial

    # -- helpers -------------------------------------------------------------------------------
    def _close(self):
        file, self._file = self._file, None
        try:
            file.close()
        except Exception:  # a file left broken by an error; its last flush is on disk
            pass

    def _write_xdmf(self, h5_path):
        xdmf = h5_path.with_suffix(".xdmf")
        return write_xdmf(xdmf, h5_path.name, self.grid, self.snapshots,
                          list(self.field_dtypes), self.field_dtypes)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.abort()  # does nothing after finish()
        return False
