"""Preconditioned conjugate gradients on a decomposed grid (issue 24): every rank iterates on
its block's vectors with krylov.cu's kernels, and the host makes each iteration's two sets of
dot products global by MPI Allreduce between the launches (host-staged).

    layout = block_layout(rank, size, shape)
    op = BlockLaplacian(comm, layout.block, shape, spacing, boundary=...)
    cg = DistributedConjugateGradient(op, DistributedMultigrid(op, layout), rtol=1e-8)
    x, info = cg.solve(op.scatter(b))      # x: this rank's block (device); info: SolveInfo

An iteration, parts in order (launches, and HostWork between them):
    q = A p                 the operator's copy, halo exchange and stencil launch
    dot_partials p.q        HostWork: the global p.q (block sums, then Allreduce) -> pq
    cg_update               alpha = r.z / p.q from the device state; x, r updated; z = r;
                            partial sums of r.r
    z = M r                 the preconditioner's parts (none for M = I)
    dot_partials r.z        HostWork: global r.z and r.r in one Allreduce; convergence test,
                            beta = r.z / (r.z)_old, written to the device state
    cg_direction            p = z + beta p
The host holds the scalars and the status; the device holds what the kernels read (state[RZ],
pq, coef, done). Each block's sum is in double and in a fixed order, and Allreduce adds the
ranks' sums, so a solve is reproducible for a given rank count, not across rank counts. A
stalled solve restarts from x as KrylovSolver's does. With graph=True the runs of launches
between two pieces of host work replay as graphs (a Stepper's segments).
"""

from dataclasses import replace

import numpy as np

from ..backend.stepper import HostWork, Stepper
from .krylov import (
    ITER,
    PARTIAL_SLOT,
    RESTARTS,
    RZ,
    SOURCE,
    STATE_SIZE,
    STATUS,
    THREADS,
    SolveInfo,
    kernel_defines,
)
from .operator import LaunchSequence

BETA = 1  # coef[BETA] (krylov.h)


