"""The geometry of the incompressible solver's sub-cell immersed boundary: interpolated direct
forcing driven by a signed distance (Fadlun, Verzicco, Orlandi & Mohd-Yusof 2000, J. Comput.
Phys. 161, 35-60; the image point along the normal as in Balaras 2004, Comput. Fluids 33,
375-404), set up once on the host in float64 and packed for raw_kernels/fv/immersed.cu.

The faces of each velocity component are
- forcing points: outside the body (distance phi >= 0) with a neighbour of the same component
  inside it (phi < 0), along x or y;
- ghost points: inside with a neighbour outside;
- solid: the other faces inside, held at the body's velocity, zero;
- fluid: the rest.
Faces on the domain's boundary (a component's two ends along its own axis) keep their
boundary condition and are none of these.

A forcing or ghost point x_f at distance d_f = phi(x_f) takes the velocity of the flow near a
wall at rest, extended smoothly through it: from the velocity U at its image point
x_ip = x_f + s n along the normal n = grad phi / |grad phi|, at the distance d_ip = d_f + s,
the tangential part linear in the distance and the normal part quadratic (continuity makes
d u_n / dn vanish on a wall at rest):
    u_f = a (U - (U.n) n) + a^2 (U.n) n,  a = d_f / d_ip.
On a ghost point (a < 0) that is the odd extension of the tangential flow and the even one of
the normal flow, which keeps the cells cut by the surface nearly divergence-free. U is the
bilinear interpolation of the u faces and of the v faces around x_ip. The step s is the
shortest of STEPS (quarter cells) whose two stencils hold fluid faces only: no stencil touches
a forced face, so one pass sets every forced face, with no iteration and no dependence on
order. A stencil may use boundary faces whose value is fixed before the step (walls, slip
sides, inflow), never periodic or outflow ones.

Cells whose four faces are all forced (inside the body, or cut by its surface) hold a pressure
that acts on nothing but forced faces: the forcing kernel resets it (see immersed.cu).
"""

from dataclasses import dataclass

import numpy as np

from .distance import ObstacleError, face_coordinates

SOLID, GHOST, FORCING, FLUID = 0, 1, 2, 3  # the labels of a component's faces
STEPS = np.arange(2, 25) / 4  # the image point's candidate steps s along the normal, in cells
NORMAL_STEP = 0.25  # cells: the central differences of grad phi
GRADIENT_RANGE = (0.5, 1.5)  # |grad phi| of a signed distance (1; less across a kink)
ROUNDING = 1e-9  # an image point this close (in cells) to a face line lies on it
COMPONENTS = ("u", "v")
CORNERS = np.array([[0, 0], [1, 0], [0, 1], [1, 1]])  # a stencil's faces from its lower left


@dataclass(frozen=True)
class ComponentForcing:
    """The immersed boundary of one velocity component (axis 0: u on the x faces, axis 1: v on
    the y faces). `label` is per face [i, j]; the other arrays are per forced point (forcing
    and ghost points, in the order of `points`: i, then j)."""

    axis: int
    label: np.ndarray  # SOLID, GHOST, FORCING or FLUID per face
    points: np.ndarray  # (k, 2) face indices (i, j) of the forcing and ghost points
    distance: np.ndarray  # (k,) d_f = phi at the point
    normal: np.ndarray  # (k, 2) the unit normal grad phi / |grad phi|
    image: np.ndarray  # (k, 2) the image point x_f + s n
    image_distance: np.ndarray  # (k,) d_ip = d_f + s
    stencils: tuple  # per component (u, v): (k, 4, 2) face indices around the image point
    weights: tuple  # per component: (k, 4) bilinear weights of its stencil

    @property
    def coefficients(self):
        """(k, 2, 4): the point's velocity as a combination of the two stencils' values,
        u_f = sum over components c and corners m of coefficients[:, c, m] * U_c(stencil)."""
        a = self.distance / self.image_distance
        n = self.normal
        own = np.zeros_like(n)
        own[:, self.axis] = 1
        # a (U - (U.n) n) + a^2 (U.n) n, component `axis`: per component c of U the factor
        # a delta(axis, c) + (a^2 - a) n_axis n_c.
        factor = a[:, None] * own + ((a * a - a) * n[:, self.axis])[:, None] * n
        return factor[:, :, None] * np.stack(self.weights, axis=1)

    @property
    def solid(self):
        """(m, 2) face indices (i, j) of the solid faces."""
        return np.argwhere(self.label == SOLID)


