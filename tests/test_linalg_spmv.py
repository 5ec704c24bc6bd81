"""Sparse matrices: CsrMatrix and SellMatrix SpMV (raw_kernels/linalg/spmv.cu) against SciPy in
float64 on both backends, the error bounds of floating-point summation, the SELL-C-sigma layout,
bitwise equality of SELL and one-thread-a-row CSR, determinism, graph capture, and input
errors."""

import numpy as np
import pytest
import scipy.sparse as sp

from solvers.backend import get_backend
from solvers.linalg.csr import LONG_ROW, CsrMatrix
from solvers.linalg.sell import SellMatrix

DTYPES = {"fp32": np.float32, "fp64": np.float64}


# -- matrices ----------------------------------------------------------------------------------
def laplacian_1d(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])


def laplacian_2d(nx, ny):
    """The 5-point Laplacian on an nx x ny grid (Dirichlet)."""
    return (sp.kron(sp.eye(ny), laplacian_1d(nx), "csr")
            + sp.kron(laplacian_1d(ny), sp.eye(nx), "csr")).tocsr()


def laplacian_3d(n):
    """The 7-point Laplacian on an n^3 grid (Dirichlet)."""
    one, eye = laplacian_1d(n), sp.eye(n)

    def kron3(a, b, c):  # format "csr": for denser factors kron would store zeros (BSR)
        return sp.kron(sp.kron(a, b, "csr"), c, "csr")

    return (kron3(eye, eye, one) + kron3(eye, one, eye) + kron3(one, eye, eye)).tocsr()


