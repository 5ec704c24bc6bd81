"""The geometry of the incompressible solver's sub-cell immersed boundary: interpolated direct
forcing driven by a signed distance (Fadlun, Verzicco, Orlandi & Mohd-Yusof 2000, J. Comput.
Phys. 161, 35-60; image points along the normal as in Balaras 2004, Comput. Fluids 33,
375-404), set up once on the host in float64 and packed for raw_kernels/fv/immersed.cu.

Cells are body cells (centre inside the body, distance phi < 0) or fluid cells. Continuity is
imposed in the fluid cells only: the pressure solve leaves out the divergence of the body
cells (the solver zeroes its right-hand side there), so the forced faces keep their targets
once the flow is steady, and no fluid cell loses mass to a body cell's constraint. The faces of
each velocity component are
- forced: beside a body cell along the component's axis; of them
  - forcing points (phi >= 0) and ghost points (phi < 0): between a body and a fluid cell, or
    with a neighbour of the same component along x or y that is not forced;
  - solid: the others, held at the body's velocity, zero;
- fluid: the rest.
Faces on the domain's boundary (a component's two ends along its own axis) keep their
boundary condition and are none of these.

A forcing or ghost point x_f at distance d_f = phi(x_f) takes the velocity of the flow near a
wall at rest, extended smoothly through it, from the velocities U_m at IMAGES image points
x_m = x_f + s_m n along the normal n = grad phi / |grad phi| (s_m = s_1 + (m - 1)
IMAGE_SPACING cells), at the distances d_m = d_f + s_m: the tangential part a polynomial
through 0 at the wall and the images, the normal part d^2 times a polynomial through the
images (continuity makes d u_n / dn vanish on a wall at rest); fewer images where the body
comes too close to itself or to the domain's sides for IMAGES:
    u_f = sum over m of  L_m (U_m - (U_m.n) n) + M_m (U_m.n) n,
    L_m = (d_f / d_m) P_m,  M_m = (d_f / d_m)^2 P_m,  P_m = prod over k != m of
    (d_f - d_k) / (d_m - d_k).
U_m is the biquadratic interpolation of the 3 x 3 u faces and of the 3 x 3 v faces nearest
x_m. With three images the profiles are cubic: a linear profile from bilinear values (second
order in the velocity, first in the stress next to the wall) made the forces, the lift most,
depend on where the surface cuts the cells (docs/immersed_lift.md).
The step s_1 is the shortest of STEPS (quarter cells) whose stencils hold fluid faces
only: no stencil touches a forced face, so one pass sets every forced face, with no iteration
and no dependence on order. A stencil may use boundary faces whose value is fixed before the
step (walls, slip sides, inflow), never periodic or outflow ones.
"""

from dataclasses import dataclass

import numpy as np

from .distance import ObstacleError, face_coordinates

SOLID, GHOST, FORCING, FLUID = 0, 1, 2, 3  # the labels of a component's faces
STEPS = np.arange(2, 25) / 4  # the first image point's candidate steps along the normal, cells
IMAGES = 3  # image points along the normal
IMAGE_SPACING = 1.0  # cells between them
NORMAL_STEP = 0.25  # cells: the central differences of grad phi
GRADIENT_RANGE = (0.5, 1.5)  # |grad phi| of a signed distance (1; less across a kink)
TIE = 1e-9  # cells: a point this near halfway between two faces is halfway
COMPONENTS = ("u", "v")
OFFSETS = np.array([[a, b] for b in (-1, 0, 1) for a in (-1, 0, 1)])  # a stencil's faces
CORNERS = len(OFFSETS)
TERMS = 2 * CORNERS * IMAGES  # stencil faces of a forcing or ghost point


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
    image: np.ndarray  # (k, IMAGES, 2) the image points x_f + s_m n
    image_distance: np.ndarray  # (k, IMAGES) d_m = d_f + s_m (NaN: an image left out)
    stencils: tuple  # per component (u, v): (k, IMAGES, CORNERS, 2) faces around the images
    weights: tuple  # per component: (k, IMAGES, CORNERS) biquadratic weights of the stencils

    @property
    def coefficients(self):
        """(k, IMAGES, 2, CORNERS): the point's velocity as a combination of the stencils'
        values, u_f = sum over images m, components c and faces r of coefficients[:, m, c, r]
        * U_c(stencil m, face r)."""
        # Per image: L_m and M_m of the module docstring, then per component c of U_m the
        # factor L_m delta(axis, c) + (M_m - L_m) n_axis n_c.
        # (an image left out, NaN, has weight 0 and no part in the others' polynomials)
        d, images = self.distance, self.image_distance
        used = ~np.isnan(images)
        others = used.astype(np.float64)
        for m in range(IMAGES):
            for k in range(IMAGES):
                if k != m:
                    rows = np.flatnonzero(used[:, m] & used[:, k])
                    others[rows, m] *= ((d[rows] - images[rows, k])
                                        / (images[rows, m] - images[rows, k]))
        ratio = np.where(used, d[:, None] / np.where(used, images, 1.0), 0.0)
        tangential = ratio * others
        normal = ratio**2 * others
        n = self.normal[:, None, :]
        own = np.zeros_like(n)
        own[..., self.axis] = 1
        factor = (tangential[..., None] * own
                  + ((normal - tangential) * n[..., self.axis])[..., None] * n)
        return factor[..., None] * np.stack(self.weights, axis=2)

    @property
    def solid(self):
        """(m, 2) face indices (i, j) of the solid faces."""
        return np.argwhere(self.label == SOLID)


