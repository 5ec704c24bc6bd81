"""Mixed-precision iterative refinement: FP64 residuals around an FP32 inner Krylov solve, so
fp32 kernels reach a relative residual (1e-10, say) that FP32 arithmetic alone cannot.

    refine = IterativeRefinement(operator_fp64, ConjugateGradient(operator_fp32, rtol=1e-4))
    x, info = refine.solve(b, rtol=1e-10)

Each outer step: r = b - A x with the fp64 operator; the inner solver solves A d = r in fp32
to its own rtol; x += d in fp64. The residual norm is read on the host once per outer step
(two 256-entry partial sums, no vector transfer)."""

from dataclasses import dataclass

import numpy as np

SOURCE = "linalg/refinement.cu"
PARTIAL_BLOCKS = 256  # blocks of the residual kernel, one partial sum each
THREADS = 256  # threads of every block


@dataclass(frozen=True)
class RefinementInfo:
    converged: bool
    outer_iterations: int
    inner_iterations: int  # summed over the outer steps
    residual: float  # ||b - A x|| / ||b|| in fp64


def kernel_defines():
    return {"PARTIAL_BLOCKS": PARTIAL_BLOCKS, "THREADS": THREADS}


def compiled_kernels():
    """Every (source, defines) this module compiles (fp64 only; the test builds fp32 too)."""
    yield SOURCE, kernel_defines()


class IterativeRefinement:
    def __init__(self, operator, inner, max_outer=20):
        if operator.dtype != np.float64:
            raise ValueError(f"the outer operator must be fp64, got {operator.dtype}")
        if inner.operator.dtype != np.float32 or inner.operator.n != operator.n:
            raise ValueError("the inner solver must be fp32 and of the same size as the "
                             "outer operator")
        if inner.backend is not operator.backend:
            raise ValueError("the inner solver and the outer operator must share a backend")
        self.operator = operator
        self.inner = inner
        self.max_outer = int(max_outer)
        b = self.backend = operator.backend
        n = operator.n
        self.x, self.b, self.ax = (b.zeros((n,), np.float64) for _ in range(3))
        self.partials = b.zeros((2 * PARTIAL_BLOCKS,), np.float64)
        k = b.module(SOURCE, np.float64, kernel_defines())
        self._apply = operator.bind(self.x, self.ax)
        self._residual = k.refine_residual.bind(PARTIAL_BLOCKS, THREADS, self.b, self.ax,
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
        inner_iterations = 0
        for outer in range(self.max_outer + 1):
            residual = self._relative_residual()
            if residual <= rtol or outer == self.max_outer:
                break
            _, info = self.inner.solve_in_place()
            inner_iterations += info.iterations
            self._correct()
        return self.x, RefinementInfo(converged=residual <= rtol, outer_iterations=outer,
                                      inner_iterations=inner_iterations, residual=residual)
