"""Krylov solvers with the whole iteration on the device (raw_kernels/linalg/krylov.cu): conjugate
gradients for symmetric positive definite operators and BiCGStab for non-symmetric ones, each
optionally Jacobi-preconditioned. The whole solve is captured once as a graph whose iterations
loop on the device (a CUDA conditional WHILE node; a plain loop on the host backend), so a
solve is one replay and one read of its outcome. Without conditional nodes (CUDA < 12.4, no
cuda-bindings) or with graph=False, chunks of iterations run and the host reads the status
between chunks. `launch_solve()` puts a whole solve into a caller's captured step. Dot products
accumulate in double, in a fixed order, so a solve gives the same bits every time. A solve is
converged only when the true residual b - A x of the x it returns meets the tolerance; in fp32
that cannot go much below eps ||A|| ||x|| / ||b||, which IterativeRefinement (refinement.py)
gets past with fp64 residuals.

    solver = ConjugateGradient(operator, preconditioner="jacobi", rtol=1e-6, maxiter=1000)
    x, info = solver.solve(b)   # x: the solver's device vector; info: converged, iterations...
"""

from dataclasses import dataclass, replace

import numpy as np

from ..backend.stepper import Stepper
from .stencil import StencilLaplacian
from .stencil_cg import FUSED_MAX_UNKNOWNS, ITERATIONS_PER_CALL, fused_iterations

SOURCE = "linalg/krylov.cu"
PARTIAL_SLOT = 2048  # partial sums a slot holds: the most blocks of a partial-sum kernel
THREADS = 256  # threads of every block
STATE_SIZE = 8
RZ, RR, BB, TOL2, ITER, MAXITER, ATOL2 = range(7)
STATUS = {0: "running", 1: "converged", 2: "maxiter", 3: "breakdown"}
# The recursive residual drifts from the true one by rounding. When it met the tolerance and
# the true one did not, CG restarts from x with r = b - A x (residual replacement), at most
# RESTARTS times, and only while each restart at least halves the true residual: below what
# the precision can give (fp32: about eps ||A|| ||x|| / ||b||) it ends as stalled.
RESTARTS = 2


@dataclass(frozen=True)
class SolveInfo:
    converged: bool
    iterations: int
    residual: float  # true ||b - A x|| / ||b|| of the returned x
    status: str  # converged (the true residual met the tolerance); maxiter, breakdown or
    # stalled (the recursive residual met it, the true one did not, restarts included)


def kernel_defines():
    return {"PARTIAL_SLOT": PARTIAL_SLOT, "THREADS": THREADS}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    yield SOURCE, kernel_defines()


