"""Meshes of mixed cell types for the finite-volume solvers: triangles and quadrilaterals in
2D; tetrahedra, hexahedra, wedges (prisms) and pyramids in 3D, with named boundary facet
groups.

    mesh = CellMesh(points, {"triangle": tri, "quad": quads},
                    boundaries={"wall": {"line": segments}})

Vertex order within a cell is VTK's: a triangle or quadrilateral counter-clockwise; a
tetrahedron, hexahedron or pyramid with its first face (0, 1, 2[, 3]) turning positively about
the direction to the rest of the cell; but a wedge's (0, 1, 2) turning positively away from
(3, 4, 5) (vtkWedge). Gmsh numbers prisms the other way and meshio keeps each file's order:
meshio_cells.read_cell_mesh turns such wedges over. Cells are numbered block by block in the
order of `blocks`; cell fields are arrays of shape (ncells,) in that order. Unused nodes are
allowed (Gmsh files have them).

Validation (one-line MeshError naming the cell): known cell types for the dimension, vertex
counts, node indices in range, finite points, and every cell's measure positive: its signed
area or volume (by the divergence theorem over its faces, a quadrilateral face cut into four
triangles about its vertex mean) and, for a non-simplex cell, the simplex at every corner (so
a self-intersecting "bow-tie" or a non-convex quadrilateral is caught).
"""

from dataclasses import dataclass, field

import numpy as np

from .unstructured import DEGENERATE, MeshError, signed_measures

# Vertices of each cell type, and the spatial dimension it lives in.
CELL_VERTICES = {"triangle": 3, "quad": 4, "tetra": 4, "hexahedron": 8, "wedge": 6,
                 "pyramid": 5}
CELL_DIM = {"triangle": 2, "quad": 2, "tetra": 3, "hexahedron": 3, "wedge": 3, "pyramid": 3}
CELL_TYPES = {2: ("triangle", "quad"), 3: ("tetra", "hexahedron", "wedge", "pyramid")}
SIMPLICES = ("triangle", "tetra")
# Facet types of a boundary group, by the mesh's dimension.
FACET_VERTICES = {2: {"line": 2}, 3: {"triangle": 3, "quad": 4}}
# Each type's faces in local order, each turning positively about its outward normal (2D: the
# cell on the edge's left). A simplex's face k is the one without vertex k (topology's order).
LOCAL_FACES = {
    "triangle": ((1, 2), (2, 0), (0, 1)),
    "quad": ((0, 1), (1, 2), (2, 3), (3, 0)),
    "tetra": ((1, 2, 3), (0, 3, 2), (0, 1, 3), (0, 2, 1)),
    "hexahedron": ((0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6),
                   (3, 0, 4, 7)),
    "wedge": ((0, 1, 2), (3, 5, 4), (0, 3, 4, 1), (1, 4, 5, 2), (2, 5, 3, 0)),
    "pyramid": ((0, 3, 2, 1), (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)),
}
# The simplex at each corner of a non-simplex cell: the corner, then its neighbours in the
# order that makes the simplex positive in a valid cell (the Jacobian's sign at the corner).
CORNERS = {
    "quad": ((0, 1, 3), (1, 2, 0), (2, 3, 1), (3, 0, 2)),
    "hexahedron": ((0, 1, 3, 4), (1, 2, 0, 5), (2, 3, 1, 6), (3, 0, 2, 7), (4, 7, 5, 0),
                   (5, 4, 6, 1), (6, 5, 7, 2), (7, 6, 4, 3)),
    "wedge": ((0, 2, 1, 3), (1, 0, 2, 4), (2, 1, 0, 5), (3, 4, 5, 0), (4, 5, 3, 1),
              (5, 3, 4, 2)),
    "pyramid": ((0, 1, 3, 4), (1, 2, 0, 4), (2, 3, 1, 4), (3, 0, 2, 4)),
}
BLOCK = 2 ** 16  # cells per block of the geometry computations (small temporaries)

__all__ = ["CELL_DIM", "CELL_TYPES", "CELL_VERTICES", "FACET_VERTICES", "LOCAL_FACES",
           "CellMesh", "MeshError", "cell_geometry", "face_triangles"]


def face_triangles(vertices):
    """The triangles (a, b, c) of a face given as its vertex positions in order: the face
    itself if it has three, else the fan about the vertices' mean (the same from either side
    of a shared face, so neighbours agree on a non-planar face)."""
    if len(vertices) == 3:
        return [tuple(vertices)]
    middle = sum(vertices) / len(vertices)
    return [(middle, a, b) for a, b in zip(vertices, vertices[1:] + vertices[:1])]


