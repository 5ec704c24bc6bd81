"""Matrix-free structured-grid Laplacian: the cell-centred finite-volume discretisation of
-div(k grad u) on a uniform 2D (5-point) or 3D (7-point) grid, applied by one kernel
(raw_kernels/linalg/stencil.cu) behind the LinearOperator interface.

    op = StencilLaplacian((nx, ny), (hx, hy), coefficient=k, boundary={"y_hi": "neumann"})
    apply = op.bind(x, y)      # y = A x, capturable in a graph
    A = op.to_scipy()          # the same matrix, assembled independently in NumPy/SciPy

Unknowns are numbered x fastest, i + nx * (j + ny * k): a cell array u of the grid shape,
indexed [i, j(, k)], is the vector u.ravel(order="F"). Row c of A is the sum over the faces of
cell c of k_f / h^2 (u_c - u_n), h the spacing along the face normal and k_f the harmonic mean
of the two cells' coefficients. A boundary side is homogeneous Dirichlet (u = 0 on the face:
the ghost value is -u_c, adding 2 k_c / h^2 to the diagonal) or Neumann (zero flux). A is
symmetric positive definite, or semidefinite with the constants as null space when every side
is Neumann. The scale is the plain discretisation (no multiplication by the cell volume).
"""

import numpy as np
import scipy.sparse as sp

from ..backend import get_backend
from ..precision import real_dtype
from .operator import LinearOperator, overlap

SIDES = ("x_lo", "x_hi", "y_lo", "y_hi", "z_lo", "z_hi")
KINDS = ("dirichlet", "neumann")
SOURCE = "linalg/stencil.cu"
BLOCK = (32, 8, 1)  # threads per block: (i, j) tile, one z layer
LAYERS_3D = 8  # z layers a thread walks in 3D (STENCIL_LAYERS of the kernel; 1 in 2D)
MAX_GRID_YZ = 65535  # CUDA's limit on gridDim.y and gridDim.z; the kernel loops beyond it
MAX_UNKNOWNS = 2**31 - 1  # the kernel indexes with int


def kernel_defines(ndim, variable, layers=LAYERS_3D):
    """The stencil kernels' defines; `layers`: the z layers a thread walks in 3D."""
    return {"DIM": int(ndim), "VARIABLE": int(bool(variable)),
            "STENCIL_THREADS": BLOCK[0] * BLOCK[1] * BLOCK[2],
            "STENCIL_LAYERS": layers if ndim == 3 else 1}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    for ndim in (2, 3):
        for variable in (False, True):
            yield SOURCE, kernel_defines(ndim, variable)


