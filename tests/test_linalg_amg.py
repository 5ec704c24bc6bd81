"""Algebraic multigrid (solvers/linalg/amg.py, raw_kernels/linalg/amg.cu) as a CG preconditioner.

The matrices are built here, independently of the library: the P1 finite-element stiffness
matrix of the Poisson problem on a structured triangulation of the unit square (diagonals
alternating from square to square, so not the 5-point stencil), Dirichlet rows and columns
removed, assembled element by element with NumPy; and the 3D 7-point Laplacian from Kronecker
products. Checks:
(a) CG + AMG converges to scipy.sparse.linalg.spsolve's solution, with iteration counts nearly
    independent of the mesh size over three refinements;
(b) M (one V-cycle) is symmetric and positive definite;
(c) a cycle bound and launched inside a capture replays to the bits of the eager cycle;
(d) errors: non-square matrix, setup="pyamg" without pyamg, zero diagonal, asymmetry, also
    for a CsrMatrix checked on the device;
(e) a CsrMatrix is taken from the device (no host copy of the fine matrix), its stored zeros
    dropped: the same hierarchy and cycle as from the scipy matrix without them.
The setup itself (aggregates, tentative prolongator, Galerkin products, comparison with pyamg):
tests/test_linalg_amg_setup.py.
"""

import sys

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.backend import BackendError, get_backend
from solvers.linalg import amg_input
from solvers.linalg.amg import AlgebraicMultigrid, compiled_kernels
from solvers.linalg.csr import CsrMatrix
from solvers.linalg.krylov import ConjugateGradient
from solvers.linalg.preconditioners import algebraic_multigrid

WARP = 0.05  # amplitude of the smooth mapping of the nodes (keeps every triangle valid)


def p1_mesh(m):
    """Nodes and triangles of an m x m grid of squares on the unit square, each square split
    into two triangles along a diagonal whose direction alternates like a checkerboard, the
    nodes then moved by a smooth map that fixes the boundary (so the triangles are not right
    isosceles, whose stiffness matrix would be the 5-point stencil)."""
    i, j = (a.ravel() for a in np.meshgrid(np.arange(m), np.arange(m), indexing="ij"))
    n00, n10 = i + (m + 1) * j, i + 1 + (m + 1) * j
    n01, n11 = n00 + m + 1, n10 + m + 1
    flip = ((i + j) % 2 == 1)[:, None]
    first = np.where(flip, np.stack([n00, n10, n01], 1), np.stack([n00, n10, n11], 1))
    second = np.where(flip, np.stack([n10, n11, n01], 1), np.stack([n00, n11, n01], 1))
    x, y = (a.ravel(order="F") for a in np.meshgrid(np.linspace(0, 1, m + 1),
                                                    np.linspace(0, 1, m + 1), indexing="ij"))
    xy = np.column_stack([x + WARP * np.sin(2 * np.pi * x) * np.sin(np.pi * y),
                          y + WARP * np.sin(np.pi * x) * np.sin(2 * np.pi * y)])
    boundary = (x == 0) | (x == 1) | (y == 0) | (y == 1)
    return xy, np.concatenate([first, second]), boundary


def p1_full_stiffness(xy, triangles):
    """The P1 stiffness matrix sum_e |e| grad(phi_a) . grad(phi_b), element by element."""
    T = np.concatenate([np.ones(triangles.shape + (1,)), xy[triangles]], axis=2)  # [1, x, y]
    area = np.linalg.det(T) / 2
    assert np.all(area > 0)  # counter-clockwise, none folded by the map
    gradients = np.linalg.inv(T)[:, 1:, :]  # (elements, 2, 3): barycentric gradients
    local = area[:, None, None] * np.einsum("eda,edb->eab", gradients, gradients)
    rows = np.repeat(triangles, 3, axis=1).ravel()
    cols = np.tile(triangles, (1, 3)).ravel()
    return sp.csr_matrix((local.ravel(), (rows, cols)), shape=(xy.shape[0],) * 2)


def p1_stiffness(m):
    """The Dirichlet Poisson matrix on p1_mesh(m): boundary rows and columns removed."""
    xy, triangles, boundary = p1_mesh(m)
    keep = np.flatnonzero(~boundary)
    return p1_full_stiffness(xy, triangles)[keep][:, keep].tocsr()


