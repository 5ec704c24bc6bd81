"""Euler benchmark on one card: the fused solver (CUDA graph and eager, fp32 and fp64) against
the two floors of METHOD.md, measured on the card, and against an unfused CuPy version of the
same scheme (solvers/verification/euler_unfused.py).

    python scripts/bench_euler.py [--sizes 256,512,1024] [--json bench_euler.json]
    python scripts/bench_euler.py --only tts [--tts-cfl hancock=0.9]  # time to solution alone
    python scripts/bench_euler.py --backend host --sizes 64,128      # CPU smoke test

Problem: 2D, periodic, MUSCL (MC limiter) + HLLC + SSP-RK3, cfl 0.5, on n x n cells of a
random (non-smooth) state. Per size and precision it reports time per step, cell updates per
second, achieved GB/s over the floor's bytes (below) and as a fraction of the measured copy
bandwidth, GFLOP/s over the FLOP count below as a fraction of the measured FMA rate, the
graph-over-eager speedup, and device memory per cell. At the first size, in fp32, it also times
the same step with stages that only copy the state (scripts/kernels/euler_floor.cu, same dt
kernel and arguments): what a graph of the step's kernels costs without their work, against their
eager launches.

Then the time-to-solution part of issue 19 (euler_tts.py; `--only tts` runs it alone, `--only
step` leaves it out): the Kelvin-Helmholtz case to t = 0.25 in fp32 with each of our time
integrators against our JAX baselines (jax_euler.py; skipped with a note where jax is not
importable), the step of each integrator on that case at the targets' small sizes, and the 3D
grid where the solver has one, each target as PASS, MISS or n/a.

A compact table is printed last; full numbers go to --json.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import benchrun
import ceilings
import devicetime
import euler_tts
import numpy as np
from bench_euler_report import passed, table

from solvers.backend import get_backend
from solvers.backend.stepper import Stepper
from solvers.fv.euler import (
    MARCH_CELLS,
    MARCH_WIDTH,
    TILE_SHAPE,
    EulerSolver,
    march_rows,
    scheme_defines,
    uses_tile,
)
from solvers.mesh.structured import StructuredGrid
from solvers.verification.euler_unfused import UnfusedEuler

GAMMA, CFL = 1.4, 0.5
PERIODIC = {side: "periodic" for side in ("x_lo", "x_hi", "y_lo", "y_hi")}
STAGES, NVAR = 3, 4
UNFUSED_BYTES_PER_CELL = 400  # a margin over the ~270 B/cell the unfused fp32 step peaks at
SCHEME_DEFINES = scheme_defines(2, "muscl", "mc", "hllc")
COPY_BLOCK = 256  # threads per block of the copy-only stages
TTS_SIZES = {"cuda": {"tts_sizes": [1024, 4096], "step_sizes": [256, 512], "sizes_3d": [256, 512]},
             "host": {"tts_sizes": [32], "step_sizes": [16], "sizes_3d": [8]}}
# The copy-only stage: a benchmark's kernel, kept beside the script, not in the package.
FLOOR_SOURCE = Path(__file__).resolve().parent / "kernels" / "euler_floor.cu"


def compiled_kernels():
    """The kernel this script compiles beside the solver's (for the compile checks)."""
    yield FLOOR_SOURCE, SCHEME_DEFINES

# FLOPs per cell and Runge-Kutta stage, counted from raw_kernels/fv/euler_scheme.h (DIM 2,
# MUSCL, MC, HLLC). +, -, *, /, 1/x, sqrt and 1/sqrt count 1 each (an FMA in the machine code
# does 2 of them); fabs, fmin, fmax, negation, compares and selects count 0. HLLC counts its
# subsonic star branch.
#   cell_prim      12  (1/rho, 2 mul, pressure 9)
#   reconstruct    28  (4 variables x (2 differences, MC half slope 3, face values 2)):
#                      half slopes 20, the two face values 8
#   face_flux      63  (HLLC 59: sound speeds 8, wave speeds 4, m 4, S* 8, energy 7, physical
#                      flux 6, star flux 22; times dt/dx 4)
#   update         24  (4 variables: flux differences 2, their sum 1, u + change 1,
#                      u0 + w (s - u0) 2 in two stages of three)
#   rate            6  (the last stage's stability rate of the new state, 18, over 3 stages)
CELL_PRIM, HALF_SLOPES, FACE_VALUES, FACE_FLUX, UPDATE, RATE = 12, 20, 8, 63, 24, 6
RECONSTRUCT = HALF_SLOPES + FACE_VALUES


