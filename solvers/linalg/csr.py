"""A square sparse matrix in CSR storage on a backend, with a fused SpMV y = A x
(raw_kernels/linalg/spmv.cu) that a captured graph can replay.

    A = CsrMatrix.from_scipy(scipy_matrix, backend="auto", precision="fp32", accumulate="fp64")
    spmv = A.bind(x, y)   # checks x and y once; spmv() launches y = A x

Values are stored in the precision's type and indices as int32. accumulate="fp64" sums each
row in double and rounds once at the end (fp32 storage and traffic, fp64 sums). The kernel adds
products with explicit fused multiply-adds in a fixed order, without atomics: one matrix and one
x give the same bits on every run, on the host backend and on the GPU alike.

Three kernels: one thread per row (threads_per_row=1, entry by entry in CSR order); 2 to 32
threads per row whose strided partial sums are added pairwise, for long rows; and row
splitting (threads_per_row="split"): one thread a row for rows of at most LONG_ROW entries
(the bits of threads_per_row=1), 32 threads a row, added pairwise, for the longer ones. A
short row is read fastest by one thread, with no sums across threads; on long rows one thread
a row leaves a warp's loads scattered and its threads waiting for the longest row, while
several threads read a row's entries side by side; where a few rows are much longer than the
rest, splitting gives each kind its own. threads_per_row="auto" (default_threads_per_row)
picks by the row lengths (measurements: docs/performance.md).
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..backend import get_backend
from ..precision import real_dtype
from .operator import LinearOperator, overlap

SOURCE = "linalg/spmv.cu"
BLOCK_THREADS = 256  # threads of a launch block (passed to spmv.cu as CSR_VECTOR_THREADS)
LONG_ROW = 32  # "split": longer rows get 32 threads each
THREADS_PER_ROW = (1, 2, 4, 8, 16, 32, "split")
INT32_MAX = np.iinfo(np.int32).max


def kernel_defines():
    """The defines of spmv.cu, for CsrMatrix and SellMatrix alike."""
    return {"CSR_VECTOR_THREADS": BLOCK_THREADS, "CSR_LONG_ROW": LONG_ROW}


def compiled_kernels():
    """Every (source, defines) of spmv.cu (REAL_BITS aside), for CSR and SELL: just one. The
    accumulation type is not a define but a kernel-name suffix (_acc64), because the PTX check
    reads the REDUCTION marker from the source text, before the preprocessor."""
    yield SOURCE, kernel_defines()


def accumulation(dtype, accumulate):
    """The accumulation name ('fp32' or 'fp64') for values of `dtype`; None means dtype's."""
    own = "fp32" if dtype == np.float32 else "fp64"
    if accumulate is None:
        return own
    if accumulate not in ("fp32", "fp64"):
        raise ValueError(f"accumulate must be 'fp32' or 'fp64', got {accumulate!r}")
    if accumulate == "fp32" and own == "fp64":
        raise ValueError("accumulate='fp32' with precision='fp64' would round fp64 values to "
                         "fp32 sums; use accumulate='fp64'")
    return accumulate


def kernel_name(base, dtype, accumulate):
    """spmv.cu's kernel for `base`: the _acc64 variant only where it differs (fp32 values)."""
    return base + ("_acc64" if accumulate == "fp64" and dtype == np.float32 else "")


