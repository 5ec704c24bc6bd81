"""Algebraic multigrid for sparse symmetric positive definite matrices: the smoothed-aggregation
hierarchy is built once on the backend (on the device on cuda: amg_setup.py), then one V-cycle
z ~ A^-1 r from z = 0 runs entirely on the device (raw_kernels/linalg/amg.cu) with every buffer
allocated up front, so a cycle replays from a graph and serves as the preconditioner of
ConjugateGradient.

    amg = AlgebraicMultigrid(scipy_matrix_or_csr, precision="fp32")
    cycle = amg.bind(r, z)          # a callable launching z = M r (capturable)
    amg.levels, amg.sizes           # 4, (65025, 7282, 496, 33)

Hierarchy: smoothed aggregation (amg_setup.py: symmetric strength, distance-2 independent-set
aggregates, a tentative prolongator from the near-nullspace, Jacobi-smoothed prolongation,
Galerkin coarse operators) of the float64 copy of the matrix as stored (values already rounded
to the precision) without its stored zeros, checked and built on the backend (amg_input.py: a
CsrMatrix's device arrays never pass through the host), so level 0 of the hierarchy is exactly
the device matrix; setup="pyamg" takes pyamg's hierarchy instead, to compare with (pyamg is
optional). Each level keeps the Galerkin operator A_l, the prolongation P_l and the
restriction R_l = P_l^T as CSR arrays on the device (R is transposed explicitly so that both
transfers are one-thread-per-row products without atomics).

Smoothing: `sweeps` damped Jacobi steps x += w_l D^-1 (b - A x) before and the same steps
after the coarse correction. w_l = omega / rho_l with rho_l an estimate of the spectral radius
of D^-1 A_l (amg_setup.spectral_radius: Lanczos, 5% margin, capped by Gershgorin's bound), and
omega = 4/3 by default (pyamg's choice); omega must lie in (0, 2), so |1 - w_l lambda| < 1 on
the spectrum and the smoother converges in the A-norm.

Coarsest level: solved exactly, z = A_L^+ b with A_L^+ the dense (pseudo-)inverse computed in
float64 on the host and uploaded as a dense symmetric matrix (one thread per row, column reads
coalesced). max_coarse bounds its size; a hierarchy whose coarsest level has more than
MAX_DENSE rows (aggregation stalled) is refused.

Symmetry: identical pre- and post-smoothing with a symmetric D^-1, R = P^T and a symmetric
coarse inverse make M symmetric; a convergent smoother and a positive semidefinite coarse
solve make it positive definite, so M may precondition CG. Bits: every row product adds in a
fixed order with fused multiply-adds, so a cycle gives the same bits eagerly and replayed.
"""

import numpy as np
import scipy.linalg

from .amg_input import fine_matrix
from .amg_setup import WHO, pyamg_hierarchy, smoothed_aggregation
from .csr import CsrMatrix
from .operator import LaunchSequence, overlap
from .sparse_setup import download, transpose

