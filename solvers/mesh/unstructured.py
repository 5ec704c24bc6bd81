"""Unstructured simplex meshes for the finite-element solvers: points, cells (triangles in 2D,
tetrahedra in 3D), named boundary facet groups and named material (cell) groups.

    mesh = Mesh(points, cells, boundaries={"left": facets}, materials={"steel": cell_ids})
    mesh.require_boundaries(["left"])    # MeshError listing the names the mesh has

Cells are vertex indices of positive orientation (positive signed area / volume); a facet is
the vertex indices of a cell's edge (2D) or face (3D). Every check raises a MeshError whose
message is one line that names the offending cell, node or name.
"""

from dataclasses import dataclass, field
from math import factorial

import numpy as np

from .topology import facets_at, first_repeat, first_shared_facet

CELL_TYPES = {2: "triangle", 3: "tetra"}  # meshio's names, by spatial dimension
FACET_TYPES = {2: "line", 3: "triangle"}
DEGENERATE = 1e-12  # |signed measure| below this times h^dim (h: the cell's longest edge)
OVERLAP_SLACK = 1e-9  # relative rounding allowed when the cells' measures fill the box
BLOCK = 2 ** 16  # cells per block in the geometry checks


class MeshError(ValueError):
    """A mesh that the finite-element solvers cannot use; the message is one line."""


def _edge_vectors(coordinates, cells):
    """Per cell, the vectors from vertex 0 to vertices 1..d, each as d coordinate arrays
    (coordinates: the points' transpose, (d, n))."""
    first = [x[cells[:, 0]] for x in coordinates]
    edges = []
    for j in range(1, cells.shape[1]):
        edge = [x[cells[:, j]] for x in coordinates]
        for component, start in zip(edge, first):
            component -= start
        edges.append(edge)
    return edges


def _per_cell(function, points, cells):
    """function(edge vectors) of every cell, a block of cells at a time: the blocks' temporaries
    stay small (quick to allocate, in cache) however big the mesh."""
    coordinates = np.ascontiguousarray(points.T)
    out = np.empty(len(cells))
    for start in range(0, len(cells), BLOCK):
        out[start:start + BLOCK] = function(_edge_vectors(coordinates,
                                                          cells[start:start + BLOCK]))
    return out


def _determinants(edges):
    """det of the edge vectors, by the cofactor formula on whole coordinate arrays."""
    if len(edges) == 2:
        (ax, ay), (bx, by) = edges
        return ax * by - ay * bx
    a, b, c = edges
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) + a[1] * (b[2] * c[0] - b[0] * c[2])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


def _longest_squared(edges):
    """Each cell's squared longest edge: the edges from vertex 0 and those between the others."""
    between = [[q - p for p, q in zip(a, b)] for i, a in enumerate(edges) for b in edges[i + 1:]]
    longest = np.zeros(len(edges[0][0]))
    for vector in edges + between:
        np.maximum(longest, sum(x * x for x in vector), out=longest)
    return longest


def signed_measures(points, cells):
    """Signed area (triangles) or volume (tetrahedra) of each cell."""
    return _per_cell(_determinants, points, cells) / factorial(points.shape[1])


def _degenerate(points, cells, measures, bound):
    """Whether each cell's |measure| is at most DEGENERATE * (its longest edge)^d. bound, at least
    every edge's length, clears most cells before their edges are measured."""
    d = points.shape[1]
    tiny = np.abs(measures) <= DEGENERATE * bound ** d
    suspects = np.flatnonzero(tiny)
    if suspects.size:
        longest = np.sqrt(_per_cell(_longest_squared, points, cells[suspects]))
        tiny[suspects] = np.abs(measures[suspects]) <= DEGENERATE * longest ** d
    return tiny


def _box_sides(points):
    """The side lengths of the points' bounding box (reduced along contiguous rows: fast)."""
    coordinates = np.ascontiguousarray(points.T)
    return coordinates.max(axis=1) - coordinates.min(axis=1)


def _name_list(names):
    return ", ".join(sorted(names)) if names else "none"


