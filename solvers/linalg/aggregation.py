"""Smoothed aggregation's coarsening of one level, on the backend (kernels in
raw_kernels/linalg/amg_setup.cu, whole-array steps in NumPy or CuPy): the strength graph, the
aggregates, and the tentative prolongator with the coarse near-nullspace.

    graph = strength_graph(backend, A, node_of_dof, nodes, theta=0.0)
    aggregate, count = aggregate_nodes(backend, graph)
    T, coarse_B, coarse_node_of_dof = tentative_prolongator(backend, dof_aggregate, count, B)

Strength: the symmetric test |a_ij| >= theta sqrt(|a_ii a_jj|) of pyamg's default ('symmetric'
with theta = 0: every stored nonzero coupling is strong). A vector problem's dofs are grouped
into nodes (node_of_dof), and a_ij is then the Frobenius norm of the block of nodes i and j.

Aggregation, in passes of one-thread-a-node launches (the same aggregates on every run and on
both backends):
1. Roots: a distance-2 maximal independent set of the graph, chosen in Luby rounds (a node
   whose priority is the largest among the undecided nodes within distance 2 becomes a root;
   nodes within distance 2 of a root leave the contest). Priority: the fewest two-step walks
   to undecided nodes first, so that roots grow in from the boundaries and from earlier roots
   as in pyamg's sequential greedy (random priorities pack them more loosely: larger
   aggregates, more CG iterations), then a fixed hash of the node index. A root and its
   neighbours form an aggregate (no node neighbours two roots).
2. The same among the nodes left out and their couplings, for roots that have at least
   SECOND_PASS_SHARE of their neighbours left out (fills the gaps the first pass leaves).
3. Every other node joins the aggregate it is most strongly coupled to.
Maximality puts every node within distance 2 of a first-pass root, so every node with a
neighbour ends in exactly one aggregate, and aggregates are connected; isolated nodes stay in
none (as in pyamg), left to the smoother.

Tentative prolongator: on each aggregate a thin QR of the aggregate's rows of the near-nullspace
B (n x k), B_a = Q_a R_a; T holds the Q_a, the coarse near-nullspace the R_a, so T B_c = B on
the aggregated dofs and T^T T = I. A column of B that is dependent on the earlier ones on an
aggregate (a rigid rotation about the line through a two-node aggregate) gives no coarse dof.
"""

import numpy as np

from .sparse_setup import Csr, diagonal, entry_rows, keep_entries, product, transpose

SOURCE = "linalg/amg_setup.cu"
THREADS = 256  # threads of every amg_setup.cu launch block (one thread per node)
DEPENDENT = 1e-10  # a QR column below this fraction of its norm is dropped (pyamg's tol)
UNDECIDED, ROOT, OUT = 0, 1, 2  # the states of a node while the roots are chosen (AMG_* in .cu)
SECOND_PASS_SHARE = 2 / 3  # of its neighbours a second-pass root must have left out
# Luby rounds between the host's reads of whether any node is undecided: on cuda a read waits
# for the device, and a round too many costs six short launches; on host a read costs nothing.
ROUNDS_PER_CHECK = {"cuda": 4, "host": 1}


def compiled_kernels():
    """Every (source, defines) this module compiles (REAL_BITS aside): amg_setup.cu, no
    defines. The setup always loads it with real = double."""
    yield SOURCE, {}


def _kernels(backend):
    return backend.module(SOURCE, np.float64)


