"""Distributed Poisson solves (issue 24 item 3): `mpiexec -n 2`, `-n 3` and `-n 4` run
tests/mpi_poisson_driver.py on the host backend (one OpenMP thread a rank), which applies the
decomposed operator (BlockLaplacian) and solves by MG-preconditioned CG (DistributedMultigrid,
DistributedConjugateGradient); here the results are checked against the single-rank pieces and
SciPy:
- y = A v equals the single-rank StencilLaplacian's y bit for bit (a row has the same terms in
  the same order on a block), and SciPy's to rounding;
- x meets the error bound of its own float64 residual, ||x - x*|| <= ||b - A x|| / lambda_min(A),
  x* from spsolve of StencilLaplacian.to_scipy(): the solve is right to the accuracy its
  residual claims, and that residual meets rtol;
- the iteration count is the single-rank MG-PCG's within 2 (the cycle is the single-rank cycle
  up to rounding: same smoother, transfers and coarse levels).
Grids: 64 x 48 (3 ranks split 64 unevenly, 4 ranks make a 2 x 2 process grid, whose blocks
read the halo's corner cells in the restriction and prolongation) and 24^3 (4 ranks: 1 x 2 x 2,
edges), fp64 and fp32, Dirichlet and mixed Neumann sides, constant and variable
coefficients, and gathers at the finest level and at an intermediate one.

The ways of the exchanges (backend/collectives.py), on 2 and 3 ranks: periodic problems solved
host-staged and in the graph (MPI calls as launches: the code path of NCCL in the graph) give
the same x bit for bit and the same iterations, as they must (the same launches; only the way
the bytes travel differs), and x meets rtol with the periodic matrix's float64 residual.
"""

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse.linalg as spla

pytest.importorskip("mpi4py")

from solvers.backend.mpi import mpiexec  # noqa: E402
from solvers.linalg.block_layout import block_layout  # noqa: E402
from solvers.linalg.krylov import ConjugateGradient  # noqa: E402
from solvers.linalg.multigrid import GeometricMultigrid  # noqa: E402
from solvers.linalg.stencil import SIDES, StencilLaplacian, laplacian_matrix  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from mpi_poisson_driver import coefficient, right_hand_side, vectors  # noqa: E402

MPIEXEC = mpiexec(2)
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec")

MIXED_2D = {"x_hi": "neumann", "y_lo": "neumann"}
MIXED_3D = {"x_lo": "neumann", "y_hi": "neumann", "z_hi": "neumann"}
PROBLEMS = [
    {"name": "dirichlet_2d_fp64", "shape": [64, 48], "precision": "fp64", "rtol": 1e-10},
    {"name": "mixed_2d_fp32", "shape": [64, 48], "precision": "fp32", "rtol": 1e-5,
     "boundary": MIXED_2D, "coefficient": "smooth"},
    {"name": "dirichlet_3d_fp32", "shape": [24, 24, 24], "precision": "fp32", "rtol": 1e-5},
    {"name": "mixed_3d_fp64", "shape": [24, 24, 24], "precision": "fp64", "rtol": 1e-10,
     "boundary": MIXED_3D, "coefficient": "smooth", "seed": 1},
    {"name": "gather_finest_2d_fp64", "shape": [32, 24], "precision": "fp64", "rtol": 1e-10,
     "boundary": {"y_hi": "neumann"}, "gather": 0},
    {"name": "gather_level1_2d_fp32", "shape": [64, 48], "precision": "fp32", "rtol": 1e-5,
     "boundary": MIXED_2D, "gather": 1},
]
NAMES = [p["name"] for p in PROBLEMS]
# Each solved host-staged and in the graph, on 2 and 3 ranks: 64 x 48 periodic along x (split:
# 2 ranks swap both layers with one neighbour) and y (not split: each block swaps with itself),
# singular (the gathered algebraic level's mean removed); 16^3 periodic along x (not split) and
# z (split), Neumann and Dirichlet in y, gathered at level 1.
WAYS = [
    {"name": "ways_periodic_2d_fp32", "shape": [64, 48], "precision": "fp32", "rtol": 1e-5,
     "boundary": {side: "periodic" for side in ("x_lo", "x_hi", "y_lo", "y_hi")},
     "singular": True},
    {"name": "ways_periodic_3d_fp64", "shape": [16, 16, 16], "precision": "fp64", "rtol": 1e-8,
     "boundary": {"x_lo": "periodic", "x_hi": "periodic", "z_lo": "periodic",
                  "z_hi": "periodic", "y_lo": "neumann"}},
]
WAY_RANKS = (2, 3)
PROBLEMS += [{**p, "exchanges": ["host", "nccl", "host_serial", "nccl_serial"],
              "ranks": list(WAY_RANKS)} for p in WAYS]


