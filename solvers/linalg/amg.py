"""Algebraic multigrid for sparse symmetric positive definite matrices: the hierarchy is built
once on the CPU by pyamg's smoothed aggregation, then one V-cycle z ~ A^-1 r from z = 0 runs
entirely on the device (raw_kernels/linalg/amg.cu) with every buffer allocated up front, so a
cycle replays from a graph and serves as the preconditioner of ConjugateGradient.

    amg = AlgebraicMultigrid(scipy_matrix_or_csr, precision="fp32")
    cycle = amg.bind(r, z)          # a callable launching z = M r (capturable)
    amg.levels, amg.sizes           # 4, (65025, 7282, 496, 33)

Hierarchy: pyamg.smoothed_aggregation_solver(A, symmetry="symmetric", max_coarse=...) on the
float64 copy of the matrix as stored (values already rounded to the precision), so level 0 of
the hierarchy is exactly the device matrix. Each level keeps the Galerkin operator A_l, the
prolongation P_l and the restriction R_l = P_l^T as CSR arrays on the device (R is transposed
explicitly so that both transfers are one-thread-per-row products without atomics).

Smoothing: `sweeps` damped Jacobi steps x += w_l D^-1 (b - A x) before and the same steps
after the coarse correction. w_l = omega / rho_l with rho_l an estimate of the spectral radius
of D^-1 A_l (Lanczos from a fixed start vector, 5% margin, capped by Gershgorin's bound), and
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

import contextlib

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..backend import BackendError, get_backend
from ..precision import real_dtype
from .csr import CsrMatrix, host_csr
from .operator import LaunchSequence, overlap

SOURCE = "linalg/amg.cu"
THREADS = 256  # threads of every amg.cu launch block (one thread per row)
SMOOTHERS = ("jacobi",)
DEFAULT_OMEGA = 4.0 / 3.0  # relative to rho(D^-1 A): pyamg's default Jacobi weight
DEFAULT_MAX_COARSE = 300  # coarsening stops at or below this many rows
MAX_DENSE = 4096  # the largest coarsest level whose dense inverse we upload
DENSE_SPECTRUM = 1024  # levels up to this size: exact eigenvalues, beyond: Lanczos
SPECTRUM_MARGIN = 1.05
INSTALL_HINT = "pip install pyamg"  # a dependency of the package: only missing if removed
SETUP_SEED = 0  # of the random start vectors pyamg's setup draws (see seeded_setup)
WHO = "AlgebraicMultigrid"


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside): amg.cu, no defines (its
    kernels take any block size)."""
    yield SOURCE, {}


class PyamgMissing(BackendError, ImportError):
    """pyamg cannot be imported: an ImportError, and a BackendError so that the command line
    reports it in one line (exit 2) instead of a traceback."""


def import_pyamg():
    try:
        import pyamg
    except ImportError:
        raise PyamgMissing(f"{WHO} needs pyamg to build its hierarchy: {INSTALL_HINT}") from None
    return pyamg


def spectral_radius(matrix, diagonal):
    """An upper estimate of rho(D^-1 A) for a symmetric A with positive diagonal D, in
    float64 and deterministic (dense below DENSE_SPECTRUM rows, else Lanczos from a fixed
    start vector), never above Gershgorin's bound."""
    scale = 1 / np.sqrt(diagonal)
    S = (sp.diags(scale) @ matrix @ sp.diags(scale)).tocsr()  # D^-1/2 A D^-1/2
    gershgorin = float(np.max(abs(S).sum(axis=1)))
    if S.shape[0] <= DENSE_SPECTRUM:
        return min(gershgorin, float(scipy.linalg.eigvalsh(S.toarray())[-1]))
    start = np.random.default_rng(0).uniform(0.5, 1.5, S.shape[0])
    top = float(spla.eigsh(S, k=1, which="LA", v0=start, tol=1e-3,
                           return_eigenvectors=False)[0])
    return min(gershgorin, SPECTRUM_MARGIN * top)


