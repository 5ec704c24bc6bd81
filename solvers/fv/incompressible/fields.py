"""Host post-processing of a MAC velocity field (float64 NumPy): cell-centred velocity,
vorticity, stream function and centreline profiles.

Face arrays are indexed [i, j]: u of shape (nx + 1, ny) on the x faces, v of shape
(nx, ny + 1) on the y faces; u_ghost_*/v_ghost_* are the ghost values just outside the
y sides (for u) and x sides (for v), which the wall rules set (a wall's shear appears in the
vorticity of its cells).
"""

import numpy as np


def cell_velocity(u, v):
    """(u, v) at the cell centres, the mean of the two faces of each cell."""
    return 0.5 * (u[:-1] + u[1:]), 0.5 * (v[:, :-1] + v[:, 1:])


def node_vorticity(u_padded, v_padded, dx, dy):
    """dv/dx - du/dy at the cell corners, shape (nx + 1, ny + 1), from u with one ghost row
    below and above ((nx + 1, ny + 2)) and v with one ghost column each side ((nx + 2, ny + 1))."""
    dvdx = (v_padded[1:] - v_padded[:-1]) / dx
    dudy = (u_padded[:, 1:] - u_padded[:, :-1]) / dy
    return dvdx - dudy


def corners_to_cells(values):
    """The mean of a cell's four corner values."""
    return 0.25 * (values[:-1, :-1] + values[1:, :-1] + values[:-1, 1:] + values[1:, 1:])


def node_stream_function(u, v, dx, dy):
    """psi at the cell corners with psi = 0 at the (x0, y0) corner, u = d psi / dy and
    v = -d psi / dx: integrated along the bottom side, then up every column of faces. For a
    field whose discrete divergence vanishes this is the same along any path."""
    nx, ny = v.shape[0], u.shape[1]
    psi = np.zeros((nx + 1, ny + 1))
    psi[1:, 0] = -np.cumsum(v[:, 0]) * dx
    psi[:, 1:] = psi[:, :1] + np.cumsum(u, axis=1) * dy
    return psi


def centreline_profiles(grid, u, v):
    """u along the vertical line through the domain's centre (against y) and v along the
    horizontal one (against x), linearly interpolated between faces:
    {name: (coordinates, values)}."""
    xc = 0.5 * (grid.x[0] + grid.x[1])
    yc = 0.5 * (grid.y[0] + grid.y[1])
    u_line = np.array([np.interp(xc, grid.x_nodes(), u[:, j]) for j in range(u.shape[1])])
    v_line = np.array([np.interp(yc, grid.y_nodes(), v[i]) for i in range(v.shape[0])])
    return {"u_vertical_centreline": (grid.y_centres(), u_line),
            "v_horizontal_centreline": (grid.x_centres(), v_line)}
