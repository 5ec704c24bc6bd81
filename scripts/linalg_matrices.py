"""The test matrices of scripts/bench_linalg.py, built straight in CSR with NumPy: the 7-point
Laplacian of a StencilLaplacian, a 27-point box stencil and an irregular stress matrix."""

from itertools import product

import numpy as np
import scipy.sparse as sp


def grid_csr(shape, offsets, values):
    """A float64 CSR matrix of a stencil on a 3D grid (x fastest): row c has the entry
    values[j] at column c + offsets[j] for every neighbour inside the grid. Offsets (dx, dy,
    dz) must come sorted by their linear offset, so that rows come out sorted; a value is a
    number or an array over the rows. Direct to CSR, skipping to_scipy's route through COO
    triplets, which SciPy must sort and sum (much slower at benchmark sizes)."""
    nx, ny, nz = shape
    n = nx * ny * nz
    cell = np.arange(n)
    index = (cell % nx, cell // nx % ny, cell // (nx * ny))
    inside = np.ones((n, len(offsets)), bool)
    columns = np.empty((n, len(offsets)), np.int32)
    data = np.empty((n, len(offsets)))
    for j, (offset, value) in enumerate(zip(offsets, values)):
        for axis, d in enumerate(offset):
            if d:
                inside[:, j] &= (index[axis] + d >= 0) & (index[axis] + d < shape[axis])
        columns[:, j] = cell + offset[0] + nx * (offset[1] + ny * offset[2])
        data[:, j] = value
    row_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(inside.sum(axis=1), out=row_ptr[1:])
    return sp.csr_matrix((data[inside], columns[inside], row_ptr), shape=(n, n))


_MATRICES = {}  # laplacian_7pt by grid: several items use each (14 s to build at 256^3)


def laplacian_7pt(op):
    """The matrix of a constant-coefficient (k = 1) Dirichlet StencilLaplacian (built once
    per shape and spacing; do not modify it)."""
    key = (op.shape, op.spacing)
    if key not in _MATRICES:
        w = [1.0 / h**2 for h in op.spacing]
        offsets = [(0, 0, -1), (0, -1, 0), (-1, 0, 0), (0, 0, 0), (1, 0, 0), (0, 1, 0),
                   (0, 0, 1)]
        values = [-w[2], -w[1], -w[0], op.diagonal(), -w[0], -w[1], -w[2]]
        _MATRICES[key] = grid_csr(op.shape, offsets, values)
    return _MATRICES[key]


def box_27pt(n):
    """27-point pattern on n^3 cells: -1 to each neighbour, 26 on the diagonal (SPD)."""
    offsets = [(dx, dy, dz) for dz, dy, dx in product((-1, 0, 1), repeat=3)]
    return grid_csr((n, n, n), offsets, [26.0 if o == (0, 0, 0) else -1.0 for o in offsets])


def irregular(rows, rng):
    """Rows of 1 to 15 entries and 1% of rows of 256 (SELL's sorting case); columns within
    1024 of the diagonal, one in eight anywhere (scattered reads of x); values U(-1, 1)."""
    lengths = rng.integers(1, 16, rows)
    lengths[rng.random(rows) < 0.01] = 256
    row = np.repeat(np.arange(rows), lengths)
    near = row + rng.integers(-1024, 1025, row.size)
    column = np.where(rng.random(row.size) < 0.125, rng.integers(0, rows, row.size), near)
    matrix = sp.csr_matrix((rng.uniform(-1, 1, row.size), (row, column % rows)),
                           shape=(rows, rows))
    matrix.sum_duplicates()
    return matrix
