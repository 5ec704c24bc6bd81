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
from both sides: the mesh is conforming.
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


def _corner_ids(counts):
    """Node index of corner offset o (a 0/1 tuple) of every box, as {o: (boxes,) array}."""
    shape = tuple(n + 1 for n in counts)
    lower = np.meshgrid(*[np.arange(n) for n in counts], indexing="ij")
    lower = [a.ravel() for a in lower]
    corners = {}
    for offset in np.ndindex(*(2,) * len(counts)):
        corners[offset] = np.ravel_multi_index([a + o for a, o in zip(lower, offset)], shape)
    return corners


def _named_boundaries(points, cells, sides, extents):
    """{side: facets}: the cell facets whose vertices all lie on the side's plane (in a box,
    exactly the boundary facets on it, each once; no global facet sort, so big meshes are
    quick)."""
    out = {}
    for name, (axis, end) in sides.items():
        span = extents[axis][1] - extents[axis][0]
        on_plane = np.abs(points[:, axis] - extents[axis][end]) <= 1e-9 * span
        found = []
        for local in LOCAL_FACETS[cells.shape[1]]:
            facets = cells[:, list(local)]
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
    c = _corner_ids((nx, ny))
    cells = np.concatenate([np.stack([c[0, 0], c[1, 0], c[1, 1]], axis=1),
                            np.stack([c[0, 0], c[1, 1], c[0, 1]], axis=1)])
    boundaries = _named_boundaries(points, cells, SIDES_2D, extents)
    return Mesh(points, cells, boundaries, source=f"rectangle({nx}x{ny})")


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
    return Mesh(points, square.cells, square.boundaries,
                source=f"quadrilateral({nx}x{ny})")


def box(nx, ny, nz, x=(0.0, 1.0), y=(0.0, 1.0), z=(0.0, 1.0)):
    """nx x ny x nz cubes, each cut into the six tetrahedra around its main diagonal."""
    _check_counts((nx, ny, nz))
    extents = (tuple(x), tuple(y), tuple(z))
    points = _grid_points((nx, ny, nz), extents)
    c = _corner_ids((nx, ny, nz))
    tets = []
    # One tetrahedron per axis order: walk from corner (0,0,0) to (1,1,1) one axis at a time.
    # Its edges from the first vertex are e_p0, e_p0 + e_p1, e_p0 + e_p1 + e_p2 (times the
    # cell sizes), so its orientation is the sign of the permutation: odd ones swap the last
    # two vertices.
    for order in permutations(range(3)):
        corner = [0, 0, 0]
        path = [c[tuple(corner)]]
        for axis in order:
            corner[axis] = 1
            path.append(c[tuple(corner)])
        if np.linalg.det(np.eye(3)[list(order)]) < 0:
            path[2], path[3] = path[3], path[2]
        tets.append(np.stack(path, axis=1))
    cells = np.concatenate(tets)
    boundaries = _named_boundaries(points, cells, SIDES_3D, extents)
    return Mesh(points, cells, boundaries, source=f"box({nx}x{ny}x{nz})")


def unit_cube(n):
    return box(n, n, n)
