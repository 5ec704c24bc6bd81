"""One HDF5 file per structured-grid run, written safely while the run goes on.

Layout of `<name>.h5` (see RunWriter):
    /                      attrs: format, complete, time, steps, and the caller's attrs
    /mesh/x, /mesh/y, /z   cell centres (y in 2D and 3D, z in 3D), float64
    /mesh/x_nodes, ...     cell faces (y_nodes in 2D and 3D, z_nodes in 3D), float64
    /snapshots/NNNNNN      attrs time, steps; one dataset per field, (ny, nx) in 2D and
                           (nz, ny, nx) in 3D (x fastest, for ParaView; dataset attr
                           layout="y,x", "z,y,x"), (nx,) in 1D
    /fields/<field>        the final state, grid.shape: (nx,), (nx, ny) or (nx, ny, nz)
                           [i, j, k] (layout="x,y", "x,y,z")
    /<group>/<name>        a solver's extra results (datasets()): time series, profiles
    /checkpoint            (partial files) the state when the run was interrupted: checkpoint.py

Write errors never damage earlier results (safe.py): any error ends the writing with one
OutputError, and the file renamed into place is always one that was flushed whole.
"""

import json
import os
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np

from .checkpoint import GROUP, write_state
from .safe import (
    GuardedFile,
    OutputError,
    prepare_folder,
    reason,
    replace_all,
    temp_path,
    unlink_quietly,
)
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
    the same name is untouched until one of those renames. The folder is checked first (an
    OSError naming the path; `targets`: more files the run will write there); a write error
    raises an OutputError (kept in `error`), after which only `abort` may be called.

    Fields are {name: array of grid.shape}, indexed [i, j] as solver.fields() returns them, or
    grid.shape + (3,) for a vector (XDMF "Vector", drawn by ParaView as glyphs or streamlines);
    their dtype (float32 or float64) is kept. Every snapshot must have the same field names.
    """

    def __init__(self, out_dir, name, grid, attrs, targets=()):
        clash = set(attrs) & set(RESERVED_ATTRS)
        if clash:
            raise ValueError(f"attrs {sorted(clash)} are reserved by the run file")
        self.out_dir = Path(out_dir)
        self.name = name
        self.grid = grid
        self.path = self.out_dir / f"{name}.h5"
        self.partial_path = self.out_dir / f"{name}.partial.h5"
        self.temp_path = temp_path(self.path)
        prepare_folder(self.out_dir, [self.path, self.partial_path, *targets,
                                      *(p.with_suffix(".xdmf") for p in (self.path,
                                                                         self.partial_path))])
        self.snapshots = []  # [(index, time)]
        self.field_dtypes = None  # {field: dtype}, fixed by the first snapshot
        self.vector_components = ((3,),)  # trailing axes a vector field may have
        self._field_shapes = {}  # {field: shape}, of the last snapshot
        self.error = None  # the OutputError that ended the writing
        self._last_steps = None
        self._done = False
        self._broken = False  # a write was lost: only the last flush on disk is whole
        try:
            self._guard = GuardedFile(self.temp_path)
        except OSError as error:
            raise OSError(error.errno, error.strerror, str(self.path)) from None
        try:
            self._open(attrs)
        except OutputError:
            self._done = True
            unlink_quietly(self.temp_path)
            raise

    def _open(self, attrs):
        try:
            self._file = h5py.File(self._guard, "w")
        except Exception as error:
            self._file = None
            self._fail(error)
        # Mesh and run description first, so that even a partial file is self-describing.
        with self._writing() as f:
            f.attrs.update({"format": FORMAT, "complete": False, "time": 0.0, "steps": 0})
            for key, value in attrs.items():
                f.attrs[key] = _attr_value(value)
            self._write_mesh(f.create_group("mesh"))
            f.create_group("snapshots")

    @contextmanager
    def _writing(self):
        """A block of HDF5 writes, then a flush; an error of the disk (kept by the guard) or of
        HDF5 closes the file and raises one OutputError."""
        if self._file is None:
            raise RuntimeError(f"run file '{self.name}' is already finished or aborted")
        try:
            yield self._file
            self._file.flush()
        except Exception as error:
            self._fail(error)
        if self._guard.error:
            self._fail(self._guard.error)
        self._guard.mark_flushed()

    def _fail(self, error):
        self.error = OutputError(self.path, reason(self._guard.error or error))
        self._broken = True
        self._close()
        raise self.error

    def _write_mesh(self, mesh):
        """The /mesh group of a structured grid (subclasses write other meshes)."""
        grid = self.grid
        mesh.attrs.update({"ndim": grid.ndim, "shape": np.array(grid.shape)})
        for axis in "xyz"[:grid.ndim]:
            mesh[axis] = getattr(grid, f"{axis}_centres")()
            mesh[f"{axis}_nodes"] = getattr(grid, f"{axis}_nodes")()

    def _stored(self, value, final):
        """(array, layout) of a field as a snapshot (final=False) or final dataset: snapshots
        of 2D and 3D grids are transposed to (ny, nx), (nz, ny, nx) so that x runs fastest
        (XDMF)."""
        axes = "xyz"[:self.grid.ndim]
        if self.grid.ndim == 1 or final:
            return value, ",".join(axes)
        order = tuple(reversed(range(self.grid.ndim))) + tuple(range(self.grid.ndim,
                                                                      value.ndim))
        return np.ascontiguousarray(value.transpose(order)), ",".join(reversed(axes))

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
            rank = len(self.grid.shape)
            if value.shape[:rank] != self.grid.shape or (
                    value.ndim > rank and value.shape[rank:] not in self.vector_components):
                raise ValueError(f"field '{key}' has shape {value.shape}, the grid "
                                 f"{self.grid.shape}")
            out[key] = value
        self._field_shapes = {key: value.shape for key, value in out.items()}
        return out

    def snapshot(self, t, steps, fields):
        """Append /snapshots/NNNNNN with the fields at time t, then flush the file."""
        fields = self._checked(fields)
        index = len(self.snapshots)
        with self._writing() as f:
            group = f.create_group(f"snapshots/{index:06d}")
            group.attrs.update({"time": float(t), "steps": int(steps)})
            # One contiguous, uncompressed dataset per field and snapshot: a snapshot is one
            # write and one read.
            for key, value in fields.items():
                stored, layout = self._stored(value, final=False)
                group.create_dataset(key, data=stored).attrs["layout"] = layout
            f.attrs.update({"time": float(t), "steps": int(steps)})
        self.snapshots.append((index, float(t)))
        self._last_steps = int(steps)

    def carry(self, source, up_to_steps, names):
        """Copy the snapshots of an earlier run file `source` taken at most `up_to_steps`
        steps in (a restart's earlier output), if they hold the fields `names`; returns how
        many were copied. An OSError if `source` cannot be read."""
        with h5py.File(source, "r") as src:
            groups = [src["snapshots"][key] for key in sorted(src.get("snapshots", {}))]
            groups = [g for g in groups if int(g.attrs["steps"]) <= up_to_steps]
            if not groups or any(set(g) != set(names) for g in groups):
                return 0
            with self._writing() as f:
                for k, group in enumerate(groups, len(self.snapshots)):
                    src.copy(group, f["snapshots"], name=f"{k:06d}")
                f.attrs.update({key: groups[-1].attrs[key] for key in ("time", "steps")})
            self.field_dtypes = {name: groups[0][name].dtype for name in names}
            self._field_shapes = {name: groups[0][name].shape for name in names}
            for k, group in enumerate(groups, len(self.snapshots)):
                self.snapshots.append((k, float(group.attrs["time"])))
            self._last_steps = int(groups[-1].attrs["steps"])
        return len(groups)

    def datasets(self, groups):
        """Write a solver's extra results {group: {name: array}} as /<group>/<name> (time
        series, line profiles), replacing earlier ones of the same name."""
        with self._writing() as f:
            for group, arrays in groups.items():
                target = f.require_group(group)
                for name, values in arrays.items():
                    if name in target:
                        del target[name]
                    target.create_dataset(name, data=np.asarray(values, np.float64))

    def finish(self, t, steps, fields):
        """Write the final state, rename to `<name>.h5`, write `<name>.xdmf`; returns
        {'h5': path, 'xdmf': path}. The final state is also appended as a snapshot unless the
        last snapshot was taken at the same step. On a write error nothing is renamed (and the
        XDMF is written first: the file is marked complete only once it exists)."""
        fields = self._checked(fields)
        if not self.snapshots or self._last_steps != int(steps):
            self.snapshot(t, steps, fields)
        xdmf = self.path.with_suffix(".xdmf")
        pending = self._pending_xdmf(xdmf, self.path.name)
        try:
            with self._writing() as f:
                final = f.create_group("fields")
                for key, value in fields.items():
                    stored, layout = self._stored(value, final=True)
                    final.create_dataset(key, data=stored).attrs["layout"] = layout
                f.attrs.update({"time": float(t), "steps": int(steps), "complete": True})
            self._close()
            if self.error:
                raise self.error
            self._rename([(self.temp_path, self.path), (pending, xdmf)])
        finally:
            unlink_quietly(pending)
        self._done = True
        return {"h5": self.path, "xdmf": xdmf}

    def abort(self, checkpoint=None):
        """Keep what was written as `<name>.partial.h5` (+ .partial.xdmf), complete=False, with
        `checkpoint` ({'attrs': ..., 'arrays': ...}, checkpoint.py) as its /checkpoint group
        where space allows. Returns its path, or None when nothing is kept (no snapshot, the
        file already finished or aborted, nothing readable after a write error). Never raises
        for a write error (`error` keeps it)."""
        if self._done:
            return None
        self._done = True
        if self._file is not None and checkpoint:
            try:
                with self._writing() as f:
                    write_state(f.create_group(GROUP), **checkpoint)
            except OutputError:
                pass  # rolled back below to the last snapshot
        self._close()
        readable = not self._broken or (self._guard.rollback() and self._readable())
        if not (self.snapshots and readable):
            unlink_quietly(self.temp_path)
            return None
        partial, xdmf = self.partial_path, self.partial_path.with_suffix(".xdmf")
        try:
            pending = self._pending_xdmf(xdmf, partial.name)
            pairs = [(self.temp_path, partial), (pending, xdmf)]
        except OutputError:  # the snapshots are kept without their XDMF
            pairs = [(self.temp_path, partial)]
        try:
            self._rename(pairs)
        except OutputError:
            unlink_quietly(self.temp_path)
            return None
        finally:
            unlink_quietly(temp_path(xdmf))
        return partial

    # -- helpers -------------------------------------------------------------------------------
    def _close(self):
        """Close the file and the guard; a close error becomes `error` (never raised here)."""
        file, self._file = self._file, None
        if file is not None:
            try:
                file.close()
            except Exception as error:
                self.error = self.error or OutputError(self.path, reason(error))
                self._broken = True
        self._guard.close()
        if self._guard.error:
            self.error = self.error or OutputError(self.path, reason(self._guard.error))
            self._broken = True

    def _readable(self):
        """Whether the (rolled back) temp file opens and holds every snapshot written."""
        try:
            with h5py.File(self.temp_path, "r") as f:
                return all(f"snapshots/{index:06d}" in f for index, _ in self.snapshots)
        except Exception:
            return False

    def _pending_xdmf(self, xdmf_path, h5_name):
        """The XDMF of the snapshots so far, written to a temp file beside xdmf_path (renamed
        together with the HDF5 file); an OutputError (also kept in `error`) if it fails."""
        pending = temp_path(xdmf_path)
        try:
            return self._write_xdmf(pending, h5_name)
        except OSError as error:
            unlink_quietly(pending)
            self.error = self.error or OutputError(xdmf_path, reason(error))
            raise self.error from None

    def _rename(self, pairs):
        try:
            replace_all(pairs)
        except OSError as error:
            self.error = self.error or OutputError(pairs[0][1], reason(error))
            raise self.error from None

    def _write_xdmf(self, xdmf_path, h5_name):
        rank = len(self.grid.shape)
        components = {name: shape[rank:] for name, shape in self._field_shapes.items()}
        return write_xdmf(xdmf_path, h5_name, self.grid, self.snapshots,
                          list(self.field_dtypes), self.field_dtypes, components)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.abort()  # does nothing after finish()
        return False
