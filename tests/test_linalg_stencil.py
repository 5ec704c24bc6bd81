"""The matrix-free structured-grid Laplacian (raw_kernels/linalg/stencil.cu) against its SciPy
matrix, and that matrix against independent constructions and the PDE it discretises.

Rounding bound for y = A x (x given exactly in the kernel's precision, A in float64): with u the
unit roundoff of the kernel's `real`, each face term w k_f (x_c - x_n) of the kernel carries at
most about 10 u relative error (inverse coefficients rounded to `real` 2 u, their sum 1 u, the
division up to 2 ulp = 4 u with the GPU's approximate fp32 division, the weight and two products
3 u) and summing at most 7 terms adds 6 u, so |y - A x|_c <= 16 u (|A| |x|)_c. The float64
reference to_scipy() @ x carries about 17 u64 (entries 5 u64, 7-term dot product 7 u64, the
diagonal's sum 5 u64). The tests allow 40 u of the kernel precision elementwise relative to
|A| |x| (3e-6 in fp32, 5e-15 in fp64); measured errors are 2 to 5 u.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.backend import get_backend
from solvers.linalg.stencil import StencilLaplacian, compiled_kernels

ROUNDING_UNITS = 40  # see the module docstring

MIXED_2D = {"x_lo": "neumann", "y_hi": "neumann"}
MIXED_3D = {"x_hi": "neumann", "y_lo": "neumann", "z_hi": "neumann"}
ALL_NEUMANN_2D = dict.fromkeys(("x_lo", "x_hi", "y_lo", "y_hi"), "neumann")
ALL_NEUMANN_3D = {**ALL_NEUMANN_2D, "z_lo": "neumann", "z_hi": "neumann"}

# (shape, spacing, coefficient: None | "constant" | "variable", boundary). Shapes are not
# multiples of the 32 x 8 thread block, so partial blocks are exercised.
CASES = {
    "2d": ((37, 19), (1 / 37, 1 / 19), None, None),
    "2d_constant_aniso": ((37, 19), (0.1, 0.003), "constant", MIXED_2D),
    "2d_variable": ((45, 23), (0.02, 0.05), "variable", MIXED_2D),
    "2d_variable_neumann": ((33, 9), (1.0, 0.25), "variable", ALL_NEUMANN_2D),
    "3d": ((13, 11, 7), (1 / 13, 1 / 11, 1 / 7), None, None),
    "3d_constant_aniso": ((13, 11, 7), (0.2, 0.1, 0.05), "constant", MIXED_3D),
    "3d_variable": ((17, 10, 9), (0.03, 0.07, 0.02), "variable", MIXED_3D),
    "3d_variable_neumann": ((9, 12, 5), (0.5, 0.1, 0.3), "variable", ALL_NEUMANN_3D),
}


def rough_coefficient(shape, seed=1):
    """A cell coefficient over two orders of magnitude, uncorrelated between cells."""
    return np.exp(np.random.default_rng(seed).uniform(-2.3, 2.3, shape))


def make(case, backend, precision):
    shape, spacing, coefficient, boundary = CASES[case]
    k = {None: None, "constant": 3.7, "variable": rough_coefficient(shape)}[coefficient]
    return StencilLaplacian(shape, spacing, coefficient=k, boundary=boundary, backend=backend,
                            precision=precision)


def apply(op, x):
    """A x by the operator's kernel, for a host vector x already in op.dtype."""
    backend = op.backend
    x_dev, y_dev = backend.to_device(x), backend.zeros((op.n,), op.dtype)
    op.bind(x_dev, y_dev)()
    return backend.to_host(y_dev)


def rounding_error(y, A, x):
    """max_c |y - A x|_c / (|A| |x|)_c in units of the unit roundoff of y's precision."""
    x = x.astype(np.float64)
    scale = abs(A) @ abs(x)
    return np.max(np.abs(y - A @ x) / scale) / (np.finfo(y.dtype).eps / 2)


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_matches_scipy_matrix(backend_name, case, precision):
    op = make(case, backend_name, precision)
    x = np.random.default_rng(2).uniform(-1, 1, op.n).astype(op.dtype)
    y = apply(op, x)
    assert y.dtype == op.dtype
    assert rounding_error(y, op.to_scipy(), x) <= ROUNDING_UNITS


