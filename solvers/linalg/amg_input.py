"""The fine matrix of AlgebraicMultigrid, checked and on the backend: the float64 copy of the
values as stored (already rounded to the precision), without stored zeros.

    backend, dtype, A, operator = fine_matrix(matrix, backend, precision)

A CsrMatrix's device arrays are used as they are (no host copy of the matrix); a scipy.sparse
matrix, or another operator's to_scipy(), is checked by host_csr (shape, indices, finite
values, duplicates summed, rows sorted) and uploaded once. On the backend: stored zeros are
dropped (an FE system's cut Dirichlet rows and columns, and couplings that vanish, such as the
diagonals of right triangles in P1, which would only carry zeros into every level), and the
diagonal must be positive and the matrix symmetric (|a_ij - a_ji| <= 1e-12 max |a|, a_ji found
by binary search in row j: amg_setup.cu's amg_asymmetry), read back in one transfer.
"""

import numpy as np
import scipy.sparse as sp

from ..backend import get_backend
from ..precision import real_dtype
from .amg_setup import WHO
from .csr import CsrMatrix, host_csr
from .sparse_setup import Csr, diagonal, keep_entries

SYMMETRY = 1e-12  # of max |a|: the largest |a_ij - a_ji| taken as symmetric
THREADS = 256


def _operator_arrays(operator, backend, precision):
    """(backend, dtype, (row_ptr, columns, values) on the backend) of an operator."""
    if not hasattr(operator, "to_scipy"):
        raise TypeError(f"{WHO} needs a scipy.sparse matrix or an operator with to_scipy(), "
                        f"got {type(operator).__name__}")
    if backend is not None and get_backend(backend) is not operator.backend:
        raise ValueError(f"{WHO}: backend {backend!r} differs from the operator's "
                         f"({operator.backend.name})")
    if precision is not None and real_dtype(precision) != operator.dtype:
        raise ValueError(f"{WHO}: precision {precision!r} differs from the operator's "
                         f"({operator.dtype})")
    backend, dtype = operator.backend, np.dtype(operator.dtype)
    if isinstance(operator, CsrMatrix):
        return backend, dtype, (operator.row_ptr, operator.columns, operator.values)
    return backend, dtype, _uploaded(operator.to_scipy(), backend, dtype)


def _uploaded(matrix, backend, dtype):
    host = host_csr(matrix, dtype, WHO)
    return tuple(backend.to_device(a) for a in (host.row_ptr, host.columns, host.values))


def fine_matrix(matrix, backend=None, precision=None):
    """(backend, dtype, the fine Csr (float64, no stored zeros), the operator or None) of a
    scipy.sparse matrix or an operator (see the module docstring)."""
    if sp.issparse(matrix):
        dtype = real_dtype("fp32" if precision is None else precision)
        backend = get_backend("auto" if backend is None else backend)
        arrays, operator = _uploaded(matrix, backend, dtype), None
    else:
        backend, dtype, arrays = _operator_arrays(matrix, backend, precision)
        operator = matrix
    row_ptr, columns, values = arrays
    n = int(row_ptr.shape[0]) - 1
    with backend.array_work() as (xp, _):
        values = values.astype(xp.float64, copy=False)
        stored = Csr(row_ptr, columns, values, (n, n))
        fine = keep_entries(backend, stored, values != 0)
    check(backend, fine)
    return backend, dtype, fine, operator


def check(backend, matrix):
    """One-line ValueErrors unless the diagonal is positive and the matrix symmetric."""
    n = matrix.shape[0]
    diag = diagonal(backend, matrix)
    with backend.array_work() as (xp, _):
        gap = xp.empty(n, xp.float64)
        backend.module("linalg/amg_setup.cu", np.float64).amg_asymmetry(
            -(-n // THREADS), THREADS, matrix.row_ptr, matrix.columns, matrix.values, gap, n)
        bad = ~(diag > 0)
        first = xp.argmax(bad)
        scale = xp.abs(matrix.values).max() if matrix.nnz else xp.zeros(())
        summary = xp.stack([xp.asarray(v, dtype=xp.float64)
                            for v in (bad.any(), first, diag[first], gap.max(), scale)])
    is_bad, row, value, largest, scale = backend.to_host(summary)
    if is_bad:
        row = int(row)
        raise ValueError(f"{WHO}: Jacobi smoothing needs a positive diagonal (an SPD matrix), "
                         f"but A[{row}, {row}] = {value:.6g} on level 0")
    if not largest <= SYMMETRY * scale:
        raise ValueError(f"{WHO} needs a symmetric matrix: |A - A^T| reaches {largest:.3g} "
                         f"(of max |A| {scale:.3g})")
