"""The hierarchy of AlgebraicMultigrid: smoothed aggregation built on the backend (the device on
cuda), or pyamg's on the host as a cross-check.

    hierarchy = smoothed_aggregation(backend, A, near_nullspace, block_size, max_coarse)
    hierarchy = pyamg_hierarchy(backend, A, near_nullspace, block_size, max_coarse)
    hierarchy.matrices, hierarchy.prolongations    # Csr (sparse_setup) on the backend, float64

A is the fine matrix as a Csr on the backend (amg_input.fine_matrix).

Per level l, with A_0 the fine matrix and B_0 the near-nullspace (constants by default):
aggregates and a tentative prolongator T_l with the coarse near-nullspace B_l+1
(aggregation.py), the Jacobi-smoothed prolongator P_l = (I - omega / rho(D^-1 A_l) D^-1 A_l)
T_l with omega = 4/3, and the Galerkin operator A_l+1 = P_l^T A_l P_l (sparse products by the
backend's library), until a level has at most max_coarse nodes (rows / block size on the fine
level, aggregates on coarse ones: pyamg's rule) or stops shrinking.
rho(D^-1 A) is estimated by Lanczos on D^-1/2 A D^-1/2 from a fixed start vector (a hash of
the row index, made on the backend), with products by amg.cu's row kernel: no random state,
the same hierarchy on every run; the host reads the tridiagonal once a level.

pyamg's setup (pyamg.smoothed_aggregation_solver with its defaults, symmetry "symmetric") is
kept to check this one against; pyamg is optional.
"""

import contextlib
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..backend import BackendError
from .aggregation import aggregate_nodes, node_hashes, strength_graph, tentative_prolongator
from .sparse_setup import diagonal, download, entry_rows, product, transpose, upload

PROLONGATION_OMEGA = 4.0 / 3.0  # of the prolongation smoother, relative to rho (pyamg's)
LANCZOS_STEPS = 20  # steps of the spectral radius estimate
THREADS = 256
SETUP_SEED = 0  # of the random start vectors pyamg's setup draws (see seeded_setup)
INSTALL_HINT = "pip install pyamg"
WHO = "AlgebraicMultigrid"


class Hierarchy(NamedTuple):
    """Level matrices A_0 .. A_L and prolongations P_0 .. P_L-1 (Csr on the backend), and
    spectral_radius() and the diagonals of levels 0 .. L-1."""

    matrices: list
    prolongations: list
    radii: list
    diagonals: list