def flops_per_cell_stage(n, backend_name):
    """As executed on an n x n grid, per updated cell.
    The march: a stage block of W threads marches over `rows` rows, loading rows + 4 rows of
    states, reconstructing rows + 2 in y and computing rows + 1 rows of y faces, then per row
    the x states and faces of all W columns, W - 4 of them its own.
    The tile (small grids on the GPU): a block of X x Y threads loads its cells and 3 (X + Y)
    halo cells; each thread, per axis, takes the half slopes of two cells and one face value of
    each for one face flux; (X - 1)(Y - 1) of the cells are its own."""
    if uses_tile(StructuredGrid(n, (0.0, 1.0), n, (0.0, 1.0)), backend_name):
        x, y = TILE_SHAPE
        per_thread = 2 * (2 * HALF_SLOPES + FACE_VALUES + FACE_FLUX)
        block = CELL_PRIM * (x * y + 3 * (x + y)) + per_thread * x * y
        return block / ((x - 1) * (y - 1)) + UPDATE + RATE
    rows = march_rows(n, n, backend_name)
    y = (CELL_PRIM * (rows + 4) + RECONSTRUCT * (rows + 2) + FACE_FLUX * (rows + 1)) / rows
    return (y + RECONSTRUCT + FACE_FLUX) * MARCH_WIDTH / MARCH_CELLS + UPDATE + RATE


# Without the halo: each state, reconstruction and face once per cell.
FLOPS_PER_CELL_STAGE_MIN = CELL_PRIM + 2 * RECONSTRUCT + 2 * FACE_FLUX + UPDATE + RATE


def floor_bytes_per_cell_step(itemsize):
    """The issue's floor: each conserved variable read and written once per stage. (The fused
    step also reads U^n in stages 2 and 3: 32 words, not 24.)"""
    return STAGES * NVAR * itemsize * 2


def initial_state(n, rng):
    """Conserved variables (4, n, n), x fastest: a shear layer with a cell-to-cell random
    part, so that the limiter and the HLLC branches vary from cell to cell."""
    x = (np.arange(n) + 0.5) / n
    sx, sy = np.sin(2 * np.pi * x)[None, :], np.sin(2 * np.pi * x)[:, None]
    rho = 1.0 + 0.2 * sx * sy + 0.05 * rng.random((n, n))
    vx = np.broadcast_to(0.5 * sy, (n, n))
    vy = np.broadcast_to(0.1 * sx, (n, n))
    p = 1.0 + 0.05 * rng.random((n, n))
    energy = p / (GAMMA - 1) + 0.5 * rho * (vx * vx + vy * vy)
    return np.stack([rho, rho * vx, rho * vy, energy])


class Device:
    """What differs between the cuda and host runs: array module, timing, memory."""

    def __init__(self, backend_name):
        self.backend = get_backend(backend_name)
        self.cuda = backend_name == "cuda"
        if self.cuda:
            import cupy
            self.cupy, self.xp = cupy, cupy
            self.pool = cupy.get_default_memory_pool()
        else:
            self.cupy, self.xp, self.pool = None, np, None

    def seconds(self, fn, stream=None):
        return devicetime.seconds(self.backend, fn, stream)

    def used_bytes(self):
        return self.pool.used_bytes() if self.cuda else None

    def free_bytes(self):
        self.free()
        return self.cupy.cuda.runtime.memGetInfo()[0]

    def free(self):
        if self.cuda:
            self.cupy.cuda.Device().synchronize()
            self.pool.free_all_blocks()


def make_solver(dev, nx, ny, precision, u):
    grid = StructuredGrid(nx, (0.0, 1.0), ny, (0.0, ny / nx))
    solver = EulerSolver(grid, PERIODIC, gamma=GAMMA, cfl=CFL, backend=dev.backend,
                         precision=precision)
    solver.set_conserved(u.transpose(0, 2, 1))  # the solver takes [var, i, j]
    solver.clock.set(t_stop=1e300)  # with the default t_stop = 0 a step does nothing
    return solver