def uneven(n=1000, seed=3):
    """Nonsymmetric, values of mixed sign and magnitude, rows of very different lengths: a tenth
    empty, most with 1 to 5 entries, 2% with about 300, and one dense row."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 6, n)
    lengths[rng.random(n) < 0.1] = 0
    lengths[rng.random(n) < 0.02] = 300
    lengths[n // 3] = n
    rows = np.repeat(np.arange(n), lengths)
    columns = np.concatenate([rng.choice(n, k, replace=False) for k in lengths])
    values = rng.standard_normal(rows.size) * 10.0 ** rng.uniform(-3, 3, rows.size)
    return sp.csr_matrix((values, (rows, columns)), shape=(n, n))


MATRICES = {
    "laplacian_2d": lambda: laplacian_2d(37, 23),
    "laplacian_3d": lambda: laplacian_3d(11),
    "uneven": uneven,
    "1x1": lambda: sp.csr_matrix(np.array([[2.5]])),
}

# The operators under test: (class, from_scipy keywords).
KINDS = {
    "csr": (CsrMatrix, {"threads_per_row": 1}),
    "csr_vector4": (CsrMatrix, {"threads_per_row": 4}),
    "csr_vector32": (CsrMatrix, {"threads_per_row": 32}),
    "csr_split": (CsrMatrix, {"threads_per_row": "split"}),
    "sell": (SellMatrix, {}),
    "sell_unsplit": (SellMatrix, {"long_row": None}),
    "sell_c4_unsorted": (SellMatrix, {"c": 4, "sigma": 1}),
}


def make(kind, matrix, backend, precision, accumulate=None):
    cls, options = KINDS[kind]
    return cls.from_scipy(matrix, backend=backend, precision=precision, accumulate=accumulate,
                          **options)


def spmv(op, x):
    """y = A x on op's backend for a host x (rounded to op.dtype). y starts as NaN, so a row
    the kernel does not write shows up."""
    b = op.backend
    x_device = b.to_device(np.asarray(x).astype(op.dtype))
    y = b.empty((op.n,), op.dtype)
    b.fill(y, np.nan)
    op.bind(x_device, y)()
    return b.to_host(y)


def gamma(k, dtype):
    """Higham's gamma_k = k u / (1 - k u): the relative error bound of a sum of k products
    computed in any order with k roundings or fewer (each fma rounds once)."""
    u = np.finfo(dtype).eps / 2
    return k * u / (1 - k * u)


def assert_within_rounding(op, x, y):
    """Row by row, |y - A x| <= tol with A and x as stored (rounded to op.dtype), A x by SciPy in
    float64, and k = the row's length:
      accumulation in the values' type: tol = gamma_k |A| |x|
      fp32 values, fp64 accumulation:   tol = u32 |A x| + 2 gamma_k(fp64) |A| |x|  (one final
                                        rounding to fp32, plus the fp64 sum's error)
    plus gamma_k(fp64) |A| |x| for the float64 reference's own rounding."""
    a = op.to_scipy()
    xs = np.asarray(x).astype(op.dtype).astype(np.float64)
    exact, scale = a @ xs, abs(a) @ np.abs(xs)
    k = np.diff(a.indptr)
    if op.dtype == np.float32 and op.accumulate == "fp64":
        tol = np.finfo(np.float32).eps / 2 * np.abs(exact) + 2 * gamma(k, np.float64) * scale
    else:
        tol = gamma(k, op.dtype) * scale
    tol = tol + gamma(k, np.float64) * scale
    error = np.abs(y.astype(np.float64) - exact)
    worst = int(np.argmax(error - tol))
    assert np.all(error <= tol), (f"row {worst} (length {k[worst]}): |error| {error[worst]:.3g} "
                                  f"> {tol[worst]:.3g}")


# -- accuracy against SciPy ----------------------------------------------------------------------
@pytest.mark.parametrize("accumulate", [None, "fp64"])
@pytest.mark.parametrize("precision", sorted(DTYPES))
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_spmv_matches_scipy_within_rounding(backend_name, name, kind, precision, accumulate):
    matrix = MATRICES[name]()
    op = make(kind, matrix, get_backend(backend_name), precision, accumulate)
    x = np.random.default_rng(7).standard_normal(op.n)
    y = spmv(op, x)
    assert_within_rounding(op, x, y)
    if precision == "fp64":  # the bound above is k * 1.1e-16 relative to |A| |x| row by row
        scale = abs(matrix) @ np.abs(x)
        assert np.max(np.abs(y - matrix @ x)) <= 1e-14 * np.max(scale)


def test_fp32_stored_values_are_the_rounded_input(backend_name):
    """to_scipy() and diagonal() report what the device holds: the input rounded to fp32."""
    matrix = laplacian_2d(5, 4) * (1 / 3)
    op = CsrMatrix.from_scipy(matrix, get_backend(backend_name), "fp32")
    stored = op.to_scipy()
    assert isinstance(stored, sp.csr_matrix) and stored.dtype == np.float64
    np.testing.assert_array_equal(stored.toarray(), matrix.toarray().astype(np.float32))
    np.testing.assert_array_equal(op.diagonal(), np.float32(4 / 3) * np.ones(20))


def test_fp64_accumulation_beats_fp32_on_an_ill_conditioned_sum(backend_name):
    """Each row adds 20 pairs +a x_j and -a (x_j + d) (|a| < 2^23, |x| <= 2^10, d in -1..1): large
    partial sums that cancel to a small result. All products and sums are integers exact in
    float64, so fp64 accumulation must give the exact sum rounded once to fp32, bit for bit;
    fp32 accumulation loses low bits of the partial sums."""
    backend = get_backend(backend_name)
    rng = np.random.default_rng(11)
    n, half, pairs = 400, 200, 20
    x = rng.integers(-2**10, 2**10, n).astype(np.float64)
    x[half:] = x[:half] + rng.integers(-1, 2, half)
    rows = np.repeat(np.arange(n), 2 * pairs)
    first = np.array([rng.choice(half, pairs, replace=False) for _ in range(n)])
    columns = np.concatenate([first, first + half], axis=1).ravel()
    a = rng.integers(-2**23, 2**23, (n, pairs)).astype(np.float64)
    values = np.concatenate([a, -a], axis=1).ravel()
    matrix = sp.csr_matrix((values, (rows, columns)), shape=(n, n))
    exact = matrix @ x  # exact: integers below 2^40

    errors = {}
    for kind in ("csr", "csr_vector4", "sell"):
        y64 = spmv(make(kind, matrix, backend, "fp32", "fp64"), x)
        np.testing.assert_array_equal(y64, exact.astype(np.float32))
        y32 = spmv(make(kind, matrix, backend, "fp32", "fp32"), x)
        errors[kind] = (np.abs(y64 - exact).max(), np.abs(y32 - exact).max())
    for kind, (e64, e32) in errors.items():
        assert e32 > 10 * e64, f"{kind}: fp32 accumulation error {e32}, fp64 {e64}"

    # The smallest case: 1e8 + 1 - 1e8 is 0 in fp32 (the ulp of 1e8 is 8), 1 in fp64.
    tiny = sp.csr_matrix(np.array([[1e8, 1.0, -1e8], [0, 1, 0], [0, 0, 1]]))
    assert spmv(CsrMatrix.from_scipy(tiny, backend, "fp32", "fp32"), np.ones(3))[0] == 0.0
    assert spmv(CsrMatrix.from_scipy(tiny, backend, "fp32", "fp64"), np.ones(3))[0] == 1.0


# -- SELL-C-sigma ---------------------------------------------------------------------------------
@pytest.mark.parametrize("accumulate", [None, "fp64"])
@pytest.mark.parametrize("precision", sorted(DTYPES))
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_sell_equals_one_thread_a_row_csr_bitwise(backend_name, name, precision, accumulate):
    """Unsplit SELL sums every row in CSR order with the same fma's, whatever c and sigma;
    split, it sums the long rows as CSR's row splitting does."""
    backend = get_backend(backend_name)
    csr = CsrMatrix.from_scipy(MATRICES[name](), backend, precision, accumulate,
                               threads_per_row=1)
    x = np.random.default_rng(5).standard_normal(csr.n)
    reference = spmv(csr, x)
    split = spmv(CsrMatrix.from_scipy(MATRICES[name](), backend, precision, accumulate,
                                      threads_per_row="split"), x)
    for c, sigma in ((32, 256), (4, 1), (1, 1), (7, 10**6)):
        sell = SellMatrix.from_csr(csr, c=c, sigma=sigma, long_row=None)
        assert sell.accumulate == csr.accumulate and sell.dtype == csr.dtype
        np.testing.assert_array_equal(spmv(sell, x), reference, err_msg=f"c={c} sigma={sigma}")
        sell = SellMatrix.from_csr(csr, c=c, sigma=sigma, long_row=LONG_ROW)
        np.testing.assert_array_equal(spmv(sell, x), split, err_msg=f"split c={c} sigma={sigma}")


@pytest.mark.parametrize("accumulate", [None, "fp64"])
@pytest.mark.parametrize("precision", sorted(DTYPES))
def test_split_equals_one_thread_a_row_csr_bitwise_on_short_rows(backend_name, precision,
                                                                  accumulate):
    """Row splitting sums rows of at most LONG_ROW entries in CSR order, as one thread a row
    does; the longer rows (uneven's rows of about 300 and 1000) pairwise, within rounding."""
    backend = get_backend(backend_name)
    x = np.random.default_rng(6).standard_normal(1000)
    matrix = uneven().tocsr()
    ops = [CsrMatrix.from_scipy(matrix, backend, precision, accumulate, threads_per_row=t)
           for t in (1, "split")]
    one, split = (spmv(op, x) for op in ops)
    short = np.diff(matrix.indptr) <= LONG_ROW
    assert ops[1].long_count == matrix.shape[0] - short.sum() > 0
    np.testing.assert_array_equal(split[short], one[short])
    assert_within_rounding(ops[1], x, split)


@pytest.mark.parametrize("c, sigma", [(32, 256), (4, 1), (5, 12), (3, 10**6)])
def test_sell_layout(c, sigma):
    """Decoding the SELL arrays gives back the matrix; slices are column-major and padded with
    value 0 and a valid column; rows are sorted by decreasing length in each sigma window."""
    backend = get_backend("host")
    matrix = uneven(300, seed=8)
    sell = SellMatrix.from_scipy(matrix, backend, "fp64", c=c, sigma=sigma, long_row=None)
    slice_ptr, length, order, columns, values = (
        backend.to_host(a) for a in (sell.slice_ptr, sell.row_length, sell.row_order,
                                     sell.columns, sell.values))
    n = sell.n
    assert sorted(order) == list(range(n))
    assert slice_ptr.size == -(-n // c) + 1 and slice_ptr[-1] == columns.size == values.size
    assert np.all((columns >= 0) & (columns < n))
    for start in range(0, n, sigma):
        assert np.all(np.diff(length[start:start + sigma]) <= 0)
    decoded = np.zeros((n, n))
    real = np.zeros(values.size, bool)
    for p in range(n):
        k = slice_ptr[p // c] + p % c + c * np.arange(length[p])
        decoded[order[p], columns[k]] = values[k]
        real[k] = True
    np.testing.assert_array_equal(decoded, matrix.toarray())
    assert np.all(values[~real] == 0)
    assert sell.padded_nnz == values.size and sell.padding_ratio == values.size / matrix.nnz


def test_sorting_reduces_padding():
    matrix = uneven(2000, seed=4)
    unsorted = SellMatrix.from_scipy(matrix, "host", "fp32", sigma=1, long_row=None)
    sorted_ = SellMatrix.from_scipy(matrix, "host", "fp32", sigma=2000, long_row=None)
    assert sorted_.padding_ratio < unsorted.padding_ratio / 2


# -- determinism and graphs -----------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_two_runs_give_identical_bits(backend_name, kind):
    """Large enough for the host backend's parallel launch path."""
    backend = get_backend(backend_name)
    rng = np.random.default_rng(4)
    n = 160 * 160
    rows, columns = np.repeat(np.arange(n), 3), rng.integers(0, n, 3 * n)
    matrix = laplacian_2d(160, 160) + sp.csr_matrix((rng.standard_normal(3 * n),
                                                     (rows, columns)), shape=(n, n))
    op = make(kind, matrix, backend, "fp32")
    x = np.random.default_rng(1).standard_normal(op.n)
    first, second = spmv(op, x), spmv(op, x)
    assert first.tobytes() == second.tobytes()
    assert_within_rounding(op, x, first)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bound_launch_replays_in_a_graph(backend_name, kind):
    """The launch captures (no allocation, no host read); replay equals an eager launch bit for
    bit, and sees new values written to x between replays."""
    backend = get_backend(backend_name)
    op = make(kind, uneven(500), backend, "fp32", "fp64")
    rng = np.random.default_rng(2)
    x = backend.to_device(rng.standard_normal(op.n).astype(np.float32))
    y = backend.zeros((op.n,), np.float32)
    launch = op.bind(x, y)
    graph = backend.capture(launch)

    for _ in range(2):
        launch()
        eager = backend.to_host(y)
        backend.fill(y, np.nan)
        graph.replay()
        np.testing.assert_array_equal(backend.to_host(y), eager)
        backend.write(x, rng.standard_normal(op.n))


@pytest.mark.gpu
@pytest.mark.parametrize("accumulate", [None, "fp64"])
@pytest.mark.parametrize("precision", sorted(DTYPES))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_cuda_and_host_give_identical_bits(kind, precision, accumulate):
    """Explicit fma's in a fixed order: no compiler contraction can make the backends differ."""
    matrix = uneven(3000, seed=9)
    x = np.random.default_rng(3).standard_normal(matrix.shape[0])
    results = [spmv(make(kind, matrix, get_backend(name), precision, accumulate), x)
               for name in ("host", "cuda")]
    assert results[0].tobytes() == results[1].tobytes()


# -- construction ---------------------------------------------------------------------------------
def test_formats_duplicates_and_explicit_zeros():
    """Any scipy format; duplicates are summed; explicit zeros stay stored entries."""
    coo = sp.coo_matrix(([1.0, 2.0, 0.0, 4.0, 5.0], ([0, 0, 1, 2, 2], [1, 1, 0, 2, 0])),
                        shape=(3, 3))
    expected = np.array([[0, 3.0, 0], [0, 0, 0], [5.0, 0, 4.0]])
    for matrix in (coo, coo.tocsc(), coo.tolil(), coo.todok(), sp.csr_array(coo)):
        for op in (CsrMatrix.from_scipy(matrix, "host", "fp64"),
                   SellMatrix.from_scipy(matrix, "host", "fp64")):
            np.testing.assert_array_equal(op.to_scipy().toarray(), expected)
            assert op.nnz == 4
            np.testing.assert_array_equal(op.diagonal(), [0, 0, 4.0])
            np.testing.assert_array_equal(spmv(op, [1.0, 2.0, 3.0]), expected @ [1, 2, 3])


def test_threads_per_row_auto():
    assert CsrMatrix.from_scipy(laplacian_3d(4), "host").threads_per_row == 1
    dense_rows = sp.random(300, 300, density=0.25, random_state=0)  # 75 entries a row
    assert CsrMatrix.from_scipy(dense_rows, "host").threads_per_row == 16
    assert CsrMatrix.from_scipy(uneven(), "host").threads_per_row == "split"
    assert SellMatrix.from_scipy(uneven(), "host").long_row == LONG_ROW
    assert SellMatrix.from_scipy(laplacian_3d(4), "host").long_row is None


BAD_MATRICES = [
    (np.eye(3), TypeError, "needs a scipy.sparse matrix, got ndarray"),
    (sp.csr_matrix((3, 4)), ValueError, "needs a square matrix, got 3x4"),
    (sp.csr_matrix((0, 0)), ValueError, "needs at least one row"),
    (sp.csr_matrix((3, 3)), ValueError, "needs at least one stored entry"),
    (sp.csr_matrix(np.array([[1.0, np.nan], [0, 1]])), ValueError,
     r"1 non-finite values, the first nan at \(0, 1\)"),
    (sp.csr_matrix(np.array([[1.0, 0], [-np.inf, 1]])), ValueError,
     r"non-finite values, the first -inf at \(1, 0\)"),
    (sp.csr_matrix((np.ones(2), np.array([0, 5]), np.array([0, 1, 2])), shape=(2, 2)),
     ValueError, "column index 5 in row 1 is out of range 0..1"),
    (sp.csr_matrix((np.ones(2), np.array([-1, 0]), np.array([0, 1, 2])), shape=(2, 2)),
     ValueError, "column index -1 in row 0 is out of range"),
    (sp.csc_matrix((np.ones(2), np.array([0, 2]), np.array([0, 1, 2])), shape=(2, 2)),
     ValueError, "row index 2 in column 1 is out of range"),
    (sp.csr_matrix((np.ones(2), np.array([0, 1]), np.array([0, 2, 1])), shape=(2, 2)),
     ValueError, "malformed csr index pointer"),
    (sp.csr_matrix(np.array([[1e39, 0], [0, 1]])), ValueError,
     r"value 1e\+39 at \(0, 0\) overflows float32"),
    (sp.csr_matrix(np.array([[1j, 0], [0, 1]])), TypeError, "complex values"),
]


@pytest.mark.parametrize("cls", [CsrMatrix, SellMatrix])
@pytest.mark.parametrize("matrix, error, message", BAD_MATRICES)
def test_bad_matrices_are_refused(cls, matrix, error, message):
    with pytest.raises(error, match=f"^{cls.__name__}.*{message}") as info:
        cls.from_scipy(matrix, "host", "fp32")
    assert "\n" not in str(info.value)


def test_bad_options_are_refused():
    a = laplacian_2d(3, 3)
    with pytest.raises(ValueError, match="precision must be one of fp32, fp64"):
        CsrMatrix.from_scipy(a, "host", "fp16")
    with pytest.raises(ValueError, match="accumulate='fp32' with precision='fp64'"):
        SellMatrix.from_scipy(a, "host", "fp64", "fp32")
    with pytest.raises(ValueError, match="accumulate must be 'fp32' or 'fp64'"):
        CsrMatrix.from_scipy(a, "host", "fp32", "double")
    with pytest.raises(ValueError, match="threads_per_row must be 'auto' or one of"):
        CsrMatrix.from_scipy(a, "host", threads_per_row=3)
    with pytest.raises(ValueError, match="c .rows a slice. must be a positive integer"):
        SellMatrix.from_scipy(a, "host", c=0)
    with pytest.raises(ValueError, match="sigma .* must be a positive integer"):
        SellMatrix.from_scipy(a, "host", sigma=2.5)
    with pytest.raises(TypeError, match="needs a CsrMatrix"):
        SellMatrix.from_csr(a)


@pytest.mark.parametrize("kind", ["csr", "csr_vector4", "sell"])
def test_bad_vectors_are_refused(backend_name, kind):
    backend = get_backend(backend_name)
    op = make(kind, laplacian_2d(3, 3), backend, "fp32")
    good = backend.zeros((9,), np.float32)
    other = backend.zeros((9,), np.float32)
    with pytest.raises(ValueError, match=f"x must be a {backend_name} vector of 9 float32 values"
                                         ", got .* float64"):
        op.bind(backend.zeros((9,), np.float64), good)
    with pytest.raises(ValueError, match=r"y must be .* got .* \(10,\) float32"):
        op.bind(good, backend.zeros((10,), np.float32))
    with pytest.raises(ValueError, match=r"y must be .* got .* \(9, 1\)"):
        op.bind(good, backend.zeros((9, 1), np.float32))
    with pytest.raises(ValueError, match="x and y overlap"):
        op.bind(good, good)
    both = backend.zeros((17,), np.float32)
    with pytest.raises(ValueError, match="x and y overlap"):
        op.bind(both[:9], both[8:])
    op.bind(good, other)()  # distinct vectors are fine
    if backend_name != "host":
        with pytest.raises(ValueError, match="x must be a cuda vector"):
            op.bind(np.zeros(9, np.float32), good)