class StencilLaplacian(LinearOperator):
    """y = A x for -div(k grad u) on a uniform grid (see the module docstring).

    shape        (nx, ny) or (nx, ny, nz) cells
    spacing      (hx, hy) or (hx, hy, hz), positive
    coefficient  None (k = 1), a positive number (constant k), or a host array of the grid
                 shape, indexed [i, j(, k)], of positive finite values (k per cell)
    boundary     {side: 'dirichlet' | 'neumann'} for sides x_lo, x_hi, y_lo, y_hi (, z_lo,
                 z_hi); missing sides are Dirichlet
    backend      'auto', 'cuda', 'host' or a Backend
    precision    'fp32' or 'fp64': the kernel's `real` and the vectors' dtype
    """

    name = "stencil_laplacian"

    def __init__(self, shape, spacing, coefficient=None, boundary=None, backend="auto",
                 precision="fp32"):
        self.shape, self.spacing, self.coefficient, self.boundary = check_problem(
            shape, spacing, coefficient, boundary)
        self.ndim = len(self.shape)
        dtype = real_dtype(precision)
        backend = get_backend(backend)
        super().__init__(int(np.prod(self.shape)), dtype, backend)

        # Kernel arguments: per-axis weights 1/h^2 (times k when it is constant) and, for a
        # variable k, its inverse per cell; both must survive the rounding to `real`.
        self.variable = variable = isinstance(self.coefficient, np.ndarray)
        self._weights = axis_weights(self.spacing, self.coefficient, dtype)
        inverse = (inverse_coefficient(self.coefficient, dtype).ravel(order="F") if variable
                   else np.ones(1, dtype))  # not read by the constant-coefficient kernel
        self._inv_coef = self.backend.to_device(inverse)
        self._no_dot = self.backend.zeros((1,), np.float64)
        self._no_tickets = self.backend.zeros((1,), np.int32)
        self._dirichlet = dirichlet_bits(self.boundary, self.ndim)
        self._kernel = self.backend.module(
            SOURCE, dtype, kernel_defines(self.ndim, variable)).stencil_apply

    def bind(self, x, y):
        """A callable that launches y = A x (no allocation, no host read: capturable)."""
        return self._bind(x, y, None)

    def bind_with_dot(self, x, y, dot):
        """A callable that launches y = A x and dot[0] = x.y (a float64 device array of one
        element), in one kernel: conjugate gradients need p.Ap right after A p."""
        if not (self.backend.is_array(dot) and dot.shape == (1,) and dot.dtype == np.float64):
            raise ValueError("dot must be a float64 device array of shape (1,)")
        return self._bind(x, y, dot)

    def _bind(self, x, y, dot):
        self.check_vector(x, "x")
        self.check_vector(y, "y")
        if overlap(x, y):
            raise ValueError("x and y must not overlap: y = A x reads neighbours of x while "
                             "writing y")
        grid, block = self.launch_shape()
        with_dot = dot is not None
        if not with_dot:  # the dot's arguments, never touched when with_dot is 0
            partials, dot, tickets = self._no_dot, self._no_dot, self._no_tickets
        else:
            # The dot's per-block partial sums and last-block counter belong to this binding
            # (the launch holds them).
            partials = self.backend.zeros((int(np.prod(grid)),), np.float64)
            tickets = self.backend.zeros((1,), np.int32)
        return self._kernel.bind(grid, block, x, y, *self.geometry(), int(with_dot), partials,
                                 dot, tickets)

    def launch_shape(self, layers=LAYERS_3D):
        """(grid, block) of the stencil kernels: (i, j) tiles, `layers` z layers walked by a
        thread in 3D."""
        nx, ny, nz = (*self.shape, 1)[:3]
        layers = layers if self.ndim == 3 else 1
        grid = (-(-nx // BLOCK[0]), min(-(-ny // BLOCK[1]), MAX_GRID_YZ),
                min(-(-nz // layers), MAX_GRID_YZ))
        return grid, BLOCK

    def geometry(self):
        """The stencil kernels' arguments after the vectors: the inverse coefficients, nx, ny,
        nz, the three axis weights and the Dirichlet side bits."""
        return (self._inv_coef, *(*self.shape, 1)[:3], *self._weights, self._dirichlet)

    def diagonal(self):
        """The diagonal of A, host float64: the sum of the cell's face weights."""
        diag = np.zeros(self.shape)
        for axis, interior, lo, hi in self._face_weights():
            diag[_cells(axis, slice(None, -1), self.ndim)] += interior
            diag[_cells(axis, slice(1, None), self.ndim)] += interior
            diag[_cells(axis, slice(0, 1), self.ndim)] += lo
            diag[_cells(axis, slice(-1, None), self.ndim)] += hi
        return diag.ravel(order="F")

    def to_scipy(self):
        """A as scipy.sparse CSR in float64, assembled face by face from the formula in NumPy
        (independent of the kernel: the reference the tests compare it with)."""
        index = np.arange(self.n).reshape(self.shape, order="F")
        rows, cols, vals = [np.arange(self.n)], [np.arange(self.n)], [self.diagonal()]
        for axis, interior, _, _ in self._face_weights():
            left = index[_cells(axis, slice(None, -1), self.ndim)].ravel()
            right = index[_cells(axis, slice(1, None), self.ndim)].ravel()
            w = interior.ravel()
            rows += [left, right]
            cols += [right, left]
            vals += [-w, -w]
        matrix = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                       np.concatenate(cols))),
                               shape=(self.n, self.n))
        return matrix.tocsr()

    def _face_weights(self):
        """Per axis: (axis, weights k_f / h^2 of the interior faces, as an array of the grid
        shape one shorter along the axis, weights of the low and high boundary faces, as
        arrays of the grid shape with that axis of length 1: 2 k_c / h^2 or 0)."""
        k = np.broadcast_to(self.coefficient, self.shape)
        for axis, h in enumerate(self.spacing):
            a = k[_cells(axis, slice(None, -1), self.ndim)]
            b = k[_cells(axis, slice(1, None), self.ndim)]
            interior = 2.0 * a * b / (a + b) / h**2
            walls = []
            for side, end in ((2 * axis, slice(0, 1)), (2 * axis + 1, slice(-1, None))):
                dirichlet = self.boundary[SIDES[side]] == "dirichlet"
                walls.append(2.0 * k[_cells(axis, end, self.ndim)] / h**2 * dirichlet)
            yield axis, interior, walls[0], walls[1]


def check_problem(shape, spacing, coefficient, boundary, kinds=KINDS):
    """(shape, spacing, coefficient, boundary) checked and normalised as StencilLaplacian's
    arguments (ValueError naming the first bad one); kinds: the boundary kinds allowed."""
    shape = _check_shape(shape)
    spacing = _check_spacing(spacing, len(shape))
    boundary = _check_boundary(boundary, len(shape), kinds)
    return shape, spacing, _check_coefficient(coefficient, shape), boundary


def laplacian_matrix(shape, spacing, kinds):
    """A (k = 1) as scipy CSR (float64), also with periodic sides, which StencilLaplacian's
    kernel does not wrap: per axis, w = 1/h^2 between neighbours (wrapping around a periodic
    axis), 2 w on the diagonal at a Dirichlet face, nothing at a Neumann face.
    kinds: {side: 'dirichlet' | 'neumann' | 'periodic'}; cells numbered x fastest (i + nx j,
    in 3D i + nx (j + ny k))."""
    n = int(np.prod(shape))
    index = np.arange(n).reshape(shape, order="F")  # [i, j(, k)] -> i + nx j (+ nx ny k)
    diag = np.zeros(shape)
    rows, cols, vals = [], [], []
    for axis, (lo, hi) in enumerate(zip(SIDES[:2 * len(shape):2], SIDES[1::2])):
        w = 1.0 / spacing[axis] ** 2
        a = np.moveaxis(index, axis, 0)
        d = np.moveaxis(diag, axis, 0)  # a view: writes reach diag
        pairs = [(a[:-1], a[1:])]
        if kinds[lo] == "periodic":
            pairs.append((a[-1:], a[:1]))
        for left, right in pairs:
            rows += [left.ravel(), right.ravel()]
            cols += [right.ravel(), left.ravel()]
            vals += [np.full(left.size, -w)] * 2
        d[:-1] += w
        d[1:] += w
        if kinds[lo] == "periodic":
            d[0] += w
            d[-1] += w
        d[0] += 2 * w * (kinds[lo] == "dirichlet")
        d[-1] += 2 * w * (kinds[hi] == "dirichlet")
    rows.append(index.ravel())
    cols.append(index.ravel())
    vals.append(diag.ravel())
    return sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n)).tocsr()


