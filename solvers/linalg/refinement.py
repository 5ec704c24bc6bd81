"""Mixed-precision iterative refinement: FP64 residuals around an FP32 inner Krylov solve, so
fp32 kernels reach a relative residual (1e-10, say) that FP32 arithmetic alone cannot.

    refine = IterativeRefinement(operator_fp64, ConjugateGradient(operator_fp32, rtol=1e-4))
    x, info = refine.solve(b, rtol=1e-10)
    inner_matrix(csr_fp64)   # the fp32 CsrMatrix of an fp64 one, on the same device pattern
    solve = CapturedRefinement(csr_fp64, ConjugateGradient(inner_matrix(csr_fp64)), 1e-8)
    solve.launch_solve()     # launches only, from the fp64 device vectors solve.b, solve.x

Each outer step: r = b - A x with the fp64 operator; the inner solver solves A d = r in fp32
to its own rtol (a stalled inner solve is fine: the outer residual judges); x += d in fp64.
The residual norm is read on the host once per outer step (two 256-entry partial sums, no
vector transfer). It converges while eps32 cond(A) < 1; an outer step that does not at least
halve the residual ends the solve as stalled, an inner one at maxiter or in breakdown ends it
with that status.

CapturedRefinement is the same inside a captured step (no host reads): PASSES outer passes,
each ended by a one-block verdict on the device (refine_verdict) that, once the fp64 residual
meets rtol, makes the inner solve stop at its start, so later passes change nothing; `done`
then holds the outcome like CG's flag (1 converged, 2 maxiter, 3 breakdown, STALLED)."""

from dataclasses import dataclass

import numpy as np

from .csr import CsrMatrix, HostCsr
from .krylov import ATOL2

SOURCE = "linalg/refinement.cu"
PARTIAL_BLOCKS = 256  # most blocks of the residual kernel, one partial sum each
THREADS = 256  # threads of every block
PASSES = 4  # outer passes of a CapturedRefinement (heat steps to 1e-8 do work in 2 or 3)
PASS_RTOL = 1e-4  # the inner rtol of a pass: 1e-3 would take one pass more on heat steps
FLOOR = 0.5  # a captured inner solve stops at FLOOR rtol ||b||, so the last pass lands below
STALLED = 4  # CapturedRefinement.done when its passes end above rtol (CG's flags are 1 to 3)


@dataclass(frozen=True)
class RefinementInfo:
    converged: bool
    outer_iterations: int
    inner_iterations: int  # summed over the outer steps
    residual: float  # ||b - A x|| / ||b|| in fp64
    status: str  # converged, stalled, or maxiter / breakdown (of the outer or an inner solve)


def kernel_defines():
    return {"PARTIAL_BLOCKS": PARTIAL_BLOCKS, "THREADS": THREADS}


def compiled_kernels():
    """Every (source, defines) this module compiles (fp64 only; the test builds fp32 too)."""
    yield SOURCE, kernel_defines()