@pytest.mark.parametrize("case", sorted(CASES))
def test_matrix_is_symmetric_with_matching_diagonal(case):
    op = make(case, "host", "fp64")
    A = op.to_scipy()
    assert A.shape == (op.n, op.n) and A.dtype == np.float64
    assert abs(A - A.T).max() == 0
    np.testing.assert_array_equal(op.diagonal(), A.diagonal())
    # Diagonally dominant with a positive diagonal and non-positive off-diagonal entries.
    off = A - sp.diags(A.diagonal())
    assert off.max() <= 0 and np.all(A.diagonal() > 0)
    assert np.all(A.diagonal() >= -np.asarray(off.sum(axis=1)).ravel() * (1 - 1e-15))


def test_definiteness_small_dense():
    """Dirichlet somewhere: positive definite; all Neumann: one zero eigenvalue (constants)."""
    k = rough_coefficient((6, 5))
    dirichlet = StencilLaplacian((6, 5), (0.3, 0.2), k, MIXED_2D, backend="host",
                                 precision="fp64")
    neumann = StencilLaplacian((6, 5), (0.3, 0.2), k, ALL_NEUMANN_2D, backend="host",
                               precision="fp64")
    eig_d = np.linalg.eigvalsh(dirichlet.to_scipy().toarray())
    eig_n = np.linalg.eigvalsh(neumann.to_scipy().toarray())
    assert eig_d[0] > 1e-3 * eig_d[-1]
    assert abs(eig_n[0]) < 1e-12 * eig_n[-1] and eig_n[1] > 1e-3 * eig_n[-1]


def second_difference(n, h):
    """1D cell-centred -d2/dx2 with homogeneous Dirichlet ends (ghost = -u: diagonal 3)."""
    main = np.full(n, 2.0)
    main[[0, -1]] = 3.0
    return sp.diags([-np.ones(n - 1), main, -np.ones(n - 1)], [-1, 0, 1]) / h**2


def test_constant_dirichlet_2d_equals_kronecker_sum():
    nx, ny, hx, hy, k = 7, 5, 0.3, 0.11, 2.5
    op = StencilLaplacian((nx, ny), (hx, hy), coefficient=k, backend="host", precision="fp64")
    # x fastest: A = I_y (x) T_x + T_y (x) I_x.
    kron = k * (sp.kron(sp.identity(ny), second_difference(nx, hx))
                + sp.kron(second_difference(ny, hy), sp.identity(nx)))
    assert abs(op.to_scipy() - kron).max() <= 1e-14 * abs(kron).max()


def test_numbering_is_x_fastest():
    """Unknown (i, j, k) is i + nx (j + ny k): a grid array maps by ravel(order='F')."""
    shape, h = (4, 3, 2), (1.0, 10.0, 100.0)
    op = StencilLaplacian(shape, h, boundary=ALL_NEUMANN_3D, backend="host", precision="fp64")
    A = op.to_scipy()
    c = 1 + 4 * (1 + 3 * 1)  # cell (1, 1, 1)
    assert A[c, c - 1] == A[c, c + 1] == -1.0
    assert A[c, c - 4] == A[c, c + 4] == -1e-2
    assert A[c, c - 12] == -1e-4


@pytest.mark.parametrize("shape", [(37, 21), (9, 8, 7), (2, 1, 66000)])
def test_product_with_dot(backend_name, shape):
    """bind_with_dot gives the same y as bind and x.y to double rounding (the per-block double
    sums of fp32 products are exact to ~1e-16 relative), the same bits on every launch."""
    op = StencilLaplacian(shape, (0.5, 1.0, 2.0)[:len(shape)], backend=backend_name,
                          precision="fp32")
    backend = op.backend
    x_host = np.random.default_rng(5).uniform(-1, 1, op.n).astype(np.float32)
    x, y = backend.to_device(x_host), backend.zeros((op.n,), np.float32)
    dot = backend.zeros((1,), np.float64)
    launch = op.bind_with_dot(x, y, dot)
    launch()
    first = backend.to_host(dot)[0]
    launch()
    assert backend.to_host(dot)[0] == first
    y_host = backend.to_host(y)
    np.testing.assert_array_equal(y_host, apply(op, x_host))
    exact = np.dot(x_host.astype(np.float64), y_host.astype(np.float64))
    assert abs(first - exact) <= 1e-12 * np.dot(np.abs(x_host), np.abs(y_host))


@pytest.mark.parametrize("shape", [(1, 530000), (2, 1, 66000)])
def test_axes_longer_than_the_launch_grid(backend_name, shape):
    """ny > 8 * 65535 and nz > 65535 exceed CUDA's gridDim.y and .z: the kernel strides."""
    op = StencilLaplacian(shape, (0.5, 1.0, 2.0)[:len(shape)], boundary={"x_lo": "neumann"},
                          backend=backend_name, precision="fp64")
    x = np.random.default_rng(4).uniform(-1, 1, op.n)
    assert rounding_error(apply(op, x), op.to_scipy(), x) <= ROUNDING_UNITS


