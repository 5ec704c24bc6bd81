"""The interface every linear operator of solvers.linalg implements (sparse matrices and
matrix-free stencils alike), so that Krylov solvers can bind it once and replay it in a graph.

An operator y = A x of size n x n on one backend, in one precision:
    op.n, op.dtype, op.backend
    op.bind(x, y)   a callable that launches y = A x (capturable: no allocation, no host
                    read); x and y are device vectors of length n and dtype op.dtype
    op.diagonal()   the diagonal of A as a host float64 array (for Jacobi smoothing and
                    preconditioning)
    op.to_scipy()   the same matrix as a scipy.sparse CSR matrix in float64 (for tests and
                    for building multigrid hierarchies on the CPU)
"""

import numpy as np


def overlap(a, b):
    """Whether two device vectors (NumPy or CuPy arrays) share memory."""
    def span(v):
        start = v.ctypes.data if isinstance(v, np.ndarray) else v.data.ptr
        return start, start + v.nbytes

    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


class LaunchSequence:
    """Bound launches run in order as one callable (a multigrid cycle, say); holds `owner`
    (the object whose buffers the launches use) so that it outlives them."""

    def __init__(self, owner, launches):
        self.owner = owner
        self.launches = tuple(launches)

    def __call__(self):
        for launch in self.launches:
            launch()


class LinearOperator:
    def __init__(self, n, dtype, backend):
        if n < 1:
            raise ValueError(f"an operator needs at least one row, got n={n}")
        self.n = int(n)
        self.dtype = np.dtype(dtype)
        self.backend = backend

    def check_vector(self, v, name):
        """A clear error for a vector of the wrong backend, length or dtype."""
        if not self.backend.is_array(v) or v.shape != (self.n,) or v.dtype != self.dtype:
            raise ValueError(f"{name} must be a {self.backend.name} vector of {self.n} "
                             f"{self.dtype} values, got {type(v).__name__} "
                             f"{getattr(v, 'shape', '?')} {getattr(v, 'dtype', '?')}")

    def bind(self, x, y):
        raise NotImplementedError

    def diagonal(self):
        raise NotImplementedError

    def to_scipy(self):
        raise NotImplementedError
