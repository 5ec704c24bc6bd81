"""Lagrange finite-element spaces P1 and P2 on a simplex mesh, scalar or vector valued.

    space = FunctionSpace(mesh, degree=2, components=1)
    space.n              number of degrees of freedom (dofs)
    space.cell_dofs      (cells, nloc * components) int64: the dofs of each cell, local order
                         node-major (local dof = local node * components + component)
    space.node_points    (nodes, dim) coordinates of the nodes (vertices, then edge midpoints)

Nodes: every mesh vertex, and for P2 every edge midpoint (straight edges). A node's local
order on a cell is reference.py's (vertices, then topology.LOCAL_EDGES).

Numbering: nodes are renumbered by reverse Cuthill-McKee on the node graph (two nodes are
neighbours when they share a cell), so that the rows of the matrix couple nearby rows and an
SpMV reads x from a narrow, cache-friendly window. Vector spaces interleave components: dof =
node * components + component. Interleaving keeps a node's components in one cache line and
the matrix's small dense blocks together (what elasticity's SpMV and AMG want); a component's
values are u[c::components].
"""

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..mesh.topology import cell_edges
from .reference import EDGES, nodes_per_cell


class FunctionSpace:
    """P1 or P2 Lagrange, `components` values per node (1 scalar, mesh.dim for vectors)."""

    def __init__(self, mesh, degree=1, components=1, renumber=True):
        if degree not in (1, 2):
            raise ValueError(f"degree must be 1 or 2, got {degree!r}")
        if components not in (1, mesh.dim):
            raise ValueError(f"components must be 1 (scalar) or the mesh dimension "
                             f"{mesh.dim} (vector), got {components!r}")
        self.mesh = mesh
        self.degree = int(degree)
        self.components = int(components)
        self.nvertices = mesh.dim + 1
        self.nodes_per_cell = nodes_per_cell(self.nvertices, degree)

        # Nodes before renumbering: vertices 0..npoints-1, then edges.
        cell_nodes = mesh.cells
        points = mesh.points
        self._edge_keys = None
        if degree == 2:
            edges, cell_edge = cell_edges(mesh.cells)
            cell_nodes = np.concatenate([mesh.cells, mesh.npoints + cell_edge], axis=1)
            points = np.concatenate([points, points[edges].mean(axis=1)])
            self._edge_keys = edges[:, 0] * mesh.npoints + edges[:, 1]  # sorted (np.unique)
        self.nnodes = points.shape[0]

        order = _rcm(cell_nodes, self.nnodes) if renumber else np.arange(self.nnodes)
        self.new_index = np.empty(self.nnodes, np.int64)  # old node -> new node
        self.new_index[order] = np.arange(self.nnodes)
        self.node_points = points[order]
        self.cell_nodes = self.new_index[cell_nodes]
        self.cell_dofs = self.node_dofs(self.cell_nodes)
        self.n = self.nnodes * self.components

    @property
    def vertex_nodes(self):
        """The node of each mesh vertex: nodal values at mesh.points are u[vertex_nodes]."""
        return self.new_index[: self.mesh.npoints]

    def node_dofs(self, nodes):
        """Dofs of (..., k) nodes as (..., k * components), node-major."""
        c = self.components
        return (nodes[..., :, None] * c + np.arange(c)).reshape(*nodes.shape[:-1], -1)

    def facet_nodes(self, facets):
        """The nodes of (f, dim) facets in reference order (vertices, then P2 edges)."""
        facets = np.asarray(facets, np.int64)
        nodes = [facets]
        if self.degree == 2:
            npts = self.mesh.npoints
            for a, b in EDGES[facets.shape[1]]:
                lo, hi = np.minimum(facets[:, a], facets[:, b]), np.maximum(facets[:, a],
                                                                             facets[:, b])
                edge = np.searchsorted(self._edge_keys, lo * npts + hi)
                nodes.append(npts + edge[:, None])
        return self.new_index[np.concatenate(nodes, axis=1)]

    def boundary_nodes(self, names):
        """The distinct nodes on the facets of the named boundaries (vertices and edges)."""
        self.mesh.require_boundaries(names)
        if not names:
            return np.zeros(0, np.int64)
        facets = np.concatenate([self.mesh.boundaries[name] for name in names])
        return np.unique(self.facet_nodes(facets))

    def vertex_values(self, u):
        """Nodal values at the mesh vertices: (npoints,) scalar, (npoints, components) vector."""
        u = np.asarray(u).reshape(self.nnodes, self.components)[self.vertex_nodes]
        return u[:, 0] if self.components == 1 else u

    def interpolate(self, function):
        """Nodal values (n,) of function(x, y[, z]) -> scalar or list of components."""
        values = function(*self.node_points.T)
        values = np.broadcast_to(np.asarray(values, np.float64).T if self.components > 1
                                 else np.asarray(values, np.float64),
                                 (self.nnodes, self.components) if self.components > 1
                                 else (self.nnodes,))
        return np.ascontiguousarray(values).ravel()

    def __repr__(self):
        kind = "scalar" if self.components == 1 else f"vector({self.components})"
        return (f"FunctionSpace(P{self.degree} {kind} on {self.mesh.cell_type}, "
                f"{self.n} dofs)")


def _rcm(cell_nodes, nnodes):
    """Reverse Cuthill-McKee order of the node graph (nodes sharing a cell are neighbours).
    The graph is C^T C of the cell-node incidence C: a sparse product, with no sort of the
    (cells x nodes per cell^2) pairs (ten times faster than building it from those pairs)."""
    cells, k = cell_nodes.shape
    incidence = sp.csr_matrix((np.ones(cells * k, np.int32), cell_nodes.ravel(),
                               np.arange(0, cells * k + 1, k)), shape=(cells, nnodes))
    graph = incidence.T.tocsr() @ incidence
    graph.sort_indices()  # RCM breaks ties in index order
    return np.asarray(reverse_cuthill_mckee(graph, symmetric_mode=True), np.int64)
