"""bench_fem.py's end-to-end part (issue 20 item 5): the Poisson problem -div grad u = 1, u = 0
on the boundary, from mesh arrays to u with true relative residual <= 1e-8, split into setup
(space, pattern, maps), assembly, AMG setup and solve, for P1 on box(n, n, n) at 1M and 10M
dofs and P2 on rectangle(n, n) at 1M, three ways in one run:

  ours        the FE solver's default path: PoissonSolver(..., preconditioner="amg",
              rtol=1e-8, precision="fp32"), i.e. fp64 assembly, fp32 AMG-CG on the rounded
              matrix (fp32 storage of the inner matrix and the hierarchy, built on the device)
              refined with fp64 residuals (solvers/fe/steady.py, refine=True);
  ours-pyamg  the same solver with the hierarchy built by pyamg on the CPU
              (AlgebraicMultigrid(..., setup="pyamg"), our previous setup path), handed to the
              solver through its public preconditioner() method, so the cycle, CG and
              refinement are the same; skipped when pyamg is not importable;
  skfem       scikit-fem assembly, condensation of the boundary dofs, pyamg's
              smoothed_aggregation_solver and ml.solve(b, tol=1e-8, accel="cg") on the CPU;
              skipped when scikit-fem or pyamg is not importable.

Ours: `setup` + `assembly` is the PoissonSolver construction from the mesh (assembly: the
solver's own assembly_seconds, the matrix and load launches, the Dirichlet cut and the host
copy of the matrix); `amg` the preconditioner() call (the fp32 hierarchy); `solve` is
solver.solve() (upload of b, refinement, download of u); `total` adds the rest of building
the solve (the fp32 copy of the matrix, CG's vectors); `solution` = assembly + AMG setup +
solve, the sum the issue's time targets name. The device is synchronised around each part.
The first run of each size compiles kernels and grows the memory pool: a second, warm
run on a fresh mesh is the one reported, the cold run's extra time is `cold_extra_s`.
Iterations: refinement's outer steps / fp32 CG iterations summed over them (skfem: CG's).
The true residual ||b - A u|| / ||b|| is computed here with SciPy in float64 from the solver's
fp64 system (its matrix after the Dirichlet cut, its right-hand side), independently of the
solver's own fp64 refinement residual (reported as `solver_residual`); skfem's from its
condensed system. CPU paths whose estimated time (seconds per nonzero of the last CPU run of
that implementation, times this size's nonzeros) exceeds --cpu-budget are skipped with a note.
"""

import importlib
import time

import numpy as np

from solvers.backend import BackendError
from solvers.fe.boundary import Dirichlet
from solvers.fe.poisson import PoissonSolver
from solvers.linalg.amg import AlgebraicMultigrid
from solvers.mesh.generators import box, rectangle

RTOL = 1e-8
CASES = {"default": "p1-3d:1e6,p1-3d:1e7,p2-2d:1e6", "small": "p1-3d:3e3,p2-2d:3e3"}
PROBLEMS = {"p1-3d": (3, 1), "p2-2d": (2, 2)}
TOTAL_TARGETS_S = {("p1-3d", 1e6): 0.3, ("p1-3d", 1e7): 3.0}
AMG_TARGETS_S = {("p1-3d", 1e6): 0.15}
SPEEDUP_TARGET = 50.0  # over scikit-fem + pyamg
ITERATION_MARGIN = 1.2  # our hierarchy's CG iterations within 20% of pyamg's
IMPLS = ("ours", "ours-pyamg", "skfem")


def parse_cases(text):
    """'p1-3d:1e6,...' (or a name of CASES) -> [(problem, target dofs)]."""
    cases = []
    for item in CASES.get(text, text).split(","):
        label, _, dofs = item.partition(":")
        if label not in PROBLEMS or not dofs:
            raise ValueError(f"an end-to-end case is problem:dofs with problem one of "
                             f"{', '.join(PROBLEMS)}, got {item!r}")
        cases.append((label, float(dofs)))
    return cases