@pytest.mark.parametrize("precision", ["fp32", "fp64"])
@pytest.mark.parametrize("shape", [(21, 14), (9, 8, 7)])
def test_all_neumann_annihilates_constants(backend_name, shape, precision):
    spacing = (0.1, 0.3, 0.7)[:len(shape)]
    boundary = ALL_NEUMANN_3D if len(shape) == 3 else ALL_NEUMANN_2D
    op = StencilLaplacian(shape, spacing, rough_coefficient(shape), boundary,
                          backend=backend_name, precision=precision)
    assert abs(op.to_scipy() @ np.ones(op.n)).max() <= 1e-12 * op.diagonal().max()
    # In the kernel every face term is w k_f (x_c - x_n) with x_c - x_n = 0 exactly.
    assert np.all(apply(op, np.full(op.n, 1.75, op.dtype)) == 0)


# Manufactured solution on [0, Lx] x [0, Ly] (x [0, Lz]): u = X(x) Y(y) (Z(z)) with
#   X = sin(pi x / Lx)        u = 0 at both x sides (Dirichlet)
#   Y = cos(pi y / (2 Ly))    du/dy = 0 at y = 0 (Neumann), u = 0 at y = Ly (Dirichlet)   in 2D
#   Y = cos(pi y / Ly)        du/dy = 0 at both y sides (Neumann)                          in 3D
#   Z = sin(pi z / (2 Lz))    u = 0 at z = 0 (Dirichlet), du/dz = 0 at z = Lz (Neumann)
# and k = 1 + 0.5 sin(2 x + 3 y + z): f = -div(k grad u) = -sum_a (dk/da du/da + k d2u/da2).
LENGTHS = (1.0, 0.5, 0.7)
MANUFACTURED_BOUNDARY = {2: {"y_lo": "neumann"},
                         3: {"y_lo": "neumann", "y_hi": "neumann", "z_hi": "neumann"}}


def factors(ndim):
    """Per axis (wavenumber, phase): the factor is sin(m a + phase)."""
    lx, ly, lz = LENGTHS
    y_wave = np.pi / (2 * ly) if ndim == 2 else np.pi / ly
    return [(np.pi / lx, 0.0), (y_wave, np.pi / 2), (np.pi / (2 * lz), 0.0)][:ndim]


def manufactured(points):
    """(u, f) at the points (a tuple of coordinate arrays)."""
    ndim = len(points)
    waves = factors(ndim)
    s = [np.sin(m * p + phase) for (m, phase), p in zip(waves, points)]
    c = [m * np.cos(m * p + phase) for (m, phase), p in zip(waves, points)]
    u = np.prod(s, axis=0)
    phase = 2 * points[0] + 3 * points[1] + (points[2] if ndim == 3 else 0)
    k = 1 + 0.5 * np.sin(phase)
    dk = [0.5 * np.cos(phase) * g for g in (2.0, 3.0, 1.0)[:ndim]]
    f = np.zeros_like(u)
    for a, (m, _) in enumerate(waves):
        others = np.prod([s[b] for b in range(ndim) if b != a], axis=0)
        f -= dk[a] * c[a] * others + k * (-m * m * u)
    return u, f, k


def discretisation_error(ndim, cells):
    lengths = LENGTHS[:ndim]
    spacing = tuple(length / cells for length in lengths)
    shape = (cells,) * ndim
    centres = np.meshgrid(*[(np.arange(cells) + 0.5) * h for h in spacing], indexing="ij")
    u, f, k = manufactured(tuple(centres))
    op = StencilLaplacian(shape, spacing, coefficient=k, boundary=MANUFACTURED_BOUNDARY[ndim],
                          backend="host", precision="fp64")
    u_h = spla.spsolve(op.to_scipy().tocsc(), f.ravel(order="F"))
    return np.max(np.abs(u_h - u.ravel(order="F")))


