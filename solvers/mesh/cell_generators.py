"""Structured CellMeshes of rectangles and boxes, for the finite-volume solvers and their tests.

    quad_grid(nx, ny, x=(0, 1), y=(0, 1), cells="quad")        "quad" | "triangle" | "mixed"
    hex_grid(nx, ny, nz, x, y, z, cells="hexahedron")         "hexahedron" | "tetra" | "wedge"

"quad" and "hexahedron" grids number cell (i, j[, k]) (k ny + j) nx + i, x fastest: the
structured solvers' storage order. "triangle" cuts each square along its rising diagonal (cells
2 c and 2 c + 1 of square c); "mixed" has quadrilateral rows (even j) and rows of triangle pairs
(odd j), the quadrilaterals numbered first. "tetra" is generators.box (six tetrahedra about each
cube's main diagonal; its own node numbering); "wedge" cuts each cube into two prisms along
the vertical plane through its rising diagonal (cells 2 c and 2 c + 1 of cube c).

Boundaries x_lo, x_hi, y_lo, y_hi (z_lo, z_hi in 3D), each {facet type: facets} of the cells'
faces on that side. jitter > 0 moves every interior node by up to jitter times the spacing along
each axis (uniformly at random, seeded): non-uniform meshes for tests (0.3 keeps every cell
valid; at 0.4 some cells turn inside out).
"""

import numpy as np

from .cell_mesh import LOCAL_FACES, CellMesh
from .generators import _check_counts, box

JITTER_SEED = 0
GRID_2D = ("quad", "triangle", "mixed")
GRID_3D = ("hexahedron", "tetra", "wedge")
BOX_SIDES = {"left": "x_lo", "right": "x_hi", "front": "y_lo", "back": "y_hi",
             "bottom": "z_lo", "top": "z_hi"}
# Cells of a square / cube as corner offsets (x, y[, z]) from its lowest corner.
QUAD = ((0, 0), (1, 0), (1, 1), (0, 1))
TRIANGLES = (((0, 0), (1, 0), (1, 1)), ((0, 0), (1, 1), (0, 1)))
HEXAHEDRON = ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1),
              (0, 1, 1))
WEDGES = (((0, 0, 0), (1, 1, 0), (1, 0, 0), (0, 0, 1), (1, 1, 1), (1, 0, 1)),
          ((0, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 1), (0, 1, 1), (1, 1, 1)))


def _points(counts, extents):
    """Grid nodes, x fastest."""
    axes = [np.linspace(lo, hi, n + 1) for n, (lo, hi) in zip(counts, extents)]
    grids = np.meshgrid(*axes[::-1], indexing="ij")
    return np.stack([g.ravel() for g in grids[::-1]], axis=1)


def _cells(counts, shape, rows=None):
    """(boxes, vertices) node indices of the cell `shape` (corner offsets) in every box (x
    fastest), or in the boxes of the given rows along y only."""
    nodes = np.arange(np.prod([n + 1 for n in counts])).reshape([n + 1 for n in counts[::-1]])
    lowest = nodes[tuple(slice(n) for n in counts[::-1])]
    if rows is not None:
        lowest = lowest[rows]
    shifts = [nodes[offset[::-1]] for offset in shape]
    return lowest.reshape(-1, 1) + np.array(shifts)


def _interleave(blocks):
    """Cells of several shapes per box, box by box: (boxes, shapes, vertices) -> rows."""
    return np.stack(blocks, axis=1).reshape(-1, blocks[0].shape[1])


def _boundaries(points, blocks, extents):
    """{side: {facet type: facets}}: the cells' faces whose vertices all lie on the side's
    plane, oriented out of the cell."""
    dim = points.shape[1]
    out = {}
    for axis, name in enumerate("xyz"[:dim]):
        span = extents[axis][1] - extents[axis][0]
        for end, value in (("lo", extents[axis][0]), ("hi", extents[axis][1])):
            on_plane = np.abs(points[:, axis] - value) <= 1e-9 * abs(span)
            facets = {}
            for kind, cells in blocks.items():
                for face in LOCAL_FACES[kind]:
                    rows = cells[:, list(face)]
                    found = rows[on_plane[rows].all(axis=1)]
                    facet = "line" if len(face) == 2 else ("triangle" if len(face) == 3
                                                           else "quad")
                    if len(found):
                        facets[facet] = np.concatenate([facets.get(facet, found[:0]), found])
            out[f"{name}_{end}"] = facets
    return out


def _jittered(points, counts, extents, jitter):
    """points with the interior nodes moved by up to jitter times the spacing per axis."""
    if not 0 <= jitter < 0.5:
        raise ValueError(f"jitter must be in [0, 0.5), got {jitter}")
    if jitter == 0:
        return points
    spacing = np.array([(hi - lo) / n for n, (lo, hi) in zip(counts, extents)])
    lows, highs = np.array(extents).T
    slack = 1e-9 * np.abs(highs - lows)
    inside = np.all((points > lows + slack) & (points < highs - slack), axis=1)
    move = np.random.default_rng(JITTER_SEED).uniform(-1, 1, points.shape) * jitter * spacing
    return points + move * inside[:, None]


def _choose(cells, choices):
    if cells not in choices:
        raise ValueError(f"cells must be one of {', '.join(choices)}, got {cells!r}")


def quad_grid(nx, ny, x=(0.0, 1.0), y=(0.0, 1.0), cells="quad", jitter=0.0):
    """nx x ny squares on [x0, x1] x [y0, y1] as quadrilaterals, triangle pairs or both."""
    _check_counts((nx, ny))
    _choose(cells, GRID_2D)
    counts, extents = (nx, ny), (tuple(x), tuple(y))
    points = _points(counts, extents)
    if cells == "quad":
        blocks = {"quad": _cells(counts, QUAD)}
    elif cells == "triangle":
        blocks = {"triangle": _interleave([_cells(counts, t) for t in TRIANGLES])}
    else:
        quad_rows, pair_rows = slice(0, None, 2), slice(1, None, 2)
        blocks = {"quad": _cells(counts, QUAD, quad_rows),
                  "triangle": _interleave([_cells(counts, t, pair_rows) for t in TRIANGLES])}
        blocks = {kind: rows for kind, rows in blocks.items() if len(rows)}
    boundaries = _boundaries(points, blocks, extents)
    return CellMesh(_jittered(points, counts, extents, jitter), blocks, boundaries,
                    source=f"quad_grid({nx}x{ny}, {cells})")


def hex_grid(nx, ny, nz, x=(0.0, 1.0), y=(0.0, 1.0), z=(0.0, 1.0), cells="hexahedron",
             jitter=0.0):
    """nx x ny x nz cubes on a box as hexahedra, six tetrahedra or two wedges each."""
    _check_counts((nx, ny, nz))
    _choose(cells, GRID_3D)
    counts, extents = (nx, ny, nz), (tuple(x), tuple(y), tuple(z))
    if cells == "tetra":
        tets = box(nx, ny, nz, x, y, z)
        points, blocks = tets.points, {"tetra": tets.cells}
        boundaries = {BOX_SIDES[side]: {"triangle": facets}
                      for side, facets in tets.boundaries.items()}
    else:
        points = _points(counts, extents)
        blocks = ({"hexahedron": _cells(counts, HEXAHEDRON)} if cells == "hexahedron" else
                  {"wedge": _interleave([_cells(counts, w) for w in WEDGES])})
        boundaries = _boundaries(points, blocks, extents)
    return CellMesh(_jittered(points, counts, extents, jitter), blocks, boundaries,
                    source=f"hex_grid({nx}x{ny}x{nz}, {cells})")