def _origin(grid, axis):
    """(x, y) of face (0, 0) of a component."""
    if axis == 0:
        return np.array([grid.x[0], grid.y[0] + grid.dy / 2])
    return np.array([grid.x[0] + grid.dx / 2, grid.y[0]])


def _beside(mask):
    """Faces with a neighbour in `mask` along x or y."""
    beside = np.zeros(mask.shape, bool)
    beside[1:] |= mask[:-1]
    beside[:-1] |= mask[1:]
    beside[:, 1:] |= mask[:, :-1]
    beside[:, :-1] |= mask[:, 1:]
    return beside


def _labels(phi, axis):
    """SOLID, GHOST, FORCING or FLUID per face of a component."""
    inside = phi < 0
    free = np.zeros(phi.shape, bool)  # the domain's boundary faces
    ends = [slice(None)] * 2
    ends[axis] = [0, -1]
    free[tuple(ends)] = True
    label = np.full(phi.shape, FLUID, np.int8)
    label[inside & ~free] = SOLID
    label[inside & _beside(~inside) & ~free] = GHOST
    label[~inside & _beside(inside) & ~free] = FORCING
    return label


def _usable(label, axis, fixed_sides):
    """Faces a stencil may use: fluid faces; boundary faces only on a side of fixed values."""
    usable = label == FLUID
    ends = [slice(None)] * 2
    for end, fixed in zip((0, -1), fixed_sides[2 * axis:2 * axis + 2]):
        ends[axis] = end
        usable[tuple(ends)] &= bool(fixed)
    return usable


def _normals(distance, x, y, h):
    """Unit normals grad phi / |grad phi| at points (x, y), central differences over
    NORMAL_STEP cells; an ObstacleError where |grad phi| is not that of a distance."""
    e = NORMAL_STEP * h
    gx = (distance(x + e, y) - distance(x - e, y)) / (2 * e)
    gy = (distance(x, y + e) - distance(x, y - e)) / (2 * e)
    size = np.hypot(gx, gy)
    wrong = ~((size >= GRADIENT_RANGE[0]) & (size <= GRADIENT_RANGE[1]))
    if wrong.any():
        k = np.flatnonzero(wrong)[0]
        raise ObstacleError(f"the obstacle's distance is not a signed distance near "
                            f"({x[k]:.6g}, {y[k]:.6g}): |grad| = {size[k]:.3g}, not 1")
    return np.stack([gx, gy], axis=-1) / size[:, None]