@contextlib.contextmanager
def seeded_setup(seed=SETUP_SEED):
    """pyamg's setup estimates spectral radii (the prolongation smoother's weight) from start
    vectors drawn from NumPy's global random state, unseeded, so two runs built different
    hierarchies and their results differed in the last bits. Inside this block that state is
    seeded; the caller's state is put back afterwards, whatever happens."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def _check_diagonal(diagonal, level):
    bad = np.flatnonzero(~(diagonal > 0))
    if bad.size:
        row = int(bad[0])
        raise ValueError(f"{WHO}: Jacobi smoothing needs a positive diagonal (an SPD matrix), "
                         f"but A[{row}, {row}] = {diagonal[row]:.6g} on level {level}")


def _check_symmetric(matrix):
    difference = abs(matrix - matrix.T)
    scale = abs(matrix).max()
    if difference.nnz and difference.max() > 1e-12 * scale:
        raise ValueError(f"{WHO} needs a symmetric matrix: |A - A^T| reaches "
                         f"{difference.max():.3g} (of max |A| {scale:.3g})")


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
    max_coarse  coarsening stops once a level has at most this many rows
    near_nullspace  (n, k) float64 array of vectors A maps to (nearly) zero, which the
                coarse levels must represent (None: constants). Elasticity: the rigid body
                modes, with block_size = the dimension
    block_size  rows per node of a vector problem with interleaved components: aggregation
                groups whole nodes (pyamg on the BSR form of the matrix)
    """

    name = "algebraic_multigrid"

    def __init__(self, matrix, backend=None, precision=None, smoother="jacobi", sweeps=2,
                 omega=None, max_coarse=DEFAULT_MAX_COARSE, near_nullspace=None,
                 block_size=1):
        if smoother not in SMOOTHERS:
            raise ValueError(f"smoother must be one of {', '.join(SMOOTHERS)}, got {smoother!r}")
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

        operator = None if sp.issparse(matrix) else matrix
        if operator is not None:
            if not hasattr(operator, "to_scipy"):
                raise TypeError(f"{WHO} needs a scipy.sparse matrix or an operator with "
                                f"to_scipy(), got {type(matrix).__name__}")
            if backend is not None and get_backend(backend) is not operator.backend:
                raise ValueError(f"{WHO}: backend {backend!r} differs from the operator's "
                                 f"({operator.backend.name})")
            if precision is not None and real_dtype(precision) != operator.dtype:
                raise ValueError(f"{WHO}: precision {precision!r} differs from the operator's "
                                 f"({operator.dtype})")
            self.backend, self.dtype = operator.backend, np.dtype(operator.dtype)
            matrix = operator.to_scipy()
        else:
            self.dtype = real_dtype("fp32" if precision is None else precision)
        fine = host_csr(matrix, self.dtype, WHO).to_scipy()  # checks; float64 of stored values
        _check_diagonal(fine.diagonal(), 0)
        _check_symmetric(fine)
        pyamg = import_pyamg()
        if operator is None:
            self.backend = get_backend("auto" if backend is None else backend)
        self.n = fine.shape[0]

        block_size = _positive_int(block_size, "block_size")
        if self.n % block_size:
            raise ValueError(f"{WHO}: block_size {block_size} does not divide the {self.n} rows")
        if near_nullspace is not None:
            near_nullspace = np.asarray(near_nullspace, np.float64).reshape(self.n, -1)
        with seeded_setup():  # the same hierarchy, bit for bit, on every run
            hierarchy = pyamg.smoothed_aggregation_solver(
                fine if block_size == 1 else fine.tobsr(blocksize=(block_size, block_size)),
                B=near_nullspace, symmetry="symmetric", max_coarse=self.max_coarse,
                max_levels=64, presmoother=None, postsmoother=None, keep=False)
        matrices = [fine] + [sp.csr_matrix(level.A, dtype=np.float64)
                             for level in hierarchy.levels[1:]]
        prolongations = [sp.csr_matrix(level.P, dtype=np.float64)
                         for level in hierarchy.levels[:-1]]
        coarsest = matrices[-1]
        if coarsest.shape[0] > MAX_DENSE:
            raise ValueError(f"{WHO}: aggregation stalled at {coarsest.shape[0]} rows, more "
                             f"than the {MAX_DENSE} a dense coarsest solve allows")
        self.levels = len(matrices)
        self.sizes = tuple(int(A.shape[0]) for A in matrices)
        self.shapes = tuple((n, n) for n in self.sizes)
        self.nnz = tuple(int(A.nnz) for A in matrices)
        self.operator_complexity = sum(self.nnz) / self.nnz[0]

        b, dtype = self.backend, self.dtype
        self._kernels = b.module(SOURCE, dtype)
        self._A, self._wdinv, self._P, self._R = [], [], [], []
        self.weights = []
        for level, A in enumerate(matrices[:-1]):
            diagonal = A.diagonal()
            _check_diagonal(diagonal, level)
            weight = self.omega / spectral_radius(A, diagonal)
            self.weights.append(weight)
            if level == 0 and isinstance(operator, CsrMatrix):
                self._A.append((operator.row_ptr, operator.columns, operator.values))
            else:
                self._A.append(self._upload(A))
            self._wdinv.append(b.to_device((weight / diagonal).astype(dtype)))
            P = prolongations[level]
            self._P.append(self._upload(P))
            self._R.append(self._upload(P.T.tocsr()))
        inverse = scipy.linalg.pinvh(coarsest.toarray())
        self._inverse = b.to_device(((inverse + inverse.T) / 2).astype(dtype))
        # Work vectors: right-hand side b and iterates x, y per level; level 0 reads the
        # caller's r and finishes in the caller's z.
        self._rhs = [None] + [b.zeros((n,), dtype) for n in self.sizes[1:]]
        self._x = [None] + [b.zeros((n,), dtype) for n in self.sizes[1:]]
        self._y = [b.zeros((n,), dtype) for n in self.sizes]

    def _upload(self, matrix):
        matrix = sp.csr_matrix(matrix)
        matrix.sort_indices()
        b = self.backend
        return (b.to_device(matrix.indptr.astype(np.int32)),
                b.to_device(matrix.indices.astype(np.int32)),
                b.to_device(matrix.data.astype(self.dtype)))

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
