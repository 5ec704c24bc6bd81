"""The CSR pattern of a finite-element matrix and the gather maps the assembly kernels read.

Built once per space on the host (NumPy) or, for large meshes on the cuda backend, on the
device (CuPy), with the same code: `xp` is numpy or cupy.

    pattern = SparsityPattern(space.cell_dofs, space.n, xp)   # row_ptr, columns, nnz
    ptr, entries = pattern.matrix_map(element_dofs)          # per nonzero, its contributions
    ptr, entries = vector_map(element_dofs, n, xp)           # per dof, its contributions

A map lists for each nonzero (or dof) t the contributions entries[ptr[t]:ptr[t+1]], each an
element-local position encoded as e * L * L + I * L + J (e * L + I for vectors; L local dofs),
sorted ascending: the kernels add them in that order, so the sums are the same every run.
"""

import numpy as np

from ..mesh.topology import unique_keys

INT32_MAX = np.iinfo(np.int32).max


def _local_pairs(element_dofs, xp):
    """Rows and columns (int64) of every (e, I, J), in entry order e * L * L + I * L + J."""
    L = element_dofs.shape[1]
    dofs = element_dofs.astype(xp.int64)
    rows = xp.repeat(dofs, L, axis=1).ravel()
    cols = xp.tile(dofs, (1, L)).ravel()
    return rows, cols


def _check_int32(count, what):
    if count > INT32_MAX:
        raise ValueError(f"{count} {what} do not fit the int32 indices of the assembly maps; "
                         "split the mesh or use a coarser one")


def _sorted_map(targets, ntargets, xp):
    """(ptr, entries) listing, for each target, the positions k with targets[k] == target in
    ascending order (one sort of unique int64 keys target << 32 | k)."""
    _check_int32(targets.size, "element entries")
    keys = (targets.astype(xp.int64) << 32) | xp.arange(targets.size, dtype=xp.int64)
    keys.sort()
    entries = (keys & 0xFFFFFFFF).astype(xp.int32)
    counts = xp.bincount((keys >> 32).astype(xp.int64), minlength=ntargets)
    ptr = xp.zeros(ntargets + 1, xp.int64)
    ptr[1:] = xp.cumsum(counts)
    return ptr.astype(xp.int32), entries


class SparsityPattern:
    """Rows couple the dofs that share an element (every pair of a cell's dofs)."""

    def __init__(self, cell_dofs, n, xp=np):
        self.xp = xp
        self.n = int(n)
        rows, cols = _local_pairs(xp.asarray(cell_dofs), xp)
        # Sorted row-major (row, column) keys; NumPy by a sort (unique_keys), CuPy by its own.
        keys = rows * self.n + cols
        self.keys = unique_keys(keys) if xp is np else xp.unique(keys)
        self.nnz = int(self.keys.size)
        _check_int32(self.nnz, "nonzeros")
        row = self.keys // self.n
        self.row_ptr = xp.searchsorted(row, xp.arange(self.n + 1)).astype(xp.int32)
        self.columns = (self.keys % self.n).astype(xp.int32)

    def nonzero_index(self, rows, cols):
        """CSR positions of (row, column) pairs that are in the pattern."""
        index = self.xp.searchsorted(self.keys, rows * self.n + cols)
        return index

    def matrix_map(self, element_dofs):
        """(ptr, entries) of the contributions of elements with these dofs to each nonzero."""
        rows, cols = _local_pairs(self.xp.asarray(element_dofs), self.xp)
        return _sorted_map(self.nonzero_index(rows, cols), self.nnz, self.xp)

    def host_arrays(self):
        """(row_ptr, columns) as NumPy int32 arrays."""
        return tuple(a.get() if hasattr(a, "get") else a for a in (self.row_ptr, self.columns))


def vector_map(element_dofs, n, xp=np):
    """(ptr, entries) of the contributions of elements with these dofs to each of n dofs."""
    return _sorted_map(xp.asarray(element_dofs).ravel(), n, xp)