def _stencil(grid, axis, usable, points):
    """The bilinear stencils of a component around points (k, 2): faces (k, 4, 2), weights
    (k, 4) and whether every face is usable. A point within ROUNDING of a face line lies on it:
    along that axis its stencil is the line's faces alone (the corners beyond repeat them with
    weight 0), the choice a mirror image of the geometry makes too."""
    shape = np.array(usable.shape)
    scaled = (points - _origin(grid, axis)) / np.array([grid.dx, grid.dy])
    nearest = np.round(scaled)
    scaled = np.where(np.abs(scaled - nearest) < ROUNDING, nearest, scaled)
    low = np.floor(scaled).astype(int)
    fraction = scaled - low
    reach = low + (fraction > 0)  # the upper face along each axis (low itself on a line)
    fits = (low >= 0).all(axis=1) & (reach < shape).all(axis=1)
    low, reach = np.clip(low, 0, shape - 1), np.clip(reach, 0, shape - 1)
    faces = np.where(CORNERS[None] == 0, low[:, None], reach[:, None])
    fits &= usable[faces[..., 0], faces[..., 1]].all(axis=1)
    fx, fy = fraction.T
    weights = np.stack([(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy], axis=-1)
    return faces, weights, fits


def _images(grid, usable, axis, positions, distance, normal):
    """Per point: the shortest step of STEPS (in length) whose image point lies at least half
    a cell outside the body and has usable u and v stencils, and those stencils ((k, 4, 2)
    faces and (k, 4) weights per component)."""
    count, h = len(positions), max(grid.dx, grid.dy)
    step = np.full(count, np.nan)
    faces = [np.zeros((count, 4, 2), int) for _ in usable]
    weights = [np.zeros((count, 4)) for _ in usable]
    todo = np.ones(count, bool)
    for s in STEPS * h:
        which = np.flatnonzero(todo)
        image = positions[which] + s * normal[which]
        found = [_stencil(grid, c, usable[c], image) for c in (0, 1)]
        placed = found[0][2] & found[1][2] & (distance[which] + s >= h / 2)
        for c, (stencil, weight, _) in enumerate(found):
            faces[c][which[placed]] = stencil[placed]
            weights[c][which[placed]] = weight[placed]
        step[which[placed]] = s
        todo[which[placed]] = False
        if not todo.any():
            return step, tuple(faces), tuple(weights)
    k = np.flatnonzero(todo)[0]
    raise ObstacleError(f"no fluid stencil for the image point of the {COMPONENTS[axis]} face at "
                        f"({positions[k, 0]:.6g}, {positions[k, 1]:.6g}): the obstacle comes "
                        "within about 3 cells of itself or of the domain's sides")


class ImmersedBoundary:
    """The immersed boundary of a body on a MAC grid: `components` (u, v) as ComponentForcing,
    `reset_cells` (the cells whose four faces are forced, [i, j] mask), and `pack()`, the
    arrays of the forcing kernel. fixed_sides: per side (x_lo, x_hi, y_lo, y_hi), whether its
    boundary faces hold a value fixed before the step (usable in a stencil)."""

    def __init__(self, grid, distance, fixed_sides):
        self.grid = grid
        coordinates = face_coordinates(grid)
        labels = [_labels(np.asarray(distance(x, y), np.float64), axis)
                  for axis, (x, y) in enumerate(coordinates)]
        usable = [_usable(label, axis, fixed_sides) for axis, label in enumerate(labels)]
        components = []
        for axis, ((x, y), label) in enumerate(zip(coordinates, labels)):
            points = np.argwhere((label == FORCING) | (label == GHOST))
            positions = np.stack([x[tuple(points.T)], y[tuple(points.T)]], axis=-1)
            d = np.asarray(distance(positions[:, 0], positions[:, 1]), np.float64)
            normal = _normals(distance, positions[:, 0], positions[:, 1],
                              min(grid.dx, grid.dy))
            step, faces, weights = _images(grid, usable, axis, positions, d, normal)
            components.append(ComponentForcing(axis, label, points, d, normal,
                                               positions + step[:, None] * normal, d + step,
                                               faces, weights))
        self.components = tuple(components)
        forced = [label != FLUID for label in labels]
        self.reset_cells = forced[0][:-1] & forced[0][1:] & forced[1][:, :-1] & forced[1][:, 1:]

    def _pressure_cells(self, axis, faces):
        """The cells (i + nx j) below and above each face (k, 2) of a component along its
        axis, -1 for a reset cell."""
        nx = self.grid.nx
        cells = []
        for shift in (1, 0):
            ij = faces.copy()
            ij[:, axis] -= shift
            cells.append(np.where(self.reset_cells[ij[:, 0], ij[:, 1]], -1,
                                  ij[:, 0] + nx * ij[:, 1]))
        return np.stack(cells, axis=1)

    def pack(self, dtype, ghosts):
        """The forcing kernel's arrays (raw_kernels/fv/immersed.cu). Forced faces in the order
        forcing and ghost points of u, of v, then solid faces of u, of v: face (the flat index
        into us / vs, whose layout has `ghosts` layers, x fastest) and cells (the two cells
        of its pressure difference, -1 for a reset cell); per forcing or ghost point,
        stencil (4 u faces then 4 v faces, flat) and coefficient (their 8 coefficients);
        reset_cell (i + nx j). Returns (arrays, counts: forcing and ghost points, of them u;
        solid faces, of them u; reset cells)."""
        extrapolated, solid = self.components, self.components
        strides = [c.label.shape[0] + 2 * ghosts for c in self.components]

        def flat(axis, ij):
            return ghosts * (1 + strides[axis]) + ij @ (1, strides[axis])
        groups = ([(c.axis, c.points) for c in extrapolated]
                  + [(c.axis, c.solid) for c in solid])
        arrays = {
            "face": np.concatenate([flat(a, ij) for a, ij in groups]),
            "cells": np.concatenate([self._pressure_cells(a, ij) for a, ij in groups]),
            "stencil": np.concatenate([np.concatenate([flat(0, c.stencils[0]),
                                                       flat(1, c.stencils[1])], axis=1)
                                       for c in extrapolated]),
            "coefficient": np.concatenate([c.coefficients.reshape(-1, 8)
                                           for c in extrapolated]).astype(dtype),
            "reset_cell": np.flatnonzero(self.reset_cells.T.ravel()),
        }
        for name in ("face", "cells", "stencil", "reset_cell"):
            arrays[name] = arrays[name].reshape(-1).astype(np.int32)
        arrays["coefficient"] = arrays["coefficient"].reshape(-1)
        counts = (sum(len(c.points) for c in extrapolated), len(extrapolated[0].points),
                  sum(len(c.solid) for c in solid), len(solid[0].solid),
                  len(arrays["reset_cell"]))
        return arrays, counts
