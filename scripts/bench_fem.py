"""Finite-element benchmark on one card: fused assembly (raw_kernels/fe/assemble.cu) and
Poisson solves for P1 and P2 on triangles and tetrahedra, against what a user would write
instead: NumPy element matrices + scipy.sparse COO -> CSR on the CPU, the same in CuPy with
cupyx.scipy.sparse on the GPU (unfused: whole-array ops, then a sort), and scikit-fem when it
is installed.

    python scripts/bench_fem.py [--dofs 1e4,1e5,1e6,1.2e7] [--json bench_fem.json]
    python scripts/bench_fem.py --backend host --dofs small           # CPU smoke test
    python scripts/bench_fem.py --only e2e [--e2e p1-3d:1e6,p2-2d:1e6]  # end to end alone

Problems: -div grad u = 1 on the unit square (rectangle(n, n)) or cube (box(n, n, n)), u = 0
on the boundary, n chosen so the space has about the requested number of dofs; fp32. Plus the
headline item: the stiffness matrix of P1 on box(56, 56, 56), 1,053,696 tetrahedra (the issue
expects under 5 ms on an H100/H200).

Assembly times are the median of repeated launches timed with CUDA events (host: wall clock),
of the stiffness form alone (the matrix values; pattern and maps are set up once, timed apart
as `setup`). Bytes, each array once (the floor): the gather map (nnz + 1 pointers and one
int32 per element entry), the values written, cell vertices, coordinates and one coefficient
per cell; GB/s is that over the time, against the measured copy bandwidth
(scripts/ceilings.py). The element matrices, written by one launch and read by the next, move
`element_matrix_mb` more each way (one value per element entry).
Solves: CG to rtol 1e-6 preconditioned by Jacobi and (up to --amg-max-dofs) by algebraic
multigrid (its hierarchy built on the device); wall time of the solve on the device, setup
apart. Large meshes skip the reverse Cuthill-McKee renumbering (above --rcm-max-dofs): the
generators' lexicographic numbering is already banded.

Then the end-to-end table (fem_e2e.py; `--only e2e` runs it alone, `--no-e2e` leaves it out):
mesh arrays to a solution with true relative residual <= 1e-8, split into setup, assembly, AMG
setup and solve, for P1 tets at 1M and 10M dofs and P2 triangles at 1M, ours against our
previous CPU (pyamg) hierarchy and scikit-fem + pyamg, with the issue's targets as PASS / MISS.
"""

import argparse
import importlib
import json
import platform
import sys
import time
from math import factorial

import benchrun
import ceilings
import devicetime
import fem_e2e
import numpy as np
import scipy.sparse as sp

from solvers.backend import get_backend
from solvers.fe.boundary import Dirichlet
from solvers.fe.poisson import PoissonSolver
from solvers.fe.reference import stiffness_reference
from solvers.linalg import ConjugateGradient
from solvers.linalg.preconditioners import algebraic_multigrid
from solvers.mesh.generators import box, rectangle

PROBLEMS = {"p1-2d": (2, 1), "p2-2d": (2, 2), "p1-3d": (3, 1), "p2-3d": (3, 2)}
DOFS = {"default": "1e4,1e5,1e6,1.2e7", "small": "300,3000"}
HEADLINE_CELLS = 56  # box(56, 56, 56): 6 * 56^3 = 1,053,696 tetrahedra
TARGET_MS = 5.0
RTOL = 1e-6
REPEATS = 20


