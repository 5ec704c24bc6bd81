"""What the 2D and 3D incompressible MAC solvers share around their kernels: the order of a
step's launches, the start of the device's records (diag, history rows, the steady test's
reference), the reading of them between replays, the solve report, and the checkpoint of the
host series (SeriesCheckpoint) and of the viscous stage's last increment. The diag layout is
raw_kernels/fv/mac_finish.h's."""

import numpy as np

from .checkpoint import SeriesCheckpoint

HISTORY_ROWS = 4096  # steps kept on the device between two observe() calls
(DIAG_STEADY, DIAG_UNCONVERGED, DIAG_MAX_ITER, DIAG_ROWS, DIAG_T_REF,
 DIAG_VISCOUS_UNCONVERGED) = range(6)
DIAG_SIZE = 8


class MacFlow(SeriesCheckpoint):
    """A MAC solver's shared parts. The solver sets `history_columns`, `implicit`, `viscous`
    (a ViscousStage or None), `pressure`, and the bound launches `_scale`, `_fill` ({fix:
    [launches]}), `_predict`, `_forcing` (launches on u* after the viscous stage, such as an
    obstacle's), `_increment` (implicit), `_divergence`, `_correct`, `_finish`."""

    history_columns = ()
    _forcing = ()

    def step(self):
        """Launch one time step: dt, boundaries, prediction (and the implicit viscous stage),
        the forcing of u*, projection, end-of-step records."""
        self.clock.finish_dt()
        self._scale()
        for launch in self._fill[1]:
            launch()
        self._predict()
        if self.implicit:
            self.viscous.solver.launch_solve()
            self._increment()
        for launch in self._forcing:
            launch()
        self._divergence()
        self.pressure.launch_solve()
        self._correct()
        self._finish()

    def _start_records(self, t, references):
        """Zero the step records and the AB2 and viscous memories (`zeroed` arrays), start the
        diag at time t, fill the boundaries, and take the velocity as the steady test's first
        reference: references, [(velocity, reference)] device arrays."""
        for array in self._zeroed:
            self.backend.fill(array, 0)
        if self.implicit:
            self.viscous.reset(self.backend)
        diag = np.zeros(DIAG_SIZE)
        diag[DIAG_T_REF] = t
        self.backend.write(self.diag, diag)
        self.clock.set(t=t, steps=0)
        self._rows_read = 0
        self.series = {name: [] for name in self.history_columns}
        self._scale()
        for launch in self._fill[1]:
            launch()
        for velocity, reference in references:
            self.backend.write(reference, self.backend.to_host(velocity))

    def observe(self):
        """Append the steps recorded since the last call to `series`; 'steady state reached'
        once the change rate is below the steady tolerance."""
        diag = self.backend.to_host(self.diag)
        self.read_history(diag, DIAG_ROWS, HISTORY_ROWS, self.history_columns)
        if self.steady_tolerance > 0 and diag[DIAG_STEADY]:
            return "steady state reached"
        return None

    def _viscous_arrays(self):
        """The implicit stage's last increment (the next solve's initial guess) for
        checkpoint_arrays(); none when explicit."""
        return {"viscous_increment": self.viscous.x} if self.implicit else {}

    def pressure_report(self):
        diag = self.backend.to_host(self.diag)
        return {"unconverged_solves": int(diag[DIAG_UNCONVERGED]),
                "max_iterations": int(diag[DIAG_MAX_ITER]), "method": self.pressure_method,
                "unconverged_viscous_solves": int(diag[DIAG_VISCOUS_UNCONVERGED])}
