"""Geometric multigrid for the structured-grid Laplacian: one V-cycle z ~ A^-1 r from z = 0,
every launch on the device (raw_kernels/linalg/multigrid.cu), all buffers allocated once, so a
cycle replays from a graph and serves as the preconditioner of conjugate gradients.

    mg = GeometricMultigrid(op)            # op: a StencilLaplacian with even axes >= 8
    cycle = mg.bind(r, z)                  # a callable launching z = M r (capturable)
    mg.levels, mg.shapes                   # 5, ((64, 64), (32, 32), ..., (4, 4))

Hierarchy: every axis is halved while all stay even and the halves have at least 4 cells.
Coarse operators are re-discretised StencilLaplacians on the same domain (spacing doubled, the
same boundary kinds) with the coefficient of a coarse cell the arithmetic mean of its 2^d
children. Arithmetic, not harmonic: the coarse operator takes the harmonic mean of two coarse
cells on each face anyway, so the combined rule is harmonic along the flux and arithmetic
across it, the upscaling of parallel paths; harmonic means at both stages let one nearly
insulating child block a whole coarse cell in every direction and make coarse operators too
weak (measured V-cycle factors with an i.i.d. coefficient over two decades: 0.74 arithmetic,
0.94 harmonic, 64^2 2D).

Transfers: prolongation P is the bilinear (trilinear) interpolation of cell-centred values, 3/4
from the own coarse cell and 1/4 from the neighbour per axis, with the operator's ghost rule
(-x on Dirichlet, +x on Neumann sides) beyond the boundary; restriction is R = 2^-d P^T, a
(1, 3, 3, 1) / 8 average per axis. Piecewise-constant P converges at 0.48 instead of 0.19 on
the 2D model problem (interpolation plus restriction order must exceed the operator's order 2).

Smoothing: by default Chebyshev polynomials in D^-1 A of degree `sweeps` on the interval
[2 / (4 sweeps), 2] (2 bounds the spectrum of D^-1 A for these diagonally dominant rows; degree
1 is damped Jacobi with omega 0.8; the lower end was tuned on the model problem). They cost what
Jacobi costs (one stencil pass per step, one more vector read) and reduce the asymptotic V(2,2)
factor of the Dirichlet Poisson problem from 0.28 to 0.19 in 2D and from 0.35 to 0.26 in 3D
(V(3,3): 0.11 and 0.15); damped Jacobi (omega 0.8 in 2D, 6/7 in 3D) is smoother="jacobi". The
same polynomial before and after the coarse correction and R = 2^-d P^T make M symmetric, and a
smoothing polynomial below 1 in magnitude on (0, 2] makes it positive definite: required for CG.

Coarsest level: a Chebyshev iteration over the exact interval [lambda_min, lambda_max] of D^-1 A
(computed on the host when the hierarchy is built) with enough steps to reduce the error 100
times, so the cycle's factor does not depend on the grid. Grids of up to 1024 cells run all the
steps in one single-block launch with the iterates in shared memory.

Limitation: point smoothers and isotropic coarsening assume comparable axis weights k / h^2;
strongly anisotropic spacing and coefficients that jump by orders of magnitude slow the cycle
(bilinear interpolation does not follow the kinks of the solution at a jump); as a CG
preconditioner it stays symmetric positive definite and still removes most of the condition
number.
"""

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .operator import LaunchSequence, overlap
from .stencil import BLOCK, MAX_GRID_YZ, StencilLaplacian

SOURCE = "linalg/multigrid.cu"
COARSE_MAX = 1024  # the largest grid mg_coarse_solve holds (in shared memory)
COARSE_THREADS = 256  # threads of the one mg_coarse_solve block
COARSE_REDUCTION = 0.01  # error reduction of the default coarsest-level solve
# ... in at most this many steps: on a strongly anisotropic grid the degree grows as the square
# root of the condition number (a cell aspect of 10^6: ~10^6 steps a cycle); capped, the coarse
# solve is partial (still symmetric positive definite, the cycle weaker) and its cost bounded.
MAX_COARSE_SWEEPS = 1000
MIN_COARSE_CELLS = 4  # coarsening stops before an axis would get fewer cells
TILES = {2: (16, 16, 1), 3: (8, 8, 4)}  # (TX, TY, TZ) of mg_residual_restrict
SMOOTHERS = ("chebyshev", "jacobi")
JACOBI_OMEGA = {2: 0.8, 3: 6 / 7}  # 2 / (l + 2): the high frequencies are D^-1 A >= l = 1/2, 1/3
SPECTRUM_BOUND = 2.0  # lambda(D^-1 A) <= 2 (Gershgorin: A_cc >= sum of |A_cn|)


