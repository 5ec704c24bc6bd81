"""What each rank runs for tests/test_run_mpi_incompressible.py's in-process checks, under
mpiexec:

    mpiexec -n 3 python tests/mpi_incompressible_driver.py problems.json results.npz

problems.json is {"runs": [...], "refusals": [...]}. For every run ({"name", "case": a case
file, "overrides": {"section.key": value}, and "steps": a count, else to the case's end;
optionally "restart": a checkpoint to continue from, and "write": true to write the run's
files, checkpoints included, into its output.dir) the ranks run the case decomposed
(solvers.load_case with the world communicator, no files written unless "write"), and rank 0
writes its fields and recorded series into the .npz: keys <name>/fields/<field>,
<name>/series/<column>, <name>/dims (the process grid), <name>/path (the exchanges' way, in
words) and <name>/host_work (the pieces of host work in a step). For every refusal ({"case",
"overrides"}) the key refusal/<index> holds the CaseError's message of the decomposed build
("" if it was built). Several problems a launch: the start of mpiexec and of the ranks'
Python costs more than these runs.
"""

import json
import sys

import numpy as np
from mpi4py import MPI

from solvers import load_case
from solvers.backend.stepper import HostWork
from solvers.cases.schema import CaseError


def run(problem, comm):
    """{key: array} of one problem's decomposed run (on rank 0; {} on the others)."""
    split = load_case(problem["case"], restart=problem.get("restart"), comm=comm,
                      **problem["overrides"])
    if "steps" in problem:
        split.step(problem["steps"])
    else:
        split.run(write=problem.get("write", False))
    fields = split.fields  # a gather: every rank
    if comm.Get_rank() != 0:
        return {}
    name = problem["name"]
    parts = split.solver.step_segments()
    out = {f"{name}/dims": np.array(split.solver.parallel.dims),
           f"{name}/path": np.array(split.solver.parallel.path),
           f"{name}/host_work": np.array(sum(isinstance(part, HostWork) for part in parts))}
    out.update({f"{name}/fields/{key}": value for key, value in fields.items()})
    out.update({f"{name}/series/{key}": np.array(values)
                for key, values in split.solver.series.items()})
    return out


def refusal(problem, comm):
    """The CaseError's message of a refused decomposed build ("" if built)."""
    try:
        load_case(problem["case"], comm=comm, **problem["overrides"])
    except CaseError as error:
        return str(error)
    return ""


def main():
    comm = MPI.COMM_WORLD
    problems = json.loads(open(sys.argv[1]).read())
    results = {}
    for problem in problems["runs"]:
        results.update(run(problem, comm))
    for index, problem in enumerate(problems.get("refusals", [])):
        results[f"refusal/{index}"] = np.array(refusal(problem, comm))
    if comm.Get_rank() == 0:
        np.savez(sys.argv[2], **results)


if __name__ == "__main__":
    main()