SOURCE = "linalg/amg.cu"
THREADS = 256  # threads of every amg.cu launch block (one thread per row)
SMOOTHERS = ("jacobi",)
SETUPS = {"aggregation": smoothed_aggregation, "pyamg": pyamg_hierarchy}
DEFAULT_OMEGA = 4.0 / 3.0  # relative to rho(D^-1 A): pyamg's default Jacobi weight
DEFAULT_MAX_COARSE = 300  # coarsening stops at or below this many rows
MAX_DENSE = 4096  # the largest coarsest level whose dense inverse we upload
SPECTRUM_MARGIN = 1.05


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside): amg.cu, no defines (its
    kernels take any block size)."""
    yield SOURCE, {}


def _check_diagonal(xp, diagonal, level):
    bad = xp.flatnonzero(~(diagonal > 0))
    if bad.size:
        row = int(bad[0])
        raise ValueError(f"{WHO}: Jacobi smoothing needs a positive diagonal (an SPD matrix), "
                         f"but A[{row}, {row}] = {float(diagonal[row]):.6g} on level {level}")


def _positive_int(value, name, least=1):
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


class AlgebraicMultigrid:
    """One smoothed-aggregation V-cycle z = M r from z = 0 (see the module docstring).

    matrix      a square symmetric positive definite scipy.sparse matrix, or a CsrMatrix
                (or another operator with to_scipy()) whose backend and precision it takes
    backend     'auto', 'host', 'cuda' or a Backend (default 'auto'; an operator's own)
    precision   'fp32' or 'fp64' (default 'fp32'; an operator's own)
    smoother    'jacobi' (damped)
    sweeps      Jacobi steps before and after each coarse correction
    omega       Jacobi weight relative to rho(D^-1 A_l), in (0, 2); default 4/3
    max_coarse  coarsening stops once a level has at most this many nodes (rows / block_size,
                as pyamg counts)
    near_nullspace  (n, k) float64 array of vectors A maps to (nearly) zero, which the
                coarse levels must represent (None: constants). Elasticity: the rigid body
                modes, with block_size = the dimension
    block_size  rows per node of a vector problem with interleaved components: aggregation
                groups whole nodes
    setup       'aggregation' (the hierarchy built on the backend, amg_setup.py) or 'pyamg'
                (pyamg's, on the host: a cross-check; needs pyamg)
    """

    name = "algebraic_multigrid"

    def __init__(self, matrix, backend=None, precision=None, smoother="jacobi", sweeps=2,
                 omega=None, max_coarse=DEFAULT_MAX_COARSE, near_nullspace=None,
                 block_size=1, setup="aggregation"):
        if smoother not in SMOOTHERS:
            raise ValueError(f"smoother must be one of {', '.join(SMOOTHERS)}, got {smoother!r}")
        if setup not in SETUPS:
            raise ValueError(f"setup must be one of {', '.join(SETUPS)}, got {setup!r}")
        self.smoother = smoother
        self.sweeps = _positive_int(sweeps, "sweeps")
        self.omega = float(DEFAULT_OMEGA if omega is None else omega)
        if not 0 < self.omega < 2:
            raise ValueError(f"omega must be in (0, 2) (relative to the spectral radius of "
                             f"D^-1 A, so that Jacobi converges), got {omega!r}")
        self.max_coarse = _positive_int(max_coarse, "max_coarse")
        if self.max_coarse > MAX_DENSE:
            raise ValueError(f"max_coarse must be at most {MAX_DENSE} (the coarsest level is "
                             f"inverted densely), got {max_coarse}")

        self.backend, self.dtype, fine, operator = fine_matrix(matrix, backend, precision)
        self.n = fine.shape[0]

        block_size = _positive_int(block_size, "block_size")
        if self.n % block_size:
            raise ValueError(f"{WHO}: block_size {block_size} does not divide the {self.n} rows")
        if near_nullspace is not None:
            near_nullspace = np.asarray(near_nullspace, np.float64).reshape(self.n, -1)
        hierarchy = SETUPS[setup](self.backend, fine, near_nullspace, block_size,
                                  self.max_coarse)
        matrices = hierarchy.matrices
        coarsest = matrices[-1]
        if coarsest.shape[0] > MAX_DENSE:
            raise ValueError(f"{WHO}: aggregation stalled at {coarsest.shape[0]} rows, more "
                             f"than the {MAX_DENSE} a dense coarsest solve allows")
        self.levels = len(matrices)
        self.sizes = tuple(int(A.shape[0]) for A in matrices)
        self.shapes = tuple((n, n) for n in self.sizes)
        self.nnz = tuple(A.nnz for A in matrices)
        self.operator_complexity = sum(self.nnz) / self.nnz[0]

        b, dtype = self.backend, self.dtype
        self._kernels = b.module(SOURCE, dtype)
        self._A, self._wdinv, self._P, self._R = [], [], [], []
        self.weights = []
        for level, A in enumerate(matrices[:-1]):
            # Jacobi weight omega / rho with rho above the estimate, below Gershgorin's bound.
            estimate, gershgorin = hierarchy.radii[level]
            weight = self.omega / min(gershgorin, SPECTRUM_MARGIN * estimate)
            self.weights.append(weight)
            diag = hierarchy.diagonals[level]
            with b.array_work() as (xp, _):
                if level:  # level 0 was checked with the input
                    _check_diagonal(xp, diag, level)
                self._wdinv.append((weight / diag).astype(dtype))
            if level == 0 and isinstance(operator, CsrMatrix) and operator.nnz == A.nnz:
                self._A.append((operator.row_ptr, operator.columns, operator.values))
            else:
                self._A.append(self._rounded(A))
            P = hierarchy.prolongations[level]
            self._P.append(self._rounded(P))
            self._R.append(self._rounded(transpose(b, P)))
        inverse = scipy.linalg.pinvh(download(b, coarsest).toarray())
        self._inverse = b.to_device(((inverse + inverse.T) / 2).astype(dtype))
        # Work vectors: right-hand side b and iterates x, y per level; level 0 reads the
        # caller's r and finishes in the caller's z.
        self._rhs = [None] + [b.zeros((n,), dtype) for n in self.sizes[1:]]
        self._x = [None] + [b.zeros((n,), dtype) for n in self.sizes[1:]]
        self._y = [b.zeros((n,), dtype) for n in self.sizes]

    def _rounded(self, matrix):
        """A setup Csr as the (row_ptr, columns, values) of the cycle's kernels."""
        with self.backend.array_work() as (xp, _):
            return matrix.row_ptr, matrix.columns, matrix.values.astype(self.dtype)

    def __repr__(self):
        sizes = " -> ".join(map(str, self.sizes))
        return (f"AlgebraicMultigrid({self.levels} levels {sizes}, {self.smoother} "
                f"V({self.sweeps},{self.sweeps}), omega={self.omega:.4g}, {self.dtype}, "
                f"backend={self.backend.name})")

    def _check_vector(self, v, name):
        if not self.backend.is_array(v) or v.shape != (self.n,) or v.dtype != self.dtype:
            raise ValueError(f"{name} must be a {self.backend.name} vector of {self.n} "
                             f"{self.dtype} values, got {type(v).__name__} "
                             f"{getattr(v, 'shape', '?')} {getattr(v, 'dtype', '?')}")

    def bind(self, r, z):
        """A callable that launches one V-cycle z = M r from z = 0 (no allocation, no host
        read: capturable). Bound cycles share the work vectors: run one at a time."""
        self._check_vector(r, "r")
        self._check_vector(z, "z")
        if overlap(r, z):
            raise ValueError("r and z must not overlap: the cycle reads r while writing z")
        launches = []
        self._bind_level(0, r, z, launches)
        return LaunchSequence(self, launches)

    def _bind_level(self, level, b, x, launches):
        """Launches solving level `level` approximately for rhs b, the result in x."""
        k, n = self._kernels, self.sizes[level]
        grid = -(-n // THREADS)
        if level == self.levels - 1:
            launches.append(k.amg_dense_symv.bind(grid, THREADS, self._inverse, b, x, n))
            return
        A, wdinv, y = self._A[level], self._wdinv[level], self._y[level]
        # Pre-smoothing from zero writes y first; sweeps alternate, and the post-smoothing
        # steps (as many) end in x. The buffer not holding the iterate takes the residual.
        launches.append(k.amg_jacobi_first.bind(grid, THREADS, wdinv, b, y, n))
        current, other = y, x
        for _ in range(self.sweeps - 1):
            launches.append(k.amg_jacobi.bind(grid, THREADS, *A, wdinv, b, current, other, n))
            current, other = other, current
        launches.append(k.amg_residual.bind(grid, THREADS, *A, b, current, other, n))
        coarse_b, coarse_x, nc = self._rhs[level + 1], self._x[level + 1], self.sizes[level + 1]
        launches.append(k.amg_spmv.bind(-(-nc // THREADS), THREADS, *self._R[level], other,
                                        coarse_b, nc))
        self._bind_level(level + 1, coarse_b, coarse_x, launches)
        launches.append(k.amg_spmv_add.bind(grid, THREADS, *self._P[level], coarse_x, current,
                                            n))
        for _ in range(self.sweeps):
            launches.append(k.amg_jacobi.bind(grid, THREADS, *A, wdinv, b, current, other, n))
            current, other = other, current
        assert current is x
