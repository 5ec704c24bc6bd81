"""A few Euler steps of one configuration, for Nsight Compute to profile its kernels:

    ncu --clock-control none -k regex:euler --launch-skip 6 --launch-count 1 \\
        --section SpeedOfLight --section InstructionStats ... \\
        python scripts/profile_euler.py --dim 3 --n 256 --integrator hancock

The grid is periodic with a shear layer and a cell-to-cell random part (as bench_euler.py), so
the limiter and HLLC branches vary from cell to cell. It prints the cells and kernel launches of
a step, to turn ncu's per-launch counts into counts a cell.
"""

import argparse
import sys

import numpy as np

from solvers.fv.euler import TIME_INTEGRATORS, EulerSolver
from solvers.mesh.structured import StructuredGrid

GAMMA = 1.4
AXES = ("x", "y", "z")


def initial_state(dim, n, rng):
    """Conserved variables (dim + 2, n, ..., n) of a shear layer with a random part."""
    shape = (n,) * dim
    centres = (np.arange(n) + 0.5) / n
    x = centres.reshape((n,) + (1,) * (dim - 1))
    rho = 1.0 + 0.2 * np.sin(2 * np.pi * x) + 0.05 * rng.random(shape)
    velocity = [np.broadcast_to(0.5 * np.sin(2 * np.pi * centres).reshape(
        (1,) * k + (n,) + (1,) * (dim - 1 - k)), shape) * (0.2 if k else 1.0)
        for k in range(dim)]
    velocity = velocity[1:] + velocity[:1]  # vx varies along y, ..., the last along x
    p = 1.0 + 0.05 * rng.random(shape)
    energy = p / (GAMMA - 1) + 0.5 * rho * sum(v * v for v in velocity)
    return np.stack([rho, *(rho * v for v in velocity), energy])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=2, choices=(1, 2, 3))
    parser.add_argument("--n", type=int, default=4096, help="cells along each axis")
    parser.add_argument("--integrator", default="ssp_rk3", choices=sorted(TIME_INTEGRATORS))
    parser.add_argument("--precision", default="fp32", choices=("fp32", "fp64"))
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--backend", default="cuda")
    args = parser.parse_args(argv)

    # A periodic n^dim grid on the unit box.
    extents = {}
    for axis in AXES[:args.dim]:
        extents["n" + axis], extents[axis] = args.n, (0.0, 1.0)
    grid = StructuredGrid(**extents)
    boundary = {f"{axis}_{end}": "periodic" for axis in AXES[:args.dim] for end in ("lo", "hi")}
    solver = EulerSolver(grid, boundary, gamma=GAMMA, time_integrator=args.integrator,
                         backend=args.backend, precision=args.precision)
    solver.set_conserved(initial_state(args.dim, args.n, np.random.default_rng(0)))
    solver.clock.set(t_stop=1e300)

    # Eager steps: ncu sees each launch on its own.
    for _ in range(args.steps):
        solver.step()
    solver.backend.synchronize()
    launches = len(solver._launches)
    print(f"cells {grid.ncells}  launches a step {launches}  steps {args.steps}  "
          f"t {solver.clock.read().t:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
