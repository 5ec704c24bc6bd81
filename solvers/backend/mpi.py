"""MPI for decomposed runs (mpi4py, the optional extra `[mpi]`): the world communicator of a
run started by mpiexec with more than one rank, and one failing rank ending them all.

mpi4py is imported only where the launcher's environment says there is more than one rank, so
a plain run never initialises MPI.
"""

import os
import sys

# Rank counts that launchers put in each rank's environment (MPICH/Hydra, Open MPI, Slurm).
SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "SLURM_NTASKS")


# The rank's index among the ranks on its machine, set by world() for the cuda backend.
LOCAL_RANK_VARIABLE = "SOLVERS_LOCAL_RANK"


def launched_size():
    """The rank count the launcher announced (1 where none did)."""
    for name in SIZE_VARIABLES:
        text = os.environ.get(name, "").strip()
        if text.isdigit():
            return int(text)
    return 1


# Ranks on this machine, as launchers announce them (MPICH/Hydra, Open MPI).
LOCAL_SIZE_VARIABLES = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")


def share_cores():
    """Unless the user chose the host backend's threads, give each rank on this machine an
    equal share of its CPUs (ranks that each ran a team on every CPU would contend)."""
    if os.environ.get("SOLVERS_HOST_THREADS") or os.environ.get("OMP_NUM_THREADS"):
        return
    local = launched_size()
    for name in LOCAL_SIZE_VARIABLES:
        text = os.environ.get(name, "").strip()
        if text.isdigit():
            local = int(text)
            break
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    os.environ["SOLVERS_HOST_THREADS"] = str(max(1, (cpus or 1) // max(1, local)))


def world():
    """MPI.COMM_WORLD where this process is one of several ranks and mpi4py imports, else
    None. The host backend's threads are then shared among the machine's ranks."""
    if launched_size() <= 1:
        return None
    share_cores()
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    comm = MPI.COMM_WORLD
    if comm.Get_size() <= 1:
        return None
    # One GPU a rank where the machine has several: the cuda backend takes GPU local rank
    # modulo the count (ranks beyond the count share).
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    os.environ.setdefault(LOCAL_RANK_VARIABLE, str(local.Get_rank()))
    local.Free()
    return comm


def max_op():
    from mpi4py import MPI

    return MPI.MAX


def wait_all(requests):
    """Wait for every nonblocking send and receive of `requests`."""
    from mpi4py import MPI

    MPI.Request.Waitall(requests)


def side_transfers(neighbours, send, receive):
    """(kind, buffer, side, peer) of a swap of per-side blocks between a grid block and the
    ranks beyond its sides (neighbours: one a side, x_lo, x_hi, y_lo, ...; None: none), in
    issue order: along each axis the low side's block to the low neighbour (its high halo) and
    the high side's to the high one; a pair of ranks meets them in the same order."""
    for axis in range(len(neighbours) // 2):
        lo, hi = neighbours[2 * axis:2 * axis + 2]
        for kind, buffer, side, peer in (("send", send, 2 * axis, lo),
                                         ("recv", receive, 2 * axis + 1, hi),
                                         ("send", send, 2 * axis + 1, hi),
                                         ("recv", receive, 2 * axis, lo)):
            if peer is not None:
                yield kind, buffer, side, peer


def swap_sides(comm, neighbours, send, receive, offsets):
    """The host-staged swap of side_transfers: side s's block of the host array `send`
    (offsets[s]:offsets[s + 1]) to the rank beyond it, tagged by the side it leaves, and the
    block from there into the same side's part of `receive`; returns when all arrived."""
    requests = []
    for kind, buffer, side, peer in side_transfers(neighbours, send, receive):
        view = buffer[offsets[side]:offsets[side + 1]]
        requests.append(comm.Isend(view, peer, side) if kind == "send" else
                        comm.Irecv(view, peer, side ^ 1))
    wait_all(requests)


def abort(comm, message, status=1):
    """Print `message` (one line, with this rank) and end every rank of comm: the others may be
    waiting for this one in an exchange, and would otherwise hang."""
    print(f"{message} (rank {comm.Get_rank()} of {comm.Get_size()})", file=sys.stderr,
          flush=True)
    comm.Abort(status)


def proc_null():
    from mpi4py import MPI

    return MPI.PROC_NULL


def mpiexec(ranks):
    """The command line that starts `ranks` processes of what follows it: mpiexec on the PATH or
    beside this Python (the mpich wheel's, in a virtual environment not activated), with Open
    MPI's flags for more ranks than cores and, as root, for root; None where there is none."""
    import shutil
    import subprocess
    from pathlib import Path

    found = (shutil.which("mpiexec") or shutil.which("mpiexec", path=str(
        Path(sys.executable).parent)) or shutil.which("mpirun"))
    if found is None:
        return None
    version = subprocess.run([found, "--version"], capture_output=True, text=True).stdout
    flags = []
    if "Open MPI" in version or "OpenRTE" in version:
        flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    return [found, *flags, "-n", str(ranks)]
