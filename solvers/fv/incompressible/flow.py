"""What the 2D and 3D incompressible MAC solvers share around their kernels: the order of a
step's launches, the start of the device's records (diag, history rows, the steady test's
reference), the reading of them between replays, the solve report, the checkpoint of the host series
(SeriesCheckpoint) and of the viscous stage's last increment, and on a decomposed grid the
block (block.py), the step's launches and host work, and the whole grid's gathered state (and
checkpoints: block_checkpoint.py). The diag layout is raw_kernels/fv/mac_finish.h's."""

import numpy as np

from .block import MacBlock
from .block_checkpoint import BlockCheckpoint
from .checkpoint import SeriesCheckpoint
from .viscous import VISCOUS

HISTORY_ROWS = 4096  # steps kept on the device between two observe() calls
(DIAG_STEADY, DIAG_UNCONVERGED, DIAG_MAX_ITER, DIAG_ROWS, DIAG_T_REF,
 DIAG_VISCOUS_UNCONVERGED) = range(6)
DIAG_SIZE = 8
ADVECTION = {"central": 1, "quick": 2}  # the kernels' ADVECTION define


def check_options(nu, advection, viscous):
    """The options both MAC solvers take, checked before any allocation."""
    if not nu > 0:
        raise ValueError(f"nu must be > 0, got {nu}")
    if advection not in ADVECTION:
        raise ValueError(f"advection must be one of {', '.join(ADVECTION)}, got '{advection}'")
    if viscous not in VISCOUS:
        raise ValueError(f"viscous must be one of {', '.join(VISCOUS)}, got '{viscous}'")


class MacFlow(SeriesCheckpoint, BlockCheckpoint):
    """A MAC solver's shared parts. The solver sets `history_columns`, `implicit`, `viscous`
    (a ViscousStage or None), `pressure`, and the bound launches `_scale`, `_fill` ({fix:
    [launches]}), `_predict`, `_forcing` (launches on u* after the viscous stage, such as an
    obstacle's), `_increment` (implicit), `_divergence`, `_correct`, `_finish`."""

    history_columns = ()
    _forcing = ()
    parallel = None  # a decomposed grid's MacBlock
    _parts = None  # a decomposed grid's step: launches and host work
    _gathered = None  # (clock reading, the whole grid's host state) when decomposed

    def step(self):
        """Launch one time step: dt, boundaries, prediction (and the implicit viscous stage),
        the forcing of u*, projection, end-of-step records; a decomposed grid's has host work
        between its launches (step_segments)."""
        if self._parts is not None:
            for part in self._parts:
                part()
            return
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

    def step_segments(self):
        """A decomposed grid's step as launches and host work (block.py), else None."""
        return self._parts

    # -- a decomposed grid ---------------------------------------------------------------------
    def _block(self, decomposition):
        """This rank's MacBlock of a decomposed grid, else None."""
        if decomposition is None:
            return None
        return MacBlock(decomposition, self.grid, self.boundaries, self.ghosts, self.backend,
                        self.dtype)

    def _decomposed_parts(self, velocity, solve, reduce, p_halo=(), viscous=()):
        """A decomposed grid's step (MacFlow.step's launches): the velocity arrays' halos
        swapped before the predictor (and p^n's, p_halo, for the implicit predictor and a
        body's forcing), the implicit viscous stage's parts after it (its solve, then u* = u^n
        + d), a body's forcing (block_immersed.py), the pressure solve's parts and the
        reduction of the step's maxima (block.py) before the finish."""
        return [self.clock.finish_dt, self._scale, *self._fill[1],
                *self.parallel.velocity_halo(*velocity), *p_halo, self._predict, *viscous,
                *self._forcing, self._divergence, *solve, self._correct, *reduce, self._finish]

    def _host_state_of(self, velocity):
        """Host float64 copies of the whole grid's face arrays `velocity` (padded as on the
        device, their ghosts beyond the grid's sides filled) and cell pressure, in device
        order ([z,] row, column). A decomposed grid's come from every block (collective:
        every rank calls it; the first call at a clock reading gathers, later ones reuse
        that)."""
        reading = None if self.parallel is None else self.clock.read()
        if self._gathered is not None and self._gathered[0] == reading:
            return self._gathered[1]
        for launch in self._fill[0]:  # ghosts of the current field (for the wall vorticity)
            launch()
        q = [self.backend.to_host(a).astype(np.float64) for a in velocity]
        p = self.backend.to_host(self.p).astype(np.float64)
        if self.parallel is None:
            return (*q, p.reshape(self.grid.shape[::-1]))
        n, g = self.grid.shape, self.ghosts
        shapes = [tuple(n[d] + 2 * g + (d == a) for d in reversed(range(len(n))))
                  for a in range(len(n))]
        self._gathered = (reading, tuple(self.parallel.gather(q, p, shapes)))
        return self._gathered[1]

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
