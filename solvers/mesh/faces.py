"""The faces of a CellMesh and the finite-volume geometry on them: cell volumes and centroids;
per face its owner and neighbour cell, unit normal, area, centroid and boundary group; per cell
its faces in its type's local order (cell_mesh.LOCAL_FACES).

    geometry = face_geometry(mesh)
    geometry.owner[f], geometry.neighbour[f]     # -1: f is a boundary face
    geometry.normals[f] * geometry.areas[f]      # the area vector, out of the owner

Faces are matched by their vertex sets (edges in 2D; triangles and quadrilaterals in 3D, a
hexahedron's quadrilateral matching a wedge's or a pyramid's). A face's owner is the lower
numbered of its cells; its geometry comes from the owner's vertex order. A quadrilateral face
is the fan of four triangles about its vertices' mean, as in the cells' volumes, so a
non-planar face is one surface seen from both sides: every cell's area vectors close
(sum of A n = 0) and the volumes fill the domain. Faces are numbered by size (edges; or
triangles, then quadrilaterals) and, within a size, by their vertex sets.

Errors (one line, naming mesh.source): a face of more than two cells; a boundary group's facet
that is not a boundary face; a facet in two groups; boundary faces in no group.
"""

from dataclasses import dataclass

import numpy as np

from .cell_mesh import FACET_VERTICES, LOCAL_FACES, cell_geometry, face_triangles
from .topology import vertex_set_keys
from .unstructured import MeshError

PACKED = 2 ** 63  # vertex_set_keys packs the indices exactly below this, else hashes them


@dataclass
class FaceGeometry:
    """Cell and face geometry of a mesh (see the module docstring); dim-vectors are the last
    axis. boundary[f] indexes boundary_names (-1: interior face); cell_faces is -1 padded."""

    volumes: np.ndarray
    centroids: np.ndarray
    owner: np.ndarray
    neighbour: np.ndarray
    normals: np.ndarray
    areas: np.ndarray
    face_centroids: np.ndarray
    boundary: np.ndarray
    boundary_names: tuple
    cell_faces: np.ndarray

    @property
    def nfaces(self):
        return len(self.owner)

    @property
    def ncells(self):
        return len(self.volumes)

    @property
    def dim(self):
        return self.centroids.shape[1]


class _Entries:
    """Every cell's local faces of one size, cell by cell in mesh order (an entry per cell and
    face), and their vertex-set keys."""

    def __init__(self, mesh, size):
        self.size, self.npoints = size, mesh.npoints
        # Per block: (first entry, first cell, local slots, the block, the slots' vertices).
        self.layout, keys, entry, offset = [], [], 0, 0
        for kind, block in mesh.blocks.items():
            local = [j for j, face in enumerate(LOCAL_FACES[kind]) if len(face) == size]
            if local:
                vertices = np.array([LOCAL_FACES[kind][j] for j in local])
                part = np.empty((len(block), len(local)), np.int64)
                for k, face in enumerate(vertices):
                    part[:, k] = vertex_set_keys([block[:, v] for v in face], mesh.npoints)
                keys.append(part.ravel())
                self.layout.append((entry, offset, np.array(local), block, vertices))
                entry += part.size
            offset += len(block)
        self.keys = np.concatenate(keys) if keys else np.zeros(0, np.int64)

    def _parts(self, entries):
        """Per block: (the selection of entries in it, their rows in the block, their slot
        positions, then the layout's first cell, local slots, block and slot vertices)."""
        starts = [start for start, *_ in self.layout]
        block = np.searchsorted(starts, entries, side="right") - 1
        for b, (start, _, local, _, _) in enumerate(self.layout):
            mine = block == b if len(self.layout) > 1 else slice(None)
            yield (mine, *np.divmod(entries[mine] - start, len(local)), *self.layout[b][1:])

    def cells(self, entries):
        """(cells, local slots) of entries."""
        cells, slots = np.empty_like(entries), np.empty_like(entries)
        for mine, row, k, offset, local, _, _ in self._parts(entries):
            cells[mine], slots[mine] = offset + row, local[k]
        return cells, slots

    def rows(self, entries):
        """(e, size) vertex indices of entries, in their cell's order."""
        rows = np.empty((len(entries), self.size), np.int64)
        for mine, row, k, _, _, block, vertices in self._parts(entries):
            rows[mine] = block[row[:, None], vertices[k]]
        return rows


