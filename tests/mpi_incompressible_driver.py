"""Run under mpiexec by tests/test_run_mpi_incompressible.py: several decomposed incompressible
runs in one launch (host backend), each against the single-rank run of the same case on rank
0, and what a decomposed run refuses. Rank 0 prints one JSON object: {check: result}. A run's
result is the largest difference of a field (u, v(, w), p, and the kinetic energy series)
over steps * RTOL * its largest value, the bound of the test module's docstring.

    mpiexec -n 2 python tests/mpi_incompressible_driver.py
"""

import json
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from solvers.cases.loader import load
from solvers.cases.schema import CaseError
from solvers.mesh.decomposition import Decomposition

CASES = Path(__file__).resolve().parents[1] / "cases"
HOST = {"run.backend": "host"}
RTOL = 1e-6  # pressure.rtol of these cases
# (name, case file, overrides, steps): a cubic cavity (walls, a lid, QUICK), and periodic
# Taylor-Green vortices in 2D and 3D (central).
RUNS = [
    ("cavity3d", "cavity3d_re1000", {"mesh.nx": 16, "mesh.ny": 16, "mesh.nz": 16,
                                     "scheme.viscous": "explicit", "physics.nu": 0.01}, 20),
    ("taylor_green", "taylor_green", {"mesh.nx": 16, "mesh.ny": 16}, 10),
    ("taylor_green3d", "taylor_green3d_re1600", {"mesh.nx": 8, "mesh.ny": 8, "mesh.nz": 8,
                                                 "physics.nu": 0.02}, 5),
]
# What the 3D solver refuses on several ranks: (overrides, the key the one line names).
REFUSALS = [({"scheme.viscous": "implicit"}, "viscous"),
            ({"pressure.preconditioner": "amg"}, "preconditioner")]


def state(solver, steps):
    """Face velocities, pressure and the per-step series after `steps` steps (collective on
    a decomposed solver)."""
    for _ in range(steps):
        solver.step()
    solver.observe()
    return [*solver.face_velocities(), solver.pressure_field()], solver.series


def compare(path, overrides, steps, comm):
    """{equal: the fields bit for bit, ratio: the largest difference over its bound, steps}
    on rank 0."""
    case = load(path, {**HOST, **overrides})
    split = state(case.adapter.build(case, decomposition=Decomposition(comm)), steps)
    if comm.Get_rank():
        return None
    one = state(case.adapter.build(load(path, {**HOST, **overrides})), steps)
    fields = list(zip(one[0], split[0]))
    equal = all(np.array_equal(a, b) for a, b in fields)
    if "kinetic_energy" in one[1]:
        fields.append(tuple(np.array(s["kinetic_energy"]) for s in (one[1], split[1])))
    ratio = max(float(np.abs(a - b).max() / (steps * RTOL * np.abs(a).max()))
                for a, b in fields)
    return {"equal": equal, "ratio": ratio, "steps": len(split[1]["t"])}


def refusal(overrides, comm):
    """The CaseError's message of a refused decomposed 3D cavity (None: built)."""
    case = load(CASES / "cavity3d_re1000.toml", {**HOST, **RUNS[0][2], **overrides})
    try:
        case.adapter.build(case, decomposition=Decomposition(comm))
    except CaseError as error:
        return str(error)
    return None


def main():
    comm = MPI.COMM_WORLD
    out = {name: compare(CASES / f"{case}.toml", overrides, steps, comm)
           for name, case, overrides, steps in RUNS}
    out["refusals"] = [[key, refusal(overrides, comm)] for overrides, key in REFUSALS]
    if comm.Get_rank() == 0:
        print(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