def _polygon(vertices):
    """(area, centroid) of polygons counter-clockwise: vertices are (2, c) arrays."""
    origin = vertices[0]
    relative = [p - origin for p in vertices]
    twice_area, moment = 0.0, 0.0
    for a, b in zip(relative, relative[1:] + relative[:1]):
        cross = a[0] * b[1] - a[1] * b[0]
        twice_area = twice_area + cross
        moment = moment + (a + b) * cross
    return twice_area / 2, origin + moment / (3 * twice_area)


def _polyhedron(vertices, faces):
    """(volume, centroid) of polyhedra: vertices are (3, c) arrays, faces local vertex tuples
    turning positively outwards; tetrahedra from the vertices' mean to the faces' triangles."""
    origin = sum(vertices) / len(vertices)
    relative = [p - origin for p in vertices]
    six_volume, moment = 0.0, 0.0
    for face in faces:
        for a, b, c in face_triangles([relative[v] for v in face]):
            tet = np.sum(a * np.cross(b, c, axis=0), axis=0)
            six_volume = six_volume + tet
            moment = moment + tet * (a + b + c)
    return six_volume / 6, origin + moment / (4 * six_volume)


def _corner_measures(vertices, kind):
    """(ncorners, c) signed measures of the simplices at the corners (CORNERS)."""
    out = []
    for corner, *others in CORNERS[kind]:
        edges = [vertices[v] - vertices[corner] for v in others]
        if len(edges) == 2:
            out.append((edges[0][0] * edges[1][1] - edges[0][1] * edges[1][0]) / 2)
        else:
            out.append(np.sum(edges[0] * np.cross(edges[1], edges[2], axis=0), axis=0) / 6)
    return np.array(out)


def _blocks(points, cells, function, width):
    """function(vertex positions, each (d, c)) -> (width, c) over blocks of cells, as (width,
    m): the blocks' temporaries stay small however big the mesh."""
    coordinates = np.ascontiguousarray(points.T)
    out = np.empty((width, len(cells)))
    for start in range(0, len(cells), BLOCK):
        part = cells[start:start + BLOCK]
        out[:, start:start + BLOCK] = function([coordinates[:, part[:, v]]
                                                for v in range(part.shape[1])])
    return out


def cell_geometry(points, kind, cells):
    """(signed volumes (m,), centroids (m, d)) of cells of one type: areas in 2D; the true
    area / volume centroids (NaN for a cell of zero measure)."""
    d = points.shape[1]
    if kind in SIMPLICES:
        centroids = sum(points[cells[:, v]] for v in range(d + 1)) / (d + 1)
        return signed_measures(points, cells), centroids

    def measure(vertices):
        volume, centroid = (_polygon(vertices) if d == 2
                            else _polyhedron(vertices, LOCAL_FACES[kind]))
        return np.vstack([volume, centroid])

    with np.errstate(divide="ignore", invalid="ignore"):
        out = _blocks(points, cells, measure, d + 1)
    return out[0], out[1:].T.copy()


def _cell_sizes(points, cells):
    """The diagonal of each cell's bounding box (at least its longest edge)."""
    corners = points[cells]
    return np.linalg.norm(corners.max(axis=1) - corners.min(axis=1), axis=1)


def _too_small(points, cells, measures, bound):
    """Whether each measure is at most DEGENERATE * (its cell's size)^d (negative ones too);
    bound, at least every cell's size, clears most cells before their sizes are measured."""
    d = points.shape[1]
    small = measures <= DEGENERATE * bound ** d
    suspects = np.flatnonzero(small.any(axis=0) if measures.ndim == 2 else small)
    if suspects.size:
        sizes = _cell_sizes(points, cells[suspects]) ** d
        small[..., suspects] = measures[..., suspects] <= DEGENERATE * sizes
    return small