def spectral_radius(backend, matrix, diag):
    """(Lanczos estimate, Gershgorin bound) of rho(D^-1 A) for a symmetric A with positive
    diagonal D: LANCZOS_STEPS steps on D^-1/2 A D^-1/2 from a fixed start vector (the largest
    Ritz value, from below), and the largest absolute row sum of D^-1/2 A D^-1/2 (above)."""
    spmv = backend.module("linalg/amg.cu", np.float64).amg_spmv
    n = matrix.shape[0]
    blocks = -(-n // THREADS)
    with backend.array_work() as (xp, _):
        scale = 1 / xp.sqrt(diag)
        scaled, result = xp.empty(n), xp.empty(n)
        scaled_product = spmv.bind(blocks, THREADS, matrix.row_ptr, matrix.columns,
                                   matrix.values, scaled, result, n)

        def apply(v):
            xp.multiply(scale, v, out=scaled)
            scaled_product()
            return scale * result

        spmv(blocks, THREADS, matrix.row_ptr, matrix.columns, xp.abs(matrix.values), scale,
             result, n)
        gershgorin = (scale * result).max()
        # Lanczos on the device: alphas and betas of the tridiagonal, every step run and read
        # once; after an invariant space (a beta below 1e-12 |alpha|) v is zero and the host
        # ignores the steps that follow.
        v = 0.5 + node_hashes(xp, n) / 2.0 ** 31
        v /= xp.linalg.norm(v)
        previous, beta, steps = xp.zeros(n), xp.zeros(()), []
        for _ in range(min(LANCZOS_STEPS, n)):
            w = apply(v) - beta * previous
            alpha = v @ w
            w -= alpha * v
            beta = xp.linalg.norm(w)
            going = beta > 1e-12 * abs(alpha)
            steps += [alpha, beta]
            previous, v = v, w * (going / xp.where(going, beta, 1.0))
        read = backend.to_host(xp.stack([xp.asarray(gershgorin)] + steps))
    gershgorin, alphas, betas = float(read[0]), read[1::2], read[2::2]
    stops = np.flatnonzero(~(betas > 1e-12 * abs(alphas)))
    steps = stops[0] + 1 if stops.size else alphas.size
    top = scipy.linalg.eigvalsh_tridiagonal(alphas[:steps], betas[:steps - 1])[-1]
    return min(float(top), gershgorin), gershgorin


def _smoothed(backend, matrix, diag, tentative, rho):
    """P = (I - omega / rho D^-1 A) T."""
    rows = entry_rows(backend, matrix)
    with backend.array_work() as (xp, _):
        weight = PROLONGATION_OMEGA / rho / diag
        values = (rows == matrix.columns) - weight[rows] * matrix.values
    return product(backend, matrix._replace(values=values), tentative)


def smoothed_aggregation(backend, fine, near_nullspace=None, block_size=1, max_coarse=300,
                         theta=0.0):
    """The hierarchy of a symmetric positive definite Csr on the backend (see the module
    docstring); near_nullspace (n, k) host array or None (constants)."""
    A = fine
    n = A.shape[0]
    with backend.array_work() as (xp, _):
        candidates = xp.ones((n, 1)) if near_nullspace is None else \
            backend.to_device(np.ascontiguousarray(near_nullspace, np.float64))
        node_of_dof = None if block_size == 1 else xp.arange(n, dtype=xp.int32) // block_size
    nodes = n // block_size
    matrices, prolongations, radii, diagonals = [A], [], [], []
    while nodes > max_coarse:
        graph = strength_graph(backend, A, node_of_dof, nodes, theta)
        aggregate, count = aggregate_nodes(backend, graph)
        with backend.array_work() as (xp, _):
            dof_aggregate = aggregate if node_of_dof is None else aggregate[node_of_dof]
        tentative, coarse_candidates, coarse_node = tentative_prolongator(
            backend, dof_aggregate, count, candidates)
        if not 0 < tentative.shape[1] < A.shape[0]:
            break  # aggregation no longer coarsens
        diagonals.append(diagonal(backend, A))
        radii.append(spectral_radius(backend, A, diagonals[-1]))
        P = _smoothed(backend, A, diagonals[-1], tentative, radii[-1][0])
        A = product(backend, transpose(backend, P), product(backend, A, P))
        candidates, nodes = coarse_candidates, count
        node_of_dof = None if tentative.shape[1] == count else coarse_node
        matrices.append(A)
        prolongations.append(P)
    return Hierarchy(matrices, prolongations, radii, diagonals)


class PyamgMissing(BackendError, ImportError):
    """pyamg cannot be imported: an ImportError, and a BackendError so that the command line
    reports it in one line (exit 2) instead of a traceback."""


def import_pyamg():
    try:
        import pyamg
    except ImportError:
        raise PyamgMissing(f"{WHO} setup='pyamg' needs pyamg: {INSTALL_HINT}") from None
    return pyamg


@contextlib.contextmanager
def seeded_setup(seed=SETUP_SEED):
    """pyamg's setup estimates spectral radii from start vectors drawn from NumPy's global
    random state, unseeded, so two runs would build different hierarchies. Inside this block
    that state is seeded; the caller's state is put back afterwards, whatever happens."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def pyamg_hierarchy(backend, fine, near_nullspace=None, block_size=1, max_coarse=300):
    """pyamg's smoothed-aggregation hierarchy of the same matrix, uploaded to the backend."""
    pyamg = import_pyamg()
    matrix = download(backend, fine)
    with seeded_setup():
        levels = pyamg.smoothed_aggregation_solver(
            matrix if block_size == 1 else matrix.tobsr(blocksize=(block_size, block_size)),
            B=near_nullspace, symmetry="symmetric", max_coarse=max_coarse, max_levels=64,
            presmoother=None, postsmoother=None, keep=False).levels
    matrices = [fine] + [upload(backend, sp.csr_matrix(level.A)) for level in levels[1:]]
    prolongations = [upload(backend, sp.csr_matrix(level.P)) for level in levels[:-1]]
    diagonals = [diagonal(backend, A) for A in matrices[:-1]]
    radii = [spectral_radius(backend, A, d) for A, d in zip(matrices, diagonals)]
    return Hierarchy(matrices, prolongations, radii, diagonals)
