"""solvers.linalg benchmark on one card: SpMV, the CG iteration and Poisson solves.

SpMV (CSR, SELL-C-sigma, matrix-free stencil) against cuSPARSE and the measured copy bandwidth,
the fused CG iteration against cupyx's cg, and the time to solve a 3D Poisson problem
(Jacobi-CG, multigrid-PCG, cupyx, SciPy on the CPU, and mixed-precision iterative refinement).

    python scripts/bench_linalg.py [--sizes 128,256] [--json bench_linalg.json]
    python scripts/bench_linalg.py --backend host --sizes small      # CPU smoke test

Problems (grids n^3 from --sizes; the first size also sets the 27-point, irregular, CG
iteration and refinement problems):
  7pt        the cell-centred -div grad u on the unit cube, homogeneous Dirichlet
             (StencilLaplacian; its matrix assembled straight to CSR)
  stencil-var the same stencil with a per-cell coefficient exp(U(-1, 1)) (stencil only)
  27pt       all 26 neighbours -1, diagonal 26, Dirichlet-truncated at the walls
  irregular  n^3 rows of 1 to 15 entries, 1% of rows 256 long; columns within 1024 of the
             diagonal, one in eight anywhere

SpMV bytes (the fewest an SpMV must move, each array once): values (nnz words) + column
indices (nnz int32) + row pointers (rows + 1 int32) + x + y (rows words each), for CSR, SELL
and cuSPARSE alike (SELL moves its padding and row order on top); the stencil moves x + y
(+ the inverse coefficient per cell when variable). FLOPs: 2 per nonzero of the matrix (the
stencil is counted as its 7-point matrix). Times: median over repeats of CUDA events around
>= 20 launches cycling through enough (x, y) pairs that their bytes and the matrix's span 3x the
L2 cache, eager and replayed from one captured graph.

CG iteration bytes (as executed, fused Jacobi-CG): the SpMV's bytes + 11 vectors (update: x,
p, r, q and the inverse diagonal read, x, r, z written: 8; p = z + beta p: 3), + 2 on CSR
(p.q in its own pass; the stencil fuses it into the SpMV).

The run stops starting new items after --max-seconds; the headline items (SpMV of the first
7-point size, CG iteration, solves) come first. A compact table is printed last; full numbers
go to --json. Exit 2 without a GPU (cuda), 1 when a check fails or an item errors.
"""

import argparse
import statistics
import sys
import time

import bench_linalg_report as report_text
import benchrun
import ceilings
import numpy as np
from bench_linalg_libraries import Device, Library
from bench_linalg_spmv import (
    add_spmv_rates,
    check_assembly,
    spmv_7pt,
    spmv_bytes,
    spmv_case,
    stencil,
)
from linalg_matrices import box_27pt, irregular, laplacian_7pt

from solvers.linalg import ConjugateGradient, CsrMatrix
from solvers.linalg.multigrid import GeometricMultigrid
from solvers.linalg.refinement import IterativeRefinement

SIZES = {"default": "128,256", "small": "12,16"}
RTOL = 1e-6
TINY_RTOL = 1e-30  # fixed-iteration runs: never met
REFINE_RTOL, REFINE_INNER_RTOL = 1e-10, 1e-4
CHUNK = 20  # CG iterations per captured graph (ConjugateGradient's default)
FIXED_ITERATIONS = {"cuda": (40, 240), "host": (20, 40)}  # multiples of CHUNK
# Vectors a Jacobi-CG iteration moves besides its SpMV: cg_update reads x r p q M^-1 and writes
# x r z, cg_direction reads z p and writes p, and an operator without a fused dot (CSR) adds a
# pass over p and q. The fused stencil iteration (stencil_cg.cu) has no separate SpMV: it reads
# r M^-1 p_old and writes p, then reads x p r M^-1 and writes x r.
CG_VECTORS = {"stencil": 11, "csr": 13, "fused": 10}
SCIPY_LIMIT_S = 60.0  # SciPy CPU solves estimated longer than this are skipped