def make_mesh(label, dofs):
    dim, degree = PROBLEMS[label]
    n = max(1, (round(dofs ** (1 / dim)) - 1) // degree)  # nodes along an axis, less one
    return rectangle(n, n) if dim == 2 else box(n, n, n)


def importable(*names):
    try:
        return [importlib.import_module(name) for name in names]
    except ImportError:
        return None


class Clock:
    """Wall seconds of the parts of a run, the device synchronised at each mark."""

    def __init__(self, dev):
        self.dev, self.parts = dev, {}

    def start(self):
        self.dev.synchronize()
        self.t = time.perf_counter()

    def stop(self, name):
        self.dev.synchronize()
        self.parts[name] = self.parts.get(name, 0.0) + time.perf_counter() - self.t
        return self.parts[name]


def cpu_hierarchy(matrix):
    """Our previous path: pyamg's hierarchy on the CPU, in our cycle (as preconditioners.py
    builds the default one, stored zeros dropped)."""
    compact = matrix.to_scipy()
    compact.eliminate_zeros()
    return AlgebraicMultigrid(compact, backend=matrix.backend, precision="fp32",
                              setup="pyamg")


def run_ours(dev, label, dofs, setup, renumber):
    """One run of the solver's default path (setup 'device') or with pyamg's hierarchy
    ('pyamg'); returns the row and the solver."""
    _, degree = PROBLEMS[label]
    mesh = make_mesh(label, dofs)
    walls = {name: Dirichlet(0.0) for name in mesh.boundaries}
    clock = Clock(dev)
    clock.start()
    solver = PoissonSolver(mesh, degree, source=1.0, boundary=walls, preconditioner="amg",
                           rtol=RTOL, renumber=renumber, backend=dev, precision="fp32")
    construction = clock.stop("construction")
    default, hierarchy = solver.preconditioner, {}

    def timed_preconditioner(matrix=None):
        clock.start()
        hierarchy["amg"] = default(matrix) if setup == "device" else cpu_hierarchy(matrix)
        clock.stop("amg")
        return hierarchy["amg"]

    # The solver builds its solve at the first solve(); build it here (steady.py's _solver)
    # so that the hierarchy and the solve time apart, and keep refinement's own info.
    solver.preconditioner = timed_preconditioner
    start = time.perf_counter()
    refinement = solver._solver()
    dev.synchronize()
    prepare = time.perf_counter() - start
    outer, solve = {}, refinement.solve

    def solve_keeping_info(b, rtol):
        x, outer["info"] = solve(b, rtol=rtol)
        return x, outer["info"]

    refinement.solve = solve_keeping_info
    clock.start()
    u, info = solver.solve()
    solve_s = clock.stop("solve")
    del solver.preconditioner, refinement.solve  # the wrappers, and the cycles they make
    A, b = solver.system.matrix.to_scipy(), dev.to_host(solver.b).astype(np.float64)
    amg = hierarchy["amg"]
    row = {"impl": "ours" if setup == "device" else "ours-pyamg", "dofs": solver.space.n,
           "cells": mesh.ncells, "nnz": solver.assembler.pattern.nnz, "renumbered": renumber,
           "setup_s": construction - solver.assembly_seconds,
           "assembly_s": solver.assembly_seconds, "amg_setup_s": clock.parts["amg"],
           "solve_s": solve_s, "total_s": construction + prepare + solve_s,
           "outer_iterations": outer["info"].outer_iterations,
           "iterations": info.iterations, "status": info.status,
           "true_residual": float(np.linalg.norm(b - A @ u) / np.linalg.norm(b)),
           "solver_residual": info.residual, "amg_levels": amg.levels,
           "amg_operator_complexity": amg.operator_complexity}
    return row, solver


def run_skfem(label, dofs):
    """scikit-fem + pyamg on the CPU; the row and the vertex values of u, or None when either
    is missing."""
    modules = importable("skfem", "pyamg", "skfem.models.poisson")
    if modules is None:
        return None, None
    skfem, pyamg, models = modules
    dim, degree = PROBLEMS[label]
    mesh = make_mesh(label, dofs)
    element = getattr(skfem, f"Element{'Tri' if dim == 2 else 'Tet'}P{degree}")()
    mesh_type = skfem.MeshTri if dim == 2 else skfem.MeshTet
    start = time.perf_counter()
    basis = skfem.Basis(mesh_type(mesh.points.T, mesh.cells.T), element)
    setup = time.perf_counter() - start
    A = models.laplace.assemble(basis)
    b = models.unit_load.assemble(basis)
    A_I, b_I, x, interior = skfem.condense(A, b, D=basis.get_dofs())
    A_I = A_I.tocsr()
    assembly = time.perf_counter() - start - setup
    ml = pyamg.smoothed_aggregation_solver(A_I)
    amg = time.perf_counter() - start - setup - assembly
    residuals = []
    x[interior] = ml.solve(b_I, tol=RTOL, accel="cg", maxiter=1000, residuals=residuals)
    total = time.perf_counter() - start
    row = {"impl": "skfem", "dofs": basis.N, "cells": mesh.ncells, "nnz": A.nnz,
           "setup_s": setup, "assembly_s": assembly, "amg_setup_s": amg,
           "solve_s": total - setup - assembly - amg, "total_s": total,
           "iterations": len(residuals) - 1,
           "true_residual": float(np.linalg.norm(b_I - A_I @ x[interior])
                                  / np.linalg.norm(b_I)),
           "amg_levels": len(ml.levels), "amg_operator_complexity": ml.operator_complexity()}
    return row, x[basis.nodal_dofs[0]]


def attempt(report, what, fn, *args):
    """fn(*args), or None with the error noted (a CUDA error, out of memory, a failed check);
    a backend that cannot work at all (BackendError) ends the benchmark."""
    try:
        return fn(*args)
    except BackendError:
        raise
    except (RuntimeError, MemoryError, ValueError) as error:
        report["errors"].append(f"{what}: {error}")
        return None


def ours_warm(dev, label, dofs, renumber):
    """Our default path, run cold (kernels compile, the pool grows), then warm on a fresh mesh:
    the warm row with the cold run's extra seconds, and u at the mesh vertices."""
    cold, solver = run_ours(dev, label, dofs, "device", renumber)
    del solver
    warm, solver = run_ours(dev, label, dofs, "device", renumber)
    warm["cold_extra_s"] = cold["total_s"] - warm["total_s"]
    return warm, solver.space.vertex_values(solver.u)


def run(dev, args):
    """The end-to-end report: rows per (problem, dofs, implementation), notes of what was
    skipped, errors, the targets."""
    report = {"rtol": RTOL, "rows": [], "notes": [], "errors": []}
    has_pyamg, has_skfem = importable("pyamg") is not None, importable("skfem") is not None
    if not has_pyamg:
        report["notes"].append("ours-pyamg and skfem: skipped, pyamg is not installed")
    elif not has_skfem:
        report["notes"].append("skfem: skipped, scikit-fem is not installed")
    rate = {}  # seconds per nonzero of the last run of a CPU-bound path

    def affordable(impl, nnz, what):
        estimate = rate.get(impl, 0.0) * nnz
        if estimate > args.cpu_budget:
            report["notes"].append(f"{what} {impl}: skipped, about {estimate:.3g} s estimated "
                                   f"(--cpu-budget {args.cpu_budget:g} s)")
        return estimate <= args.cpu_budget

    for label, dofs in parse_cases(args.e2e):
        what = f"{label} {dofs:.0e} dofs"
        renumber = dofs <= args.rcm_max_dofs
        result = attempt(report, f"{what} ours", ours_warm, dev, label, dofs, renumber)
        if result is None:
            continue
        ours, ours_u = result
        rows, nnz = [ours], ours["nnz"]
        if has_pyamg and affordable("ours-pyamg", nnz, what):
            result = attempt(report, f"{what} ours-pyamg", run_ours, dev, label, dofs,
                             "pyamg", renumber)
            if result is not None:
                rows.append(result[0])
                rate["ours-pyamg"] = result[0]["amg_setup_s"] / nnz
            result = None  # its solver's device memory goes back to the pool
        if has_pyamg and has_skfem and affordable("skfem", nnz, what):
            result = attempt(report, f"{what} skfem", run_skfem, label, dofs)
            if result is not None:
                skfem, skfem_u = result
                rate["skfem"] = skfem["total_s"] / nnz
                ours["u_vs_skfem"] = float(abs(ours_u - skfem_u).max() / abs(skfem_u).max())
                rows.append(skfem)
                for r in rows:
                    r["speedup_vs_skfem"] = skfem["total_s"] / r["total_s"]
        for r in rows:
            r["solution_s"] = r["assembly_s"] + r["amg_setup_s"] + r["solve_s"]
        report["rows"] += [{"problem": label, "target_dofs": dofs, **r} for r in rows]
        print(f"end to end {what}: " + ", ".join(
            f"{r['impl']} {r['total_s']:.3g} s" for r in rows), flush=True)
    report["targets"] = targets(report)
    return report


def find(report, label, dofs, impl):
    return next((r for r in report["rows"] if (r["problem"], r["target_dofs"], r["impl"])
                 == (label, dofs, impl)), None)


def verdict(ok):
    return "PASS" if ok else "MISS"


def targets(report):
    """The issue's targets, each a line with the measured figure: PASS, MISS or n/a."""
    out = []
    for (label, dofs), limit in TOTAL_TARGETS_S.items():
        r = find(report, label, dofs, "ours")
        out.append(f"{label} {dofs:.0e} dofs end to end (assembly + AMG setup + solve) <= "
                   f"{limit} s: " + (
                       "n/a (not run)" if r is None else f"{r['solution_s']:.3f} s "
                       f"{verdict(r['solution_s'] <= limit and r['true_residual'] <= RTOL)} "
                       f"({r['total_s']:.3f} s with the setup of space and pattern)"))
    for (label, dofs), limit in AMG_TARGETS_S.items():
        r = find(report, label, dofs, "ours")
        out.append(f"{label} {dofs:.0e} dofs AMG setup <= {limit} s: " + (
            "n/a (not run)" if r is None else
            f"{r['amg_setup_s']:.3f} s {verdict(r['amg_setup_s'] <= limit)}"))
    for r in report["rows"]:
        what = f"{r['problem']} {r['dofs']} dofs"
        if r["impl"] == "ours" and r.get("speedup_vs_skfem") is not None:
            out.append(f"{what} vs scikit-fem + pyamg >= {SPEEDUP_TARGET:.0f}x: "
                       f"{r['speedup_vs_skfem']:.1f}x "
                       f"{verdict(r['speedup_vs_skfem'] >= SPEEDUP_TARGET)}")
        cpu = find(report, r["problem"], r["target_dofs"], "ours-pyamg")
        if r["impl"] == "ours" and cpu is not None:
            out.append(f"{what} CG iterations {r['iterations']} vs {cpu['iterations']} with "
                       f"pyamg's hierarchy (within 20%): "
                       f"{verdict(r['iterations'] <= ITERATION_MARGIN * cpu['iterations'])}")
    return out


COLUMNS = [("problem", "{}", 6), ("dofs", "{}", 9), ("impl", "{}", 10), ("setup_s", "{:.3f}", 8),
           ("assembly_s", "{:.3f}", 8), ("amg_setup_s", "{:.3f}", 8), ("solve_s", "{:.3f}", 8),
           ("solution_s", "{:.3f}", 8), ("total_s", "{:.3f}", 8), ("iters", "{}", 7),
           ("true_residual", "{:.1e}", 8),
           ("speedup_vs_skfem", "{:.1f}x", 7), ("cold_extra_s", "{:.2f}", 6)]
HEADERS = {"setup_s": "setup s", "assembly_s": "assem s", "amg_setup_s": "amg s",
           "solve_s": "solve s", "solution_s": "a+a+s s", "total_s": "total s",
           "true_residual": "true res",
           "speedup_vs_skfem": "vs skfem", "cold_extra_s": "cold+s"}


def table(report):
    """The end-to-end table, its notes, errors and targets."""
    lines = [f"End to end: -div grad u = 1, u = 0 on the boundary, to a true relative residual "
             f"<= {report['rtol']:g} (ours: fp32 AMG-CG refined in fp64; setup = space, "
             "pattern, maps; a+a+s = assembly + AMG setup + solve, the targets' sum; total "
             "adds the setup; iters = outer/inner; ours-pyamg: the same solver with pyamg's "
             "hierarchy, built on the CPU, passed in through solver.preconditioner)",
             " ".join(f"{HEADERS.get(name, name):>{width}}" for name, _, width in COLUMNS)]
    for r in report["rows"]:
        r = {**r, "iters": (f"{r['outer_iterations']}/{r['iterations']}"
                            if "outer_iterations" in r else str(r["iterations"]))}
        lines.append(" ".join(f"{'-' if r.get(name) is None else fmt.format(r[name]):>{width}}"
                              for name, fmt, width in COLUMNS))
    lines += [f"note: {note}" for note in report["notes"]]
    lines += [f"ERROR: {' '.join(error.splitlines()[:3])}" for error in report["errors"]]
    lines += [f"target: {line}" for line in report["targets"]]
    return "\n".join(lines)
