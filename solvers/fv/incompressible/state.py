"""The host side of the 2D MAC solver's state: set from whole-grid arrays, read back as face
velocities, pressure and cell fields (fields.py). A decomposed grid's are scattered to this
rank's block and gathered from every block (block.py)."""

import numpy as np

from .fields import cell_velocity, corners_to_cells, node_stream_function, node_vorticity


class MacState:
    """The state's host views of IncompressibleSolver: it sets `ghosts` (G), the device
    arrays u, v (padded, shapes u_shape, v_shape) and p, `parallel` (a MacBlock or None),
    `_fill`, `_start_records`, `rate_floor` and `diffusion_rate`."""

    def set_state(self, u, v, p=0.0, t=0.0):
        """Set the face velocities (u: (nx + 1, ny), v: (nx, ny + 1), indexed [i, j]), the cell
        pressure and the time, all of the whole grid; boundary faces then take their boundary
        values."""
        nx, ny, g = self.grid.nx, self.grid.ny, self.ghosts
        for name, value, shape in (("u", u, (nx + 1, ny)), ("v", v, (nx, ny + 1))):
            if np.shape(value) != shape:
                raise ValueError(f"{name} must have shape {shape} (faces), got {np.shape(value)}")
        pressure = np.broadcast_to(np.asarray(p, np.float64), self.grid.shape)
        if self.parallel is not None:
            (u, v), pressure = self.parallel.scatter((np.asarray(u), np.asarray(v)), pressure)
        self._gathered = None
        for target, value, shape in ((self.u, u, self.u_shape), (self.v, v, self.v_shape)):
            padded = np.zeros(shape)
            padded[g:g + value.shape[1], g:g + value.shape[0]] = np.asarray(value).T
            self.backend.write(target, padded.astype(self.dtype))
        self.backend.write(self.p, pressure.T.ravel().astype(self.dtype))
        self._start_records(t, ((self.u, self.u_ref), (self.v, self.v_ref)))
        self._write_initial_rate()

    def _write_initial_rate(self):
        """The clock's first dt from the initial field (later steps leave it on the device)."""
        u, v = self.face_velocities()
        rate = max(np.abs(u).max() / self.grid.dx + np.abs(v).max() / self.grid.dy,
                   self.rate_floor) + self.diffusion_rate
        rates = np.zeros(self.clock.partials)
        rates[0] = rate
        self.backend.write(self.clock.rates, rates.astype(self.dtype))

    def _host_state(self):
        """Host float64 copies of the whole grid's u and v (padded as on the device, their
        ghosts beyond the grid's sides filled) and cell pressure, [row, column] each
        (MacFlow._host_state: a decomposed grid's gathered from every block)."""
        return self._host_state_of((self.u, self.v))

    def face_velocities(self):
        """Host copies (u, v) of the face velocities, [i, j], float64."""
        nx, ny, g = self.grid.nx, self.grid.ny, self.ghosts
        u, v, _ = self._host_state()
        return u[g:g + ny, g:g + nx + 1].T, v[g:g + ny + 1, g:g + nx].T

    def pressure_field(self):
        """Cell pressure [i, j]; with no outflow side (p defined up to a constant) its mean is 0."""
        p = self._host_state()[2].T
        return p - p.mean() if self.boundaries.closed else p

    field_names = ("u", "v", "velocity", "p", "vorticity", "stream_function")

    def fields(self):
        """Host copies of the cell-centred fields {u, v, velocity, p, vorticity,
        stream_function}; velocity is (u, v, 0), one vector field for ParaView's glyphs and
        streamlines."""
        nx, ny, g = self.grid.nx, self.grid.ny, self.ghosts
        host_u, host_v, _ = self._host_state()
        u_padded = host_u[g - 1:g + ny + 1, g:g + nx + 1].T
        v_padded = host_v[g:g + ny + 1, g - 1:g + nx + 1].T
        u, v = u_padded[:, 1:-1], v_padded[1:-1]
        uc, vc = cell_velocity(u, v)
        dx, dy = self.grid.dx, self.grid.dy
        return {"u": uc, "v": vc, "velocity": np.stack([uc, vc, np.zeros_like(uc)], axis=-1),
                "p": self.pressure_field(),
                "vorticity": corners_to_cells(node_vorticity(u_padded, v_padded, dx, dy)),
                "stream_function": corners_to_cells(node_stream_function(u, v, dx, dy))}

    def plot_vectors(self):
        """Cell-centred (u, v) for streamlines in the plots."""
        return cell_velocity(*self.face_velocities())
