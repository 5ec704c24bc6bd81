"""NCCL for decomposed runs on the cuda backend where every rank has a GPU of its own: a
communicator made from the MPI one, and its point-to-point and collective calls as launches,
so that a step graph captures them (a step with its halo exchange stays one replay). One of
the ways of backend/collectives.py (its interface: bind_swap, bind_allgather; bind_max).

NCCL refuses two ranks on one GPU; such runs (and the host backend) exchange through MPI.
"""

import socket

import numpy as np

NCCL_TYPES = {np.dtype(np.float32): "NCCL_FLOAT32", np.dtype(np.float64): "NCCL_FLOAT64"}


def unusable(comm, backend):
    """None where NCCL can carry this run's exchanges, else why not (one phrase). Every rank
    calls it (it gathers each rank's GPU)."""
    reason = None
    if backend.name != "cuda":
        reason = f"the {backend.name} backend"
    else:
        try:
            from cupy.cuda import nccl
            if not nccl.available:
                reason = "CuPy was built without NCCL"
        except ImportError:
            reason = "CuPy has no NCCL"
    gpu = None
    if reason is None:
        gpu = (socket.gethostname(), backend.cupy.cuda.Device().pci_bus_id)
    gpus = comm.allgather(gpu)
    if reason is None and len(set(gpus)) < len(gpus):
        reason = "ranks share a GPU"
    reasons = {r for r in comm.allgather(reason) if r is not None}
    return ", ".join(sorted(reasons)) or None


class NcclComm:
    """An NCCL communicator over the ranks of the MPI communicator `comm` (all ranks call it),
    for float32 and float64 device arrays on `backend` (cuda). Each bind_* returns the parts
    of an exchange: one launch."""

    in_graph = True
    path = "NCCL in the step graph"

    def __init__(self, comm, backend):
        from cupy.cuda import nccl

        self.nccl, self.backend = nccl, backend
        uid = comm.bcast(nccl.get_unique_id() if comm.Get_rank() == 0 else None)
        self.comm = nccl.NcclCommunicator(comm.Get_size(), uid, comm.Get_rank())
        self.side = backend.cupy.cuda.Stream(non_blocking=True)  # the overlapped swaps'

    def _type(self, array):
        return getattr(self.nccl, NCCL_TYPES[np.dtype(array.dtype)])

    def bind_swap(self, operations, during=()):
        """The (kind "send" or "recv", device array, peer rank) of `operations`, in order, as
        one NCCL group; with launches `during`, the group goes to a second stream forked from
        the backend's (an event each way, so a graph captures the fork and the join) and
        `during` runs on the backend's stream meanwhile."""
        operations = [(self.comm.send if kind == "send" else self.comm.recv, array, peer)
                      for kind, array, peer in operations]

        def swap(stream):
            self.nccl.groupStart()
            for call, array, peer in operations:
                call(array.data.ptr, array.size, self._type(array), peer, stream)
            self.nccl.groupEnd()
        if not during:
            return [self.backend.bind_call(swap)]
        # Fork: the side stream waits for the work so far; join: the backend's for the swap.
        cuda = self.backend.cupy.cuda
        forked, swapped = cuda.Event(disable_timing=True), cuda.Event(disable_timing=True)
        side = self.side

        def fork(_):
            forked.record(self.backend.stream)
            side.wait_event(forked)
            swap(side.ptr)
            swapped.record(side)
        return [self.backend.bind_call(fork), *during,
                self.backend.bind_call(lambda _: self.backend.stream.wait_event(swapped))]

    def bind_allgather(self, send, receive):
        """receive = every rank's `send` (equal sizes), in rank order."""
        return [self.backend.bind_call(lambda stream: self.comm.allGather(
            send.data.ptr, receive.data.ptr, send.size, self._type(send), stream))]

    def bind_max(self, array):
        """`array` (device) made the elementwise maximum over all ranks."""
        return [self.backend.bind_call(lambda stream: self.comm.allReduce(
            array.data.ptr, array.data.ptr, array.size, self._type(array), self.nccl.NCCL_MAX,
            stream))]