def laplacian_3d(m):
    """The 7-point Laplacian (Dirichlet) on an m^3 grid, from Kronecker products."""
    e = np.ones(m)
    L = sp.diags([-e[1:], 2 * e, -e[1:]], [-1, 0, 1])
    identity = sp.identity(m)
    return (sp.kron(sp.kron(L, identity), identity) + sp.kron(sp.kron(identity, L), identity)
            + sp.kron(sp.kron(identity, identity), L)).tocsr()


def random_vector(n, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, n)


def test_p1_stiffness_is_the_poisson_matrix():
    """The assembly itself: P1 reproduces linear functions, so the rows of interior nodes
    annihilate 1, x and y; the reduced matrix is symmetric positive definite, has (m - 1)^2
    rows and is not the 5-point stencil."""
    m = 8
    xy, triangles, boundary = p1_mesh(m)
    K = p1_full_stiffness(xy, triangles)
    for u in (np.ones(xy.shape[0]), xy[:, 0], xy[:, 1], 2 - 3 * xy[:, 0] + xy[:, 1]):
        assert np.abs((K @ u)[~boundary]).max() < 1e-12
    assert abs(K @ (xy[:, 0] ** 2)).max() > 1e-3  # but not quadratics
    A = p1_stiffness(m)
    assert A.shape == ((m - 1) ** 2,) * 2 and abs(A - A.T).max() < 1e-14
    assert np.all(np.linalg.eigvalsh(A.toarray()) > 0)
    assert np.diff(A.indptr).max() > 5


# -- (a) CG + AMG: converges, matches spsolve, iterations nearly flat under refinement ----------

@pytest.mark.parametrize("problem, sizes", [(p1_stiffness, (64, 128, 256)),
                                            (laplacian_3d, (8, 16, 24))])
def test_cg_amg_converges_with_flat_iteration_counts(backend_name, problem, sizes):
    backend = get_backend(backend_name)
    counts = []
    for m in sizes:
        A = problem(m)
        b = random_vector(A.shape[0])
        op = CsrMatrix.from_scipy(A, backend, "fp64")
        amg = AlgebraicMultigrid(op)
        x, info = ConjugateGradient(op, preconditioner=amg, rtol=1e-10).solve(b)
        assert info.converged, info
        reference = spla.spsolve(A.tocsc(), b)
        x = backend.to_host(x)
        assert np.linalg.norm(x - reference) <= 1e-6 * np.linalg.norm(reference)
        counts.append(info.iterations)
        print(f"{problem.__name__} m={m} n={A.shape[0]} levels={amg.sizes} "
              f"iterations={info.iterations}")
    assert max(counts) <= 1.5 * min(counts), counts


def test_cg_amg_fp32(backend_name):
    """The default precision: fp32 storage and cycles, CG to 1e-5."""
    backend = get_backend(backend_name)
    A = p1_stiffness(64)
    b = random_vector(A.shape[0])
    op = CsrMatrix.from_scipy(A, backend, "fp32")
    amg = AlgebraicMultigrid(op)
    assert amg.dtype == np.float32 and amg.levels >= 2
    x, info = ConjugateGradient(op, preconditioner=amg, rtol=1e-5).solve(b)
    assert info.converged and info.iterations <= 15, info
    reference = spla.spsolve(A.tocsc(), b)
    error = np.linalg.norm(backend.to_host(x) - reference) / np.linalg.norm(reference)
    assert error < 1e-3


def test_plain_cg_needs_many_more_iterations(backend_name):
    """The preconditioner does the work: unpreconditioned CG takes several times longer."""
    backend = get_backend(backend_name)
    A = p1_stiffness(64)
    b = random_vector(A.shape[0])
    op = CsrMatrix.from_scipy(A, backend, "fp64")
    _, plain = ConjugateGradient(op, rtol=1e-8).solve(b)
    _, amg = ConjugateGradient(op, preconditioner=AlgebraicMultigrid(op), rtol=1e-8).solve(b)
    assert amg.converged and 5 * amg.iterations < plain.iterations


# -- (b) M is symmetric positive definite ------------------------------------------------------

