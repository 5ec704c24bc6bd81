"""Structured simplex meshes of rectangles and boxes, with named boundaries.

    rectangle(nx, ny, x=(0, 1), y=(0, 1))  nx x ny squares, each cut into two triangles
    unit_square(n)
    quadrilateral(nx, ny, corners)         rectangle(nx, ny) mapped bilinearly onto a convex
                                           quadrilateral (Cook's membrane)
    box(nx, ny, nz, x, y, z)               nx x ny x nz cubes, each cut into six tetrahedra
    unit_cube(n)

Boundaries: left / right (x min / max), bottom / top (y in 2D, z in 3D), front / back (y min /
max in 3D). The six tetrahedra of a cube (Kuhn's subdivision) share its main diagonal, so every
face of the cube is cut along the diagonal through its lowest and highest corner, the same way
from both sides: the mesh is conforming. Being so by construction (no duplicate cells, at most
two cells at a facet), it is built with Mesh(..., topology_checked=True), which skips the search
for shared vertex sets (sorting every facet) but runs every other check.
"""

from itertools import permutations

import numpy as np

from .topology import LOCAL_FACETS
from .unstructured import Mesh

SIDES_2D = {"left": (0, 0), "right": (0, 1), "bottom": (1, 0), "top": (1, 1)}
SIDES_3D = {"left": (0, 0), "right": (0, 1), "front": (1, 0), "back": (1, 1),
            "bottom": (2, 0), "top": (2, 1)}


def _grid_points(counts, extents):
    axes = [np.linspace(lo, hi, n + 1) for n, (lo, hi) in zip(counts, extents)]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


def _split_cells(counts, patterns):
    """Cells (pattern, box, vertex): cell p of a box has the corners patterns[p] (0/1 offsets
    along each axis from its lowest corner); boxes and nodes in C order."""
    nodes = np.arange(np.prod([n + 1 for n in counts])).reshape([n + 1 for n in counts])
    lowest = nodes[tuple(slice(n) for n in counts)].ravel()
    # A corner's node index is the lowest corner's plus that of the offset (from node 0).
    shifts = np.array([[nodes[offset] for offset in pattern] for pattern in patterns])
    return lowest[None, :, None] + shifts[:, None, :]


def _boxes_at(counts, axis, end):
    """Indices (ascending) of the boxes with a face on the min (end 0) or max (end 1) side of
    the axis."""
    boxes = np.arange(int(np.prod(counts))).reshape(counts)
    return np.take(boxes, 0 if end == 0 else counts[axis] - 1, axis=axis).ravel()


def _named_boundaries(points, cells, counts, sides, extents):
    """{side: facets}: the facets of cells (pattern, box, vertex) whose vertices all lie on the
    side's plane (in a box, exactly the boundary facets on it, each once), in cell order."""
    out = {}
    for name, (axis, end) in sides.items():
        span = extents[axis][1] - extents[axis][0]
        on_plane = np.abs(points[:, axis] - extents[axis][end]) <= 1e-9 * span
        # Only the cells of the boxes at the side touch its plane: search those.
        near = cells[:, _boxes_at(counts, axis, end)].reshape(-1, cells.shape[2])
        found = []
        for local in LOCAL_FACETS[near.shape[1]]:
            facets = near[:, list(local)]
            found.append(facets[on_plane[facets].all(axis=1)])
        out[name] = np.concatenate(found)
    return out


def _check_counts(counts):
    for n in counts:
        if int(n) != n or n < 1:
            raise ValueError(f"cell counts must be positive integers, got {counts}")


def rectangle(nx, ny, x=(0.0, 1.0), y=(0.0, 1.0)):
    """nx x ny squares on [x0, x1] x [y0, y1], each cut along its rising diagonal."""
    _check_counts((nx, ny))
    extents = (tuple(x), tuple(y))
    points = _grid_points((nx, ny), extents)
    cells = _split_cells((nx, ny), [((0, 0), (1, 0), (1, 1)), ((0, 0), (1, 1), (0, 1))])
    boundaries = _named_boundaries(points, cells, (nx, ny), SIDES_2D, extents)
    return Mesh(points, cells.reshape(-1, 3), boundaries, source=f"rectangle({nx}x{ny})",
                topology_checked=True)


def unit_square(n):
    return rectangle(n, n)


def quadrilateral(nx, ny, corners):
    """rectangle(nx, ny) on the unit square mapped bilinearly onto the convex quadrilateral
    with corners [(x, y)] counter-clockwise from the image of (0, 0): boundaries left, right,
    bottom, top are the images of the square's sides (corner 0-3, 1-2, 0-1, 3-2)."""
    corners = np.asarray(corners, np.float64)
    if corners.shape != (4, 2):
        raise ValueError(f"corners must be 4 points (x, y), got {corners.tolist()}")
    square = rectangle(nx, ny)
    s, t = square.points.T[:, :, None]
    points = ((1 - s) * (1 - t) * corners[0] + s * (1 - t) * corners[1] + s * t * corners[2]
              + (1 - s) * t * corners[3])
    return Mesh(points, square.cells, square.boundaries, source=f"quadrilateral({nx}x{ny})",
                topology_checked=True)


def box(nx, ny, nz, x=(0.0, 1.0), y=(0.0, 1.0), z=(0.0, 1.0)):
    """nx x ny x nz cubes, each cut into the six tetrahedra around its main diagonal."""
    _check_counts((nx, ny, nz))
    extents = (tuple(x), tuple(y), tuple(z))
    points = _grid_points((nx, ny, nz), extents)
    patterns = []
    # One tetrahedron per axis order: walk from corner (0,0,0) to (1,1,1) one axis at a time.
    # Its edges from the first vertex are e_p0, e_p0 + e_p1, e_p0 + e_p1 + e_p2 (times the
    # cell sizes), so its orientation is the sign of the permutation: odd ones swap the last
    # two vertices.
    for order in permutations(range(3)):
        corner = [0, 0, 0]
        path = [tuple(corner)]
        for axis in order:
            corner[axis] = 1
            path.append(tuple(corner))
        if np.linalg.det(np.eye(3)[list(order)]) < 0:
            path[2], path[3] = path[3], path[2]
        patterns.append(path)
    cells = _split_cells((nx, ny, nz), patterns)
    boundaries = _named_boundaries(points, cells, (nx, ny, nz), SIDES_3D, extents)
    return Mesh(points, cells.reshape(-1, 4), boundaries, source=f"box({nx}x{ny}x{nz})",
                topology_checked=True)


def unit_cube(n):
    return box(n, n, n)
