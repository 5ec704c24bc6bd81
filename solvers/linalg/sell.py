"""A square sparse matrix in SELL-C-sigma storage on a backend, with a fused SpMV y = A x
(raw_kernels/linalg/spmv.cu) that a captured graph can replay.

    A = SellMatrix.from_scipy(scipy_matrix, backend="auto", precision="fp32", c=32, sigma=4096)
    A = SellMatrix.from_csr(csr_matrix)        # same backend, precision and accumulation
    spmv = A.bind(x, y)

SELL-C-sigma (Kreutzer et al., SIAM J. Sci. Comput. 36, 2014): rows are sorted by decreasing
length within windows of `sigma` consecutive rows (sigma=1: no sorting), then cut into slices of
`c` rows. A slice is stored column-major and padded to its longest row, so the c threads of a
slice (one warp for c=32) read consecutive addresses at every step. Padded entries hold the value
0 and a valid column (the row's own index), but the kernel stops at each row's length and never
reads them: each row is summed entry by entry in CSR order, so y has exactly the bits of
CsrMatrix with threads_per_row=1 (same backend or not).

Sorting pays where row lengths vary: a wider window puts rows of like length into one slice and
leaves less padding, and where lengths are uniform (stencils) it costs nothing, so a wide window,
sigma=4096, is the default (measurements: docs/performance.md). The padding that remains is
reported as padding_ratio (stored entries / nonzeros). One very long row would cost c times
its length, and its one thread a chain of dependent loads that its slice waits for: rows longer
than `long_row` (default "auto": csr.LONG_ROW where default_threads_per_row would split the
rows, else none) are taken out of the slices and summed by 32 threads each from CSR arrays of
their own, pairwise, as CsrMatrix's row splitting does (the same bits).
"""

import numpy as np