def _groups(keys):
    """(order, starts, counts): keys[order] sorted, its runs of equal keys."""
    order = np.argsort(keys)
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return order, starts, np.diff(np.r_[starts, len(keys)])


def _pairs(order, starts, counts):
    """Per group, its lower and higher entry (-1 for a group of one)."""
    a = order[starts]
    b = np.where(counts >= 2, order[np.minimum(starts + 1, len(order) - 1)], -1)
    return np.where(b >= 0, np.minimum(a, b), a), np.where(b >= 0, np.maximum(a, b), -1)


def _match(entries):
    """(order, starts, counts, first, second): the entries grouped by vertex set, keys[order]
    sorted with runs of equal vertex sets at starts; each face's first and second entry
    (-1: one cell). Hashed keys (many nodes) are checked and, on a collision, replaced by
    exact ones."""
    order, starts, counts = _groups(entries.keys)
    first, second = _pairs(order, starts, counts)
    if entries.npoints ** entries.size >= PACKED:
        pair = second >= 0
        same = np.sort(entries.rows(first[pair]), 1) == np.sort(entries.rows(second[pair]), 1)
        if (counts > 2).any() or not same.all():
            rows = np.sort(entries.rows(np.arange(len(entries.keys))), 1)
            order, starts, counts = _groups(np.unique(rows, axis=0, return_inverse=True)[1]
                                            .ravel())
            first, second = _pairs(order, starts, counts)
    return order, starts, counts, first, second


def _face_vectors(points, rows):
    """(area vectors, centroids) of faces given by vertex rows turning about their normal."""
    coordinates = np.ascontiguousarray(points.T)
    if rows.shape[1] == 2:
        (ax, ay), (bx, by) = coordinates[:, rows[:, 0]], coordinates[:, rows[:, 1]]
        return (np.stack([by - ay, ax - bx], axis=1),
                np.stack([(ax + bx) / 2, (ay + by) / 2], axis=1))
    # Triangles' area vectors; the centroid weights each by its area along the face normal
    # (exact area centroid of a planar face).
    triangles = face_triangles([coordinates[:, rows[:, v]] for v in range(rows.shape[1])])
    vectors = [np.cross(b - a, c - a, axis=0) / 2 for a, b, c in triangles]
    total = sum(vectors)
    unit = total / np.linalg.norm(total, axis=0)
    weights = [np.sum(v * unit, axis=0) for v in vectors]
    moment = sum(w * (a + b + c) / 3 for w, (a, b, c) in zip(weights, triangles))
    return total.T.copy(), (moment / sum(weights)).T.copy()


def _facet_faces(rows, faces, facets):
    """For each facet row, the index among `rows` (faces' vertex rows) of its vertex set,
    -1 for none: by sorting the few boundary rows with the facets."""
    both = np.sort(np.concatenate([rows, facets]), axis=1)
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    found = np.full(len(both), -1)
    found[inverse[:len(rows)]] = faces
    return found[inverse[len(rows):]]