def blocks(count, per_block):
    return -(-count // per_block)


def distinct_vectors(x, y):
    """y = A x reads all of x while writing y: they must not overlap."""
    if overlap(x, y):
        raise ValueError("x and y overlap: y = A x cannot be computed in place; "
                         "bind two different vectors")


@dataclass(frozen=True)
class HostCsr:
    """A validated square CSR matrix on the host: sorted, duplicate-free rows, int32 indices,
    values already rounded to the device precision. Shared read-only by CsrMatrix and
    SellMatrix for diagonal() and to_scipy()."""

    row_ptr: np.ndarray
    columns: np.ndarray
    values: np.ndarray

    @property
    def n(self):
        return self.row_ptr.size - 1

    @property
    def nnz(self):
        return self.columns.size

    def row_lengths(self):
        return np.diff(self.row_ptr)

    def diagonal(self):
        rows = np.repeat(np.arange(self.n), self.row_lengths())
        on_diagonal = self.columns == rows
        diag = np.zeros(self.n)
        diag[rows[on_diagonal]] = self.values[on_diagonal]  # rows are duplicate-free
        return diag

    def to_scipy(self):
        return sp.csr_matrix((self.values.astype(np.float64), self.columns.copy(),
                              self.row_ptr.copy()), shape=(self.n, self.n))


def host_csr(matrix, dtype, who):
    """Check a scipy.sparse matrix and return it as a HostCsr of `dtype` values. Every error is
    a one-line message starting with `who`."""
    if not sp.issparse(matrix):
        raise TypeError(f"{who} needs a scipy.sparse matrix, got {type(matrix).__name__}")
    if len(matrix.shape) != 2 or matrix.shape[0] != matrix.shape[1]:
        shape = "x".join(str(s) for s in matrix.shape)
        raise ValueError(f"{who} needs a square matrix, got {shape}")
    n = matrix.shape[0]
    if n == 0:
        raise ValueError(f"{who} needs at least one row, got an empty 0x0 matrix")
    if n >= INT32_MAX:
        raise ValueError(f"{who}: {n} rows do not fit int32 indices")
    if np.issubdtype(matrix.dtype, np.complexfloating):
        raise TypeError(f"{who}: complex values are not supported ({matrix.dtype})")
    if matrix.format in ("csr", "csc"):
        _check_compressed(matrix, who)  # tocsr() would index out of bounds with bad indices
    matrix = matrix.tocsr(copy=True)
    matrix.sum_duplicates()  # also sorts each row's columns
    if matrix.nnz == 0:
        raise ValueError(f"{who} needs at least one stored entry, got a {n}x{n} matrix with none")
    if matrix.nnz > INT32_MAX:
        raise ValueError(f"{who}: {matrix.nnz} entries do not fit int32 indices")

    source = np.asarray(matrix.data)
    with np.errstate(over="ignore"):  # reported below, with the entry that overflows
        values = source.astype(dtype)
    bad = ~np.isfinite(values)
    if bad.any():
        k = int(np.argmax(bad))
        row = int(np.searchsorted(matrix.indptr, k, side="right") - 1)
        where = f"at ({row}, {int(matrix.indices[k])})"
        if np.isfinite(source[k]):
            raise ValueError(f"{who}: value {source[k]:.6g} {where} overflows {dtype}")
        raise ValueError(f"{who}: {int(bad.sum())} non-finite values, the first {source[k]} "
                         f"{where}")
    arrays = (matrix.indptr.astype(np.int32), matrix.indices.astype(np.int32), values)
    for array in arrays:
        array.setflags(write=False)
    return HostCsr(*arrays)


def _check_compressed(matrix, who):
    """Index pointer and index ranges of a CSR or CSC matrix, before scipy uses them."""
    major, minor = matrix.shape if matrix.format == "csr" else matrix.shape[::-1]
    outer, inner = ("row", "column") if matrix.format == "csr" else ("column", "row")
    indptr, indices = np.asarray(matrix.indptr), np.asarray(matrix.indices)
    if (indptr.shape != (major + 1,) or indptr[0] != 0 or np.any(np.diff(indptr) < 0)
            or indptr[-1] > min(indices.size, matrix.data.size)):
        raise ValueError(f"{who}: malformed {matrix.format} index pointer (it must start at 0, "
                         "not decrease, and end within the index and value arrays)")
    indices = indices[:indptr[-1]]
    bad = (indices < 0) | (indices >= minor)
    if bad.any():
        k = int(np.argmax(bad))
        where = int(np.searchsorted(indptr, k, side="right") - 1)
        raise ValueError(f"{who}: {inner} index {int(indices[k])} in {outer} {where} is out of "
                         f"range 0..{minor - 1}")


def default_threads_per_row(lengths):
    """Row splitting where some rows are over LONG_ROW and over four times the mean; else one
    thread a row for short rows (stencils); for longer rows enough threads that each adds about
    four products: enough work a thread to pay for the sum across threads, few enough products
    that a row's loads stay side by side."""
    mean = float(np.mean(lengths))
    if np.max(lengths) > max(LONG_ROW, 4 * mean):
        return "split"
    if mean < 16:
        return 1
    return int(min(32, 2 ** int(np.log2(mean / 4))))


class StoredMatrix(LinearOperator):
    """What the stored formats (CSR, SELL) share: the validated HostCsr they are built from,
    which answers diagonal() and to_scipy(), the accumulation, and the checks of y = A x."""

    def __init__(self, host, backend, accumulate):
        super().__init__(host.n, host.values.dtype, backend)
        self.host = host
        self.nnz = host.nnz
        self.accumulate = accumulation(self.dtype, accumulate)

    def check_spmv_vectors(self, x, y):
        """Clear errors for x and y of the wrong kind, and for y overlapping x."""
        self.check_vector(x, "x")
        self.check_vector(y, "y")
        distinct_vectors(x, y)

    def diagonal(self):
        """The diagonal as a host float64 array (of the stored, rounded values)."""
        return self.host.diagonal()

    def to_scipy(self):
        """The stored matrix (without any padding) as a scipy.sparse CSR matrix of float64."""
        return self.host.to_scipy()


class CsrMatrix(StoredMatrix):
    """y = A x for a square sparse A in CSR storage on a backend (see the module docstring).

    Device arrays: row_ptr (int32, n + 1), columns (int32, nnz), values (dtype, nnz)."""

    name = "csr"

    def __init__(self, host, backend, accumulate, threads_per_row):
        """Use CsrMatrix.from_scipy; `host` is a validated HostCsr."""
        super().__init__(host, backend, accumulate)
        if threads_per_row == "auto":
            threads_per_row = default_threads_per_row(host.row_lengths())
        if threads_per_row not in THREADS_PER_ROW:
            raise ValueError(f"threads_per_row must be 'auto' or one of {THREADS_PER_ROW}, "
                             f"got {threads_per_row!r}")
        self.threads_per_row = threads_per_row if threads_per_row == "split" else int(
            threads_per_row)
        self.row_ptr = backend.to_device(host.row_ptr)
        self.columns = backend.to_device(host.columns)
        self.values = backend.to_device(host.values)
        if threads_per_row == "split":
            long_rows = np.flatnonzero(host.row_lengths() > LONG_ROW).astype(np.int32)
            self.long_count = long_rows.size
            self.long_rows = backend.to_device(long_rows if long_rows.size else np.zeros(1,
                                                                                        np.int32))
        base = {1: "csr_spmv", "split": "csr_spmv_split"}.get(threads_per_row, "csr_spmv_vector")
        module = backend.module(SOURCE, self.dtype, kernel_defines())
        self._kernel = getattr(module, kernel_name(base, self.dtype, self.accumulate))

    @classmethod
    def from_scipy(cls, matrix, backend="auto", precision="fp32", accumulate=None,
                   threads_per_row="auto"):
        """A CsrMatrix of a square scipy.sparse matrix (any format; duplicates are summed,
        explicit zeros kept). accumulate: 'fp32' or 'fp64', default the precision's own."""
        dtype = real_dtype(precision)
        accumulation(dtype, accumulate)  # a wrong argument fails before any work
        return cls(host_csr(matrix, dtype, "CsrMatrix"), get_backend(backend), accumulate,
                   threads_per_row)

    def bind(self, x, y):
        """A capturable launch of y = A x on these two device vectors."""
        self.check_spmv_vectors(x, y)
        if self.threads_per_row == "split":
            short_blocks = blocks(self.n, BLOCK_THREADS)
            grid = short_blocks + blocks(self.long_count, BLOCK_THREADS // 32)
            return self._kernel.bind(grid, BLOCK_THREADS, self.row_ptr, self.columns,
                                     self.values, x, y, self.n, self.long_rows, self.long_count,
                                     short_blocks)
        if self.threads_per_row == 1:
            grid, block = blocks(self.n, BLOCK_THREADS), BLOCK_THREADS
        else:
            rows = BLOCK_THREADS // self.threads_per_row
            grid, block = blocks(self.n, rows), (self.threads_per_row, rows)
        return self._kernel.bind(grid, block, self.row_ptr, self.columns, self.values, x, y,
                                 self.n)

    @property
    def nbytes(self):
        """Device memory of the matrix: what one SpMV reads at least, besides x and y."""
        split = self.long_rows.nbytes if self.threads_per_row == "split" else 0
        return self.row_ptr.nbytes + self.columns.nbytes + self.values.nbytes + split

    def __repr__(self):
        return (f"CsrMatrix(n={self.n}, nnz={self.nnz}, {self.dtype}, "
                f"accumulate={self.accumulate}, threads_per_row={self.threads_per_row}, "
                f"backend={self.backend.name})")