from ..backend import get_backend
from ..precision import real_dtype
from .csr import (
    BLOCK_THREADS,
    INT32_MAX,
    LONG_ROW,
    SOURCE,
    CsrMatrix,
    HostCsr,
    StoredMatrix,
    accumulation,
    blocks,
    default_threads_per_row,
    host_csr,
    kernel_defines,
    kernel_name,
)


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def sell_layout(host, c, sigma):
    """SELL-C-sigma arrays of a HostCsr: (slice_ptr, row_length, row_order, columns, values)."""
    n = host.n
    lengths = host.row_lengths()

    # Position p holds row row_order[p]: rows by decreasing length within each sigma window
    # (a stable sort, so equal rows keep their order).
    row_order = np.lexsort((-lengths, np.arange(n) // sigma)).astype(np.int32)
    position = np.empty(n, np.int64)
    position[row_order] = np.arange(n)
    row_length = lengths[row_order].astype(np.int32)

    # Slice s holds positions s*c .. s*c + c - 1, c columns wide for every entry of its
    # longest row; missing positions of the last slice are empty rows.
    slices = blocks(n, c)
    padded_length = np.zeros(slices * c, np.int64)
    padded_length[:n] = row_length
    width = padded_length.reshape(slices, c).max(axis=1)
    slice_ptr = np.zeros(slices + 1, np.int64)
    np.cumsum(width * c, out=slice_ptr[1:])
    stored = int(slice_ptr[-1])
    if stored + c > INT32_MAX:
        raise ValueError(f"SellMatrix: {stored} stored entries with padding "
                         f"({stored / host.nnz:.1f} per nonzero) do not fit int32 indices; "
                         "use CsrMatrix")

    # Padding first: value 0 in the row's own column (a valid index; never read by the kernel).
    slice_of = np.repeat(np.arange(slices), width * c)
    lane = (np.arange(stored) - slice_ptr[slice_of]) % c
    padded_order = np.zeros(slices * c, np.int64)
    padded_order[:n] = row_order
    columns = padded_order[slice_of * c + lane].astype(np.int32)
    values = np.zeros(stored, host.values.dtype)

    # Entry j of the row at position p goes to slice_ptr[p // c] + j * c + p % c.
    rows = np.repeat(np.arange(n), lengths)
    j = np.arange(host.nnz) - host.row_ptr[rows]
    p = position[rows]
    target = slice_ptr[p // c] + j * c + p % c
    columns[target] = host.columns
    values[target] = host.values
    return slice_ptr.astype(np.int32), row_length, row_order, columns, values


def split_rows(host, long_row):
    """(short, short_rows, long_rows, long_csr): the HostCsr of the rows of at most long_row
    entries (in order), their indices, the indices of the longer rows, and the longer rows'
    (ptr, columns, values)."""
    lengths = host.row_lengths()
    long = lengths > long_row
    kept = ~np.repeat(long, lengths)
    ptr = [np.concatenate([[0], np.cumsum(lengths[rows])]).astype(np.int32)
           for rows in (~long, long)]
    short = HostCsr(ptr[0], host.columns[kept], host.values[kept])
    return (short, np.flatnonzero(~long).astype(np.int32), np.flatnonzero(long).astype(np.int32),
            (ptr[1], host.columns[~kept], host.values[~kept]))


class SellMatrix(StoredMatrix):
    """y = A x for a square sparse A in SELL-C-sigma storage (see the module docstring).

    Device arrays: slice_ptr (int32, slices + 1), row_length and row_order (int32, n),
    columns (int32) and values (dtype), both padded_nnz long."""

    name = "sell"

    def __init__(self, host, backend, accumulate, c, sigma, long_row="auto"):
        """Use SellMatrix.from_scipy or SellMatrix.from_csr; `host` is a validated HostCsr."""
        super().__init__(host, backend, accumulate)
        self.c = _positive_int(c, "c (rows a slice)")
        self.sigma = _positive_int(sigma, "sigma (rows a sorting window)")
        if long_row == "auto":
            split = default_threads_per_row(host.row_lengths()) == "split"
            long_row = LONG_ROW if split else None
        self.long_row = None if long_row is None else _positive_int(long_row, "long_row")
        if self.long_row is not None and host.row_lengths().min() > self.long_row:
            self.long_row = None  # no short rows: nothing to split off

        # The slices of the short rows (all rows without a long_row), positions mapped back to
        # the matrix's rows; the long rows' own CSR arrays.
        if self.long_row is None:
            arrays, short, self.long_count = sell_layout(host, self.c, self.sigma), host, 0
        else:
            short, short_rows, long_rows, long_csr = split_rows(host, self.long_row)
            slice_ptr, row_length, order, columns, values = sell_layout(short, self.c,
                                                                        self.sigma)
            arrays = (slice_ptr, row_length, short_rows[order], columns, values)
            self.long_count = int(long_rows.size)
            self.long_rows, self.long_ptr, self.long_columns, self.long_values = (
                backend.to_device(a if a.size else np.zeros(1, a.dtype))
                for a in (long_rows, *long_csr))
        self.slice_ptr, self.row_length, self.row_order, self.columns, self.values = (
            backend.to_device(array) for array in arrays)
        self.short_rows = short.n
        self.padded_nnz = int(arrays[-1].size) + (host.nnz - short.nnz)
        self.padding_ratio = self.padded_nnz / self.nnz
        module = backend.module(SOURCE, self.dtype, kernel_defines())
        base = "sell_spmv" if self.long_row is None else "sell_spmv_split"
        self._kernel = getattr(module, kernel_name(base, self.dtype, self.accumulate))

    @classmethod
    def from_scipy(cls, matrix, backend="auto", precision="fp32", accumulate=None, c=32,
                   sigma=4096, long_row="auto"):
        """A SellMatrix of a square scipy.sparse matrix (any format; duplicates are summed,
        explicit zeros kept). c: rows a slice; sigma: rows a sorting window (1: keep order);
        long_row: rows longer than this are summed apart (None: none; see the module)."""
        dtype = real_dtype(precision)
        accumulation(dtype, accumulate)
        _positive_int(c, "c (rows a slice)")
        _positive_int(sigma, "sigma (rows a sorting window)")
        return cls(host_csr(matrix, dtype, "SellMatrix"), get_backend(backend), accumulate,
                   c, sigma, long_row)

    @classmethod
    def from_csr(cls, csr, c=32, sigma=4096, long_row="auto"):
        """The same matrix as a CsrMatrix, on its backend with its precision and accumulation."""
        if not isinstance(csr, CsrMatrix):
            raise TypeError(f"SellMatrix.from_csr needs a CsrMatrix, got {type(csr).__name__}")
        return cls(csr.host, csr.backend, csr.accumulate, c, sigma, long_row)

    def bind(self, x, y):
        """A capturable launch of y = A x on these two device vectors."""
        self.check_spmv_vectors(x, y)
        short_blocks = blocks(self.short_rows, BLOCK_THREADS)
        slices = (self.slice_ptr, self.row_length, self.row_order, self.columns, self.values, x,
                  y, self.short_rows, self.c)
        if self.long_row is None:
            return self._kernel.bind(short_blocks, BLOCK_THREADS, *slices)
        grid = short_blocks + blocks(self.long_count, BLOCK_THREADS // 32)
        return self._kernel.bind(grid, BLOCK_THREADS, *slices, self.long_rows, self.long_count,
                                 self.long_ptr, self.long_columns, self.long_values,
                                 short_blocks)

    @property
    def nbytes(self):
        """Device memory of the matrix: what one SpMV reads at most, besides x and y."""
        split = () if self.long_row is None else (self.long_rows, self.long_ptr,
                                                  self.long_columns, self.long_values)
        return sum(a.nbytes for a in (self.slice_ptr, self.row_length, self.row_order,
                                      self.columns, self.values, *split))

    def __repr__(self):
        return (f"SellMatrix(n={self.n}, nnz={self.nnz}, c={self.c}, sigma={self.sigma}, "
                f"long_row={self.long_row}, "
                f"padding_ratio={self.padding_ratio:.2f}, {self.dtype}, "
                f"accumulate={self.accumulate}, backend={self.backend.name})")