def kernel_defines(ndim, variable):
    """The defines of multigrid.cu: the operator's (as stencil.cu's DIM and VARIABLE) and the
    launch constants, the coarse solve's capacity and the residual tile."""
    tx, ty, tz = TILES[ndim]
    return {"DIM": int(ndim), "VARIABLE": int(bool(variable)), "COARSE_MAX": COARSE_MAX,
            "TX": tx, "TY": ty, "TZ": tz}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    for ndim in (2, 3):
        for variable in (False, True):
            yield SOURCE, kernel_defines(ndim, variable)


def coarse_shapes(shape, levels=None):
    """The grid of every level: halve all axes while they are even and the halves >= 4."""
    shapes = [tuple(shape)]
    while (levels is None or len(shapes) < levels) and all(
            n % 2 == 0 and n // 2 >= MIN_COARSE_CELLS for n in shapes[-1]):
        shapes.append(tuple(n // 2 for n in shapes[-1]))
    return shapes


def coarsen_coefficient(coefficient):
    """A coarse cell's coefficient: the arithmetic mean of its 2^d children (a number stays)."""
    if not isinstance(coefficient, np.ndarray):
        return coefficient
    split = [m for n in coefficient.shape for m in (n // 2, 2)]
    return coefficient.reshape(split).mean(axis=tuple(range(1, len(split), 2)))


def chebyshev_steps(lower, upper, degree):
    """(alpha_m, beta_m) of the Chebyshev iteration for D^-1 A with spectrum in [lower, upper]:
    x_1 = x_0 + beta_0 D^-1 r_0, x_{m+1} = x_m + alpha_m (x_m - x_{m-1}) + beta_m D^-1 r_m
    (Saad, Iterative Methods, algorithm 12.1, written for the iterates)."""
    theta, delta = (upper + lower) / 2, (upper - lower) / 2
    sigma = theta / delta
    steps = [(0.0, 1 / theta)]
    rho = 1 / sigma
    for _ in range(1, degree):
        rho_next = 1 / (2 * sigma - rho)
        steps.append((rho_next * rho, 2 * rho_next / delta))
        rho = rho_next
    return steps


def chebyshev_degree(lower, upper, reduction, most=MAX_COARSE_SWEEPS):
    """The least degree whose Chebyshev polynomial on [lower, upper] is <= reduction there, at
    most `most`."""
    root = np.sqrt(upper / lower)
    q = (root - 1) / (root + 1)
    degree = 1
    while degree < most and 2 * q**degree / (1 + q**(2 * degree)) > reduction:
        degree += 1
    return degree


def kernel_steps(steps, zero_start):
    """(scale, alpha, beta) of the mg_smooth launches for (alpha_m, beta_m): from x_0 = 0 the
    first step is mg_smooth_first and the second has x_{m-1} = 0 folded into its scale, so no
    launch reads an uninitialised previous iterate."""
    out = []
    for m, (alpha, beta) in enumerate(steps):
        if zero_start and m == 1:
            out.append((1.0 + alpha, 0.0, beta))
        else:
            out.append((1.0, alpha, beta))
    return out


def spectrum(op):
    """(smallest nonzero, largest) eigenvalue of D^-1 A for the coarsest operator, in float64:
    dense for up to COARSE_MAX cells, else Lanczos (ARPACK) from a fixed start vector, so that
    a hierarchy built twice is the same to the bit."""
    scale = 1 / np.sqrt(op.diagonal())
    S = (sp.diags(scale) @ op.to_scipy() @ sp.diags(scale)).tocsr()  # D^-1/2 A D^-1/2
    singular = op._dirichlet == 0  # all sides Neumann: null space D^1/2 (1, ..., 1)
    if op.n <= COARSE_MAX:
        values = scipy.linalg.eigvalsh(S.toarray())
        return float(values[1 if singular else 0]), float(values[-1])
    start = np.random.default_rng(0).uniform(0.5, 1.5, op.n)
    upper = float(spla.eigsh(S, k=1, which="LA", v0=start, return_eigenvectors=False)[0])
    lowest = spla.eigsh(S, k=2 if singular else 1, which="SA", v0=start,
                        return_eigenvectors=False)
    return float(np.max(lowest)), upper


class Smoothing:
    """The smoothing of a geometric V-cycle (this one's, a distributed one's): smoother, sweeps
    and omega checked as GeometricMultigrid's; pre_steps and post_steps, the (scale, alpha,
    beta) of the launches before and after the coarse correction (host float64; the launches
    round the scalars to `real`)."""

    def __init__(self, smoother, sweeps, omega, ndim):
        if smoother not in SMOOTHERS:
            raise ValueError(f"smoother must be one of {', '.join(SMOOTHERS)}, got {smoother!r}")
        if not isinstance(sweeps, (int, np.integer)) or sweeps < 1:
            raise ValueError(f"sweeps must be a positive integer, got {sweeps!r}")
        if omega is not None and smoother != "jacobi":
            raise ValueError("omega is the damping of smoother='jacobi'")
        self.smoother, self.sweeps = smoother, int(sweeps)
        if smoother == "jacobi":
            self.omega = float(JACOBI_OMEGA[ndim] if omega is None else omega)
            if not 0 < self.omega < 1:
                raise ValueError(f"omega must be in (0, 1) (the smoother must damp every mode "
                                 f"of D^-1 A, whose spectrum reaches 2), got {omega!r}")
            smoothing = [(0.0, self.omega)] * self.sweeps
        else:
            self.omega = None
            lower = SPECTRUM_BOUND / (4 * self.sweeps)
            smoothing = chebyshev_steps(lower, SPECTRUM_BOUND, self.sweeps)
        self.pre_steps = kernel_steps(smoothing, zero_start=True)
        self.post_steps = kernel_steps(smoothing, zero_start=False)


class GeometricMultigrid(Smoothing):
    """One V-cycle of geometric multigrid for a StencilLaplacian (see the module docstring).

    operator       the finest level: a StencilLaplacian whose axes are even with >= 8 cells
    levels         number of levels (>= 2), or None for as many as the grid allows
    smoother       'chebyshev' (default) or 'jacobi' (damped)
    sweeps         smoothing steps before and after each coarse correction (the degree)
    omega          Jacobi damping in (0, 1); default 0.8 (2D) or 6/7 (3D)
    coarse_sweeps  Chebyshev steps of the coarsest-level solve; default: a 100-fold reduction
    """

    name = "geometric_multigrid"

    def __init__(self, operator, levels=None, smoother="chebyshev", sweeps=2, omega=None,
                 coarse_sweeps=None):
        if not isinstance(operator, StencilLaplacian):
            raise TypeError(f"geometric multigrid needs a StencilLaplacian (a structured grid "
                            f"it can coarsen), got {type(operator).__name__}")
        shapes = coarse_shapes(operator.shape)
        if len(shapes) < 2:
            raise ValueError(f"grid {operator.shape} cannot be coarsened: multigrid halves "
                             f"every axis, so each needs an even number of at least "
                             f"{2 * MIN_COARSE_CELLS} cells")
        if levels is not None:
            if not isinstance(levels, (int, np.integer)) or not 2 <= levels <= len(shapes):
                raise ValueError(f"levels must be an integer from 2 to {len(shapes)} for grid "
                                 f"{operator.shape}, got {levels!r}")
            shapes = shapes[:levels]
        Smoothing.__init__(self, smoother, sweeps, omega, operator.ndim)
        if coarse_sweeps is not None and (not isinstance(coarse_sweeps, (int, np.integer))
                                          or coarse_sweeps < 1):
            raise ValueError(f"coarse_sweeps must be a positive integer, got {coarse_sweeps!r}")

        self.operator = operator
        self.backend = operator.backend
        self.dtype = operator.dtype
        self.n = operator.n
        self.ndim = operator.ndim
        precision = "fp32" if self.dtype == np.float32 else "fp64"
        self.operators = [operator]
        coefficient = operator.coefficient
        for level in range(1, len(shapes)):
            coefficient = coarsen_coefficient(coefficient)
            spacing = tuple(h * 2**level for h in operator.spacing)
            self.operators.append(StencilLaplacian(
                shapes[level], spacing, coefficient=coefficient, boundary=operator.boundary,
                backend=self.backend, precision=precision))
        self.levels = len(self.operators)
        self.shapes = tuple(op.shape for op in self.operators)


        # Coarsest level: Chebyshev over the measured spectrum, a 2% margin each side.
        low, high = spectrum(self.operators[-1])
        self.coarse_interval = (0.98 * low, 1.02 * high)
        self.coarse_sweeps = int(coarse_sweeps if coarse_sweeps is not None else
                                 chebyshev_degree(*self.coarse_interval, COARSE_REDUCTION))
        self._coarse = kernel_steps(chebyshev_steps(*self.coarse_interval, self.coarse_sweeps),
                                    zero_start=True)

        variable = isinstance(operator.coefficient, np.ndarray)
        self._kernels = self.backend.module(SOURCE, self.dtype,
                                            kernel_defines(self.ndim, variable))
        # Work vectors: right-hand side b, iterate x and its partner y per level; level 0 reads
        # the caller's r and finishes in the caller's z.
        b = self.backend
        self._rhs = [None] + [b.zeros((op.n,), self.dtype) for op in self.operators[1:]]
        self._x = [None] + [b.zeros((op.n,), self.dtype) for op in self.operators[1:]]
        self._y = [b.zeros((op.n,), self.dtype) for op in self.operators]
        self._coarse_coef = b.to_device(np.array(self._coarse, dtype=self.dtype).ravel())

    def __repr__(self):
        grids = " -> ".join("x".join(map(str, s)) for s in self.shapes)
        return (f"GeometricMultigrid({self.levels} levels {grids}, {self.smoother} "
                f"V({self.sweeps},{self.sweeps}), coarsest {self.coarse_sweeps} Chebyshev steps)")

    def bind(self, r, z):
        """A callable that launches one V-cycle z = M r from z = 0 (no allocation, no host
        read: capturable). Bound cycles share the work vectors: run one at a time."""
        self.operator.check_vector(r, "r")
        self.operator.check_vector(z, "z")
        if overlap(r, z):
            raise ValueError("r and z must not overlap: the cycle reads r while writing z")
        launches = []
        self._bind_level(0, r, z, launches)
        return LaunchSequence(self, launches)

    # -- one level of the cycle ---------------------------------------------------------------
    def _args(self, level):
        """The StencilLaplacian kernel arguments of a level: inverse coefficients, grid,
        axis weights, Dirichlet mask (the same the operator's own kernel takes)."""
        op = self.operators[level]
        nx, ny, nz = (*op.shape, 1)[:3]
        return op._inv_coef, nx, ny, nz, *op._weights, op._dirichlet

    def _pointwise_grid(self, level):
        nx, ny, nz = (*self.shapes[level], 1)[:3]
        return (-(-nx // BLOCK[0]), min(-(-ny // BLOCK[1]), MAX_GRID_YZ), min(nz, MAX_GRID_YZ))

    def _smooth(self, level, b, first, other, steps, zero_start, launches):
        """Launch `steps` writing alternately into `first` and `other` (starting from `other`
        holding the current iterate unless zero_start); returns the buffer of the result."""
        k = self._kernels
        grid, args = self._pointwise_grid(level), self._args(level)
        target, source = first, other
        for m, (scale, alpha, beta) in enumerate(steps):
            if zero_start and m == 0:
                launches.append(k.mg_smooth_first.bind(grid, BLOCK, b, target, *args, beta))
            else:
                launches.append(k.mg_smooth.bind(grid, BLOCK, source, target, b, *args, scale,
                                                 alpha, beta))
            target, source = source, target
        return source

    def _bind_level(self, level, b, x, launches):
        """Launches solving level `level` approximately for rhs b, the result in x."""
        y = self._y[level]
        if level == self.levels - 1:
            self._bind_coarse(level, b, x, y, launches)
            return
        # Pre- and post-smoothing write 2 sweeps times alternately; starting in y ends in x.
        current = self._smooth(level, b, y, x, self.pre_steps, True, launches)
        coarse_b, coarse_x = self._rhs[level + 1], self._x[level + 1]
        nc = (*self.shapes[level + 1], 1)[:3]
        tile = TILES[self.ndim]
        grid = (-(-nc[0] // tile[0]), min(-(-nc[1] // tile[1]), MAX_GRID_YZ),
                min(-(-nc[2] // tile[2]), MAX_GRID_YZ))
        inv_coef, nx, ny, nz, *rest = self._args(level)
        launches.append(self._kernels.mg_residual_restrict.bind(
            grid, tile, current, b, inv_coef, coarse_b, nx, ny, nz, *rest))
        self._bind_level(level + 1, coarse_b, coarse_x, launches)
        launches.append(self._kernels.mg_prolong_add.bind(
            self._pointwise_grid(level), BLOCK, coarse_x, current, nx, ny, nz, rest[-1]))
        other = y if current is x else x
        result = self._smooth(level, b, other, current, self.post_steps, False, launches)
        assert result is x

    def _bind_coarse(self, level, b, x, y, launches):
        op = self.operators[level]
        if op.n <= COARSE_MAX:
            launches.append(self._kernels.mg_coarse_solve.bind(
                1, COARSE_THREADS, b, x, *self._args(level), self._coarse_coef,
                len(self._coarse)))
            return
        # Larger coarsest grids: one launch per step, ending in x.
        first, other = (x, y) if len(self._coarse) % 2 else (y, x)
        result = self._smooth(level, b, first, other, self._coarse, True, launches)
        assert result is x
