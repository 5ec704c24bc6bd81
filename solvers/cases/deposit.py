"""`deposit` for the initial expressions of structured-grid cases: a quantity released in a
small region, spread over the cells the region overlaps so that its total is exact at any
resolution and at least one cell gets it.

    deposit(total, x0, y0, r)   2D: the disc of radius r about (x0, y0)
    deposit(total, x0, r)       1D: the interval [x0 - r, x0 + r]

gives a density per cell (per unit area in 2D, per unit length in 1D): total times the cell's
overlap fraction with the region, divided by the sum over cells of fraction times cell size, so
that it integrates to exactly `total` (to rounding) over the grid. A 2D cell wholly
inside the disc has fraction 1, one wholly outside 0, and one the circle crosses the share of
its SAMPLES x SAMPLES sub-cell points (more for a disc small against the cells) inside the
disc; 1D fractions are exact. A region smaller than the sampling, or of radius 0, goes to the
cells whose closed extent holds the centre, in equal shares (four at a shared corner). Sedov's
blast (cases/sedov.toml) puts its energy E0 in with p = (gamma - 1) deposit(E0, 0, 0, r0).
"""

import math

import numpy as np

from ..expressions import ExpressionError

SAMPLES = 8  # sub-cell points per axis of a cut cell, at least
MAX_SAMPLES = 64  # ... and at most, for a disc much smaller than the cells


def functions(grid):
    """The {name: (function, number of arguments)} that case expressions on `grid` may call
    (solvers.expressions.evaluate's `functions`)."""
    if grid.ndim == 1:
        return {"deposit": (lambda total, x0, r: deposit(grid, total, (x0,), r), 3)}
    return {"deposit": (lambda total, x0, y0, r: deposit(grid, total, (x0, y0), r), 4)}


def _number(name, value):
    array = np.asarray(value, dtype=float)
    if array.ndim != 0:
        raise ExpressionError(f"deposit: {name} must be a number, not an array (of x or y)")
    number = float(array)
    if not math.isfinite(number):
        raise ExpressionError(f"deposit: {name} must be finite, got {number}")
    return number


def deposit(grid, total, centre, r):
    """The density per cell of `total` spread over the cells overlapping the region of radius
    r about `centre` (a tuple of one coordinate per axis); an array of grid.shape."""
    total = _number("total", total)
    centre = tuple(_number(name, c) for name, c in zip(("x0", "y0"), centre))
    r = _number("r", r)
    if r < 0:
        raise ExpressionError(f"deposit: the radius r must be >= 0, got {r}")
    nodes = [grid.x_nodes()] if grid.ndim == 1 else [grid.x_nodes(), grid.y_nodes()]
    fraction = _fraction_1d(nodes[0], centre[0], r) if grid.ndim == 1 else (
        _fraction_2d(nodes, centre, r, grid))
    if not np.any(fraction > 0):
        fraction = _holding_cells(nodes, centre)
        if not np.any(fraction > 0):
            where = ", ".join(f"{c:g}" for c in centre)
            raise ExpressionError(f"deposit: the region about ({where}) of radius {r:g} does "
                                  "not meet the grid")
    size = grid.dx * grid.dy if grid.ndim == 2 else grid.dx
    return total * fraction / (np.sum(fraction) * size)


def _fraction_1d(x_nodes, x0, r):
    """Exact: the length of [x0 - r, x0 + r] in each cell over the cell's length."""
    lo, hi = x_nodes[:-1], x_nodes[1:]
    covered = np.clip(np.minimum(hi, x0 + r) - np.maximum(lo, x0 - r), 0, None)
    return covered / (hi - lo)


def _fraction_2d(nodes, centre, r, grid):
    """Per cell: 1 inside the disc, 0 outside, the share of sub-cell points inside where the
    circle crosses the cell (only the cells of the disc's bounding box are looked at)."""
    fraction = np.zeros(grid.shape)
    box = []
    for axis_nodes, c in zip(nodes, centre):
        first = max(int(np.searchsorted(axis_nodes, c - r, side="right")) - 1, 0)
        last = min(int(np.searchsorted(axis_nodes, c + r, side="left")), len(axis_nodes) - 1)
        if last <= first:
            return fraction
        box.append((first, last))
    (i0, i1), (j0, j1) = box
    lo_x, hi_x = nodes[0][i0:i1][:, None], nodes[0][i0 + 1:i1 + 1][:, None]
    lo_y, hi_y = nodes[1][j0:j1][None, :], nodes[1][j0 + 1:j1 + 1][None, :]
    (x0, y0), r2 = centre, r * r
    near = (np.maximum(np.maximum(lo_x - x0, x0 - hi_x), 0) ** 2
            + np.maximum(np.maximum(lo_y - y0, y0 - hi_y), 0) ** 2)
    far = (np.maximum(abs(lo_x - x0), abs(hi_x - x0)) ** 2
           + np.maximum(abs(lo_y - y0), abs(hi_y - y0)) ** 2)
    block = np.where(far <= r2, 1.0, 0.0)
    cut = np.nonzero((near < r2) & (far > r2))
    if len(cut[0]):
        n = int(min(MAX_SAMPLES, max(SAMPLES, math.ceil(SAMPLES * max(grid.dx, grid.dy)
                                                        / max(r, 1e-300)))))
        offsets = (np.arange(n) + 0.5) / n
        xs = (lo_x[cut[0], 0][:, None] + offsets * grid.dx)[:, :, None]
        ys = (lo_y[0, cut[1]][:, None] + offsets * grid.dy)[:, None, :]
        block[cut] = np.mean((xs - x0) ** 2 + (ys - y0) ** 2 <= r2, axis=(1, 2))
    fraction[i0:i1, j0:j1] = block
    return fraction


def _holding_cells(nodes, centre):
    """1 in each cell whose closed extent holds the centre (up to 2 a side per axis)."""
    masks = [(axis_nodes[:-1] <= c) & (c <= axis_nodes[1:]) for axis_nodes, c in
             zip(nodes, centre)]
    if len(masks) == 1:
        return masks[0].astype(float)
    return (masks[0][:, None] & masks[1][None, :]).astype(float)