def _boundary_groups(mesh, face_rows, neighbour, face_centroids):
    """(boundary (nfaces,): each boundary face's group index, names); face_rows {face size:
    (the faces' vertex rows, the first one's face id)}."""
    where = mesh.source
    names = tuple(mesh.boundaries)
    boundary = np.full(len(neighbour), -1)
    assigned, groups = [], []
    for g, name in enumerate(names):
        for kind, facets in mesh.boundaries[name].items():
            size = FACET_VERTICES[mesh.dim][kind]
            rows, start = face_rows.get(size, (np.zeros((0, size), np.int64), 0))
            outer = np.flatnonzero(neighbour[start:start + len(rows)] < 0)
            found = _facet_faces(rows[outer], start + outer, facets)
            if (found < 0).any():
                facet = facets[int(np.argmax(found < 0))].tolist()
                raise MeshError(f"{where}: boundary '{name}' {kind} {facet} is not a boundary "
                                "face of the mesh")
            assigned.append(found)
            groups.append(np.full(len(found), g))
    if assigned:
        faces, groups = np.concatenate(assigned), np.concatenate(groups)
        order = np.lexsort((groups, faces))
        faces, groups = faces[order], groups[order]
        twice = (faces[1:] == faces[:-1]) & (groups[1:] != groups[:-1])
        if twice.any():
            k = int(np.argmax(twice))
            rows, start = next((rows, start) for rows, start in face_rows.values()
                               if start <= faces[k] < start + len(rows))
            raise MeshError(f"{where}: facet {sorted(rows[faces[k] - start].tolist())} is in "
                            f"boundary groups '{names[groups[k]]}' and '{names[groups[k + 1]]}'"
                            " (a face belongs to one group)")
        boundary[faces] = groups
    missing = np.flatnonzero((neighbour < 0) & (boundary < 0))
    if missing.size:
        at = ", ".join(f"{x:.6g}" for x in face_centroids[missing[0]])
        raise MeshError(f"{where}: {missing.size} boundary faces are in no boundary group, the "
                        f"first at ({at}); every boundary face needs a physical group")
    return boundary, names


def face_geometry(mesh):
    """The FaceGeometry of a CellMesh (see the module docstring)."""
    volumes, centroids = zip(*(cell_geometry(mesh.points, kind, cells)
                               for kind, cells in mesh.blocks.items()))
    width = max(len(LOCAL_FACES[kind]) for kind in mesh.blocks)
    cell_faces = np.full((mesh.ncells, width), -1, np.int64)
    parts, face_rows, start = [], {}, 0
    for size in (2,) if mesh.dim == 2 else (3, 4):
        entries = _Entries(mesh, size)
        if not len(entries.keys):
            continue
        order, starts, counts, first, second = _match(entries)
        if (counts > 2).any():
            g = int(np.argmax(counts > 2))
            shared = np.sort(order[starts[g]:starts[g] + counts[g]])
            cells = entries.cells(shared)[0]
            face = sorted(entries.rows(shared[:1])[0].tolist())
            raise MeshError(f"{mesh.source}: face {face} is shared "
                            f"by cells {', '.join(str(int(c)) for c in cells)} (at most"
                            " two cells meet at a face)")
        # Face ids; each entry's face in its cell's slot.
        ids = start + np.arange(len(first))
        pair = second >= 0
        owner, owner_slots = entries.cells(first)
        neighbour, neighbour_slots = entries.cells(second[pair])
        slots_of_cells = cell_faces.reshape(-1)  # flat (cell, slot) indices: a fast scatter
        slots_of_cells[owner * width + owner_slots] = ids
        slots_of_cells[neighbour * width + neighbour_slots] = ids[pair]
        neighbours = np.full(len(first), -1)
        neighbours[pair] = neighbour
        face_rows[size] = (entries.rows(first), start)
        parts.append((owner, neighbours, *_face_vectors(mesh.points, face_rows[size][0])))
        start += len(first)
    owner, neighbour, vectors, face_centroids = (np.concatenate(p) for p in zip(*parts))
    areas = np.sqrt(np.einsum("fi,fi->f", vectors, vectors))
    boundary, names = _boundary_groups(mesh, face_rows, neighbour, face_centroids)
    return FaceGeometry(np.concatenate(volumes), np.concatenate(centroids), owner, neighbour,
                        vectors / areas[:, None], areas, face_centroids, boundary, names,
                        cell_faces)
