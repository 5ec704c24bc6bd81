"""Host post-processing of a 3D MAC velocity field (float64 NumPy): cell-centred velocity and
the centreline profiles of the cubic cavity's benchmarks. Face arrays are indexed [i, j, k]."""

import numpy as np


def cell_velocity(u, v, w):
    """(u, v, w) at the cell centres, the mean of the two faces of each cell."""
    return 0.5 * (u[:-1] + u[1:]), 0.5 * (v[:, :-1] + v[:, 1:]), 0.5 * (w[:, :, :-1] + w[:, :, 1:])


def _mid_plane(values, nodes, coordinate, axis):
    """values linearly interpolated along `axis` (face or centre coordinates `nodes`) to the
    plane at `coordinate`."""
    return np.apply_along_axis(lambda line: np.interp(coordinate, nodes, line), axis, values)


def centreline_profiles(grid, u, v, w):
    """Through the centre of the box: u along y (at x, z = mid), v along x (at y, z = mid) and
    w along x (at y, z = mid), linearly interpolated between faces and centres:
    {name: (coordinates, values)}."""
    mid = [0.5 * (lo + hi) for lo, hi in (grid.x, grid.y, grid.z)]
    nodes = grid.axis_nodes()
    centres = [grid.x_centres(), grid.y_centres(), grid.z_centres()]

    def line(values, a, along):
        """Component a's values on the line along `along` through the centre."""
        for d in (2, 1, 0):  # interpolate the other two axes away, last axis first
            if d != along:
                values = _mid_plane(values, nodes[d] if d == a else centres[d], mid[d], d)
        return values

    return {"u_vertical_centreline": (centres[1], line(u, 0, 1)),
            "v_horizontal_centreline": (centres[0], line(v, 1, 0)),
            "w_horizontal_centreline": (centres[0], line(w, 2, 0))}