@dataclass
class Mesh:
    """A validated simplex mesh (see the module docstring). points (n, dim) float64, cells
    (m, dim + 1) int64; boundaries {name: facets (f, dim) int64}; materials {name: cell
    indices}. Cells in no material group belong to none (solvers give them a default).
    topology_checked=True is for cells known to have no duplicates and no facet of three cells
    (the generators build them so): validation skips that search, the one check that sorts
    every facet, and runs every other."""

    points: np.ndarray
    cells: np.ndarray
    boundaries: dict = field(default_factory=dict)
    materials: dict = field(default_factory=dict)
    source: str = "mesh"  # where the mesh came from, for error messages
    topology_checked: bool = field(default=False, repr=False)

    def __post_init__(self):
        self.points = np.ascontiguousarray(self.points, dtype=np.float64)
        self.cells = np.ascontiguousarray(self.cells, dtype=np.int64)
        self.boundaries = {name: np.ascontiguousarray(f, dtype=np.int64).reshape(-1, self.dim)
                           for name, f in self.boundaries.items()}
        self.materials = {name: np.ascontiguousarray(c, dtype=np.int64)
                          for name, c in self.materials.items()}
        self.validate()

    @property
    def dim(self):
        return self.points.shape[1]

    @property
    def cell_type(self):
        return CELL_TYPES[self.dim]

    @property
    def npoints(self):
        return self.points.shape[0]

    @property
    def ncells(self):
        return self.cells.shape[0]

    @property
    def shape(self):
        """The shape of a scalar nodal field (what output writers check against)."""
        return (self.npoints,)

    def validate(self):
        """Raise a one-line MeshError for anything the solvers cannot use."""
        where = self.source
        if self.points.ndim != 2 or self.dim not in CELL_TYPES:
            raise MeshError(f"{where}: points must be (n, 2) or (n, 3), got {self.points.shape}")
        if self.cells.ndim != 2 or self.cells.shape[1] != self.dim + 1 or self.ncells == 0:
            raise MeshError(f"{where}: a {self.dim}D mesh needs at least one {self.cell_type} "
                            f"cell of {self.dim + 1} vertices, got cells {self.cells.shape}")
        if not np.all(np.isfinite(self.points)):
            raise MeshError(f"{where}: point {int(np.argmin(np.isfinite(self.points).all(1)))} "
                            "has non-finite coordinates")
        if self.cells.min() < 0 or self.cells.max() >= self.npoints:
            bad = (self.cells < 0) | (self.cells >= self.npoints)
            cell = int(np.argmax(bad.any(axis=1)))
            raise MeshError(f"{where}: cell {cell} refers to node {int(self.cells[bad][0])}, but "
                            f"the mesh has nodes 0..{self.npoints - 1}")
        used = np.zeros(self.npoints, bool)
        used[self.cells.ravel()] = True
        if not used.all():
            unused = np.flatnonzero(~used)
            raise MeshError(f"{where}: {unused.size} nodes belong to no cell, the first node "
                            f"{int(unused[0])}; remove unused nodes")
        measures = signed_measures(self.points, self.cells)
        # No edge is longer than twice the bounding box's diagonal.
        box = _box_sides(self.points)
        tiny = _degenerate(self.points, self.cells, measures,
                           2 * float(np.sqrt(np.sum(box ** 2))))
        if tiny.any():
            cell = int(np.argmax(tiny))
            raise MeshError(f"{where}: cell {cell} is degenerate (its {self.dim + 1} vertices "
                            f"{self.cells[cell].tolist()} have zero {self._measure_name()})")
        if (measures < 0).any():
            cell = int(np.argmax(measures < 0))
            raise MeshError(f"{where}: cell {cell} is inverted (negative "
                            f"{self._measure_name()} {measures[cell]:.3g}; vertices "
                            f"{self.cells[cell].tolist()})")
        self._check_overlaps(measures, box)
        for name, facets in self.boundaries.items():
            if facets.size and (facets.min() < 0 or facets.max() >= self.npoints):
                raise MeshError(f"{where}: boundary '{name}' refers to nodes outside 0.."
                                f"{self.npoints - 1}")
        for name, cells in self.materials.items():
            if cells.size and (cells.min() < 0 or cells.max() >= self.ncells):
                raise MeshError(f"{where}: material '{name}' refers to cells outside 0.."
                                f"{self.ncells - 1}")

    def _check_overlaps(self, measures, box):
        """Cells that cover the same space twice: two cells of one vertex set, a facet shared
        by more than two cells (a duplicated or overlapping cell next to the others), and cells
        whose total measure exceeds the bounding box's (sides `box`; overlaps sharing no
        facet)."""
        where, m = self.source, self.ncells
        if not self.topology_checked:
            self._check_shared_vertex_sets()
        total = float(measures.sum())
        extent = float(np.prod(box))
        if total > extent * (1 + OVERLAP_SLACK):
            raise MeshError(f"{where}: the {m} cells' total {self._measure_name()} {total:.6g} "
                            f"exceeds the {extent:.6g} of their bounding box: cells overlap")

    def _check_shared_vertex_sets(self):
        """Two cells of one vertex set, or a facet of more than two cells."""
        where, m = self.source, self.ncells
        twins = first_repeat(self.cells)
        if twins is not None:
            raise MeshError(f"{where}: cells {int(twins[0])} and {int(twins[1])} are duplicates "
                            f"(both have the vertices {sorted(self.cells[twins[0]].tolist())})")
        shared = first_shared_facet(self.cells, 3)
        if shared is not None:
            cells = ", ".join(str(int(f) % m) for f in shared)
            facet = facets_at(self.cells, shared[:1])[0]
            raise MeshError(f"{where}: facet {sorted(facet.tolist())} is shared by "
                            f"cells {cells} (at most two cells meet at a facet): cells overlap")

    def _measure_name(self):
        return "area" if self.dim == 2 else "volume"

    def require_boundaries(self, names, who="case"):
        """A MeshError if any name is not a boundary group of this mesh."""
        missing = [name for name in names if name not in self.boundaries]
        if missing:
            raise MeshError(f"{who}: boundary '{missing[0]}' is not in {self.source} (its "
                            f"boundaries: {_name_list(self.boundaries)})")

    def require_materials(self, names, who="case"):
        missing = [name for name in names if name not in self.materials]
        if missing:
            raise MeshError(f"{who}: material '{missing[0]}' is not in {self.source} (its "
                            f"materials: {_name_list(self.materials)})")

    def cell_material_values(self, values, default):
        """A per-cell array: values[name] on the cells of material `name`, `default` on the
        rest (later names win where groups overlap)."""
        self.require_materials(values)
        out = np.full(self.ncells, float(default))
        for name, value in values.items():
            out[self.materials[name]] = float(value)
        return out

    def facet_points(self, names):
        """The distinct node indices of the facets of the named boundaries."""
        self.require_boundaries(names)
        if not names:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate([self.boundaries[n].ravel() for n in names]))

    def __repr__(self):
        return (f"Mesh({self.npoints} points, {self.ncells} {self.cell_type} cells, "
                f"boundaries {_name_list(self.boundaries)}, "
                f"materials {_name_list(self.materials)})")
