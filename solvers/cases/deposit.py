"""`deposit` for the initial expressions of structured-grid cases: a quantity released in a
small region, spread over the cells the region overlaps so that its total is exact at any
resolution and at least one cell gets it.

    deposit(total, x0, y0, z0, r)   3D: the ball of radius r about (x0, y0, z0)
    deposit(total, x0, y0, r)       2D: the disc of radius r about (x0, y0)
    deposit(total, x0, r)           1D: the interval [x0 - r, x0 + r]

gives a density per cell (per unit volume in 3D, area in 2D, length in 1D): total times the
cell's overlap fraction with the region, divided by the sum over cells of fraction times cell
size, so that it integrates to exactly `total` (to rounding) over the grid. A 2D or 3D cell
wholly inside the region has fraction 1, one wholly outside 0, and one the boundary crosses the
share of its SAMPLES^ndim sub-cell points (more for a region small against the cells) inside
it; 1D fractions are exact. A region smaller than the sampling, or of radius 0, goes to the
cells whose closed extent holds the centre, in equal shares (four at a shared corner of 2D
cells, eight of 3D cells). Sedov's blast (cases/sedov.toml, sedov3d.toml) puts its energy E0
in with p = (gamma - 1) deposit(E0, 0, 0, r0) (deposit(E0, 0, 0, 0, r0) in 3D).
"""

import functools
import math

import numpy as np

from ..expressions import ExpressionError

SAMPLES = 8  # sub-cell points per axis of a cut cell, at least
MAX_SAMPLES = {2: 64, 3: 16}  # ... and at most, for a region much smaller than the cells
CENTRE_NAMES = ("x0", "y0", "z0")


def functions(grid):
    """The {name: (function, number of arguments)} that case expressions on `grid` may call
    (solvers.expressions.evaluate's `functions`)."""
    ndim = grid.ndim
    return {"deposit": (lambda total, *centre_r: deposit(grid, total, centre_r[:-1],
                                                         centre_r[-1]), ndim + 2)}


def _number(name, value):
    array = np.asarray(value, dtype=float)
    if array.ndim != 0:
        raise ExpressionError(f"deposit: {name} must be a number, not an array (of x, y "
                              "or z)")
    number = float(array)
    if not math.isfinite(number):
        raise ExpressionError(f"deposit: {name} must be finite, got {number}")
    return number


def deposit(grid, total, centre, r):
    """The density per cell of `total` spread over the cells overlapping the region of radius
    r about `centre` (a tuple of one coordinate per axis); an array of grid.shape."""
    total = _number("total", total)
    centre = tuple(_number(name, c) for name, c in zip(CENTRE_NAMES, centre))
    r = _number("r", r)
    if r < 0:
        raise ExpressionError(f"deposit: the radius r must be >= 0, got {r}")
    nodes = grid.axis_nodes()
    fraction = _fraction_1d(nodes[0], centre[0], r) if grid.ndim == 1 else (
        _fraction_ball(nodes, centre, r, grid))
    if not np.any(fraction > 0):
        fraction = _holding_cells(nodes, centre)
        if not np.any(fraction > 0):
            where = ", ".join(f"{c:g}" for c in centre)
            raise ExpressionError(f"deposit: the region about ({where}) of radius {r:g} does "
                                  "not meet the grid")
    return total * fraction / (np.sum(fraction) * grid.cell_volume)


def _fraction_1d(x_nodes, x0, r):
    """Exact: the length of [x0 - r, x0 + r] in each cell over the cell's length."""
    lo, hi = x_nodes[:-1], x_nodes[1:]
    covered = np.clip(np.minimum(hi, x0 + r) - np.maximum(lo, x0 - r), 0, None)
    return covered / (hi - lo)


def _fraction_ball(nodes, centre, r, grid):
    """Per cell: 1 inside the disc (2D) or ball (3D), 0 outside, the share of sub-cell points
    inside where its boundary crosses the cell (only the cells of the region's bounding box are
    looked at)."""
    ndim = grid.ndim
    fraction = np.zeros(grid.shape)
    box = []
    for axis_nodes, c in zip(nodes, centre):
        first = max(int(np.searchsorted(axis_nodes, c - r, side="right")) - 1, 0)
        last = min(int(np.searchsorted(axis_nodes, c + r, side="left")), len(axis_nodes) - 1)
        if last <= first:
            return fraction
        box.append((first, last))
    # Per axis, the box's cell faces as arrays broadcasting along that axis.
    lo, hi = [], []
    for axis, (axis_nodes, (first, last)) in enumerate(zip(nodes, box)):
        shape = [1] * ndim
        shape[axis] = last - first
        lo.append(axis_nodes[first:last].reshape(shape))
        hi.append(axis_nodes[first + 1:last + 1].reshape(shape))
    r2 = r * r
    near = sum(np.maximum(np.maximum(a - c, c - b), 0) ** 2 for a, b, c in zip(lo, hi, centre))
    far = sum(np.maximum(abs(a - c), abs(b - c)) ** 2 for a, b, c in zip(lo, hi, centre))
    block = np.where(far <= r2, 1.0, 0.0)
    cut = np.nonzero((near < r2) & (far > r2))
    if len(cut[0]):
        spacing = (grid.dx, grid.dy, grid.dz)[:ndim]
        n = int(min(MAX_SAMPLES[ndim], max(SAMPLES, math.ceil(SAMPLES * max(spacing)
                                                              / max(r, 1e-300)))))
        offsets = (np.arange(n) + 0.5) / n
        # Per cut cell, the squared distance of each sub-cell point from the centre: one axis of
        # n samples for each grid axis.
        distance2 = 0
        for axis in range(ndim):
            starts = lo[axis].reshape(-1)[cut[axis]]
            shape = [len(starts)] + [1] * ndim
            shape[axis + 1] = n
            distance2 = distance2 + ((starts[:, None] + offsets * spacing[axis]).reshape(shape)
                                     - centre[axis]) ** 2
        block[cut] = np.mean(distance2 <= r2, axis=tuple(range(1, ndim + 1)))
    fraction[tuple(slice(first, last) for first, last in box)] = block
    return fraction


def _holding_cells(nodes, centre):
    """1 in each cell whose closed extent holds the centre (up to 2 a side per axis)."""
    masks = [(axis_nodes[:-1] <= c) & (c <= axis_nodes[1:]) for axis_nodes, c in
             zip(nodes, centre)]
    ndim = len(masks)
    axes = [mask.reshape([-1 if a == axis else 1 for a in range(ndim)])
            for axis, mask in enumerate(masks)]
    return functools.reduce(np.logical_and, axes).astype(float)