@pytest.fixture(scope="module", params=[2, 3, 4], ids=lambda n: f"{n}ranks")
def run(request, tmp_path_factory):
    """(ranks, {key: value}) of the driver's run of every problem on `ranks` ranks."""
    ranks = request.param
    folder = tmp_path_factory.mktemp(f"ranks{ranks}")
    problems, out = folder / "problems.json", folder / "results.npz"
    problems.write_text(json.dumps(PROBLEMS))
    result = subprocess.run(
        [*mpiexec(ranks), sys.executable, str(ROOT / "tests" / "mpi_poisson_driver.py"),
         str(problems), str(out)], capture_output=True, text=True, timeout=240, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1"))
    assert result.returncode == 0, result.stderr
    with np.load(out) as data:
        return ranks, dict(data)


def problem(name):
    return next(p for p in PROBLEMS if p["name"] == name)


def single_rank(p):
    """The problem's StencilLaplacian (host) and its input and right-hand side vectors."""
    shape = tuple(p["shape"])
    op = StencilLaplacian(shape, tuple(1 / n for n in shape),
                          coefficient=coefficient(p.get("coefficient"), shape),
                          boundary=p.get("boundary"), backend="host", precision=p["precision"])
    v, b = vectors(shape, p.get("seed", 0))
    return op, v.ravel(order="F"), b.ravel(order="F")


@functools.cache
def reference(name):
    """SciPy's A, x* = A^-1 b and lambda_min(A) (shift-invert on one LU factorisation), and
    the single-rank MG-PCG's iteration count, once per problem."""
    p = problem(name)
    op, _, b = single_rank(p)
    A = op.to_scipy()
    lu = spla.splu(A.tocsc())
    inverse = spla.LinearOperator(A.shape, matvec=lu.solve, dtype=np.float64)
    smallest = spla.eigsh(A, k=1, sigma=0, which="LM", OPinv=inverse,
                          return_eigenvectors=False)[0]
    solver = ConjugateGradient(op, preconditioner=GeometricMultigrid(op), rtol=p["rtol"])
    _, info = solver.solve(b)
    assert info.converged
    return A, lu.solve(b), smallest, info.iterations


@pytest.mark.parametrize("name", NAMES)
def test_operator_equals_single_rank(run, name):
    _, results = run
    op, v, _ = single_rank(problem(name))
    x, y = op.backend.to_device(v.astype(op.dtype)), op.backend.zeros((op.n,), op.dtype)
    op.bind(x, y)()
    got = results[f"{name}_y"].ravel(order="F")
    assert got.dtype == op.dtype
    assert np.array_equal(got, op.backend.to_host(y))
    # And SciPy's, to the rounding of the input and the row sums in the precision.
    expected = op.to_scipy() @ v.astype(op.dtype).astype(np.float64)
    eps = np.finfo(op.dtype).eps
    assert np.max(np.abs(got - expected)) <= 16 * eps * np.max(np.abs(expected))


@pytest.mark.parametrize("name", NAMES)
def test_solution_matches_spsolve_to_its_residual(run, name):
    _, results = run
    p = problem(name)
    _, _, b = single_rank(p)
    A, exact, smallest, _ = reference(name)
    x = results[f"{name}_x"].ravel(order="F").astype(np.float64)
    assert results[f"{name}_converged"]
    assert results[f"{name}_residual"] <= p["rtol"]
    residual = np.linalg.norm(b - A @ x)
    assert np.linalg.norm(x - exact) <= 1.001 * residual / smallest
    # The float64 residual of the solve's x: rtol, plus in fp32 the rounding of x itself.
    floor = 0 if p["precision"] == "fp64" else 4 * np.finfo(np.float32).eps * \
        spla.norm(A) * np.linalg.norm(x)
    assert residual <= p["rtol"] * np.linalg.norm(b) + floor


@pytest.mark.parametrize("name", NAMES)
def test_iterations_match_single_rank_multigrid_cg(run, name):
    _, results = run
    single = reference(name)[3]
    assert abs(int(results[f"{name}_iterations"]) - single) <= 2


def test_layout_of_an_uneven_split():
    """64 x 48 on 3 ranks: x split 3 ways in units of 2^g cells, g the gather level, so the
    blocks halve g times; the default gather level is the cheapest (module docstring)."""
    layouts = [block_layout(rank, 3, (64, 48)) for rank in range(3)]
    assert {layout.gather for layout in layouts} == {2}
    assert [layout.block.shape for layout in layouts] == [(24, 48), (20, 48), (20, 48)]
    assert [layout.blocks[2].start for layout in layouts] == [(0, 0), (6, 0), (11, 0)]
    assert block_layout(0, 3, (64, 48), gather=1).block.shape == (22, 48)
    with pytest.raises(ValueError, match="gather level 3"):
        block_layout(0, 3, (64, 48), gather=3)  # 8 x 6 is the coarsest: nothing to gather


@pytest.mark.parametrize("name", [p["name"] for p in WAYS])
def test_in_graph_way_equals_host_staged(run, name):
    ranks, results = run
    if ranks not in WAY_RANKS:
        pytest.skip(f"run on {WAY_RANKS} ranks")
    p = problem(name)
    assert str(results[f"{name}_path_host"]).startswith("host-staged")
    assert str(results[f"{name}_path_nccl"]).startswith("in the step graph")
    assert np.array_equal(results[f"{name}_x_nccl"], results[f"{name}_x_host"])
    assert results[f"{name}_iterations_nccl"] == results[f"{name}_iterations_host"]
    assert results[f"{name}_converged_nccl"] and results[f"{name}_residual_nccl"] <= p["rtol"]
    # The float64 residual of x with the periodic matrix: rtol, and in fp32 x's rounding.
    shape = tuple(p["shape"])
    kinds = {**{side: "dirichlet" for side in SIDES[:2 * len(shape)]}, **p["boundary"]}
    A = laplacian_matrix(shape, tuple(1 / n for n in shape), kinds)
    b = right_hand_side(p).ravel(order="F")
    x = results[f"{name}_x_nccl"].ravel(order="F").astype(np.float64)
    floor = 0 if p["precision"] == "fp64" else 4 * np.finfo(np.float32).eps * \
        spla.norm(A) * np.linalg.norm(x)
    assert np.linalg.norm(b - A @ x) <= p["rtol"] * np.linalg.norm(b) + floor


@pytest.mark.parametrize("name", [p["name"] for p in WAYS])
@pytest.mark.parametrize("way", ["host", "nccl"])
def test_overlapped_exchanges_give_the_serial_bits(run, name, way):
    """The passes run over the interior while the halo travels and over the cells beside the
    blocks' sides after (on every level, however small): the same x, bit for bit, as one
    launch after the halo has arrived."""
    ranks, results = run
    if ranks not in WAY_RANKS:
        pytest.skip(f"run on {WAY_RANKS} ranks")
    assert np.array_equal(results[f"{name}_x_{way}"], results[f"{name}_x_{way}_serial"])
    assert results[f"{name}_iterations_{way}"] == results[f"{name}_iterations_{way}_serial"]


@pytest.mark.parametrize("shape, neighbours", [
    ((6, 5), (1, None, 2, 2)),
    ((4, 3, 5), (None, 1, 0, 0, 3, None)),
    ((7, 2), (1, 1, 2, 2)),  # two cells across y: no interior
    ((5, 4), (None,) * 4),   # no neighbour: all interior
])
def test_regions_cover_the_block_once_and_the_interior_reads_no_halo(shape, neighbours):
    from solvers.backend import get_backend
    from solvers.backend.halo import PaddedHalo

    halo = PaddedHalo(get_backend("host"), np.float32, shape, neighbours, collectives=None)
    interior, shell = halo.regions()
    count = np.zeros(shape, int)
    for first, counts in ([interior] if interior else []) + shell:
        count[tuple(slice(f, f + c) for f, c in zip(first, counts))] += 1
    assert (count == 1).all()
    if interior is None:
        assert any(n <= (lo is not None) + (hi is not None)
                   for n, lo, hi in zip(shape, neighbours[::2], neighbours[1::2]))
        return
    # A face neighbour of an interior cell beyond a side with a neighbour is never the halo.
    for axis, n in enumerate(shape):
        first, last = interior[0][axis], interior[0][axis] + interior[1][axis] - 1
        assert first - 1 >= 0 or neighbours[2 * axis] is None
        assert last + 1 <= n - 1 or neighbours[2 * axis + 1] is None
