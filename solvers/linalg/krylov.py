"""Krylov solvers with the whole iteration on the device (raw_kernels/krylov.cu): conjugate
gradients for symmetric positive definite operators and BiCGStab for non-symmetric ones, each
optionally Jacobi-preconditioned. Chunks of iterations are captured once as a graph and
replayed; the host reads the convergence state only between chunks. Dot products accumulate in
double, in a fixed order, so a solve gives the same bits every time.

    solver = ConjugateGradient(operator, preconditioner="jacobi", rtol=1e-6, maxiter=1000)
    x, info = solver.solve(b)   # x: the solver's device vector; info: converged, iterations...
"""

from dataclasses import dataclass

import numpy as np

from ..stepper import Stepper

PARTIAL_BLOCKS = 256  # PARTIAL_BLOCKS and THREADS of krylov.cu
THREADS = 256
STATE_SIZE = 8
RZ, RR, BB, TOL2, ITER, MAXITER = range(6)
STATUS = {0: "running", 1: "converged", 2: "maxiter", 3: "breakdown"}
# The recursive residual drifts from the true one by rounding; a solve whose true residual
# ends above DRIFT * rtol has asked for more than its precision can give.
DRIFT = 10.0


@dataclass(frozen=True)
class SolveInfo:
    converged: bool
    iterations: int
    residual: float  # true ||b - A x|| / ||b|| of the returned x
    status: str  # converged; maxiter, breakdown or stalled (rtol below what the precision
    # reaches: the recursive residual met rtol, the true one stayed above DRIFT * rtol)


def kernel_variants():
    yield {}