def check_against_unfused(dev, steps=3):
    """Fused vs unfused after a few steps on a small random problem, per precision:
    max |difference| / max |u| (fp64 should be ~1e-15, fp32 ~1e-6)."""
    rng = np.random.default_rng()
    nx, ny = 96, 64
    u = initial_state(96, rng)[:, :ny, :].copy()
    u[0] *= rng.uniform(0.8, 1.2, (ny, nx))  # rougher than the benchmark state
    out = {}
    for precision, dtype, tol in (("fp64", "float64", 1e-10), ("fp32", "float32", 1e-4)):
        solver = make_solver(dev, nx, ny, precision, u)
        model = UnfusedEuler(dev.xp, nx, ny, 1.0 / nx, 1.0 / nx, GAMMA, CFL, dtype)
        model.set_conserved(dev.xp.asarray(u))
        for _ in range(steps):
            solver.step()
            model.step()
        fused = solver.conserved().transpose(0, 2, 1)
        unfused = dev.cupy.asnumpy(model.u) if dev.cuda else model.u
        error = float(np.abs(unfused - fused).max() / np.abs(fused).max())
        out[precision] = {"rel_error": error, "tolerance": tol, "ok": error < tol}
    return out


def time_modes(dev, step, steps, k, repeats):
    """Seconds per step of `step`, as graphs of k steps and launched eagerly."""
    times = {}
    for mode in ("graph", "eager"):
        stepper = Stepper(dev.backend, step, k, graph=mode == "graph")
        stepper.advance()  # eager warm-up, then (graph) the capture

        def run(stepper=stepper):
            for _ in range(steps // k):
                stepper.advance()

        run()
        dev.backend.synchronize()
        times[mode] = statistics.median(dev.seconds(run) for _ in range(repeats)) / steps
    return times


def copy_stage_step(dev, solver):
    """The solver's step with each stage replaced by euler_copy_stage (scripts/kernels/
    euler_floor.cu): the same dt kernel, the same arguments, no arithmetic (the state is
    copied, unchanged)."""
    grid = solver.grid
    kernel = dev.backend.module(FLOOR_SOURCE, solver.dtype, SCHEME_DEFINES).euler_copy_stage
    blocks = -(-grid.nx * grid.ny // COPY_BLOCK)
    stages = [kernel.bind(blocks, COPY_BLOCK, *solver.buffers, solver.clock.parity, src, dst,
                          solver.clock.dt, solver.inflow, solver.clock.rates, grid.nx, grid.ny,
                          0, 0, 0, 0, 1.0 / grid.dx, 1.0 / grid.dy, GAMMA, 1.0 / (GAMMA - 1),
                          w, 0)
              for w, src, dst in solver.stages]

    def step():
        solver.clock.finish_dt()
        for stage in stages:
            stage()

    return step


def bench_fused(dev, n, precision, u, steps, k, repeats, copy_floor=False):
    """Graph and eager runs of one solver; returns {mode: seconds per step} and memory, and
    with copy_floor the same for its step with copy-only stages."""
    dev.free()
    before = dev.used_bytes()
    solver = make_solver(dev, n, n, precision, u)
    solver.step()
    dev.backend.synchronize()
    measured = None if before is None else (dev.used_bytes() - before) / (n * n)
    times = time_modes(dev, solver.step, steps, k, repeats)
    floor = None
    if copy_floor:
        state = solver.conserved()
        floor = time_modes(dev, copy_stage_step(dev, solver), steps, k, repeats)
        if not np.array_equal(solver.conserved(), state):
            raise RuntimeError(f"copy-only stages changed the {precision} {n}^2 state")
    reading = solver.clock.read()
    if reading.diverged or not np.isfinite(solver.conserved()).all():
        raise RuntimeError(f"fused {precision} {n}^2 diverged after {reading.steps} steps")
    return {"times": times, "copy_floor_times": floor, "bytes_per_cell": solver.bytes_per_cell,
            "bytes_per_cell_measured": measured, "steps_taken": reading.steps}


def bench_unfused(dev, n, u, steps_max, budget, repeats):
    """The unfused array version in fp32: seconds per step and peak pool memory per cell.
    Takes at most about `budget` seconds after its warm-up step."""
    dev.free()
    total0 = dev.pool.total_bytes() if dev.cuda else None
    model = UnfusedEuler(dev.xp, n, n, 1.0 / n, 1.0 / n, GAMMA, CFL, "float32")
    model.set_conserved(dev.xp.asarray(u, np.float32))
    stream = dev.cupy.cuda.get_current_stream() if dev.cuda else None
    dev.seconds(model.step, stream)  # warm-up: CuPy compiles its kernels, the pool fills
    peak = None if total0 is None else (dev.pool.total_bytes() - total0) / (n * n)
    one = dev.seconds(model.step, stream)
    steps = int(min(steps_max, max(1, budget / (repeats * one))))

    def run():
        for _ in range(steps):
            model.step()

    if one * repeats > budget:  # too slow for repeats: keep the one timed step
        times, steps = [one], 1
    else:
        times = [dev.seconds(run, stream) for _ in range(repeats)]
    u_end = dev.cupy.asnumpy(model.u) if dev.cuda else model.u
    if not np.isfinite(u_end).all():
        raise RuntimeError(f"unfused {n}^2 became non-finite")
    model.u = None  # drop the state before the pool is freed
    dev.free()
    return {"time": statistics.median(times) / steps, "steps": steps, "repeats": len(times),
            "pool_peak_bytes_per_cell": peak}


def metrics(seconds, n, itemsize, ceil, precision, flops_per_stage):
    """The derived numbers of one timed run on n x n cells."""
    cells = n * n
    flop_rate = (ceil.get(precision) or {}).get("gflops")
    bw = ceil["copy"]["gbs"]
    byte_rate = floor_bytes_per_cell_step(itemsize) * cells / seconds / 1e9
    flops = STAGES * flops_per_stage * cells / seconds / 1e9
    floor = floor_bytes_per_cell_step(itemsize) * cells / (bw * 1e9)
    if flop_rate:
        flop_floor = STAGES * FLOPS_PER_CELL_STAGE_MIN * cells / (flop_rate * 1e9)
        floor = max(floor, flop_floor)
    return {"s_per_step": seconds, "cell_updates_per_s": cells / seconds, "gbs": byte_rate,
            "frac_copy_bw": byte_rate / bw, "gflops": flops,
            "frac_fp_peak": flops / flop_rate if flop_rate else None,
            "flops_per_cell_stage": flops_per_stage,
            "floor_s_per_step": floor, "x_floor": seconds / floor}


def steps_for(cells, work, k):
    """Steps per timed repeat: about `work` cell updates, 20 to 2000, a multiple of k."""
    steps = int(min(2000, max(20, work / cells)))
    return -(-steps // k) * k


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    p.add_argument("--sizes", default="256,512,1024,2048,4096,8192", type=size_list,
                   help="comma-separated n of n x n grids")
    p.add_argument("--precisions", default="fp32,fp64")
    p.add_argument("--json", default="bench_euler.json")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--steps-per-graph", type=int, default=10)
    p.add_argument("--work", type=float, default=None,
                   help="cell updates per timed repeat (default 1e9 cuda, 2e5 host)")
    p.add_argument("--unfused-budget", type=float, default=None,
                   help="seconds for the unfused runs of one size (default 3 cuda, 1 host)")
    p.add_argument("--max-seconds", type=float, default=210,
                   help="skip what is left of the step table once the script has run this long")
    p.add_argument("--only", choices=("step", "tts"), default=None,
                   help="run only the step table or only the time-to-solution part")
    p.add_argument("--tts-sizes", type=size_list, help="n of the n x n Kelvin-Helmholtz runs "
                   "to the end time (default 1024,4096 cuda, 32 host)")
    p.add_argument("--tts-end", type=float, default=0.25, help="their end time")
    p.add_argument("--tts-cfl", default={}, type=cfls,
                   help="cfl by time integrator, e.g. hancock=0.9 (default: the case file's)")
    p.add_argument("--step-sizes", type=size_list, help="n of the n x n Kelvin-Helmholtz "
                   "grids of the step targets (default 256,512 cuda, 16 host)")
    p.add_argument("--sizes-3d", type=size_list, help="n of the n^3 grids, where StructuredGrid "
                   "takes nz (default 256,512 cuda, 8 host)")
    args = p.parse_args(argv)
    # The time-to-solution part's sizes: the on cuda, a smoke test's on the host.
    defaults = TTS_SIZES[args.backend]
    for name in defaults:
        if getattr(args, name) is None:
            setattr(args, name, defaults[name])
    return args


def size_list(text):
    return [int(n) for n in text.split(",") if n]


def cfls(text):
    """'name=value,...' -> {name: value}."""
    pairs = [item.split("=") for item in text.split(",") if item]
    if not all(len(pair) == 2 for pair in pairs):
        raise argparse.ArgumentTypeError(f"expected name=value,..., got '{text}'")
    return {name: float(value) for name, value in pairs}


def run(args):
    start = time.perf_counter()
    dev = Device(args.backend)
    work = args.work or (1e9 if dev.cuda else 2e5)
    budget = args.unfused_budget or (3.0 if dev.cuda else 1.0)
    sizes = args.sizes
    precisions = args.precisions.split(",")
    ceil = ceilings.measure(args.backend)
    report = {"card": dev.backend.describe(), "versions": benchrun.versions(dev.cuda),
              "ceilings": ceil, "only": args.only,
              "scheme": "2D periodic, MUSCL (MC) on primitives, HLLC (Davis), SSP-RK3, cfl 0.5",
              "flops_per_cell_stage_no_halo": FLOPS_PER_CELL_STAGE_MIN,
              "gflops_basis": "3 x flops_per_cell_stage of each row (the fused kernel's count "
                              "as executed, halo included; the unfused rows use the no-halo "
                              "count; floors use the no-halo count)",
              "checks": check_against_unfused(dev), "runs": [], "skipped": [], "errors": []}
    rng = np.random.default_rng(1)
    unfused_estimate = 0.0  # seconds per step per cell, from the last size
    for n in sizes if args.only != "tts" else ():
        cells = n * n
        u = initial_state(n, rng)
        k = min(args.steps_per_graph, steps_for(cells, work, 1))
        steps = steps_for(cells, work, k)
        for precision in precisions:
            if time.perf_counter() - start > args.max_seconds:
                report["skipped"].append(f"{n}^2 {precision}: --max-seconds reached")
                continue
            # The floor of graph replay, at the first size in fp32 (256^2 in a full run).
            copy_floor = n == sizes[0] and precision == "fp32"
            try:
                fused = bench_fused(dev, n, precision, u, steps, k, args.repeats, copy_floor)
            except (RuntimeError, MemoryError) as error:  # CUDA errors are RuntimeErrors
                report["errors"].append(f"{n}^2 {precision}: {error}")
                continue
            itemsize = 4 if precision == "fp32" else 8
            for mode, seconds in fused["times"].items():
                row = {"n": n, "cells": cells, "precision": precision, "impl": mode,
                       "steps": steps, "steps_per_graph": k, "repeats": args.repeats,
                       "bytes_per_cell": fused["bytes_per_cell"],
                       "bytes_per_cell_measured": fused["bytes_per_cell_measured"],
                       **metrics(seconds, n, itemsize, ceil, precision,
                                 flops_per_cell_stage(n, args.backend))}
                if mode == "graph":
                    row["graph_over_eager"] = fused["times"]["eager"] / seconds
                report["runs"].append(row)
            if copy_floor:
                times = fused["copy_floor_times"]
                report["copy_floor"] = {"n": n, "precision": precision,
                                        "s_per_step": times,
                                        "graph_over_eager": times["eager"] / times["graph"]}
        # The unfused baseline, fp32 only; skipped where it would overrun its time budget or
        # device memory (its temporaries peak near 270 B/cell).
        if unfused_estimate * cells > budget or time.perf_counter() - start > args.max_seconds:
            report["skipped"].append(f"{n}^2 unfused: over its time budget")
            continue
        if dev.cuda and UNFUSED_BYTES_PER_CELL * cells > 0.8 * dev.free_bytes():
            report["skipped"].append(f"{n}^2 unfused: too little device memory")
            continue
        try:
            result = bench_unfused(dev, n, u, steps, budget, min(args.repeats, 3))
        except (RuntimeError, MemoryError) as error:
            report["errors"].append(f"{n}^2 unfused: {error}")
            continue
        unfused_estimate = result["time"] / cells
        report["runs"].append({"n": n, "cells": cells, "precision": "fp32", "impl": "unfused",
                               "steps": result["steps"], "repeats": result["repeats"],
                               "bytes_per_cell_measured": result["pool_peak_bytes_per_cell"],
                               **metrics(result["time"], n, 4, ceil, "fp32",
                                         FLOPS_PER_CELL_STAGE_MIN)})
    # The time-to-solution part, timed like the step table.
    if args.only != "step":
        report["tts"] = euler_tts.run(dev, SimpleNamespace(
            backend=args.backend, t_end=args.tts_end, cfl=args.tts_cfl, sizes=args.tts_sizes,
            step_sizes=args.step_sizes, sizes_3d=args.sizes_3d, work=work, repeats=args.repeats,
            steps_per_graph=args.steps_per_graph, copy_gbs=ceil["copy"]["gbs"]))
    report["wall_seconds"] = time.perf_counter() - start
    return report


def main(argv=None):
    return benchrun.main("bench_euler", parse_args(argv), "--backend host", run, table, passed)


if __name__ == "__main__":
    sys.exit(main())
