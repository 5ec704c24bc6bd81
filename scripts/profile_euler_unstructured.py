"""A few eager steps of the unstructured Euler solver (bench_euler_unstructured.py's meshes,
state and scheme), for Nsight Compute to profile its two kernels a stage:

    ncu --clock-control none -k regex:euler_ --launch-skip 8 --launch-count 2 \\
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \\
        python scripts/profile_euler_unstructured.py --dim 2 --n 1448

It prints the cells and the kernel launches of a step, to turn ncu's counts into counts a cell.
"""

import argparse

from bench_euler_unstructured import SCHEME, build, make_mesh, smooth_state

from solvers.backend import get_backend


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dim", type=int, choices=(2, 3), default=2)
    p.add_argument("--n", type=int, default=1448, help="2 n^2 triangles or 6 n^3 tetrahedra")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    args = p.parse_args(argv)

    # The benchmark's largest mesh and state, stepped eagerly.
    backend = get_backend(args.backend)
    mesh, geometry = make_mesh(args.dim, args.n)
    solver = build(backend, mesh, geometry, smooth_state(geometry.centroids), "fp32", SCHEME)
    for _ in range(args.steps):
        solver.step()
    backend.synchronize()
    print(f"cells {solver.ncells}, stages a step {len(solver.stages)}, "
          f"launches a stage 2 (euler_gradients, euler_stage)")


if __name__ == "__main__":
    main()