@dataclass(frozen=True)
class Window:
    """The part of the grid whose forced faces ImmersedBoundary.pack() packs, and the layouts
    of the arrays they index: the cells start .. start + shape - 1 along x and y (the whole
    grid, or a decomposed grid's block), face arrays us, vs of its faces with `ghosts` layers,
    the arrays the stencils read with `stencil_ghosts` layers (us and vs themselves on one
    rank), the pressure of cell (i, j) at cell_first + i + cell_stride j (block-local i, j),
    and shared_low: per axis whether the low side faces another block, which holds the faces
    on it too and counts their forcing in the force."""

    start: tuple
    shape: tuple
    ghosts: int
    stencil_ghosts: int
    cell_first: int
    cell_stride: int
    shared_low: tuple = (False, False)

    @classmethod
    def whole(cls, grid, ghosts):
        """The whole grid, its stencils reading the face arrays, its pressure unpadded."""
        return cls((0, 0), tuple(grid.shape), ghosts, ghosts, 0, grid.nx)

    @property
    def slices(self):
        """The window's cells in an array of the whole grid's cells ([i, j])."""
        return tuple(slice(s, s + n) for s, n in zip(self.start, self.shape))

    def faces(self, axis):
        """The window's faces of component `axis` along x and y."""
        return np.array(self.shape) + (np.arange(2) == axis)

    def holds(self, axis, ij):
        """Whether each face ij (whole-grid indices, last axis i, j) of component `axis` is the
        window's."""
        local = ij - np.array(self.start)
        return ((local >= 0) & (local < self.faces(axis))).all(axis=-1)

    def beyond(self, axis, ij):
        """How many faces each face ij of component `axis` lies beyond the window's (0: the
        window's own), the larger of x and y."""
        local = ij - np.array(self.start)
        return np.maximum(-local, local - (self.faces(axis) - 1)).max(axis=-1).clip(0)

    def flat(self, axis, ij, layers):
        """The flat indices of faces ij of component `axis` in an array of the window's faces
        padded by `layers` ghost layers (x fastest)."""
        stride = self.faces(axis)[0] + 2 * layers
        return layers * (1 + stride) + (ij - np.array(self.start)) @ (1, stride)

    def cells(self, axis, ij):
        """(k, 2): the pressure's indices of the cells below and above faces ij (k, 2) of
        component `axis`, along its axis."""
        cells = []
        for shift in (1, 0):
            local = ij - np.array(self.start)
            local[:, axis] -= shift
            cells.append(self.cell_first + local @ (1, self.cell_stride))
        return np.stack(cells, axis=1)

    def counted(self, axis, ij):
        """Whether the forcing of each face ij (k, 2) of component `axis` counts in the
        window's force: not on a low side shared with another block (that block's to count)."""
        return ~(self.shared_low[axis] & (ij[:, axis] == self.start[axis]))


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


