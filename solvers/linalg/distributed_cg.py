"""Preconditioned conjugate gradients on a decomposed grid (issue 24): every rank iterates on
its block's vectors with krylov.cu's kernels and keeps every scalar on the device, as the
single-rank KrylovSolver does; the dot products become the whole grid's by an all-gather of the
ranks' sums (raw_kernels/linalg/distributed_cg.cu).

    layout = block_layout(rank, size, shape)
    op = BlockLaplacian(comm, layout.block, shape, spacing, boundary=..., exchange="auto")
    cg = DistributedConjugateGradient(op, DistributedMultigrid(op, layout), rtol=1e-8)
    x, info = cg.solve(op.scatter(b))      # x: this rank's block (device); info: SolveInfo
    cg.path                                # the way of the exchanges, in words

An iteration, parts in order:
    q = A p                 the operator's copy, halo exchange and stencil launch
    dot_partials p.q        block partial sums
    rank_sums, all-gather, ranks_alpha    the whole grid's p.q -> pq
    cg_update               alpha = r.z / p.q from the device state; x, r updated; z = r;
                            partial sums of r.r (a non-positive p.q: breakdown)
    z = M r                 the preconditioner's parts (none for M = I)
    dot_partials r.z        block partial sums
    rank_sums, all-gather, ranks_beta     the whole grid's r.z and r.r: the iteration counted,
                                          the convergence test, beta (krylov.h's steps)
    cg_direction            p = z + beta p
Each rank adds its blocks' partial sums in double in a fixed order (the single-rank solver's),
then the ranks' sums in rank order, on every rank alike: a solve's bits depend on the rank
count, never on the way the exchanges go, and every rank takes the same steps.

Which path runs (the operator's `collectives`, chosen once: backend/collectives.py):
- in the graph (NCCL on cuda where every rank has a GPU of its own; on the host backend, with
  exchange "nccl", blocking MPI calls as launches): an iteration is launches only, chunks of
  `chunk` iterations (CHUNK: one) replay as one graph each (no-ops past convergence), and the
  host reads the status between chunks;
- host-staged (cuda with ranks sharing a GPU or no NCCL, the host backend by default, or
  exchange "host"): the exchanges and all-gathers are copies to host memory, MPI between graph
  segments (HostWork) and copies back.
The launches are the same either way, so the paths give the same bits. A stalled solve
restarts from x as KrylovSolver's does (the host, between solves). `step_parts()` puts a
whole solve into a caller's step (the decomposed incompressible solver's).
"""

import numpy as np

from ..backend.stepper import HostWork, Stepper
from .krylov import THREADS, KrylovSolver, kernel_defines
from .operator import LaunchSequence