def apply(amg, r):
    backend = amg.backend
    rd = backend.to_device(np.asarray(r, amg.dtype))
    z = backend.zeros((amg.n,), amg.dtype)
    amg.bind(rd, z)()
    return backend.to_host(z).astype(np.float64)


def test_cycle_is_symmetric_positive_definite(backend_name):
    backend = get_backend(backend_name)
    A = p1_stiffness(16)  # 225 unknowns
    amg = AlgebraicMultigrid(A, backend=backend, precision="fp64", max_coarse=20)
    assert amg.levels >= 3, amg.sizes
    x, y = random_vector(amg.n, 1), random_vector(amg.n, 2)
    xMy, yMx = x @ apply(amg, y), y @ apply(amg, x)
    assert abs(xMy - yMx) <= 1e-13 * abs(xMy)
    M = np.column_stack([apply(amg, e) for e in np.eye(amg.n)])
    assert np.abs(M - M.T).max() <= 1e-13 * np.abs(M).max()
    eigenvalues = np.linalg.eigvalsh((M + M.T) / 2)
    assert eigenvalues.min() > 0
    # A good preconditioner: M A has its spectrum in (0, 1] and well away from 0.
    spectrum = np.linalg.eigvals(M @ A.toarray()).real
    assert spectrum.max() <= 1 + 1e-10 and spectrum.min() > 0.2


def test_single_level_is_the_exact_inverse(backend_name):
    backend = get_backend(backend_name)
    A = laplacian_3d(4)
    amg = AlgebraicMultigrid(A, backend=backend, precision="fp64")
    assert amg.levels == 1 and amg.sizes == (64,)
    b = random_vector(64)
    np.testing.assert_allclose(apply(amg, b), spla.spsolve(A.tocsc(), b), rtol=1e-12)


# -- (c) graph capture ---------------------------------------------------------------------------

@pytest.mark.parametrize("sweeps", [1, 2, 3])
def test_graph_replay_matches_eager_bits(backend_name, sweeps):
    backend = get_backend(backend_name)
    amg = AlgebraicMultigrid(laplacian_3d(12), backend=backend, sweeps=sweeps, max_coarse=50)
    assert amg.levels >= 3
    r = backend.to_device(random_vector(amg.n).astype(np.float32))
    z = backend.zeros((amg.n,), np.float32)
    cycle = amg.bind(r, z)
    cycle()
    eager = backend.to_host(z)
    assert np.all(np.isfinite(eager))
    backend.fill(z, np.nan)  # stale work vectors and output do not matter
    graph = backend.capture(cycle)
    graph.replay()
    np.testing.assert_array_equal(backend.to_host(z), eager)
    backend.fill(z, np.nan)
    graph = backend.capture(lambda: amg.bind(r, z)())  # bind itself is capturable
    graph.replay()
    graph.replay()
    np.testing.assert_array_equal(backend.to_host(z), eager)


# -- (d) errors ------------------------------------------------------------------------------

def test_non_square_matrix_is_refused():
    with pytest.raises(ValueError, match="square matrix, got 4x5"):
        AlgebraicMultigrid(sp.random(4, 5, density=0.5, format="csr"), backend="host")


def test_missing_pyamg_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyamg", None)  # `import pyamg` raises ImportError
    assert AlgebraicMultigrid(laplacian_3d(8), backend="host").levels == 2  # pyamg is optional
    with pytest.raises(ImportError,
                       match=r"setup='pyamg' needs pyamg: pip install pyamg$") as error:
        AlgebraicMultigrid(laplacian_3d(8), backend="host", setup="pyamg")
    assert "\n" not in str(error.value)
    assert isinstance(error.value, BackendError)  # the command line's one line, exit 2


def test_zero_diagonal_is_refused():
    A = laplacian_3d(4).tolil()
    A[5, 5] = 0.0
    with pytest.raises(ValueError, match=r"positive diagonal .* A\[5, 5\] = 0 on level 0"):
        AlgebraicMultigrid(A.tocsr(), backend="host")