def _blocks(n):
    return max(1, -(-n // THREADS))


def strength_graph(backend, matrix, node_of_dof=None, nodes=None, theta=0.0):
    """The strong couplings between the nodes of a level matrix as a Csr without its
    diagonal, valued |a_ij| / sqrt(|a_ii a_jj|) (nodes: Frobenius norms of blocks).
    node_of_dof None: each dof is a node."""
    with backend.array_work() as (xp, _):
        if node_of_dof is None:
            couplings = matrix._replace(values=xp.abs(matrix.values))
        else:
            # Frobenius norms of the node blocks: Q^T (A .* A) Q with Q the dof-to-node map.
            n = matrix.shape[0]
            to_node = Csr(xp.arange(n + 1, dtype=xp.int32), node_of_dof.astype(xp.int32),
                          xp.ones(n, xp.float64), (n, int(nodes)))
            squares = matrix._replace(values=matrix.values ** 2)
            blocks = product(backend, transpose(backend, to_node),
                             product(backend, squares, to_node))
            couplings = blocks._replace(values=xp.sqrt(blocks.values))
        rows, columns = entry_rows(backend, couplings), couplings.columns
        diag = diagonal(backend, couplings)
        scale = xp.sqrt(diag[rows] * diag[columns])
        strong = (rows != columns) & (couplings.values > 0) & (couplings.values >= theta * scale)
        return keep_entries(backend, couplings, strong, values=couplings.values / scale)


def node_hashes(xp, n):
    """A fixed hash of 0 .. n-1 into distinct non-negative int32 values: products by odd
    constants and xor-shifts, each a bijection of the 31-bit integers."""
    mask = np.uint32(0x7FFFFFFF)
    h = xp.arange(n, dtype=xp.uint32)
    for multiplier, shift in ((0x9E3779B1, 15), (0x85EBCA77, 13), (0xC2B2AE3D, 16)):
        h = (h * np.uint32(multiplier)) & mask
        h ^= h >> np.uint32(shift)
    return h.astype(xp.int32)


def _root_aggregates(backend, graph, least):
    """(aggregate of each node or -1, count): the roots of a distance-2 maximal independent
    set among the nodes with at least `least` (an array) neighbours, each with its
    neighbours, numbered in the order of the roots."""
    n = graph.shape[0]
    kernels, blocks, pattern = _kernels(backend), _blocks(n), (graph.row_ptr, graph.columns)
    with backend.array_work() as (xp, _):
        index = xp.arange(n, dtype=xp.int32)
        hashes = node_hashes(xp, n) >> 10  # 21 bits
        none = xp.int32(-1)
        state = xp.where(graph.row_ptr[1:] - graph.row_ptr[:-1] < least, OUT,
                         UNDECIDED).astype(xp.int32)
        once, priority, winner, near = (xp.empty(n, xp.int32) for _ in range(4))
        # Luby rounds (amg_setup.cu's amg_luby_*): the node with the largest priority within
        # distance 2 becomes a root, then every node within distance 2 of a root leaves.
        # Priority: the fewest walks of two steps to undecided nodes first (a front from the
        # boundaries and the roots, which packs the roots densely, as a sequential greedy
        # does), then the hash. A round without undecided nodes changes nothing, so the host
        # may ask whether any are left only every few rounds (ROUNDS_PER_CHECK).
        launches = [kernels.amg_luby_walks.bind(blocks, THREADS, *pattern, state, once, n),
                    kernels.amg_luby_priority.bind(blocks, THREADS, *pattern, once, hashes,
                                                   priority, n),
                    kernels.amg_luby_winner.bind(blocks, THREADS, *pattern, priority, state,
                                                 winner, n),
                    kernels.amg_luby_roots.bind(blocks, THREADS, *pattern, priority, winner,
                                                state, n),
                    kernels.amg_luby_near.bind(blocks, THREADS, *pattern, state, near, n),
                    kernels.amg_luby_out.bind(blocks, THREADS, *pattern, near, state, n)]
        undecided = True
        while undecided:
            for _ in range(ROUNDS_PER_CHECK.get(backend.name, 1)):
                for launch in launches:
                    launch()
            undecided = bool((state == UNDECIDED).any())
        # A root and its neighbours (a node neighbours at most one root).
        is_root = state == ROOT
        root = xp.empty(n, xp.int32)
        kernels.amg_neighbour_max(blocks, THREADS, *pattern, xp.where(is_root, index, none),
                                  root, n)
        number = xp.cumsum(is_root, dtype=xp.int32) - 1
        aggregate = xp.where(root >= 0, number[xp.maximum(root, 0)], none).astype(xp.int32)
        return aggregate, int(number[-1]) + 1


def aggregate_nodes(backend, graph):
    """(aggregate of each node, int32, -1 for isolated nodes; number of aggregates)."""
    with backend.array_work() as (xp, _):
        degree = graph.row_ptr[1:] - graph.row_ptr[:-1]
        first, count = _root_aggregates(backend, graph, 1)
        # Second pass: the same among the nodes left out, for roots with most of their
        # neighbours left out too.
        rows = entry_rows(backend, graph)
        left = (first[rows] < 0) & (first[graph.columns] < 0)
        least = xp.maximum(2, xp.ceil(SECOND_PASS_SHARE * degree))
        second, more = _root_aggregates(backend, keep_entries(backend, graph, left), least)
        aggregate = xp.where(second >= 0, second + count, first).astype(xp.int32)
        # Last pass: the others join the aggregate they are most strongly coupled to.
        joined = xp.empty_like(aggregate)
        _kernels(backend).amg_join_strongest(_blocks(graph.shape[0]), THREADS, graph.row_ptr,
                                             graph.columns, graph.values, aggregate, joined,
                                             graph.shape[0])
        return joined, count + more


def tentative_prolongator(backend, dof_aggregate, count, candidates):
    """(T, coarse near-nullspace, aggregate of each coarse dof) from the aggregate of each
    dof (-1: none), the number of aggregates and the near-nullspace B (n x k, float64 on the
    backend). Coarse dofs are numbered k per aggregate, dependent ones left out."""
    n, k = candidates.shape
    with backend.array_work() as (xp, _):
        dofs = xp.flatnonzero(dof_aggregate >= 0).astype(xp.int32)
        owner = dof_aggregate[dofs]
        # The members of each aggregate, ascending.
        members = dofs[xp.argsort(owner.astype(xp.int64) * n + dofs)]
        member_ptr = xp.zeros(count + 1, xp.int32)
        member_ptr[1:] = xp.cumsum(xp.bincount(owner, minlength=count))
        # T: k entries in each aggregated dof's row, columns owner k .. owner k + k - 1.
        t_row_ptr = xp.zeros(n + 1, xp.int32)
        t_row_ptr[1:] = xp.cumsum(xp.where(dof_aggregate >= 0, k, 0), dtype=xp.int32)
        t_columns = (owner[:, None] * k + xp.arange(k, dtype=xp.int32)[None, :]).ravel()
        t_values = xp.zeros(dofs.size * k, xp.float64)
        coarse = xp.zeros(count * k * k, xp.float64)
        _kernels(backend).amg_tentative(_blocks(count), THREADS, member_ptr, members,
                                        xp.ascontiguousarray(candidates), t_row_ptr,
                                        t_values, coarse, k, DEPENDENT, count)
        # Drop the coarse dofs of dependent columns (zero in T, zero rows of R).
        coarse = coarse.reshape(count * k, k)
        kept = coarse[xp.arange(count * k), xp.arange(count * k) % k] != 0
        renumber = xp.cumsum(kept, dtype=xp.int32) - 1
        tentative = Csr(t_row_ptr, t_columns.astype(xp.int32), t_values, (n, count * k))
        tentative = keep_entries(backend, tentative, kept[t_columns], columns=renumber[t_columns],
                                 width=int(kept.sum()))
        coarse_node = (xp.arange(count * k, dtype=xp.int32) // k)[kept]
        return tentative, xp.ascontiguousarray(coarse[kept]), coarse_node