SOURCE = "linalg/distributed_cg.cu"
# Iterations a graph replays between two reads of the status. Past convergence an iteration is
# a no-op but for its operator, preconditioner and exchanges, which still run (every rank's):
# one read an iteration costs less than the half iteration a longer chunk wastes on average
# (measured on the host: the 128^2 cavity's pressure solves, 2 to 3 iterations, 13 % slower
# with 2; the GPU is unmeasured).
CHUNK = 1


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside)."""
    yield SOURCE, kernel_defines()


class DistributedConjugateGradient(KrylovSolver):
    """CG for a BlockLaplacian (or an operator with `comm`, `shape` and `collectives`),
    preconditioned by None or an object whose bind(r, z) returns a LaunchSequence of z = M r
    (a DistributedMultigrid); stops at ||r|| <= max(rtol ||b||, atol) (norms of the whole
    grid's vectors) or after maxiter iterations (default 10 n of the whole grid). chunk:
    iterations a graph replays between reads of the status."""

    def __init__(self, operator, preconditioner=None, rtol=1e-6, maxiter=None, atol=0.0,
                 graph=True, chunk=CHUNK):
        if maxiter is None:
            maxiter = 10 * int(np.prod(operator.shape))
        self.collectives = operator.collectives
        super().__init__(operator, preconditioner, rtol, maxiter, chunk, graph, atol)
        self.device_loop = False  # chunks: NCCL calls stay out of conditional graph nodes
        self.comm = operator.comm
        b, k, n, dtype = self.backend, self.kernels, operator.n, operator.dtype
        self.ranks = self.comm.Get_size()
        self.local = b.zeros((3,), np.float64)
        self.gathered = b.zeros((3 * self.ranks,), np.float64)
        self.sums = b.module(SOURCE, dtype, kernel_defines())
        self.z, self.p = b.zeros((n,), dtype), b.zeros((n,), dtype)
        self.pq = b.zeros((1,), np.float64)
        self._bind_start(self.z, self.p, 0, self.general)
        precondition = ([] if self.general is None else
                        list(self.general.bind(self.r, self.z).launches))
        tail = (self.state, self.done, self.coef, self.partials, self.tickets)
        s, ranks = self.sums, self.ranks
        # One iteration (see the module docstring).
        self._iteration = [
            *operator.bind(self.p, self.q).launches,
            self._dots(self.p, self.q),
            *self._whole_sums(1, s.ranks_alpha.bind(1, 1, self.gathered, ranks, self.pq)),
            k.cg_update.bind(self.partial_blocks, THREADS, self.x, self.r, self.z, self.p,
                             self.q, self.inv_diag, n, 0, self.pq, 0, *tail),
            *precondition,
            self._dots(self.r, self.z),
            *self._whole_sums(2, s.ranks_beta.bind(1, 1, self.gathered, ranks, self.state,
                                                   self.done, self.coef)),
            k.cg_direction.bind(self.vector_blocks, THREADS, self.p, self.z, self.coef,
                                self.done, n),
        ]
        self._check = [*self._residual.launches, self._true_residual, *self._whole_sums(2)]
        staged = any(isinstance(part, HostWork) for part in self._iteration)
        self.stepper = Stepper(b, LaunchSequence(self, self._iteration), steps_per_graph=chunk,
                               graph=graph, segments=self._iteration if staged else None)

    @property
    def path(self):
        """The way of the exchanges and sums, in words (run summaries)."""
        return self.collectives.path

    def _whole_sums(self, slots, finish=None):
        """The parts making partial slots 0 ... slots - 1 the whole grid's sums: this rank's
        (rank_sums), every rank's (all-gather into `gathered`), then `finish`, a launch that
        adds them in rank order."""
        parts = [self.sums.rank_sums.bind(1, THREADS, self.partials, slots, self.local),
                 *self.collectives.bind_allgather(self.local[:slots],
                                                  self.gathered[:slots * self.ranks])]
        return parts + ([finish] if finish is not None else [])

    def _bind_start_state(self):
        return self._whole_sums(3, self.sums.ranks_start.bind(
            1, 1, self.gathered, self.ranks, self.state, self.done, self.coef))

    def _true_sums(self):
        """|b - A x|^2 and |b|^2 of the whole grid (one more A x), added as ranks_total adds."""
        for part in self._check:
            part()
        gathered = self.backend.to_host(self.gathered)[:2 * self.ranks].reshape(self.ranks, 2)
        totals = np.zeros(2)
        for sums in gathered:  # in rank order
            totals += sums
        return totals

    def step_parts(self):
        """The parts of a whole solve from the device vectors b and x as they are (no restart;
        the iterations in state[ITER], the status in done): in the graph, r = b - A x, the
        start and `chunk` iterations as launches, then host work that replays chunks until
        the status leaves "running"; host-staged, host work that runs the solve."""
        if not self.collectives.in_graph:
            return [HostWork(lambda: self._run())]
        return [*self._residual.launches, *self._start,
                *self._iteration * self.stepper.steps_per_graph, HostWork(self._finish)]

    def _finish(self):
        """Chunks of iterations until the status leaves "running"."""
        while self.status() == "running":
            self.stepper.advance()
