"""Sparse matrices of a multigrid setup, on a backend: CSR as (row_ptr, columns, values, shape)
with int32 indices and float64 values in the backend's arrays (NumPy on host, CuPy on cuda),
and the few whole-matrix operations a setup needs, done by the backend's sparse library
(scipy.sparse on host, cupyx.scipy.sparse, that is cuSPARSE, on cuda).

    A = upload(backend, scipy_matrix)      # a Csr on the backend
    AP = product(backend, A, P)            # sorted rows, as every Csr here
    R = transpose(backend, P)
    download(backend, A)                   # back to a scipy.sparse.csr_matrix

The row of each stored entry and the diagonal come from one-thread-a-row kernels
(amg_setup.cu's amg_entry_rows, amg_diagonal). A setup is never captured into a graph, so
these may allocate, and cuSPARSE is allowed.
"""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

SOURCE = "linalg/amg_setup.cu"  # its amg_entry_rows and amg_diagonal, with real = double
THREADS = 256


class Csr(NamedTuple):
    """A CSR matrix on a backend: int32 row_ptr and columns (rows sorted), float64 values."""

    row_ptr: object
    columns: object
    values: object
    shape: tuple

    @property
    def nnz(self):
        return int(self.columns.shape[0])


def _from_library(xp, matrix):
    """A Csr of a scipy.sparse or cupyx.scipy.sparse matrix, its rows sorted."""
    matrix = matrix.tocsr()
    matrix.sort_indices()
    return Csr(xp.asarray(matrix.indptr, xp.int32), xp.asarray(matrix.indices, xp.int32),
               xp.asarray(matrix.data, xp.float64), tuple(int(s) for s in matrix.shape))


def _to_library(sparse, matrix):
    return sparse.csr_matrix((matrix.values, matrix.columns, matrix.row_ptr), shape=matrix.shape)


def upload(backend, matrix):
    """A scipy.sparse matrix as a Csr on the backend."""
    matrix = sp.csr_matrix(matrix, dtype=np.float64)
    matrix.sort_indices()
    return Csr(backend.to_device(matrix.indptr.astype(np.int32)),
               backend.to_device(matrix.indices.astype(np.int32)),
               backend.to_device(matrix.data), tuple(int(s) for s in matrix.shape))


def download(backend, matrix):
    """A Csr on the backend as a scipy.sparse.csr_matrix (float64)."""
    return sp.csr_matrix((backend.to_host(matrix.values), backend.to_host(matrix.columns),
                          backend.to_host(matrix.row_ptr)), shape=matrix.shape)


def product(backend, a, b):
    """a @ b (sparse times sparse)."""
    with backend.array_work() as (xp, sparse):
        return _from_library(xp, _to_library(sparse, a) @ _to_library(sparse, b))


def transpose(backend, a):
    with backend.array_work() as (xp, sparse):
        return _from_library(xp, _to_library(sparse, a).T)


def entry_rows(backend, matrix):
    """The row of every stored entry, in storage order (int32)."""
    n = matrix.shape[0]
    with backend.array_work() as (xp, _):
        rows = xp.empty(matrix.nnz, xp.int32)
    backend.module(SOURCE, np.float64).amg_entry_rows(max(1, -(-n // THREADS)), THREADS,
                                                      matrix.row_ptr, rows, n)
    return rows


def diagonal(backend, matrix):
    """The diagonal of a square Csr (zero where not stored): amg_diagonal's binary search."""
    n = matrix.shape[0]
    with backend.array_work() as (xp, _):
        values = xp.empty(n, xp.float64)
    backend.module(SOURCE, np.float64).amg_diagonal(max(1, -(-n // THREADS)), THREADS,
                                                    matrix.row_ptr, matrix.columns,
                                                    matrix.values, values, n)
    return values


def keep_entries(backend, matrix, keep, values=None, columns=None, width=None):
    """The entries of `matrix` where the boolean array `keep` is set, in their order, with
    `values` and `columns` (arrays over all entries, default the matrix's) and `width`
    columns (default the matrix's). A `columns` map must keep each row's columns ascending."""
    with backend.array_work() as (xp, _):
        # Row pointers: the running count of kept entries at each old row start.
        kept = xp.zeros(matrix.nnz + 1, xp.int32)
        kept[1:] = xp.cumsum(keep, dtype=xp.int32)
        where = xp.flatnonzero(keep)
        values = matrix.values if values is None else values
        columns = matrix.columns if columns is None else columns
        width = matrix.shape[1] if width is None else int(width)
        return Csr(kept[matrix.row_ptr], columns[where].astype(xp.int32, copy=False),
                   values[where], (matrix.shape[0], width))