class DistributedConjugateGradient:
    """CG for a BlockLaplacian, preconditioned by None or an object whose bind(r, z) returns a
    LaunchSequence of z = M r (a DistributedMultigrid); stops at ||r|| <= max(rtol ||b||, atol)
    (norms of the whole grid's vectors) or after maxiter iterations (default 10 n of the whole
    grid)."""

    def __init__(self, operator, preconditioner=None, rtol=1e-6, maxiter=None, atol=0.0,
                 graph=True):
        if not 0 < rtol < 1:
            raise ValueError(f"rtol must be in (0, 1), got {rtol}")
        if not (np.isfinite(atol) and atol >= 0):
            raise ValueError(f"atol must be >= 0 and finite, got {atol}")
        self.operator, self.comm = operator, operator.comm
        self.rtol, self.atol = float(rtol), float(atol)
        self.maxiter = int(maxiter if maxiter is not None else 10 * np.prod(operator.shape))
        b, n, dtype = operator.backend, operator.n, operator.dtype
        self.backend = b
        self.x, self.b, self.r, self.q, self.z, self.p = (b.zeros((n,), dtype) for _ in range(6))
        self.partials = b.zeros((3 * PARTIAL_SLOT,), np.float64)
        self.state = b.zeros((STATE_SIZE,), np.float64)
        self.pq = b.zeros((1,), np.float64)
        self.done = b.zeros((1,), np.int32)
        self.coef = b.zeros((3,), dtype)
        self.tickets = b.zeros((1,), np.int32)
        self._unit = b.to_device(np.ones(1, dtype))  # M^-1 of the fused Jacobi: not read
        self.partial_blocks = min(PARTIAL_SLOT, -(-n // THREADS))
        vector_blocks = -(-n // THREADS)
        k = b.module(SOURCE, dtype, kernel_defines())
        pb, tail = self.partial_blocks, (self.state, self.done, self.coef, self.partials,
                                         self.tickets)
        precondition = ([] if preconditioner is None else
                        list(preconditioner.bind(self.r, self.z).launches))
        self._product = operator.bind(self.x, self.q)  # q = A x: the start's and the check's
        self._check = k.residual_partials.bind(pb, THREADS, self.b, self.q, n, self.partials)

        # The start: r = b - A x, z = M r, p = z, then the global r.z, r.r and b.b.
        self._start = [
            *self._product.launches,
            k.cg_start.bind(vector_blocks, THREADS, self.b, self.q, self._unit, self.r, self.z,
                            self.p, n, 0, self.done),
            *precondition,
            k.copy_vector.bind(vector_blocks, THREADS, self.p, self.z, self.done, n),
            k.cg_start_partials.bind(pb, THREADS, self.r, self.z, self.b, n, self.partials),
            HostWork(self._start_state),
        ]
        # One iteration (see the module docstring).
        self._iteration = [
            *operator.bind(self.p, self.q).launches,
            k.dot_partials.bind(pb, THREADS, self.p, self.q, self.p, self.q, 1, n, self.done,
                                self.partials),
            HostWork(self._alpha_step),
            k.cg_update.bind(pb, THREADS, self.x, self.r, self.z, self.p, self.q, self._unit, n,
                             0, self.pq, 0, *tail),
            *precondition,
            k.dot_partials.bind(pb, THREADS, self.r, self.z, self.r, self.z, 1, n, self.done,
                                self.partials),
            HostWork(self._beta_step),
            k.cg_direction.bind(vector_blocks, THREADS, self.p, self.z, self.coef, self.done, n),
        ]
        self.stepper = Stepper(b, LaunchSequence(self, self._iteration), steps_per_graph=1,
                               graph=graph, segments=self._iteration)
        self.status, self.iterations, self._maxiter_now = "running", 0, self.maxiter

    # -- host work between the launches -----------------------------------------------------
    def _global_sums(self, slots):
        """The whole grid's sums of partial slots 0 ... slots - 1 (each rank's in a fixed
        order, then Allreduce)."""
        host = self.backend.to_host(self.partials).reshape(3, PARTIAL_SLOT)
        local = host[:slots, :self.partial_blocks].sum(axis=1)
        total = np.empty_like(local)
        self.comm.Allreduce(local, total)
        return total

    def _set_done(self, code):
        self.status = STATUS[code]
        self.backend.write(self.done, np.array([code], np.int32))

    def _write_state(self):
        """The device state the kernels read (r.z), and the iterations so far at ITER, where
        KrylovSolver's state holds them (a step's records read them there)."""
        state = np.zeros(STATE_SIZE)
        state[RZ], state[ITER] = self._rz, self.iterations
        self.backend.write(self.state, state)

    def _start_state(self):
        rz, rr, bb = self._global_sums(3)
        self._rz, self._bb, self.iterations = rz, bb, 0
        self._write_state()
        self.backend.write(self.coef, np.zeros(3))
        self.status = "running"
        if rr <= max(self.rtol**2 * bb, self.atol**2):
            self._set_done(1)

    def _alpha_step(self):
        """The global p.q for cg_update's alpha; a non-positive one is a breakdown."""
        if self.status != "running":
            return
        (pq,) = self._global_sums(1)
        if not pq > 0:
            self._set_done(3)
            return
        self.backend.write(self.pq, np.array([pq]))

    def _beta_step(self):
        """Count the iteration, test convergence, and set beta and the new r.z."""
        if self.status != "running":
            return
        rz, rr = self._global_sums(2)
        self.iterations += 1
        old, self._rz = self._rz, rz
        self._write_state()
        if rr <= max(self.rtol**2 * self._bb, self.atol**2):
            self._set_done(1)
            return
        if self.iterations >= self._maxiter_now:
            self._set_done(2)
            return
        coef = np.zeros(3)
        coef[BETA] = rz / old
        self.backend.write(self.coef, coef)

    # -- solves -------------------------------------------------------------------------------
    def solve(self, b, x0=None, restarts=RESTARTS):
        """Solve A x = b for this rank's block (host arrays of the block's cells, in its order
        i + nx (j + ny k)); every rank calls it. Returns (x, SolveInfo), x the device vector."""
        self.backend.write(self.b, np.asarray(b, self.operator.dtype).ravel())
        self.backend.write(self.x, np.zeros(self.operator.n) if x0 is None
                           else np.asarray(x0, self.operator.dtype).ravel())
        return self.solve_in_place(restarts)

    def solve_in_place(self, restarts=RESTARTS):
        """Solve from the device vectors b and x as they are; returns (x, SolveInfo). As
        KrylovSolver's: a stalled solve (the recursive residual met the tolerance, the true
        one did not) restarts from x up to `restarts` times while each halves the true
        residual, within maxiter iterations in all."""
        info = self._run(self.maxiter)
        used = info.iterations
        for _ in range(restarts):
            if info.status != "stalled" or used >= self.maxiter:
                break
            last, info = info, self._run(self.maxiter - used)
            used += info.iterations
            if info.residual > 0.5 * last.residual:
                break
        return self.x, replace(info, iterations=used)

    def _run(self, maxiter):
        """One solve from x of at most maxiter iterations; its SolveInfo."""
        self._maxiter_now = maxiter
        for part in self._start:
            part()
        while self.status == "running":
            self.stepper.advance()
        return self.info()

    def info(self):
        """The last solve's outcome with its true residual ||b - A x|| / ||b|| (one more
        A x and an Allreduce)."""
        self._product()
        self._check()
        rr, bb = self._global_sums(2)
        residual = float(np.sqrt(rr / bb)) if bb > 0 else 0.0
        status = self.status
        allowed = max(self.rtol, self.atol / np.sqrt(bb) if bb > 0 else 0.0)
        if status == "converged" and residual > allowed:
            status = "stalled"
        return SolveInfo(converged=status == "converged", iterations=self.iterations,
                         residual=residual, status=status)