def add_cg_floor(rows, copy_gbs):
    """The floor of each CG iteration row (FLOOR_VECTORS vectors at the copy bandwidth) and its
    time over the floor."""
    for row in rows:
        if copy_gbs:
            row["floor_s"] = report_text.FLOOR_VECTORS * row["unknowns"] * 4 / (copy_gbs * 1e9)
            row["x_floor"] = row["s_per_iter"] / row["floor_s"]


# -- CG iteration ------------------------------------------------------------------------------

def ours_fixed(dev, op, b, counts, repeats, device_loop=True, fused=True):
    """Seconds of a Jacobi-CG solve of exactly `count` iterations (rtol never met), per count:
    one graph replay (iterations in a device loop; chunks of CHUNK iterations with a status
    read between chunks where the backend has no device loops) and the final true residual."""
    solver = ConjugateGradient(op, "jacobi", rtol=TINY_RTOL, maxiter=CHUNK, chunk=CHUNK,
                               fused=fused)
    solver.device_loop = solver.device_loop and device_loop
    solver.solve(b)  # warm-up: compiles, captures the chunk, writes b
    out = {}
    for count in counts:
        solver.set_limits(TINY_RTOL, count)
        times = []
        for _ in range(repeats):
            dev.backend.fill(solver.x, 0)
            seconds, (_, info) = dev.wall(solver.solve_in_place)
            times.append(seconds)
        if info.iterations != count or info.status != "maxiter":
            raise RuntimeError(f"fixed-iteration CG ran {info.iterations} iterations "
                               f"({info.status}), expected {count}")
        out[count] = statistics.median(times)
    return out


def library_fixed(dev, lib, a64, b, counts, repeats):
    """The same for the baseline's cg (Jacobi via a LinearOperator, fp32)."""
    a, rhs = lib.matrix(a64, np.float32), lib.array(b.astype(np.float32))
    m = lib.jacobi(a64.diagonal(), np.float32)
    lib.cg(a, rhs, TINY_RTOL, 2, m)  # warm-up
    out = {}
    for count in counts:
        out[count] = statistics.median(
            dev.wall(lambda c=count: lib.cg(a, rhs, TINY_RTOL, c, m))[0]
            for _ in range(repeats))
    return out


def iteration_row(impl, times, spmv_bytes_, n, operator="stencil"):
    """Seconds per iteration from two fixed counts (the difference cancels the start and
    the final residual), and bytes per iteration for ours."""
    (c1, t1), (c2, t2) = sorted(times.items())
    per = (t2 - t1) / (c2 - c1)
    row = {"impl": impl, "counts": [c1, c2], "seconds": [t1, t2], "s_per_iter": per,
           "s_per_iter_whole": t2 / c2}
    if spmv_bytes_ is not None:
        row["bytes_per_iter"] = spmv_bytes_ + CG_VECTORS[operator] * n * 4
        row["gbs"] = row["bytes_per_iter"] / per / 1e9
    return row