@pytest.mark.parametrize("ndim, sizes", [(2, (32, 64, 128)), (3, (8, 12, 16, 20))])
def test_manufactured_solution_converges_at_second_order(ndim, sizes):
    """The matrix as a discretisation of -div(k grad u): the max-norm error of the discrete
    solution at the cell centres falls as h^2 (cell-centred FV with a mirrored Dirichlet ghost and
    harmonic-mean faces is second order in the max norm for smooth k and u, although the
    truncation error of the cells next to a Dirichlet side is only O(1)). Measured orders: 1.90,
    1.95 in 2D and 1.97, 1.99, 2.00 in 3D; 2D from 16 cells (1.79) is not yet asymptotic."""
    errors = np.array([discretisation_error(ndim, n) for n in sizes])
    orders = np.log(errors[:-1] / errors[1:]) / np.log(np.diff(sizes) / np.array(sizes[:-1]) + 1)
    assert errors[-1] < 5e-3, errors  # |u| <= 1
    assert np.all(orders > 1.85), (errors, orders)


@pytest.mark.parametrize("case", ["2d_variable", "3d_constant_aniso"])
def test_capture_replay_equals_eager(backend_name, case):
    op = make(case, backend_name, "fp32")
    backend = op.backend
    rng = np.random.default_rng(3)
    x_values = [rng.uniform(-1, 1, op.n).astype(op.dtype) for _ in range(2)]
    x, y = backend.to_device(x_values[0]), backend.zeros((op.n,), op.dtype)
    launch = op.bind(x, y)
    launch()
    eager = backend.to_host(y)
    graph = backend.capture(launch)
    backend.fill(y, np.nan)
    graph.replay()
    np.testing.assert_array_equal(backend.to_host(y), eager)
    # The graph reads x at replay time: new values between replays give the new product.
    backend.write(x, x_values[1])
    graph.replay()
    np.testing.assert_array_equal(backend.to_host(y), apply(op, x_values[1]))


def test_compiled_kernels_cover_dimensions_and_coefficients():
    compiled = list(compiled_kernels())
    assert {source for source, _ in compiled} == {"linalg/stencil.cu"}
    assert sorted((v["DIM"], v["VARIABLE"]) for _, v in compiled) == [(2, 0), (2, 1), (3, 0),
                                                                       (3, 1)]


@pytest.mark.parametrize("kwargs, message", [
    ({"shape": (8,)}, r"shape must be \(nx, ny\) or \(nx, ny, nz\)"),
    ({"shape": (8, 0)}, "shape must be"),
    ({"shape": (8, 4.0)}, "shape must be"),
    ({"shape": (8, 4, 2, 2), "spacing": (1, 1, 1, 1)}, "shape must be"),
    ({"spacing": (0.1,)}, "spacing must be 2 positive finite numbers"),
    ({"spacing": (0.1, -0.1)}, "spacing must be"),
    ({"spacing": (0.1, np.nan)}, "spacing must be"),
    ({"spacing": (1e-30, 1.0)}, "not representable in float32"),
    ({"coefficient": np.ones((4, 8))}, r"grid shape \(8, 4\), got shape \(4, 8\)"),
    ({"coefficient": np.zeros((8, 4))}, "positive and finite in every cell"),
    ({"coefficient": -1.0}, "positive and finite"),
    ({"coefficient": np.full((8, 4), np.inf)}, "positive and finite"),
    ({"coefficient": np.full((8, 4), 1e-60)}, "1/k representable in float32"),
    ({"boundary": {"z_lo": "neumann"}}, "boundary side 'z_lo': a 2D grid has only x_lo"),
    ({"boundary": {"x_lo": "periodic"}}, "boundary x_lo: kind must be 'dirichlet' or"),
    ({"precision": "fp16"}, "precision must be one of fp32, fp64"),
])
def test_constructor_errors(kwargs, message):
    arguments = {"shape": (8, 4), "spacing": (0.1, 0.2), "backend": "host", **kwargs}
    with pytest.raises(ValueError, match=message):
        StencilLaplacian(**arguments)


def test_vector_errors(backend_name):
    op = StencilLaplacian((8, 4), (0.1, 0.2), backend=backend_name, precision="fp32")
    backend = get_backend(backend_name)
    good = backend.zeros((op.n,), np.float32)
    foreign = np.zeros(op.n, np.float32) if backend_name == "cuda" else [0.0] * op.n
    for bad in (backend.zeros((op.n + 1,), np.float32), backend.zeros((op.n,), np.float64),
                backend.zeros((8, 4), np.float32), foreign):
        with pytest.raises(ValueError, match=f"x must be a {backend_name} vector of 32 float32"):
            op.bind(bad, good)
        with pytest.raises(ValueError, match="y must be a"):
            op.bind(good, bad)
    with pytest.raises(ValueError, match="x and y must not overlap"):
        op.bind(good, good)
    pair = backend.zeros((2 * op.n,), np.float32)
    op.bind(pair[:op.n], pair[op.n:])  # adjacent halves of one buffer do not overlap
