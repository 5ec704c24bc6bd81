"""A linear system A u = b on the device with Dirichlet conditions applied symmetrically
(raw_kernels/fe/system.cu), and a CG solve of it.

    system = DirichletSystem(assembler, full_values, dirichlet_dofs)
    system.apply_matrix()            # system.matrix.values = full with D rows/columns cut
    system.set_values(g)             # host -> device, between graph replays
    system.bind_rhs(b)()             # b := b_F - A_FD g_D on free rows, A_ii g_i on D rows

The matrix keeps A_FF and the diagonal of constrained rows, zeros elsewhere in those rows and
columns: symmetric positive definite when A is on the free dofs, so CG and AMG apply, and the
solution equals g on D exactly (row i reads A_ii u_i = A_ii g_i). The lifting reads the
unconstrained values, which stay on the device, so a new right-hand side or new boundary
values need no reassembly. Its preconditioners: solvers.linalg.preconditioners.
"""

import numpy as np

from .assembly import THREADS, sync_host

SOURCE = "fe/system.cu"


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    yield SOURCE, {}


def blocks(n):
    return -(-n // THREADS)


def axpby(backend, out, a, x, c, y):
    """A capturable launch of out = a x + c y over equal-length device arrays (matrix values
    on one pattern, such as M + theta dt K, or vectors). a and c are fixed at binding."""
    n = out.size
    if not (x.shape == y.shape == out.shape and x.dtype == y.dtype == out.dtype):
        raise ValueError(f"axpby needs arrays of one shape and dtype, got {out.shape} "
                         f"{out.dtype}, {x.shape} {x.dtype}, {y.shape} {y.dtype}")
    kernel = backend.module(SOURCE, out.dtype).fe_axpby
    return kernel.bind(blocks(n), THREADS, out, a, x, c, y, n)


class DirichletSystem:
    def __init__(self, assembler, full_values, dirichlet_dofs):
        a = self.assembler = assembler
        b = self.backend = a.backend
        self.full = full_values
        self.matrix = a.matrix()
        n = a.space.n
        mask = np.zeros(n, np.int32)
        mask[np.asarray(dirichlet_dofs, np.int64)] = 1
        self.dirichlet_dofs = np.flatnonzero(mask)
        self.mask = b.to_device(mask)
        self.g = b.zeros((n,), a.dtype)
        kernels = b.module(SOURCE, a.dtype)
        m = self.matrix
        self._matrix = kernels.fe_dirichlet_matrix.bind(blocks(n), THREADS, m.row_ptr,
                                                        m.columns, self.mask, self.full,
                                                        m.values, n)
        self._rhs_kernel = kernels.fe_dirichlet_rhs

    def apply_matrix(self, host_copy=True):
        """matrix.values from the full values (capturable unless host_copy, which refreshes
        the host copy that AMG, Jacobi and to_scipy() read)."""
        self._matrix()
        if host_copy:
            sync_host(self.matrix)

    def set_values(self, values):
        """Dirichlet values: a full-length host vector (only its D entries are read)."""
        values = np.asarray(values, np.float64)
        if values.shape != (self.assembler.space.n,):
            raise ValueError(f"Dirichlet values must have shape ({self.assembler.space.n},), "
                             f"got {values.shape}")
        self.backend.write(self.g, values.astype(self.assembler.dtype))

    def bind_rhs(self, b):
        """A capturable launch applying the conditions to the right-hand side b in place."""
        m, n = self.matrix, self.assembler.space.n
        return self._rhs_kernel.bind(blocks(n), THREADS, m.row_ptr, m.columns, self.mask,
                                     self.full, self.g, b, n)
