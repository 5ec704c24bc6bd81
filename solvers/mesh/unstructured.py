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

from .topology import all_facets, first_repeat

CELL_TYPES = {2: "triangle", 3: "tetra"}  # meshio's names, by spatial dimension
FACET_TYPES = {2: "line", 3: "triangle"}
DEGENERATE = 1e-12  # |signed measure| below this times h^dim (h: the cell's longest edge)
OVERLAP_SLACK = 1e-9  # relative rounding allowed when the cells' measures fill the box


class MeshError(ValueError):
    """A mesh that the finite-element solvers cannot use; the message is one line."""


def signed_measures(points, cells):
    """Signed area (triangles) or volume (tetrahedra) of each cell."""
    corners = points[cells]  # (m, d + 1, d)
    jacobians = corners[:, 1:] - corners[:, :1]  # rows: edge vectors from vertex 0
    d = points.shape[1]
    return np.linalg.det(jacobians) / factorial(d)


def longest_edges(points, cells):
    corners = points[cells]
    k = cells.shape[1]
    return np.max([np.linalg.norm(corners[:, a] - corners[:, b], axis=1)
                   for a in range(k) for b in range(a + 1, k)], axis=0)


def _name_list(names):
    return ", ".join(sorted(names)) if names else "none"


@dataclass
class Mesh:
    """A validated simplex mesh (see the module docstring). points (n, dim) float64, cells
    (m, dim + 1) int64; boundaries {name: facets (f, dim) int64}; materials {name: cell
    indices}. Cells in no material group belong to none (solvers give them a default)."""

    points: np.ndarray
    cells: np.ndarray
    boundaries: dict = field(default_factory=dict)
    materials: dict = field(default_factory=dict)
    source: str = "mesh"  # where the mesh came from, for error messages

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
        bad = (self.cells < 0) | (self.cells >= self.npoints)
        if bad.any():
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
        tiny = np.abs(measures) <= DEGENERATE * longest_edges(self.points, self.cells) ** self.dim
        if tiny.any():
            cell = int(np.argmax(tiny))
            raise MeshError(f"{where}: cell {cell} is degenerate (its {self.dim + 1} vertices "
                            f"{self.cells[cell].tolist()} have zero {self._measure_name()})")
        if (measures < 0).any():
            cell = int(np.argmax(measures < 0))
            raise MeshError(f"{where}: cell {cell} is inverted (negative "
                            f"{self._measure_name()} {measures[cell]:.3g}; vertices "
                            f"{self.cells[cell].tolist()})")
        self._check_overlaps(measures)
        for name, facets in self.boundaries.items():
            if facets.size and (facets.min() < 0 or facets.max() >= self.npoints):
                raise MeshError(f"{where}: boundary '{name}' refers to nodes outside 0.."
                                f"{self.npoints - 1}")
        for name, cells in self.materials.items():
            if cells.size and (cells.min() < 0 or cells.max() >= self.ncells):
                raise MeshError(f"{where}: material '{name}' refers to cells outside 0.."
                                f"{self.ncells - 1}")

    def _check_overlaps(self, measures):
        """Cells that cover the same space twice: two cells of one vertex set, a facet shared
        by more than two cells (a duplicated or overlapping cell next to the others), and cells
        whose total measure exceeds the bounding box's (overlaps sharing no facet)."""
        where, m = self.source, self.ncells
        twins = first_repeat(self.cells)
        if twins is not None:
            raise MeshError(f"{where}: cells {int(twins[0])} and {int(twins[1])} are duplicates "
                            f"(both have the vertices {sorted(self.cells[twins[0]].tolist())})")
        facets = all_facets(self.cells)
        shared = first_repeat(facets, 3)
        if shared is not None:
            cells = ", ".join(str(int(f) % m) for f in shared)
            raise MeshError(f"{where}: facet {sorted(facets[shared[0]].tolist())} is shared by "
                            f"cells {cells} (at most two cells meet at a facet): cells overlap")
        total = float(measures.sum())
        extent = float(np.prod(self.points.max(axis=0) - self.points.min(axis=0)))
        if total > extent * (1 + OVERLAP_SLACK):
            raise MeshError(f"{where}: the {m} cells' total {self._measure_name()} {total:.6g} "
                            f"exceeds the {extent:.6g} of their bounding box: cells overlap")

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