def axis_weights(spacing, coefficient, dtype):
    """The kernels' three axis weights k / h^2 (k = 1 for a per-cell coefficient; 0 beyond the
    grid's axes), as floats rounded to dtype; ValueError if one is not representable."""
    variable = isinstance(coefficient, np.ndarray)
    k = 1.0 if variable else coefficient
    ndim = len(spacing)
    weights = [k / h**2 for h in spacing] + [0.0] * (3 - ndim)
    with np.errstate(over="ignore", under="ignore"):
        rounded = np.array(weights, dtype=dtype)
    if not (np.all(np.isfinite(rounded)) and np.all(rounded[:ndim] > 0)):
        raise ValueError(f"spacing {tuple(spacing)}: the weights {'1' if variable else 'k'}"
                         f" / h^2 are not representable in {np.dtype(dtype)}")
    return [float(w) for w in rounded]


def inverse_coefficient(coefficient, dtype):
    """1 / k of a per-cell coefficient array in dtype (same shape); ValueError where it is not
    representable."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        inverse = (1.0 / coefficient).astype(dtype)
    if not np.all(np.isfinite(inverse) & (inverse >= np.finfo(dtype).tiny)):
        raise ValueError(f"coefficient values must have 1/k representable in {np.dtype(dtype)} "
                         f"(got k from {coefficient.min():g} to {coefficient.max():g})")
    return inverse


def dirichlet_bits(boundary, ndim):
    """The kernels' side bits: bit s set where side s (SIDES order) is Dirichlet."""
    return sum(1 << s for s, side in enumerate(SIDES[:2 * ndim]) if boundary[side] == "dirichlet")


def _cells(axis, selection, ndim):
    """An index selecting `selection` along `axis` and everything along the other axes."""
    return tuple(selection if a == axis else slice(None) for a in range(ndim))


def _check_shape(shape):
    try:
        values = tuple(shape)
    except TypeError:
        values = None
    if (values is None or len(values) not in (2, 3)
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1
                       for v in values)):
        raise ValueError(f"shape must be (nx, ny) or (nx, ny, nz) of positive integers, "
                         f"got {shape!r}")
    values = tuple(int(v) for v in values)
    if np.prod(values, dtype=np.int64) > MAX_UNKNOWNS:
        raise ValueError(f"shape {values} has more than {MAX_UNKNOWNS} cells")
    return values


def _check_spacing(spacing, ndim):
    try:
        values = tuple(float(h) for h in spacing)
    except (TypeError, ValueError):
        values = None
    if values is None or len(values) != ndim or not all(np.isfinite(values)) \
            or min(values) <= 0:
        raise ValueError(f"spacing must be {ndim} positive finite numbers (hx, hy"
                         f"{', hz' if ndim == 3 else ''}), got {spacing!r}")
    return values


def _check_boundary(boundary, ndim, kinds):
    sides = SIDES[:2 * ndim]
    result = dict.fromkeys(sides, "dirichlet")
    for side, kind in dict(boundary or {}).items():
        if side not in sides:
            raise ValueError(f"boundary side {side!r}: a {ndim}D grid has only "
                             f"{', '.join(sides)}")
        if kind not in kinds:
            raise ValueError(f"boundary {side}: kind must be {' or '.join(map(repr, kinds))}, "
                             f"got {kind!r}")
        result[side] = kind
    return result


def _check_coefficient(coefficient, shape):
    """1.0 for None, a float for a constant, a float64 array of the grid shape otherwise."""
    if coefficient is None:
        return 1.0
    values = np.asarray(coefficient)
    if values.shape not in ((), shape):
        raise ValueError(f"coefficient must be a number or an array of the grid shape {shape}, "
                         f"got shape {values.shape}")
    if values.dtype == bool or not (np.issubdtype(values.dtype, np.integer)
                                    or np.issubdtype(values.dtype, np.floating)):
        raise ValueError(f"coefficient must be real numbers, got dtype {values.dtype}")
    values = values.astype(np.float64)
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError("coefficient must be positive and finite in every cell")
    return float(values) if values.ndim == 0 else values