@dataclass
class CellMesh:
    """points (n, dim) float64; blocks {cell type: (m, k) int64 vertex indices}; boundaries
    {name: {facet type: (f, k) int64 vertex indices}}; source names the mesh in errors."""

    points: np.ndarray
    blocks: dict
    boundaries: dict = field(default_factory=dict)
    source: str = "mesh"

    def __post_init__(self):
        self.points = np.ascontiguousarray(self.points, dtype=np.float64)
        self.blocks = {kind: np.ascontiguousarray(cells, dtype=np.int64)
                       for kind, cells in self.blocks.items()}
        self.boundaries = {name: {kind: np.ascontiguousarray(f, dtype=np.int64)
                                  for kind, f in facets.items()}
                           for name, facets in self.boundaries.items()}
        self.validate()

    @property
    def dim(self):
        return self.points.shape[1]

    @property
    def npoints(self):
        return self.points.shape[0]

    @property
    def ncells(self):
        return sum(len(cells) for cells in self.blocks.values())

    @property
    def shape(self):
        """The shape of a scalar cell field (what output writers check against)."""
        return (self.ncells,)

    @property
    def cell_types(self):
        return tuple(self.blocks)

    def validate(self):
        """Raise a one-line MeshError for anything the finite-volume solvers cannot use."""
        where = self.source
        if self.points.ndim != 2 or self.dim not in CELL_TYPES:
            raise MeshError(f"{where}: points must be (n, 2) or (n, 3), got {self.points.shape}")
        if not np.all(np.isfinite(self.points)):
            raise MeshError(f"{where}: point {int(np.argmin(np.isfinite(self.points).all(1)))} "
                            "has non-finite coordinates")
        supported = ", ".join(CELL_TYPES[self.dim])
        for kind, cells in self.blocks.items():
            if kind not in CELL_TYPES[self.dim]:
                raise MeshError(f"{where}: cell type {kind} is not supported in {self.dim}D "
                                f"(supported: {supported})")
            if cells.ndim != 2 or cells.shape[1] != CELL_VERTICES[kind]:
                raise MeshError(f"{where}: {kind} cells need {CELL_VERTICES[kind]} vertices "
                                f"each, got an array of shape {cells.shape}")
        if self.ncells == 0:
            raise MeshError(f"{where}: no cells (a {self.dim}D mesh needs {supported} cells)")
        offset = 0
        for kind, cells in self.blocks.items():
            self._check_nodes(cells, f"cell {{}} ({kind})", offset)
            offset += len(cells)
        self._check_measures()
        self._check_boundaries()

    def _check_nodes(self, rows, what, offset=0):
        """Node indices of rows within the points; `what` names a row, {} for its index."""
        if rows.size and (rows.min() < 0 or rows.max() >= self.npoints):
            bad = (rows < 0) | (rows >= self.npoints)
            row = int(np.argmax(bad.any(axis=1)))
            raise MeshError(f"{self.source}: {what.format(offset + row)} refers to node "
                            f"{int(rows[row][bad[row]][0])}, but the mesh has nodes 0.."
                            f"{self.npoints - 1}")

    def _check_measures(self):
        """Every cell's measure, and each corner simplex of a non-simplex cell, positive."""
        where, d = self.source, self.dim
        name = "area" if d == 2 else "volume"
        # No cell is bigger than the bounding box's diagonal.
        coordinates = np.ascontiguousarray(self.points.T)
        bound = float(np.linalg.norm(coordinates.max(axis=1) - coordinates.min(axis=1)))
        offset = 0
        for kind, cells in self.blocks.items():
            volumes, _ = cell_geometry(self.points, kind, cells)
            bad = _too_small(self.points, cells, np.abs(volumes), bound)
            if bad.any():
                cell = int(np.argmax(bad))
                raise MeshError(f"{where}: cell {offset + cell} ({kind}) is degenerate (its "
                                f"vertices {cells[cell].tolist()} have zero {name})")
            if (volumes < 0).any():
                cell = int(np.argmax(volumes < 0))
                raise MeshError(f"{where}: cell {offset + cell} ({kind}) is inverted (negative "
                                f"{name} {volumes[cell]:.3g}; vertices {cells[cell].tolist()})")
            if kind not in SIMPLICES:
                corners = _blocks(self.points, cells, lambda v, k=kind: _corner_measures(v, k),
                                  len(CORNERS[kind]))
                bad = _too_small(self.points, cells, corners, bound)
                if bad.any():
                    cell = int(np.argmax(bad.any(axis=0)))
                    corner = int(np.argmax(bad[:, cell]))
                    raise MeshError(
                        f"{where}: cell {offset + cell} ({kind}) is inverted, self-intersecting "
                        f"or not convex at its vertex {corner} (corner {name} "
                        f"{corners[corner, cell]:.3g}; vertices {cells[cell].tolist()})")
            offset += len(cells)

    def _check_boundaries(self):
        """Facet types of the dimension, vertex counts, nodes in range."""
        where, types = self.source, FACET_VERTICES[self.dim]
        for name, facets in self.boundaries.items():
            for kind, rows in facets.items():
                if kind not in types:
                    raise MeshError(f"{where}: boundary '{name}' has {kind} facets; a "
                                    f"{self.dim}D mesh's boundary facets are "
                                    f"{', '.join(types)}")
                if rows.ndim != 2 or rows.shape[1] != types[kind]:
                    raise MeshError(f"{where}: boundary '{name}' {kind} facets need "
                                    f"{types[kind]} vertices each, got an array of shape "
                                    f"{rows.shape}")
                self._check_nodes(rows, f"boundary '{name}' {kind} facet {{}}")