def fixed_iterations(backend_name, n):
    """The two iteration counts of the per-iteration time on n^3: FIXED_ITERATIONS, the second
    kept below 6 n, half of where fp32 CG on the 7-point matrix reaches rounding and stops
    early (145 iterations at 12^3)."""
    low, high = FIXED_ITERATIONS[backend_name]
    return low, max(low + CHUNK, min(high, CHUNK * (6 * n // CHUNK)))


def bench_cg_iteration(dev, lib, n, repeats, rng):
    """Jacobi-CG time per iteration on the 7-point matrix of n^3, fp32: ours on the stencil
    and on CSR, and the baseline's cg on the same CSR matrix."""
    counts = fixed_iterations(dev.backend.name, n)
    op = stencil(dev, n)
    a64 = laplacian_7pt(op)
    csr = CsrMatrix.from_scipy(a64, backend=dev.backend, precision="fp32")
    b = rng.uniform(-1, 1, op.n)
    rows = [iteration_row("ours stencil", ours_fixed(dev, op, b, counts, repeats), 0, op.n,
                          "fused"),
            iteration_row("ours stencil unfused",
                          ours_fixed(dev, op, b, counts, repeats, fused=False), 2 * op.n * 4,
                          op.n),
            iteration_row("ours csr", ours_fixed(dev, csr, b, counts, repeats),
                          spmv_bytes(csr.n, csr.nnz, 4), op.n, "csr"),
            iteration_row("ours stencil chunked",
                          ours_fixed(dev, op, b, counts, repeats, device_loop=False), 0, op.n,
                          "fused")]
    if lib is not None and lib.linalg is not None:
        rows.append(iteration_row(f"{lib.name} csr",
                                  library_fixed(dev, lib, a64, b, counts, repeats), None, op.n))
        for row in rows:
            row["x_baseline"] = rows[-1]["s_per_iter"] / row["s_per_iter"]
    for row in rows:
        row.update(n=n, unknowns=op.n)
    return rows


# -- solves --------------------------------------------------------------------------------------

def ours_solve(dev, label, make_solver, b, repeats):
    """Setup, first solve (compiles, captures, writes b) and the median of timed solves
    from x = 0 with b already on the device."""
    setup, solver = dev.wall(make_solver)
    first, (_, info) = dev.wall(lambda: solver.solve(b))
    times = []
    for _ in range(repeats if first < 2.0 else 1):
        dev.backend.fill(solver.x, 0)
        seconds, (_, info) = dev.wall(solver.solve_in_place)
        times.append(seconds)
    return {"impl": label, "seconds": statistics.median(times), "repeats": len(times),
            "setup_s": setup, "first_solve_s": first, "iterations": info.iterations,
            "residual": info.residual, "status": info.status}


def library_solve(dev, lib, label, a64, b, maxiter):
    """The baseline's Jacobi-CG to RTOL in fp32 after a 2-iteration warm-up: the median of up
    to 3 solves (fewer once they add up to 2 s); iterations by callback, the true residual in
    float64 on the host."""
    a, rhs = lib.matrix(a64, np.float32), lib.array(b.astype(np.float32))
    m = lib.jacobi(a64.diagonal(), np.float32)
    lib.cg(a, rhs, RTOL, 2, m)
    count = [0]

    def callback(_):
        count[0] += 1

    def solve():
        count[0] = 0
        return lib.cg(a, rhs, RTOL, maxiter, m, callback)

    times = []
    while len(times) < 3 and sum(times) < 2.0:
        seconds, (x, _) = dev.wall(solve)
        times.append(seconds)
    x = lib.to_host(x).astype(np.float64)
    residual = float(np.linalg.norm(b - a64 @ x) / np.linalg.norm(b))
    status = "converged" if residual <= 10 * RTOL else (
        "maxiter" if count[0] >= maxiter else "stalled")
    return {"impl": label, "seconds": statistics.median(times), "repeats": len(times),
            "iterations": count[0],
            "residual": residual, "status": status}


def scipy_estimate(cpu, a64, b, iterations):
    """Seconds a SciPy solve of `iterations` would take, from a timed 5-iteration run."""
    a, m = cpu.matrix(a64, np.float32), cpu.jacobi(a64.diagonal(), np.float32)
    start = time.perf_counter()
    cpu.cg(a, b.astype(np.float32), TINY_RTOL, 5, m)
    return (time.perf_counter() - start) / 5 * iterations


def attempt(report, label, fn):
    """fn(), or None with the error in the report (the other rows of the item still count)."""
    try:
        return fn()
    except Exception as error:  # e.g. a cuBLAS load, device memory
        report["errors"].append(f"{label}: {type(error).__name__}: {error}")
        return None


def bench_solves(dev, libs, n, repeats, rng, report, deadline):
    """Time to RTOL on the 7-point Poisson problem of n^3 (fp32, random rhs): ours with
    Jacobi and with multigrid, the cupyx baseline, and SciPy on the CPU. Rows go straight
    into report['solves']."""
    op = stencil(dev, n)
    b = rng.uniform(-1, 1, op.n)

    def add(row):
        if row is not None:
            row.update(n=n, unknowns=op.n)
            report["solves"].append(row)
        return row

    jacobi = add(ours_solve(dev, "jacobi-cg", lambda: ConjugateGradient(op, "jacobi", rtol=RTOL),
                            b, repeats))
    add(attempt(report, f"mg-pcg {n}^3", lambda: ours_solve(
        dev, "mg-pcg",
        lambda: ConjugateGradient(op, preconditioner=GeometricMultigrid(op), rtol=RTOL), b,
        repeats)))
    dev.free()
    # The baselines run Jacobi-CG too: cap them at twice our iterations, and skip SciPy when
    # its estimate is over SCIPY_LIMIT_S or the time left.
    maxiter = 2 * jacobi["iterations"] + 50
    a64 = laplacian_7pt(op)
    gpu, cpu = libs
    if gpu is not None and gpu.linalg is not None:
        add(attempt(report, f"cupyx cg {n}^3",
                    lambda: library_solve(dev, gpu, "cupyx cg", a64, b, maxiter)))
        dev.free()
    estimate = scipy_estimate(cpu, a64, b, jacobi["iterations"])
    limit = min(SCIPY_LIMIT_S, deadline - time.perf_counter())
    if estimate > limit:
        report["skipped"].append(f"scipy cg (cpu) {n}^3: estimated {estimate:.1f} s "
                                 f"(> {limit:.1f} s)")
    else:
        add(library_solve(dev, cpu, "scipy cg (cpu)", a64, b, maxiter))


def bench_refinement(dev, n, rng):
    """IterativeRefinement to REFINE_RTOL: fp64 residuals around an fp32 multigrid-PCG solve
    to REFINE_INNER_RTOL. Timed: the second solve (the first compiles and captures),
    including its host-to-device copy of b."""
    op32, op64 = stencil(dev, n), stencil(dev, n, "fp64")
    inner = ConjugateGradient(op32, preconditioner=GeometricMultigrid(op32),
                              rtol=REFINE_INNER_RTOL)
    refine = IterativeRefinement(op64, inner)
    b = rng.uniform(-1, 1, op64.n)
    refine.solve(b, rtol=REFINE_RTOL)
    seconds, (_, info) = dev.wall(lambda: refine.solve(b, rtol=REFINE_RTOL))
    return {"n": n, "unknowns": op64.n, "inner": "mg-pcg", "inner_rtol": REFINE_INNER_RTOL,
            "rtol": REFINE_RTOL, "seconds": seconds, "outer_iterations": info.outer_iterations,
            "inner_iterations": info.inner_iterations, "residual": info.residual,
            "converged": info.converged}


# -- the run -------------------------------------------------------------------------------------

NOTES = [
    "SpMV bytes: values + int32 column indices (nnz each) + int32 row pointers (rows + 1) + "
    "x + y, the same for CSR, SELL and cuSPARSE; stencil: x + y (+ 1/k per cell when "
    "variable). FLOPs: 2 per nonzero. CG iteration bytes: the SpMV's + 11 vectors (+ 2 on "
    "CSR, whose p.q is a pass of its own).",
    "cuSPARSE via cupyx: 'matmul' is A @ x (allocates y from CuPy's pool and zero-fills it "
    "every call); 'spmv_y' is cupyx.cusparse.spmv(A, x, y=y) (y preallocated, but cupyx "
    "allocates the SpMV workspace and creates descriptors every call: its API cannot take "
    "them); neither is captured in a graph. The faster is reported.",
    "x_baseline: the baseline's eager time over ours, eager or graph replay; GB/s from the "
    "graph replay (the baseline: eager).",
    "CG iteration: (t(N2) - t(N1)) / (N2 - N1) over fixed-iteration solves (rtol 1e-30), "
    "host clock from idle to idle; ours is one graph replay whose iterations loop on the "
    "device ('chunked': graphs of 20 iterations with a status read between them), cupyx's cg "
    "reads the residual norm every iteration and allocates its vectors from the pool.",
    "Solves: fp32, rhs U(-1, 1), ||b - A x|| <= 1e-6 ||b|| (the unpreconditioned residual in "
    "every solver); Jacobi for cupyx and SciPy through a LinearOperator; 'residual' is the "
    "true one in double. Ours are timed from b on the device; the baselines' from b in their "
    "own arrays.",
]


def make_plan(sizes):
    """(section, size) in run order: the headline items first."""
    first = sizes[0]
    plan = [("spmv-7pt", first), ("cg-iteration", first)]
    plan += [("solve", n) for n in sizes]
    plan += [("refinement", first)]
    plan += [("spmv-7pt", n) for n in sizes[1:]]
    plan += [("spmv-27pt", first), ("spmv-irregular", first)]
    return plan


def run_item(dev, libs, section, n, args, report, deadline):
    """One planned item: its rows go into the report."""
    rng = np.random.default_rng(n)
    gpu, cpu = libs
    # Host runs compare SpMV and the CG iteration with SciPy; cuda runs with cupyx only.
    baseline = gpu if dev.cuda else cpu
    if section == "spmv-7pt":
        report["spmv"] += spmv_7pt(dev, baseline, n, args.repeats, rng, n == args.grids[0])
    elif section == "spmv-27pt":
        report["spmv"] += spmv_case(dev, baseline, f"27pt {n}^3", box_27pt(n), {},
                                    args.repeats, rng)
    elif section == "spmv-irregular":
        report["spmv"] += spmv_case(dev, baseline, f"irregular {n ** 3}", irregular(n**3, rng),
                                    {}, args.repeats, rng)
    elif section == "cg-iteration":
        report["cg_iteration"] += bench_cg_iteration(dev, baseline, n, min(args.repeats, 5), rng)
    elif section == "solve":
        bench_solves(dev, (gpu, cpu), n, min(args.repeats, 3), rng, report, deadline)
    elif section == "refinement":
        report["refinement"].append(bench_refinement(dev, n, rng))
    dev.free()


def run(args):
    start = time.perf_counter()
    deadline = start + args.max_seconds
    dev = Device(args.backend)
    gpu, why = Library.load(True) if dev.cuda else (None, [])
    cpu = Library(False)
    copy = ceilings.copy_bandwidth() if dev.cuda else None
    report = {"card": dev.backend.describe(), "versions": benchrun.versions(dev.cuda),
              "ceilings": {"copy": copy}, "sizes": args.grids, "rtol": RTOL,
              "checks": {"assembly_7pt": check_assembly(dev)}, "notes": NOTES,
              "spmv": [], "cg_iteration": [], "solves": [], "refinement": [],
              "skipped": why, "errors": []}
    for section, n in make_plan(args.grids):
        if args.sections and section not in args.sections:
            continue
        if time.perf_counter() > deadline:
            report["skipped"].append(f"{section} {n}^3: --max-seconds reached")
            continue
        print(f"bench_linalg: {section} {n}^3 ({time.perf_counter() - start:.0f} s)",
              file=sys.stderr, flush=True)
        try:
            run_item(dev, (gpu, cpu), section, n, args, report, deadline)
        except Exception as error:  # report and go on: one broken item must not lose the rest
            report["errors"].append(f"{section} {n}^3: {type(error).__name__}: {error}")
            dev.free()
    add_spmv_rates(report["spmv"], copy["gbs"] if copy else None)
    add_cg_floor(report["cg_iteration"], copy["gbs"] if copy else None)
    report["expectations"] = report_text.expectations(report, dev.cuda)
    report["wall_seconds"] = time.perf_counter() - start
    return report


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    p.add_argument("--sizes", default="default",
                   help="comma-separated n of n^3 grids, or 'default' (128,256) or 'small' "
                        "(12,16: the smoke test)")
    p.add_argument("--json", default="bench_linalg.json")
    p.add_argument("--repeats", type=int, default=None, help="default 7 cuda, 3 host")
    p.add_argument("--sections", default=None,
                   help="comma-separated sections to run (spmv-7pt, cg-iteration, solve, "
                        "refinement, spmv-27pt, spmv-irregular); default all")
    p.add_argument("--max-seconds", type=float, default=200,
                   help="start no new item once the script has run this long")
    args = p.parse_args(argv)
    args.grids = [int(s) for s in SIZES.get(args.sizes, args.sizes).split(",")]
    args.sections = args.sections.split(",") if args.sections else None
    if min(args.grids) < 3:
        p.error("sizes must be at least 3")
    args.repeats = args.repeats or (7 if args.backend == "cuda" else 3)
    return args


def main(argv=None):
    return benchrun.main("bench_linalg", parse_args(argv), "--backend host --sizes small", run,
                         report_text.table, report_text.all_ok)


if __name__ == "__main__":
    sys.exit(main())