class KrylovSolver:
    """What CG and BiCGStab share: state on the device, the start of a solve, the chunked
    iteration loop and the convergence report. Subclasses bind `_iteration` (the launches of
    one iteration) and `_start` (r = b - A x is computed into `q` before them)."""

    def __init__(self, operator, preconditioner, rtol, maxiter, chunk, graph):
        if preconditioner not in (None, "jacobi") and not hasattr(preconditioner, "bind"):
            raise ValueError("preconditioner must be None, 'jacobi' or an object with "
                             f"bind(r, z) (e.g. GeometricMultigrid), got {preconditioner!r}")
        # Jacobi is fused into the vector kernels; any other M runs as its own launches.
        self.general = preconditioner if hasattr(preconditioner, "bind") else None
        if not 0 < rtol < 1:
            raise ValueError(f"rtol must be in (0, 1), got {rtol}")
        self.operator = operator
        self.rtol = float(rtol)
        self.maxiter = int(maxiter if maxiter is not None else 10 * operator.n)
        if self.maxiter < 1:
            raise ValueError(f"maxiter must be >= 1, got {maxiter}")
        b = self.backend = operator.backend
        n, dtype = operator.n, operator.dtype
        self.x, self.b, self.r, self.q = (b.zeros((n,), dtype) for _ in range(4))
        self.inv_diag = b.to_device(self._inverse_diagonal(preconditioner).astype(dtype))
        self.partials = b.zeros((3 * PARTIAL_BLOCKS,), np.float64)
        self.state = b.zeros((STATE_SIZE,), np.float64)
        self.done = b.zeros((1,), np.int32)
        self.coef = b.zeros((3,), dtype)
        self.kernels = b.module("krylov.cu", dtype)
        self.vector_blocks = -(-n // THREADS)
        self._residual = operator.bind(self.x, self.q)
        self._true_residual = self.kernels.residual_partials.bind(
            PARTIAL_BLOCKS, THREADS, self.b, self.q, n, self.partials)
        self._start = []
        self._iteration = []
        self.stepper = Stepper(b, self.iterate, steps_per_graph=chunk, graph=graph)

    def _bind_start(self, z, p, precondition, general=None):
        """r = b - q, z = M^-1 r (Jacobi fused, or `general`'s launches), p = z, and the state
        from r.z, r.r and b.b."""
        k, n = self.kernels, self.operator.n
        self._start = [k.cg_start.bind(self.vector_blocks, THREADS, self.b, self.q,
                                       self.inv_diag, self.r, z, p, n, precondition)]
        if general is not None:
            self._start += [general.bind(self.r, z),
                            k.copy_vector.bind(self.vector_blocks, THREADS, p, z, self.done, n)]
        self._start += [
            k.cg_start_partials.bind(PARTIAL_BLOCKS, THREADS, self.r, z, self.b, n,
                                     self.partials),
            k.cg_start_state.bind(1, PARTIAL_BLOCKS, self.partials, self.state, self.done),
        ]

    def _dots(self, a, b, c=None, d=None):
        """Partial sums of a.b (and c.d) for the next scalar kernel."""
        pairs = 1 if c is None else 2
        return self.kernels.dot_partials.bind(
            PARTIAL_BLOCKS, THREADS, a, b, a if c is None else c, b if d is None else d, pairs,
            self.operator.n, self.done, self.partials)

    def _inverse_diagonal(self, preconditioner):
        if preconditioner != "jacobi":
            return np.ones(self.operator.n)
        diagonal = np.asarray(self.operator.diagonal(), np.float64)
        zero = np.flatnonzero(diagonal == 0)
        if zero.size:
            raise ValueError(f"Jacobi needs a nonzero diagonal: row {zero[0]} is 0")
        return 1.0 / diagonal

    def iterate(self):
        """Launch one iteration (a no-op once the state says done)."""
        for launch in self._iteration:
            launch()

    def _write(self, target, values, name):
        values = np.asarray(values)
        if values.shape != (self.operator.n,):
            raise ValueError(f"{name} must have shape ({self.operator.n},), got {values.shape}")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{name} has non-finite values")
        self.backend.write(target, values.astype(self.operator.dtype))

    def solve(self, b, x0=None):
        """Solve A x = b (host arrays) to ||r|| <= rtol ||b||; returns (x, SolveInfo). A solve
        that does not converge says so in SolveInfo (status maxiter or breakdown)."""
        self._write(self.b, b, "b")
        self._write(self.x, np.zeros(self.operator.n) if x0 is None else x0, "x0")
        return self.solve_in_place()

    def solve_in_place(self):
        """Solve with the right-hand side and initial guess already in the device vectors
        `b` and `x` (no host transfer of vectors); returns (x, SolveInfo)."""
        state = np.zeros(STATE_SIZE)
        state[TOL2], state[MAXITER] = self.rtol**2, self.maxiter
        self.backend.write(self.state, state)
        self.backend.write(self.done, [0])
        self._residual()
        for launch in self._start:
            launch()
        while self.status() == "running":
            self.stepper.advance()
        return self.x, self.info()

    def status(self):
        """running, converged, maxiter or breakdown (reads one int from the device)."""
        return STATUS[int(self.backend.to_host(self.done)[0])]

    def info(self):
        """The outcome of the last solve, with its true residual (one more A x)."""
        self._residual()
        self._true_residual()
        sums = self.backend.to_host(self.partials)[:2 * PARTIAL_BLOCKS]
        rr, bb = sums.reshape(2, PARTIAL_BLOCKS).sum(axis=1)
        residual = float(np.sqrt(rr / bb)) if bb > 0 else 0.0
        status = self.status()
        if status == "converged" and residual > DRIFT * self.rtol:
            status = "stalled"
        iterations = int(self.backend.to_host(self.state)[ITER])
        return SolveInfo(converged=status == "converged", iterations=iterations,
                         residual=residual, status=status)


class ConjugateGradient(KrylovSolver):
    """CG (Hestenes-Stiefel) for a symmetric positive definite operator; a non-positive p.Ap
    stops it with status breakdown. The preconditioner (None, 'jacobi', or an object whose
    bind(r, z) launches z = M^-1 r, such as a multigrid V-cycle) must be symmetric positive
    definite too."""

    def __init__(self, operator, preconditioner=None, rtol=1e-6, maxiter=None, chunk=20,
                 graph=True):
        super().__init__(operator, preconditioner, rtol, maxiter, chunk, graph)
        b, k, n = self.backend, self.kernels, operator.n
        self.z, self.p = b.zeros((n,), operator.dtype), b.zeros((n,), operator.dtype)
        flag = int(preconditioner == "jacobi")
        self._bind_start(self.z, self.p, flag, self.general)
        # With a general M, cg_update leaves z = r and r.r in both slots; then z = M r and the
        # r.z slot is recomputed.
        precondition = [] if self.general is None else [self.general.bind(self.r, self.z),
                                                         self._dots(self.r, self.z)]
        self._iteration = [
            operator.bind(self.p, self.q),
            self._dots(self.p, self.q),
            k.cg_alpha.bind(1, PARTIAL_BLOCKS, self.partials, self.state, self.done, self.coef),
            k.cg_update.bind(PARTIAL_BLOCKS, THREADS, self.x, self.r, self.z, self.p, self.q,
                             self.inv_diag, n, flag, self.coef, self.done, self.partials),
            *precondition,
            k.cg_beta.bind(1, PARTIAL_BLOCKS, self.partials, self.state, self.done, self.coef),
            k.cg_direction.bind(self.vector_blocks, THREADS, self.p, self.z, self.coef,
                                self.done, n),
        ]


class BiCGStab(KrylovSolver):
    """BiCGStab (van der Vorst 1992) for a non-symmetric operator, right-preconditioned (None,
    'jacobi' or an object with bind(r, z)); a vanishing r0.v, rho or omega before convergence
    stops it with status breakdown."""

    def __init__(self, operator, preconditioner=None, rtol=1e-6, maxiter=None, chunk=20,
                 graph=True):
        super().__init__(operator, preconditioner, rtol, maxiter, chunk, graph)
        b, k, n = self.backend, self.kernels, operator.n
        self.r0hat, self.p, self.phat, self.v, self.s, self.shat, self.t = (
            b.zeros((n,), operator.dtype) for _ in range(7))
        # r0hat = r0 and p = r0: the CG start without preconditioning (z := r0hat).
        self._bind_start(self.r0hat, self.p, 0)
        grid = self.vector_blocks
        # A general M replaces the fused Jacobi scaling (inv_diag is then all ones).
        m = self.general
        self._iteration = [
            m.bind(self.p, self.phat) if m else k.jacobi_apply.bind(
                grid, THREADS, self.phat, self.p, self.inv_diag, self.done, n),
            operator.bind(self.phat, self.v),
            self._dots(self.r0hat, self.v),
            k.bicg_alpha.bind(1, PARTIAL_BLOCKS, self.partials, self.state, self.done,
                              self.coef),
            k.bicg_s.bind(grid, THREADS, self.s, self.shat, self.r, self.v, self.inv_diag,
                          self.coef, self.done, n),
            *([m.bind(self.s, self.shat)] if m else []),
            operator.bind(self.shat, self.t),
            self._dots(self.t, self.s, self.t, self.t),
            k.bicg_omega.bind(1, PARTIAL_BLOCKS, self.partials, self.done, self.coef),
            k.bicg_update.bind(PARTIAL_BLOCKS, THREADS, self.x, self.r, self.phat, self.shat,
                               self.s, self.t, self.r0hat, n, self.coef, self.done,
                               self.partials),
            k.bicg_beta.bind(1, PARTIAL_BLOCKS, self.partials, self.state, self.done, self.coef),
            k.bicg_direction.bind(grid, THREADS, self.p, self.r, self.v, self.coef, self.done,
                                  n),
        ]