def _labels(phi, body, axis):
    """SOLID, GHOST, FORCING or FLUID per face of a component (phi at its faces) from the body
    cells (the module docstring's rules)."""
    free = np.zeros(phi.shape, bool)  # the domain's boundary faces
    ends = [slice(None)] * 2
    ends[axis] = [0, -1]
    free[tuple(ends)] = True
    # The cells below and above each face along the axis (none beyond the domain).
    pad = [(0, 0), (0, 0)]
    pad[axis] = (1, 1)
    cells = np.pad(body, pad)
    low, high = [slice(None)] * 2, [slice(None)] * 2
    low[axis], high[axis] = slice(None, -1), slice(1, None)
    below, above = cells[tuple(low)], cells[tuple(high)]
    forced = (below | above) & ~free
    extrapolated = forced & ((below != above) | _beside(~forced & ~free))
    label = np.full(phi.shape, FLUID, np.int8)
    label[forced] = SOLID
    label[extrapolated & (phi < 0)] = GHOST
    label[extrapolated & (phi >= 0)] = FORCING
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


def _stencil(grid, axis, usable, points, normal):
    """The biquadratic stencils of a component around points (k, 2): the 3 x 3 faces nearest
    each point (k, CORNERS, 2), their Lagrange weights (k, CORNERS) and whether every face is
    usable. A point halfway between two faces (to TIE cells: the rounding of its coordinates)
    takes the one further along its normal (k, 2), away from the body, so that points mirrored
    about an axis of the grid take mirrored stencils."""
    shape = np.array(usable.shape)
    scaled = (points - _origin(grid, axis)) / np.array([grid.dx, grid.dy])
    centre = np.where(normal >= 0, np.floor(scaled + 0.5 + TIE),
                      np.ceil(scaled - 0.5 - TIE)).astype(int)
    t = scaled - centre  # within half a face of the centre face, per axis
    faces = centre[:, None] + OFFSETS[None]
    fits = ((faces >= 0) & (faces < shape)).all(axis=(1, 2))
    faces = np.clip(faces, 0, shape - 1)
    fits &= usable[faces[..., 0], faces[..., 1]].all(axis=1)
    lagrange = [np.stack([t[:, a] * (t[:, a] - 1) / 2, 1 - t[:, a] ** 2,
                          t[:, a] * (t[:, a] + 1) / 2], axis=-1) for a in (0, 1)]
    weights = (lagrange[0][:, None, :] * lagrange[1][:, :, None]).reshape(-1, CORNERS)
    return faces, weights, fits


def _images(grid, usable, axis, positions, distance, normal):
    """Per point: the shortest step s of STEPS (in length) whose image points, at s, s +
    IMAGE_SPACING cells, ... along the normal, lie at least half a cell outside the body and
    have usable u and v stencils, IMAGES of them where they fit, else fewer: their steps (k,
    IMAGES; NaN for an image left out) and stencils ((k, IMAGES, CORNERS, 2) faces and (k,
    IMAGES, CORNERS) weights per component, face (0, 0) and weight 0 for an image left out)."""
    count, h = len(positions), max(grid.dx, grid.dy)
    steps = np.full((count, IMAGES), np.nan)
    faces = [np.zeros((count, IMAGES, CORNERS, 2), int) for _ in usable]
    weights = [np.zeros((count, IMAGES, CORNERS)) for _ in usable]
    todo = np.ones(count, bool)
    for images in range(IMAGES, 0, -1):  # fewer image points where more do not fit
        for s in STEPS * h:
            which = np.flatnonzero(todo)
            offsets = s + IMAGE_SPACING * h * np.arange(images)
            found = [[_stencil(grid, c, usable[c], positions[which] + step * normal[which],
                               normal[which]) for c in (0, 1)] for step in offsets]
            placed = distance[which] + s >= h / 2
            for image in found:
                placed &= image[0][2] & image[1][2]
            for m, image in enumerate(found):
                for c, (stencil, weight, _) in enumerate(image):
                    faces[c][which[placed], m] = stencil[placed]
                    weights[c][which[placed], m] = weight[placed]
            steps[which[placed], :images] = offsets
            todo[which[placed]] = False
            if not todo.any():
                return steps, tuple(faces), tuple(weights)
    k = np.flatnonzero(todo)[0]
    raise ObstacleError(f"no fluid stencil for the image point of the {COMPONENTS[axis]} face at "
                        f"({positions[k, 0]:.6g}, {positions[k, 1]:.6g}): the obstacle comes "
                        "within about 3 cells of itself or of the domain's sides")


