"""The host half of the incompressible solvers' checkpoints (2D and 3D): the time series already
read from the device's history rows (`series`, `_rows_read`), which the run file's datasets
report, and the reading of the rows written since."""

import numpy as np


class SeriesCheckpoint:
    """checkpoint() and restore() of a TimeDependentSolver with host lists `series` ({column:
    [values]}) and the count `_rows_read` of device history rows they hold: stored beside the
    device state as 'rows_read' and 'series/<column>'."""

    def read_history(self, diag, rows_index, kept, columns):
        """Append the history rows written since the last read to `series`: diag[rows_index]
        counts the rows written, the device's `history` keeps the last `kept` rows of
        len(columns) values."""
        rows = int(diag[rows_index])
        new = rows - self._rows_read
        if new > 0:
            if new > kept:
                raise RuntimeError(f"{new} steps since the last observe(); the device keeps "
                                   f"{kept}")
            table = self.backend.to_host(self.history).reshape(kept, len(columns))
            order = np.arange(self._rows_read, rows) % kept
            for column, name in enumerate(columns):
                self.series[name].extend(table[order, column].tolist())
            self._rows_read = rows

    def checkpoint(self):
        return {**super().checkpoint(), "rows_read": np.array([self._rows_read], np.int64),
                **{f"series/{name}": np.array(values, np.float64)
                   for name, values in self.series.items()}}

    def restore(self, arrays):
        arrays = dict(arrays)
        host = {name: arrays.pop(name, None)
                for name in ["rows_read", *(f"series/{name}" for name in self.series)]}
        missing = [name for name, value in host.items() if value is None]
        if missing:
            raise ValueError(f"array '{missing[0]}' is missing")
        super().restore(arrays)
        self._rows_read = int(host["rows_read"][0])
        self.series = {name: host[f"series/{name}"].tolist() for name in self.series}
