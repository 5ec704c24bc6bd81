"""The exchanges of a decomposed solve as parts of its steps: one interface in three ways,
chosen once per solver by `collectives()`.

    coll = collectives(comm, backend, exchange)    # exchange: "auto", "nccl" or "host"
    parts = coll.bind_swap([(kind, array, peer), ...])   # kind "send" or "recv", in order
    parts = coll.bind_swap(operations, during)   # launches `during` run while it travels
    parts = coll.bind_allgather(send, receive)     # receive: every rank's send, in rank order
    coll.in_graph                                   # whether the parts are launches only
    coll.path                                       # the way, in words (run summaries)

The three ways:
- NCCL (backend/nccl.py's NcclComm), on the cuda backend where every rank has a GPU of its
  own: each exchange is one launch of NCCL calls on the backend's stream, so a graph captures
  it and a step with its exchanges replays with no host work;
- MPI calls as launches (MpiLaunches), on the host backend when "nccl" is asked for: each
  exchange is one launch that makes blocking MPI calls when it runs. The host backend runs its
  launches one after the other in order (graphs included), so the call sees every kernel
  before it done and the kernels after it wait for it: the in-graph code path, run and tested
  on a machine with no GPU;
- host-staged (HostStaged), otherwise (two ranks on one GPU, no NCCL, "host" asked for, the
  host backend by default): the arrays are copied to page-locked host buffers inside the
  graph, the host exchanges them by MPI between graph segments (HostWork), and the next
  segment copies them back.

A swap can overlap work: the launches `during` (which must not touch its arrays) run while the
data travel, on a second stream forked and joined in the graph (NCCL), between the host's
copy out and its MPI calls (host-staged), or simply after the swap (MPI calls as launches: the
host backend runs everything in order).

A swap's operations pair up between two ranks in the order they are issued (NCCL's rule; MPI
keeps the order of messages of one tag): a rank's sends to a peer and the peer's receives from
it come in the same order. Sends to the rank itself work in every way (a periodic axis that is
not split).
"""

from .mpi import wait_all
from .stepper import HostWork

EXCHANGES = ("auto", "nccl", "host")


def collectives(comm, backend, exchange="auto"):
    """The way exchanges go between the ranks of comm on `backend`: NCCL where every rank has
    a GPU of its own ("auto" or "nccl"), MPI calls as launches on the host backend ("nccl"),
    else host-staged; "nccl" where NCCL cannot be used on cuda is a ValueError. Every rank
    calls it (NCCL's check and set-up are collective)."""
    from . import nccl

    if exchange not in EXCHANGES:
        raise ValueError(f"exchange must be one of {', '.join(EXCHANGES)}, got '{exchange}'")
    if exchange == "host":
        return HostStaged(comm, backend, "asked for")
    if backend.name == "host":
        if exchange == "nccl":
            return MpiLaunches(comm, backend)
        return HostStaged(comm, backend, "the host backend")
    reason = nccl.unusable(comm, backend)
    if reason is None:
        return nccl.NcclComm(comm, backend)
    if exchange == "nccl":
        raise ValueError(f"halo exchange by NCCL is not possible: {reason}")
    return HostStaged(comm, backend, reason)


def mpi_swap(comm, operations):
    """The (kind, host array, peer) operations of a swap by MPI, issued in order with one tag
    (so they pair up in order); returns when all are done."""
    wait_all([comm.Isend(array, peer, 0) if kind == "send" else comm.Irecv(array, peer, 0)
              for kind, array, peer in operations])


class MpiLaunches:
    """Exchanges as launches that make blocking MPI calls (the host backend's arrays are host
    memory): see the module docstring."""

    in_graph = True
    path = "in the step graph (MPI calls as launches: the host backend)"

    def __init__(self, comm, backend):
        self.comm, self.backend = comm, backend

    def bind_swap(self, operations, during=()):
        operations = list(operations)
        return [self.backend.bind_call(lambda _: mpi_swap(self.comm, operations)), *during]

    def bind_allgather(self, send, receive):
        return [self.backend.bind_call(lambda _: self.comm.Allgather(send, receive))]

    def bind_max(self, array):
        """A launch making `array` the elementwise maximum over all ranks."""
        from .mpi import max_op

        return [self.backend.bind_call(
            lambda _: self.comm.Allreduce(array.copy(), array, op=max_op()))]


class HostStaged:
    """Exchanges through page-locked host copies, by MPI between graph segments (HostWork);
    `reason`: why not in the graph (the path's words)."""

    in_graph = False

    def __init__(self, comm, backend, reason):
        self.comm, self.backend = comm, backend
        self.path = f"host-staged ({reason})"
        self._mirrors = {}  # (address, bytes, dtype) of a device array: (it, its host copy)

    def _mirror(self, array):
        """The page-locked host copy of a device array (one per array, kept)."""
        address = array.ctypes.data if self.backend.name == "host" else array.data.ptr
        key = (address, array.nbytes, array.dtype.str)
        if key not in self._mirrors:
            self._mirrors[key] = (array, self.backend.pinned(array.shape, array.dtype))
        return self._mirrors[key][1]

    def _staged(self, sent, work, received, during=()):
        """Copies of the device arrays `sent` to their host copies, `work` (on the host
        copies) between graph segments once those copies are done, copies back into the
        device arrays `received`; the launches `during` go to the device before the host
        waits for the copies, and run while it works."""
        b = self.backend
        out = [b.bind_copy(self._mirror(a), a) for a in sent]
        back = [b.bind_copy(a, self._mirror(a)) for a in received]
        if not during:
            def run():
                b.synchronize()
                work()
            return [*out, HostWork(run), *back]
        copied = b.marker()

        def run_after_copies():
            copied.wait()
            work()
        return [*out, HostWork(copied.record), *during, HostWork(run_after_copies), *back]

    def bind_swap(self, operations, during=()):
        operations = list(operations)
        staged = [(kind, self._mirror(array), peer) for kind, array, peer in operations]
        return self._staged([a for kind, a, _ in operations if kind == "send"],
                            lambda: mpi_swap(self.comm, staged),
                            [a for kind, a, _ in operations if kind == "recv"], during)

    def bind_allgather(self, send, receive):
        out, into = self._mirror(send), self._mirror(receive)
        return self._staged([send], lambda: self.comm.Allgather(out, into), [receive])