def partial_blocks(n):
    """Blocks of the residual kernel: from n alone (the same sums on every device), at most
    PARTIAL_BLOCKS; the partial sums past them stay 0."""
    return min(PARTIAL_BLOCKS, -(-n // THREADS))


def inner_matrix(matrix):
    """An fp32 CsrMatrix of an fp64 CsrMatrix's values (its host copy, rounded), sharing its
    device row pointers and columns: the inner solver's operator costs 4 bytes a nonzero."""
    host = matrix.host
    with np.errstate(over="ignore"):
        values = host.values.astype(np.float32)
    if not np.all(np.isfinite(values)):
        raise ValueError("the matrix has values beyond the fp32 range; use precision fp64")
    inner = CsrMatrix(HostCsr(host.row_ptr, host.columns, values), matrix.backend, None,
                      matrix.threads_per_row)
    inner.row_ptr, inner.columns = matrix.row_ptr, matrix.columns
    return inner


def check_pair(operator, inner):
    """A ValueError unless `operator` is fp64 and `inner` an fp32 solver of its size on its
    backend."""
    if operator.dtype != np.float64:
        raise ValueError(f"the outer operator must be fp64, got {operator.dtype}")
    if inner.operator.dtype != np.float32 or inner.operator.n != operator.n:
        raise ValueError("the inner solver must be fp32 and of the same size as the outer "
                         "operator")
    if inner.backend is not operator.backend:
        raise ValueError("the inner solver and the outer operator must share a backend")


class IterativeRefinement:
    def __init__(self, operator, inner, max_outer=20):
        check_pair(operator, inner)
        self.operator = operator
        self.inner = inner
        self.max_outer = int(max_outer)
        b = self.backend = operator.backend
        n = operator.n
        self.x, self.b, self.ax = (b.zeros((n,), np.float64) for _ in range(3))
        self.partials = b.zeros((2 * PARTIAL_BLOCKS,), np.float64)
        k = b.module(SOURCE, np.float64, kernel_defines())
        self._apply = operator.bind(self.x, self.ax)
        self._residual = k.refine_residual.bind(partial_blocks(n), THREADS, self.b, self.ax,
                                                inner.b, inner.x, n, self.partials)
        self._correct = k.refine_correct.bind(-(-n // THREADS), THREADS, self.x, inner.x, n)

    def _relative_residual(self):
        """||b - A x|| / ||b|| (launches the residual; reads two partial sums)."""
        self._apply()
        self._residual()
        sums = self.backend.to_host(self.partials).reshape(2, PARTIAL_BLOCKS).sum(axis=1)
        return float(np.sqrt(sums[0] / sums[1])) if sums[1] > 0 else 0.0

    def solve(self, b, rtol=1e-10):
        """Solve A x = b to ||b - A x|| <= rtol ||b|| in fp64; returns (x, RefinementInfo)."""
        b = np.asarray(b, np.float64)
        if b.shape != (self.operator.n,) or not np.all(np.isfinite(b)):
            raise ValueError(f"b must be {self.operator.n} finite numbers")
        self.backend.write(self.b, b)
        self.backend.write(self.x, np.zeros(self.operator.n))
        inner_iterations, outer, status, last = 0, 0, None, np.inf
        while True:
            # The fp64 residual of x decides; an inner failure is reported after its
            # correction unless that correction converged.
            residual = self._relative_residual()
            if residual <= rtol:
                status = "converged"
            elif status is None and not residual <= 0.5 * last:  # NaN too
                status = "stalled"
            elif status is None and outer == self.max_outer:
                status = "maxiter"
            if status is not None:
                break
            _, info = self.inner.solve_in_place(restarts=0)
            inner_iterations += info.iterations
            self._correct()
            outer += 1
            if info.status in ("maxiter", "breakdown"):
                status = info.status
            last = residual
        return self.x, RefinementInfo(converged=status == "converged", outer_iterations=outer,
                                      inner_iterations=inner_iterations, residual=residual,
                                      status=status)


class CapturedRefinement:
    """Refinement as launches only, for a solve inside a captured step (see the module
    docstring): b and x are fp64 device vectors (x the initial guess, then the solution);
    `inner` a Krylov solver on the fp32 copy whose own rtol is that of one pass."""

    def __init__(self, operator, inner, rtol, passes=PASSES):
        check_pair(operator, inner)
        if not 0 < rtol < 1:
            raise ValueError(f"rtol must be in (0, 1), got {rtol}")
        self.operator, self.inner, self.rtol, self.passes = operator, inner, rtol, passes
        b = self.backend = operator.backend
        n = operator.n
        self.x, self.b, self.ax = (b.zeros((n,), np.float64) for _ in range(3))
        self.partials = b.zeros((2 * PARTIAL_BLOCKS,), np.float64)
        self.done = b.zeros((1,), np.int32)
        self.kernels = k = b.module(SOURCE, np.float64, kernel_defines())
        # A pass: the fp64 residual (into the inner b, inner x = 0), the verdict, the inner
        # solve, x += d; after the last, the residual and the verdict again.
        self._check = [
            operator.bind(self.x, self.ax),
            k.refine_residual.bind(partial_blocks(n), THREADS, self.b, self.ax, inner.b,
                                   inner.x, n, self.partials),
            k.refine_verdict.bind(1, THREADS, self.partials, rtol**2, (FLOOR * rtol)**2,
                                  inner.state, ATOL2, inner.done, STALLED, self.done),
        ]
        self._correct = k.refine_correct.bind(-(-n // THREADS), THREADS, self.x, inner.x, n)

    def bind_round(self, flag):
        """A capturable launch: the inner operator's values = the fp64 ones rounded, when
        flag[0] (a device int, such as a rebuilt matrix's flag)."""
        source, target = self.operator.values, self.inner.operator.values
        return self.kernels.refine_round.bind(-(-source.size // THREADS), THREADS, source,
                                              target, flag, source.size)

    def launch_solve(self):
        """Launch the passes from the device vectors b and x (capturable): x is then the
        solution and done[0] the outcome of the last verdict."""
        for _ in range(self.passes):
            for launch in self._check:
                launch()
            self.inner.launch_solve()
            self._correct()
        for launch in self._check:
            launch()