def test_other_errors():
    A = laplacian_3d(6)
    with pytest.raises(ValueError, match="symmetric"):
        AlgebraicMultigrid(sp.triu(A).tocsr(), backend="host")
    with pytest.raises(ValueError, match="setup must be one of aggregation, pyamg"):
        AlgebraicMultigrid(A, backend="host", setup="classical")
    with pytest.raises(ValueError, match="smoother"):
        AlgebraicMultigrid(A, backend="host", smoother="gauss_seidel")
    with pytest.raises(ValueError, match="omega"):
        AlgebraicMultigrid(A, backend="host", omega=2.0)
    with pytest.raises(ValueError, match="sweeps"):
        AlgebraicMultigrid(A, backend="host", sweeps=0)
    with pytest.raises(ValueError, match="max_coarse"):
        AlgebraicMultigrid(A, backend="host", max_coarse=10**6)
    op = CsrMatrix.from_scipy(A, "host", "fp64")
    with pytest.raises(ValueError, match="precision"):
        AlgebraicMultigrid(op, precision="fp32")
    amg = AlgebraicMultigrid(op, max_coarse=20)
    r = amg.backend.zeros((amg.n,), np.float64)
    with pytest.raises(ValueError, match="z must be"):
        amg.bind(r, amg.backend.zeros((amg.n,), np.float32))
    with pytest.raises(ValueError, match="overlap"):
        amg.bind(r, r)


@pytest.mark.parametrize("edit, message", [
    (lambda A: A.__setitem__((5, 5), 0.0), r"positive diagonal .* A\[5, 5\] = 0 on level 0$"),
    (lambda A: A.__setitem__((7, 7), -1.0), r"A\[7, 7\] = -1 on level 0$"),
    (lambda A: A.__setitem__((3, 40), -0.5),
     r"symmetric matrix: \|A - A\^T\| reaches 0.5 \(of max \|A\| 6\)$"),
])
def test_device_input_checks_are_one_line(backend_name, edit, message):
    A = laplacian_3d(4).tolil()
    edit(A)
    op = CsrMatrix.from_scipy(A.tocsr(), backend_name, "fp64")
    with pytest.raises(ValueError, match=message) as error:
        AlgebraicMultigrid(op)
    assert "\n" not in str(error.value)


def test_attributes():
    op = CsrMatrix.from_scipy(laplacian_3d(10), "host", "fp32")
    amg = AlgebraicMultigrid(op, max_coarse=50)
    assert amg.n == 1000 and amg.backend is op.backend and amg.dtype == np.float32
    assert amg.levels == len(amg.sizes) == len(amg.shapes) >= 2
    assert amg.sizes[0] == 1000 and amg.sizes[-1] <= 50
    assert amg.shapes[1] == (amg.sizes[1], amg.sizes[1])
    assert list(compiled_kernels()) == [("linalg/amg.cu", {})]
    assert "AlgebraicMultigrid(" in repr(amg)


# -- (e) a CsrMatrix from the device ----------------------------------------------------------

def with_stored_zeros(A):
    """A with an explicit zero stored at (0, n - 1) and none at (n - 1, 0): stored zeros whose
    pattern is not symmetric (the values are)."""
    A = A.tocoo()
    n = A.shape[0]
    stored = sp.csr_matrix((np.r_[A.data, 0.0], (np.r_[A.row, 0], np.r_[A.col, n - 1])),
                           shape=A.shape)
    assert stored.nnz == A.nnz + 1 and (n - 1) in stored.indices[:stored.indptr[1]]
    return stored


def test_csr_matrix_input_stays_on_the_device(backend_name, monkeypatch):
    backend = get_backend(backend_name)
    A = p1_stiffness(32)
    expected = AlgebraicMultigrid(A, backend=backend, precision="fp64", max_coarse=20)
    op = CsrMatrix.from_scipy(with_stored_zeros(A), backend, "fp64")

    def host_copy(*args, **kwargs):
        raise AssertionError("a host copy of the fine matrix")

    monkeypatch.setattr(CsrMatrix, "to_scipy", host_copy)
    monkeypatch.setattr(amg_input, "host_csr", host_copy)
    r = random_vector(A.shape[0])
    for amg in (AlgebraicMultigrid(op, max_coarse=20), algebraic_multigrid(op)):
        assert amg.sizes[0] == A.shape[0] and amg.nnz[0] == A.nnz
    amg = AlgebraicMultigrid(op, max_coarse=20)
    assert amg.sizes == expected.sizes and amg.nnz == expected.nnz
    assert amg.weights == expected.weights
    np.testing.assert_array_equal(apply(amg, r), apply(expected, r))