class ImmersedBoundary:
    """The immersed boundary of a body on a MAC grid: `components` (u, v) as ComponentForcing,
    `body_cells` (the cells whose centre is inside, [i, j] mask: no continuity there), and
    `pack()`, the arrays of the forcing kernel. fixed_sides: per side (x_lo, x_hi, y_lo,
    y_hi), whether its boundary faces hold a value fixed before the step (usable in a
    stencil)."""

    def __init__(self, grid, distance, fixed_sides):
        self.grid = grid
        coordinates = face_coordinates(grid)
        self.body_cells = np.asarray(distance(*grid.centres()), np.float64) < 0
        labels = [_labels(np.asarray(distance(x, y), np.float64), self.body_cells, axis)
                  for axis, (x, y) in enumerate(coordinates)]
        usable = [_usable(label, axis, fixed_sides) for axis, label in enumerate(labels)]
        components = []
        for axis, ((x, y), label) in enumerate(zip(coordinates, labels)):
            points = np.argwhere((label == FORCING) | (label == GHOST))
            positions = np.stack([x[tuple(points.T)], y[tuple(points.T)]], axis=-1)
            d = np.asarray(distance(positions[:, 0], positions[:, 1]), np.float64)
            normal = _normals(distance, positions[:, 0], positions[:, 1],
                              min(grid.dx, grid.dy))
            steps, faces, weights = _images(grid, usable, axis, positions, d, normal)
            components.append(ComponentForcing(axis, label, points, d, normal,
                                               positions[:, None] + steps[..., None]
                                               * normal[:, None], d[:, None] + steps,
                                               faces, weights))
        self.components = tuple(components)

    def reach(self, window):
        """The most faces by which a stencil of a forcing or ghost point that `window` holds
        lies beyond the window's faces of its component (0: none does)."""
        reach = 0
        for c in self.components:
            held = window.holds(c.axis, c.points)
            used = ~np.isnan(c.image_distance[held])
            for axis, faces in enumerate(c.stencils):
                reach = max(reach, int(window.beyond(axis, faces[held])[used].max(initial=0)))
        return reach

    def pack(self, dtype, window):
        """The forcing kernel's arrays (raw_kernels/fv/immersed.cu) for the forced faces that
        `window` (a Window: the whole grid or a block) holds. Forced faces in the order forcing
        and ghost points of u, of v, then solid faces of u, of v: face (the flat index into us /
        vs), cells (the two cells of its pressure difference) and counted (whether its forcing
        counts in the force); per forcing or ghost point, stencil (per image CORNERS u faces
        then CORNERS v faces, flat in the stencils' arrays; an image left out: the window's
        first face, weight 0) and coefficient (theirs). Returns (arrays, counts: forcing and
        ghost points, of them u; solid faces, of them u)."""
        held = [window.holds(c.axis, c.points) for c in self.components]
        solid = [(c.axis, c.solid[window.holds(c.axis, c.solid)]) for c in self.components]
        groups = [(c.axis, c.points[k]) for c, k in zip(self.components, held)] + solid
        # The stencils' faces, the window's first for an image left out.
        stencils = []
        for c, k in zip(self.components, held):
            used = ~np.isnan(c.image_distance[k])[..., None, None]
            stencils.append(np.concatenate([
                window.flat(axis, np.where(used, faces[k], window.start), window.stencil_ghosts)
                for axis, faces in enumerate(c.stencils)], axis=2).reshape(-1, TERMS))
        arrays = {
            "face": np.concatenate([window.flat(a, ij, window.ghosts) for a, ij in groups]),
            "cells": np.concatenate([window.cells(a, ij) for a, ij in groups]),
            "counted": np.concatenate([window.counted(a, ij) for a, ij in groups]),
            "stencil": np.concatenate(stencils),
            "coefficient": np.concatenate([c.coefficients[k].reshape(-1, TERMS)
                                           for c, k in zip(self.components, held)]).astype(dtype),
        }
        for name in ("face", "cells", "counted", "stencil"):
            arrays[name] = arrays[name].reshape(-1).astype(np.int32)
        arrays["coefficient"] = arrays["coefficient"].reshape(-1)
        counts = (sum(len(ij) for _, ij in groups[:2]), len(groups[0][1]),
                  sum(len(ij) for _, ij in solid), len(solid[0][1]))
        return arrays, counts
