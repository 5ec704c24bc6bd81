"""MPI for decomposed runs (mpi4py, the optional extra `[mpi]`): the world communicator of a
run started by mpiexec with more than one rank, and one failing rank ending them all.

mpi4py is imported only where the launcher's environment says there is more than one rank, so
a plain run never initialises MPI.
"""

import os
import sys

# Rank counts that launchers put in each rank's environment (MPICH/Hydra, Open MPI, Slurm).
SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "SLURM_NTASKS")


def launched_size():
    """The rank count the launcher announced (1 where none did)."""
    for name in SIZE_VARIABLES:
        text = os.environ.get(name, "").strip()
        if text.isdigit():
            return int(text)
    return 1


def world():
    """MPI.COMM_WORLD where this process is one of several ranks and mpi4py imports, else
    None."""
    if launched_size() <= 1:
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    comm = MPI.COMM_WORLD
    return comm if comm.Get_size() > 1 else None


def max_op():
    from mpi4py import MPI

    return MPI.MAX


def proc_null():
    from mpi4py import MPI

    return MPI.PROC_NULL


def abort(comm, message, status=1):
    """Print `message` (one line, with this rank) and end every rank of comm: the others may be
    waiting for this one in an exchange, and would otherwise hang."""
    print(f"{message} (rank {comm.Get_rank()} of {comm.Get_size()})", file=sys.stderr,
          flush=True)
    comm.Abort(status)