class KrylovSolver:
    """What CG and BiCGStab share: state on the device, the start of a solve, the chunked
    iteration loop and the convergence report. Subclasses bind `_iteration` (the launches of
    one iteration) and `_start` (r = b - A x is computed into `q` before them)."""

    def __init__(self, operator, preconditioner, rtol, maxiter, chunk, graph, atol):
        if preconditioner not in (None, "jacobi") and not hasattr(preconditioner, "bind"):
            raise ValueError("preconditioner must be None, 'jacobi' or an object with "
                             f"bind(r, z) (e.g. GeometricMultigrid), got {preconditioner!r}")
        # Jacobi is fused into the vector kernels; any other M runs as its own launches.
        self.general = preconditioner if hasattr(preconditioner, "bind") else None
        self.operator = operator
        b = self.backend = operator.backend
        n, dtype = operator.n, operator.dtype
        self.x, self.b, self.r, self.q = (b.zeros((n,), dtype) for _ in range(4))
        self.inv_diag = b.to_device(self._inverse_diagonal(preconditioner).astype(dtype))
        # Blocks of the partial-sum kernels: from n alone (the same sums on every device).
        self.partial_blocks = min(PARTIAL_SLOT, -(-n // THREADS))
        self.partials = b.zeros((3 * PARTIAL_SLOT,), np.float64)
        self.state = b.zeros((STATE_SIZE,), np.float64)
        self.done = b.zeros((1,), np.int32)
        self.coef = b.zeros((3,), dtype)
        self.tickets = b.zeros((1,), np.int32)  # last-block counter of the fused kernels
        self.kernels = b.module(SOURCE, dtype, kernel_defines())
        self.vector_blocks = -(-n // THREADS)
        self._residual = operator.bind(self.x, self.q)
        self._true_residual = self.kernels.residual_partials.bind(
            self.partial_blocks, THREADS, self.b, self.q, n, self.partials)
        self._start = []
        self._iteration = []
        self.set_limits(rtol, maxiter, atol)
        # With device loops (cuda conditional nodes, or the host) a graph replays the whole
        # solve; otherwise graphs of `chunk` iterations replay until the host reads "done".
        self.device_loop = graph and b.device_loops() is None
        self.stepper = Stepper(b, self.iterate, steps_per_graph=chunk, graph=graph)
        self.iterations_per_call = 1  # CG iterations a call of iterate() launches
        self._solve_graph = None

    def set_limits(self, rtol, maxiter=None, atol=0.0):
        """The stopping rule of later solves: ||r|| <= max(rtol ||b||, atol), at most maxiter
        iterations (default 10 n). atol is a floor for problems whose relative tolerance lies
        below what the precision resolves. Written to the device state here, never during a
        solve."""
        if not 0 < rtol < 1:
            raise ValueError(f"rtol must be in (0, 1), got {rtol}")
        if not (np.isfinite(atol) and atol >= 0):
            raise ValueError(f"atol must be >= 0 and finite, got {atol}")
        maxiter = int(maxiter if maxiter is not None else 10 * self.operator.n)
        if maxiter < 1:
            raise ValueError(f"maxiter must be >= 1, got {maxiter}")
        self.rtol, self.maxiter, self.atol = float(rtol), maxiter, float(atol)
        self._write_limits(maxiter)

    def _write_limits(self, maxiter):
        """The device state of the next solve: the tolerances and `maxiter` iterations."""
        state = np.zeros(STATE_SIZE)
        state[TOL2], state[MAXITER], state[ATOL2] = self.rtol**2, maxiter, self.atol**2
        self.backend.write(self.state, state)

    def _bind_start(self, z, p, precondition, general=None):
        """r = b - q, z = M^-1 r (Jacobi fused, or `general`'s launches), p = z, and the state
        from r.z, r.r and b.b."""
        k, n = self.kernels, self.operator.n
        self._start = [k.cg_start.bind(self.vector_blocks, THREADS, self.b, self.q,
                                       self.inv_diag, self.r, z, p, n, precondition,
                                       self.done)]
        if general is not None:
            bound = general.bind(self.r, z)
            self._start += [*getattr(bound, "launches", (bound,)),
                            k.copy_vector.bind(self.vector_blocks, THREADS, p, z, self.done, n)]
        self._start += [
            k.cg_start_partials.bind(self.partial_blocks, THREADS, self.r, z, self.b, n,
                                     self.partials),
            *self._bind_start_state(),
        ]

    def _bind_start_state(self):
        """The parts setting the start's state from the partials of r.z, r.r and b.b."""
        return [self.kernels.cg_start_state.bind(1, THREADS, self.partials, self.state,
                                                 self.done, self.coef)]

    def _dots(self, a, b, c=None, d=None):
        """Partial sums of a.b (and c.d) for the next scalar kernel."""
        pairs = 1 if c is None else 2
        return self.kernels.dot_partials.bind(
            self.partial_blocks, THREADS, a, b, a if c is None else c, b if d is None else d, pairs,
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

    def solve(self, b, x0=None, restarts=RESTARTS):
        """Solve A x = b (host arrays) to ||r|| <= rtol ||b||; returns (x, SolveInfo). A solve
        that does not converge says so in SolveInfo (status maxiter, breakdown or stalled)."""
        self._write(self.b, b, "b")
        self._write(self.x, np.zeros(self.operator.n) if x0 is None else x0, "x0")
        return self.solve_in_place(restarts)

    def launch_solve(self):
        """Launch a whole solve from the device vectors `b` and `x`: r = b - A x, the start,
        then iterations until the status leaves "running". Launches only, so it can be
        captured into a step's graph: its iterations loop on the device, or without device
        loops the graph holds maxiter of them (no-ops once converged)."""
        self._residual()
        for launch in self._start:
            launch()
        self.backend.loop_until(self.iterate, self.done,
                                fallback_repeats=-(-self.maxiter // self.iterations_per_call))

    def solve_in_place(self, restarts=RESTARTS):
        """Solve with the right-hand side and initial guess already in the device vectors
        `b` and `x` (no host transfer of vectors); returns (x, SolveInfo). A stalled solve
        restarts from x up to `restarts` times (RESTARTS), within maxiter in all."""
        self._run()
        info = self.info()
        used, limited = info.iterations, False
        for _ in range(restarts):
            if info.status != "stalled" or used >= self.maxiter:
                break
            self._write_limits(self.maxiter - used)
            limited = True
            self._run()
            last, info = info, self.info()
            used += info.iterations
            if info.residual > 0.5 * last.residual:
                break
        if limited:  # the whole maxiter again for the next solve
            self._write_limits(self.maxiter)
        return self.x, replace(info, iterations=used)

    def _run(self):
        """One solve from x: a replay of the whole solve, or the start and chunks."""
        if self.device_loop:
            if self._solve_graph is None:
                self.launch_solve()  # eager, host-checked: compiles and warms up
                self._solve_graph = self.backend.capture(self.launch_solve)
            else:
                self._solve_graph.replay()
            return
        self._residual()
        for launch in self._start:
            launch()
        while self.status() == "running":
            self.stepper.advance()

    def status(self):
        """running, converged, maxiter or breakdown (reads one int from the device)."""
        return STATUS[int(self.backend.to_host(self.done)[0])]

    def _true_sums(self):
        """|b - A x|^2 and |b|^2 of the current x (one more A x)."""
        self._residual()
        self._true_residual()
        sums = self.backend.to_host(self.partials)[:2 * PARTIAL_SLOT]
        return sums.reshape(2, PARTIAL_SLOT).sum(axis=1)

    def info(self):
        """The outcome of the last solve, with its true residual (one more A x)."""
        rr, bb = self._true_sums()
        residual = float(np.sqrt(rr / bb)) if bb > 0 else 0.0
        allowed = max(self.rtol, self.atol / np.sqrt(bb) if bb > 0 else 0.0)
        status = self.status()
        if status == "converged" and residual > allowed:
            status = "stalled"
        iterations = int(self.backend.to_host(self.state)[ITER])
        return SolveInfo(converged=status == "converged", iterations=iterations,
                         residual=residual, status=status)


class ConjugateGradient(KrylovSolver):
    """CG (Hestenes-Stiefel) for a symmetric positive definite operator; a non-positive p.Ap
    stops it with status breakdown. The preconditioner (None, 'jacobi', or an object whose
    bind(r, z) launches z = M^-1 r, such as a multigrid V-cycle) must be symmetric positive
    definite too. fused: on a StencilLaplacian with None or 'jacobi', run stencil_cg.py's
    fused iterations (two kernels an iteration) instead of the general ones: True, False, or
    "auto" (up to stencil_cg.FUSED_MAX_UNKNOWNS unknowns, where they measured faster)."""

    def __init__(self, operator, preconditioner=None, rtol=1e-6, maxiter=None, chunk=20,
                 graph=True, atol=0.0, fused="auto"):
        super().__init__(operator, preconditioner, rtol, maxiter, chunk, graph, atol)
        b, k, n = self.backend, self.kernels, operator.n
        self.z, self.p = b.zeros((n,), operator.dtype), b.zeros((n,), operator.dtype)
        self.pq = b.zeros((1,), np.float64)
        flag = int(preconditioner == "jacobi")
        self._bind_start(self.z, self.p, flag, self.general)
        if fused == "auto":
            fused = operator.n <= FUSED_MAX_UNKNOWNS
        if fused and self.general is None and isinstance(operator, StencilLaplacian):
            self._iteration = fused_iterations(self, operator, flag)
            self.iterations_per_call = ITERATIONS_PER_CALL
            return
        # The scalar steps run in the last block of the kernel before them (krylov.cu). With a
        # general M, cg_update leaves z = r; then z = M r, and cg_dot_beta recomputes r.z.
        tail = (self.state, self.done, self.coef, self.partials, self.tickets)
        general = self.general is not None
        precondition = [self.general.bind(self.r, self.z),
                        k.cg_dot_beta.bind(self.partial_blocks, THREADS, self.r, self.z, n, *tail),
                        ] if general else []
        self._iteration = [
            *self._product_and_dot(self.p, self.q, self.pq),
            k.cg_update.bind(self.partial_blocks, THREADS, self.x, self.r, self.z, self.p, self.q,
                             self.inv_diag, n, flag, self.pq, int(not general), *tail),
            *precondition,
            k.cg_direction.bind(self.vector_blocks, THREADS, self.p, self.z, self.coef,
                                self.done, n),
        ]

    def _product_and_dot(self, p, q, pq):
        """Launches of q = A p and pq[0] = p.q: one kernel where the operator offers it."""
        if hasattr(self.operator, "bind_with_dot"):
            return [self.operator.bind_with_dot(p, q, pq)]
        return [self.operator.bind(p, q),
                self.kernels.dot_total.bind(self.partial_blocks, THREADS, p, q, self.operator.n,
                                            self.done, self.partials, pq, self.tickets)]


class BiCGStab(KrylovSolver):
    """BiCGStab (van der Vorst 1992) for a non-symmetric operator, right-preconditioned (None,
    'jacobi' or an object with bind(r, z)); a vanishing r0.v, rho or omega before convergence
    stops it with status breakdown."""

    def __init__(self, operator, preconditioner=None, rtol=1e-6, maxiter=None, chunk=20,
                 graph=True, atol=0.0):
        super().__init__(operator, preconditioner, rtol, maxiter, chunk, graph, atol)
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
            k.bicg_alpha.bind(1, THREADS, self.partials, self.state, self.done,
                              self.coef),
            k.bicg_s.bind(grid, THREADS, self.s, self.shat, self.r, self.v, self.inv_diag,
                          self.coef, self.done, n),
            *([m.bind(self.s, self.shat)] if m else []),
            operator.bind(self.shat, self.t),
            self._dots(self.t, self.s, self.t, self.t),
            k.bicg_omega.bind(1, THREADS, self.partials, self.done, self.coef),
            k.bicg_update.bind(self.partial_blocks, THREADS, self.x, self.r, self.phat, self.shat,
                               self.s, self.t, self.r0hat, n, self.coef, self.done,
                               self.partials),
            k.bicg_beta.bind(1, THREADS, self.partials, self.state, self.done, self.coef),
            k.bicg_direction.bind(grid, THREADS, self.p, self.r, self.v, self.coef, self.done,
                                  n),
        ]