def cells_per_axis(dim, degree, dofs):
    per_axis = round(dofs ** (1 / dim))  # nodes along an axis
    return max(1, (per_axis - 1) // degree)


def make_mesh(dim, n):
    return rectangle(n, n) if dim == 2 else box(n, n, n)


# -- what a user would write: element matrices by whole-array ops, then COO -> CSR ------------

def element_stiffness(xp, points, cells, sref):
    """(m, nloc, nloc) P1/P2 stiffness matrices of affine simplices, coefficient 1."""
    x = points[cells]
    d = points.shape[1]
    J = xp.transpose(x[:, 1:] - x[:, :1], (0, 2, 1))
    inv = xp.linalg.inv(J)  # row a of J^-1: grad lambda_{a+1}
    G = xp.concatenate([-inv.sum(axis=1, keepdims=True), inv], axis=1)
    GG = xp.einsum("mad,mbd->mab", G, G)
    volume = xp.abs(xp.linalg.det(J)) / factorial(d)
    return xp.einsum("mab,ijab->mij", GG, xp.asarray(sref)) * volume[:, None, None]


def coo_to_csr(xp, sparse, dofs, local, n):
    L = dofs.shape[1]
    rows = xp.repeat(dofs, L, axis=1).ravel()
    cols = xp.tile(dofs, (1, L)).ravel()
    matrix = sparse.coo_matrix((local.ravel(), (rows, cols)), shape=(n, n)).tocsr()
    matrix.sum_duplicates()
    return matrix


def scipy_assembly(space, dtype):
    """Seconds and matrix of the NumPy + scipy.sparse assembly on the CPU."""
    mesh = space.mesh
    sref = stiffness_reference(mesh.dim + 1, space.degree)
    start = time.perf_counter()
    local = element_stiffness(np, mesh.points.astype(dtype), mesh.cells, sref.astype(dtype))
    matrix = coo_to_csr(np, sp, space.cell_dofs, local, space.n)
    return time.perf_counter() - start, matrix


def cupy_assembly(backend, space, dtype):
    """Device seconds of the unfused CuPy + cupyx.scipy.sparse assembly, and its matrix."""
    cupy = backend.cupy
    import cupyx.scipy.sparse as csp
    mesh = space.mesh
    sref = stiffness_reference(mesh.dim + 1, space.degree).astype(dtype)
    points, cells = cupy.asarray(mesh.points.astype(dtype)), cupy.asarray(mesh.cells)
    dofs = cupy.asarray(space.cell_dofs.astype(np.int32))
    result = {}

    def run():
        local = element_stiffness(cupy, points, cells, sref)
        result["matrix"] = coo_to_csr(cupy, csp, dofs, local, space.n)

    stream = cupy.cuda.get_current_stream()
    run()  # warm-up: kernels compile, the pool grows
    seconds = min(devicetime.seconds(backend, run, stream) for _ in range(3))
    return seconds, result["matrix"].get()


def skfem_assembly(space):
    """Seconds of scikit-fem's Laplace assembly, or None when it is not installed."""
    try:
        skfem = importlib.import_module("skfem")
        from skfem.models.poisson import laplace
    except ImportError:
        return None
    mesh = space.mesh
    kind = {(2, 1): "ElementTriP1", (2, 2): "ElementTriP2", (3, 1): "ElementTetP1",
            (3, 2): "ElementTetP2"}[(mesh.dim, space.degree)]
    mesh_type = skfem.MeshTri if mesh.dim == 2 else skfem.MeshTet
    start = time.perf_counter()
    basis = skfem.Basis(mesh_type(mesh.points.T, mesh.cells.T), getattr(skfem, kind)())
    laplace.assemble(basis)
    return time.perf_counter() - start


# -- ours ------------------------------------------------------------------------------------

def assembly_bytes(solver):
    a, form = solver.assembler, solver.stiffness
    item = np.dtype(a.dtype).itemsize
    mesh = solver.mesh
    return (form.ptr.nbytes + form.entries.nbytes + a.pattern.nnz * item
            + form.vertices.nbytes + mesh.points.size * item + mesh.ncells * item)


def build(dim, degree, n, backend, args):
    mesh = make_mesh(dim, n)
    walls = {name: Dirichlet(0.0) for name in mesh.boundaries}
    dofs_estimate = ((degree * n + 1) ** dim)
    start = time.perf_counter()
    # refine=False: the fp32 assembly and fp32 CG are what this measures (not fp64 refinement).
    solver = PoissonSolver(mesh, degree, source=1.0, boundary=walls, preconditioner="jacobi",
                           rtol=RTOL, renumber=dofs_estimate <= args.rcm_max_dofs,
                           backend=backend, precision="fp32", refine=False)
    return solver, time.perf_counter() - start


def time_assembly(dev, solver):
    launch = solver.stiffness.bind(solver.full_values)
    launch()
    return devicetime.median(dev, launch, REPEATS)


def time_solve(dev, solver, preconditioner):
    """(setup s, solve s, SolveInfo) of CG with 'jacobi' or 'amg' on the solver's system."""
    matrix = solver.system.matrix
    start = time.perf_counter()
    m = algebraic_multigrid(matrix) if preconditioner == "amg" else "jacobi"
    cg = ConjugateGradient(matrix, m, rtol=RTOL)
    setup = time.perf_counter() - start
    b = dev.to_host(solver.b)
    cg.solve(b)  # warm-up: compiles, captures
    dev.synchronize()
    start = time.perf_counter()
    _, info = cg.solve(b)
    dev.synchronize()
    return setup, time.perf_counter() - start, info


def bench_item(dev, label, dim, degree, n, args, copy_gbs):
    solver, setup = build(dim, degree, n, dev.name, args)
    row = {"problem": label, "cells": solver.mesh.ncells, "dofs": solver.space.n,
           "nnz": solver.assembler.pattern.nnz, "setup_s": setup}
    seconds = time_assembly(dev, solver)
    nbytes = assembly_bytes(solver)
    row.update(assembly_ms=seconds * 1e3, assembly_gbs=nbytes / seconds / 1e9,
               element_matrix_mb=solver.stiffness.contributions.nbytes / 1e6,
               assembly_copy_fraction=nbytes / seconds / 1e9 / copy_gbs if copy_gbs else None)
    ours = sp.csr_matrix((dev.to_host(solver.full_values).astype(np.float64),
                          *solver.assembler.pattern.host_arrays()[::-1]),
                         shape=(solver.space.n,) * 2)
    entries = solver.stiffness.entries.size
    if entries <= args.cpu_max_entries:
        cpu_s, reference = scipy_assembly(solver.space, np.float64)
        row.update(scipy_ms=cpu_s * 1e3,
                   check=float(abs(ours - reference).max() / abs(reference).max()))
        skfem_s = skfem_assembly(solver.space)
        row["skfem_ms"] = None if skfem_s is None else skfem_s * 1e3
    if dev.name == "cuda" and entries <= args.unfused_max_entries:
        unfused_s, unfused = cupy_assembly(dev, solver.space, np.float32)
        row.update(cupy_unfused_ms=unfused_s * 1e3,
                   cupy_check=float(abs(ours - unfused).max() / abs(ours).max()))
    if not args.no_solve:
        for name in ("jacobi", "amg"):
            if name == "amg" and solver.space.n > args.amg_max_dofs:
                continue
            setup_s, solve_s, info = time_solve(dev, solver, name)
            row[f"{name}_setup_s"], row[f"{name}_solve_ms"] = setup_s, solve_s * 1e3
            row[f"{name}_iterations"], row[f"{name}_converged"] = info.iterations, info.converged
            row[f"{name}_status"], row[f"{name}_residual"] = info.status, info.residual
    return row


def new_report(args, **settings):
    """The backend, the measured copy bandwidth in GB/s and an empty report (with these
    settings) of a finite-element benchmark."""
    dev = get_backend(args.backend)
    copy_gbs = ceilings.measure(args.backend)["copy"]["gbs"]
    report = {"backend": dev.describe(), "copy_gbs": copy_gbs, **settings, "rows": [],
              "platform": platform.platform()}
    return dev, copy_gbs, report


def run(args):
    dev, copy_gbs, report = new_report(args)
    dofs = [float(d) for d in DOFS.get(args.dofs, args.dofs).split(",")]
    start = time.perf_counter()
    report["only"] = args.only
    if args.only != "e2e":
        assembly_rows(dev, copy_gbs, report, dofs, args)
    if args.only != "assembly" and not args.no_e2e:
        args.e2e = args.e2e or ("small" if args.dofs == "small" else "default")
        report["e2e"] = fem_e2e.run(dev, args)
    report["wall_seconds"] = time.perf_counter() - start
    return report


def assembly_rows(dev, copy_gbs, report, dofs, args):
    """The assembly and solve rows (the headline first) into report["rows"]."""
    if not args.no_headline:
        n = HEADLINE_CELLS if args.dofs != "small" else 4
        row = bench_item(dev, "p1-3d headline", 3, 1, n, args, copy_gbs)
        report["headline"] = {"cells": row["cells"], "assembly_ms": row["assembly_ms"],
                              "target_ms": TARGET_MS}
        report["rows"].append(row)
        print(f"P1 tetrahedral Poisson matrix, {row['cells']} cells: "
              f"{row['assembly_ms']:.3f} ms (target {TARGET_MS} ms)", flush=True)
    for label in args.problems.split(","):
        dim, degree = PROBLEMS[label]
        for target in dofs:
            row = bench_item(dev, label, dim, degree, cells_per_axis(dim, degree, target),
                             args, copy_gbs)
            report["rows"].append(row)
            print(json.dumps(row, default=str), flush=True)


COLUMNS = [("problem", "{}"), ("cells", "{}"), ("dofs", "{}"), ("nnz", "{}"),
           ("assembly_ms", "{:.3f}"), ("assembly_gbs", "{:.0f}"),
           ("assembly_copy_fraction", "{:.1%}"), ("cupy_unfused_ms", "{:.2f}"),
           ("scipy_ms", "{:.1f}"), ("skfem_ms", "{:.1f}"), ("jacobi_solve_ms", "{:.1f}"),
           ("jacobi_iterations", "{}"), ("amg_setup_s", "{:.2f}"), ("amg_solve_ms", "{:.1f}"),
           ("amg_iterations", "{}"), ("check", "{:.1e}")]


def table(report, columns=COLUMNS):
    lines = ["| " + " | ".join(name for name, _ in columns) + " |",
             "|" + "---|" * len(columns)]
    for row in report["rows"]:
        cells = [fmt.format(row[name]) if row.get(name) is not None else "-"
                 for name, fmt in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def full_table(report):
    """The assembly table (unless only the end-to-end part ran), then the end-to-end one."""
    parts = [] if report["only"] == "e2e" else [table(report)]
    if "e2e" in report:
        parts.append(fem_e2e.table(report["e2e"]))
    return "\n".join(parts)


def passed(report):
    return not report.get("e2e", {}).get("errors")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cuda", choices=("cuda", "host"))
    parser.add_argument("--dofs", default="default",
                        help="comma-separated dof counts, or 'default' / 'small'")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--amg-max-dofs", type=float, default=3e6)
    parser.add_argument("--rcm-max-dofs", type=float, default=3e6)
    parser.add_argument("--cpu-max-entries", type=float, default=1.5e8,
                        help="skip the SciPy CPU assembly above this many element entries")
    parser.add_argument("--unfused-max-entries", type=float, default=4e8)
    parser.add_argument("--no-solve", action="store_true")
    parser.add_argument("--no-headline", action="store_true")
    parser.add_argument("--only", choices=("assembly", "e2e"), default=None,
                        help="run only the assembly/solve table or only the end-to-end one")
    parser.add_argument("--no-e2e", action="store_true", help="leave out the end-to-end table")
    parser.add_argument("--e2e", default=None,
                        help="end-to-end cases problem:dofs,... (problems p1-3d, p2-2d), or "
                             "'default' / 'small' (default: 'small' with --dofs small)")
    parser.add_argument("--cpu-budget", type=float, default=120.0,
                        help="skip an end-to-end CPU run (pyamg setup, scikit-fem) estimated "
                             "above this many seconds")
    parser.add_argument("--json", default="bench_fem.json")
    args = parser.parse_args(argv)
    try:
        fem_e2e.parse_cases(args.e2e or "default")
    except ValueError as error:
        parser.error(str(error))
    return args


def main(argv=None):
    return benchrun.main("bench_fem", parse_args(argv), "--backend host --dofs small", run,
                         full_table, passed)


if __name__ == "__main__":
    sys.exit(main())
