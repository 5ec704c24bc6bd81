"""Unstructured Euler benchmark on one card (issue 22): the fused cell-centred solver
(solvers/fv/euler_unstructured.py) against a bandwidth floor, the unfused version of the same
scheme (solvers/verification/euler_unstructured_unfused.py) and the host backend.

    python scripts/bench_euler_unstructured.py [--sizes 362,724,1448] [--sizes3d 28,44,70]
    python scripts/bench_euler_unstructured.py --precisions fp32,fp64 --json out.json
    python scripts/bench_euler_unstructured.py --backend host --sizes 16 --sizes3d 4  # smoke

Meshes: quad_grid(n, n, cells="triangle") (2 n^2 cells), hex_grid(n, n, n, cells="tetra") (6 n^3),
walls, a smooth state with a Mach ~0.35 swirl; MUSCL, Venkatakrishnan, HLLC, SSP-RK2, cfl 0.5.
Per mesh: our step (graphs) in Gcell-stage/s and in GB/s of the floor's bytes against the copy
bandwidth (scripts/ceilings.py); the unfused step (CuPy, else NumPy); ours on the host backend.
Then graph vs eager at ~20k cells, and time to solution: the isentropic vortex on 2 m^2 triangles
of [-5, 5]^2 to t = 2, ours (and ours with MUSCL-Hancock at cfl 0.9) against the unfused loop.

The floor, bytes per cell and Runge-Kutta stage (F face slots a cell, D dimensions, NVAR = D + 2,
w bytes a real), summed from the arrays the solver binds to its kernels:
    B = 2 NVAR w                      the state read and written once
      + (nb + area + normal + r + d)  the slot arrays: F (4 + w + 3 D w)
      + inv_vol + lsq + eps2          per cell: (2 + D (D + 1) / 2) w
      + 2 grad                        the gradients written once and read once: 2 NVAR D w
per step: stages x B x cells (fp32: 212 B a triangle-stage, 368 B a tetrahedron-stage); what
the kernels also move is kernel_bytes_per_cell_step. Targets (fp32, largest meshes): >= 40% of
the copy bandwidth, >= 20x the unfused CuPy step.
"""

import argparse
import functools
import gc
import statistics
import sys
import time

import benchrun
import ceilings
import devicetime
import numpy as np
from bench_euler_unstructured_report import table, targets

from solvers.backend import get_backend
from solvers.backend.stepper import Stepper
from solvers.fv.euler_unstructured import UnstructuredEulerSolver
from solvers.mesh.cell_generators import hex_grid, quad_grid
from solvers.mesh.faces import face_geometry
from solvers.verification.euler_unstructured_unfused import UnfusedUnstructuredEuler
from solvers.verification.isentropic_vortex import isentropic_vortex

GAMMA, LANDING_SLACK = 1.4, 1e-6  # LANDING_SLACK: clock.h's
SCHEME = dict(reconstruction="muscl", limiter="venkatakrishnan", riemann="hllc", cfl=0.5)
# Our fastest scheme to the same end time: MUSCL-Hancock, one stage a step (no unfused twin).
HANCOCK = {**SCHEME, "time_integrator": "hancock", "cfl": 0.9}
SLOT_ARRAYS, CELL_ARRAYS = ("nb", "area", "normal", "r", "d"), ("inv_vol", "lsq", "eps2")
FLOOR_FORMULA = " ".join(__doc__[__doc__.index("The floor"):].split())  # for the report
TTS_END, TTS_TOLERANCE = 2.0, 1e-3
DEFAULTS = {"cuda": {"sizes": "362,724,1448", "sizes3d": "28,44,70", "small": 100,
                     "tts_size": 512, "work": 2e9, "host_cells": 1 << 18, "unfused_budget": 5},
            "host": {"sizes": "64", "sizes3d": "8", "small": 12, "tts_size": 12,
                     "work": 2e5, "host_cells": 1 << 14, "unfused_budget": 1}}


def make_mesh(dim, n, extent=(0.0, 1.0)):
    """n^2 squares cut into triangles, or n^3 cubes into six tetrahedra each, and its faces."""
    mesh = (quad_grid(n, n, extent, extent, cells="triangle") if dim == 2 else
            hex_grid(n, n, n, extent, extent, extent, cells="tetra"))
    return mesh, face_geometry(mesh)


def conserved(rho, v, p):
    """(NVAR, cells) conserved variables of primitive fields (v: a list of components)."""
    energy = p / (GAMMA - 1) + 0.5 * rho * sum(c * c for c in v)
    return np.stack([rho, *(rho * c for c in v), energy])


def smooth_state(centroids):
    """Density and pressure waves and a swirl (v_a from x_(a+1)), conserved."""
    x = 2 * np.pi * centroids.T
    dim = len(x)
    rho = 1.0 + 0.2 * np.sin(x[0]) * np.cos(x[1]) * (np.cos(x[2]) if dim == 3 else 1.0)
    v = [0.4 * np.sin(x[(a + 1) % dim] + 0.3 * a) for a in range(dim)]
    return conserved(rho, v, 1.0 + 0.2 * np.cos(x.sum(axis=0)))


def floor_bytes(solver):
    """Bytes per cell of one stage by the floor's formula (module docstring), by part, and
    what the kernels move a step beyond it."""
    m, n = solver.mesh_arrays, solver.ncells  # the arrays the kernels are bound to
    word, nvar = solver.dtype.itemsize, solver.nvar
    per_cell = {"state": 2 * nvar * word,
                "slots": sum(m[k].nbytes for k in SLOT_ARRAYS) // n,
                "cell": sum(m[k].nbytes for k in CELL_ARRAYS) // n,
                "gradients": 2 * solver.gradients.nbytes // n}
    stage, stages = sum(per_cell.values()), len(solver.stages)
    again = sum(m[k].nbytes for k in ("nb", "r", "d")) // n  # the stage reads them again
    blends = sum(w != 1 for w, _, _ in solver.stages) * nvar * word  # U^n in blending stages
    return {"parts_per_cell_stage": per_cell, "per_cell_stage": stage,
            "per_cell_step": stages * stage,
            "kernel_bytes_per_cell_step": stages * (stage + again) + blends}


def repeat(fn, times):
    for _ in range(times):
        fn()


def timed(solver, work, k, repeats, graph=True):
    """Seconds per step of the solver's step in graphs of k steps (or eager), the median of
    `repeats` runs of about `work` cell-stages (20 to 2000 steps), and the steps a run."""
    steps = int(min(2000, max(20, work / (solver.ncells * len(solver.stages)))))
    steps, backend = -(-steps // k) * k, solver.backend
    stepper = Stepper(backend, solver.step, k, graph=graph)
    stepper.advance()  # eager warm-up, then (graph) the capture
    run = functools.partial(repeat, stepper.advance, steps // k)
    run()
    backend.synchronize()
    seconds = devicetime.median(backend, run, repeats) / steps
    check(solver, f"{solver.mesh.source} {solver.dtype}")
    return seconds, steps


def build(backend, mesh, geometry, u, precision, scheme, boundary="wall"):
    """Our solver on `mesh`, every side `boundary`, state u (conserved, the mesh's order)."""
    solver = UnstructuredEulerSolver(mesh, dict.fromkeys(geometry.boundary_names, boundary),
                                     gamma=GAMMA, backend=backend, precision=precision,
                                     geometry=geometry, **scheme)
    solver.set_conserved(u)
    return solver


def check(solver, what):
    """A RuntimeError if the solver's state diverged."""
    reading = solver.clock.read()
    if reading.diverged or not np.isfinite(solver.conserved()).all():
        raise RuntimeError(f"{what} diverged after {reading.steps} steps")


def bench_unfused(xp, geometry, u, row, scheme, args):
    """The unfused step of our row's mesh: seconds per step (the median, in about
    args.unfused_budget seconds, at most the row's steps a run) and our speedup over it."""
    budget, repeats = args.unfused_budget, min(args.repeats, 3)
    model = UnfusedUnstructuredEuler.from_table(
        xp, geometry, dict.fromkeys(geometry.boundary_names, "wall"), gamma=GAMMA,
        dtype="float32" if row["precision"] == "fp32" else "float64", **scheme)
    model.set_conserved(u)
    stream = xp.cuda.get_current_stream() if xp is not np else None
    backend = get_backend("cuda" if stream is not None else "host")
    devicetime.seconds(backend, model.step, stream)  # warm-up: CuPy compiles its kernels
    one = devicetime.seconds(backend, model.step, stream)
    steps = int(min(row["steps"], max(1, budget / (repeats * one))))
    run = functools.partial(repeat, model.step, steps)
    times = [one] if one * repeats > budget else [
        devicetime.seconds(backend, run, stream) / steps for _ in range(repeats)]
    if not np.isfinite(model.conserved()).all():
        raise RuntimeError("the unfused state became non-finite")
    seconds = statistics.median(times)
    return {"unfused_s_per_step": seconds, "speedup": seconds / row["s_per_step"]}


def bench_host(cache, row, scheme, args):
    """Our step on the host backend on the mesh of the row's kind with at most
    args.host_cells cells, measured once per mesh and precision."""
    dim, precision = row["dim"], row["precision"]
    n = min(row["n"], int((args.host_cells / (2 if dim == 2 else 6)) ** (1 / dim) + 1e-9))
    if (dim, n, precision) not in cache:
        mesh, geometry = make_mesh(dim, n)
        solver = build("host", mesh, geometry, smooth_state(geometry.centroids), precision,
                       scheme)
        seconds, _ = timed(solver, min(args.work, 1e7), args.steps_per_graph, args.repeats)
        cache[dim, n, precision] = {"host_cells": solver.ncells, "host_s_per_step": seconds,
                                    "host_gcell_stages_per_s": solver.ncells * row["stages"]
                                    / seconds / 1e9}
    return cache[dim, n, precision]


def graph_vs_eager(backend, dim, n, args, scheme):
    """Seconds per step replayed from graphs and launched eagerly on a small mesh."""
    mesh, geometry = make_mesh(dim, n)
    solver = build(backend, mesh, geometry, smooth_state(geometry.centroids), "fp32", scheme)
    row = {"dim": dim, "n": n, "cells": solver.ncells, "steps_per_graph": args.steps_per_graph}
    for mode in ("graph", "eager"):
        row[f"{mode}_s"], row["steps"] = timed(solver, args.work, args.steps_per_graph,
                                               args.repeats, mode == "graph")
    row["graph_over_eager"] = row["eager_s"] / row["graph_s"]
    return row


def landed_unfused_step(model, t_end):
    """UnfusedUnstructuredEuler.step with dt landed on t_end by clock.h's rule: the whole
    remainder within dt, half of it within 2 dt."""
    xp, real = model.xp, model.real
    u0 = model.u
    dt = (model.cfl / model.max_rate(u0)).astype(xp.float64)
    remaining = t_end - model.t
    dt = xp.where(dt * (1 + LANDING_SLACK) >= remaining, remaining,
                  xp.where(2 * dt > remaining, 0.5 * remaining, dt))
    u = u0
    for w in model.weights:  # Shu-Osher stages, as step() writes them
        stage = u + dt.astype(model.dtype) * model.residual(u)
        u = stage if w == 1.0 else real(1 - w) * u0 + real(w) * stage
    model.u, model.t = u, model.t + dt


def ours_to_end(backend, mesh, geometry, u0, scheme, free, args):
    """Whole-run wall seconds of our solver from u0 to TTS_END (graphs of k steps, the clock
    read after each replay) after a warm-up run that compiles and captures; and the solver."""
    solver = build(backend, mesh, geometry, u0, "fp32", scheme, free)
    stepper = Stepper(solver.backend, solver.step, args.steps_per_graph)
    solver.clock.set(t_stop=TTS_END)
    for measured in (False, True):
        solver.set_conserved(u0)
        start = time.perf_counter()
        while True:
            stepper.advance()
            if not measured or solver.clock.read().t >= TTS_END:
                break
    check(solver, "the vortex")
    return time.perf_counter() - start, solver


def time_to_solution(backend, xp, m, args, scheme):
    """The vortex to TTS_END on 2 m^2 triangles: ours (graphs of k steps, the clock read after
    each replay) and the unfused loop (t read after each step), whole-run wall seconds after
    a warm-up whose state is put back."""
    mesh, geometry = make_mesh(2, m, (-5.0, 5.0))
    x, y = geometry.centroids.T
    rho, vx, vy, p = isentropic_vortex(x, y, 0.0, centre=(-2.0, 0.0), gamma=GAMMA)
    u0 = conserved(rho, [vx, vy], p)
    free = {"farfield": {"rho": 1.0, "vx": 1.0, "vy": 0.0, "p": 1.0}}
    ours_s, solver = ours_to_end(backend, mesh, geometry, u0, scheme, free, args)
    hancock_s, fastest = ours_to_end(backend, mesh, geometry, u0, HANCOCK, free, args)
    ours = solver.conserved()
    # The unfused loop: one warm-up step, then from the same state to the end time.
    model = UnfusedUnstructuredEuler.from_table(
        xp, geometry, dict.fromkeys(geometry.boundary_names, free), gamma=GAMMA,
        dtype="float32", **scheme)
    with np.errstate(all="ignore"):  # NumPy warns for the branches `where` discards
        model.set_conserved(u0)
        landed_unfused_step(model, TTS_END)  # the warm-up step, its state then put back
        model.set_conserved(u0)
        start, steps = time.perf_counter(), 0
        while float(model.t) < TTS_END:
            landed_unfused_step(model, TTS_END)
            steps += 1
    unfused_s = time.perf_counter() - start
    error = np.abs(ours[0] - isentropic_vortex(x, y, TTS_END, centre=(-2.0, 0.0), gamma=GAMMA)[0])
    diff = float(np.abs(ours - model.conserved()).max() / np.abs(ours).max())
    return {"case": "isentropic vortex b=5, (1, 0), farfield, [-5, 5]^2", "m": m,
            "cells": solver.ncells, "t_end": TTS_END, "ours_s": ours_s, "unfused_s": unfused_s,
            "ours_steps": solver.clock.read().steps, "unfused_steps": steps,
            "speedup": unfused_s / ours_s, "rel_diff": diff, "ok": diff < TTS_TOLERANCE,
            "hancock_s": hancock_s, "hancock_steps": fastest.clock.read().steps,
            "l1_rho_error": float(error @ geometry.volumes / geometry.volumes.sum())}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=("cuda", "host"), default="cuda")
    p.add_argument("--sizes", help="n of the 2 n^2 triangle meshes (default 362,724,1448)")
    p.add_argument("--sizes3d", help="n of the 6 n^3 tetrahedron meshes (default 28,44,70)")
    p.add_argument("--precisions", default="fp32")
    p.add_argument("--time-integrator", default="ssp_rk2", choices=("ssp_rk2", "ssp_rk3"))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--steps-per-graph", type=int, default=10)
    p.add_argument("--small", type=int, help="n of the graph/eager meshes (default 100)")
    p.add_argument("--tts-size", type=int, help="m of the vortex's 2 m^2 triangles (512)")
    p.add_argument("--host-cells", type=int, help="largest host-backend mesh (2^18 cells)")
    p.add_argument("--work", type=float, help="cell-stages a timed repeat (2e9 cuda)")
    p.add_argument("--unfused-budget", type=float, help="seconds for each unfused row (5)")
    p.add_argument("--json", default="bench_euler_unstructured.json")
    args = p.parse_args(argv)
    # Sizes and budgets not given: the on cuda, a smoke test's on the host.
    for name, value in DEFAULTS[args.backend].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.sizes, args.sizes3d = (
        [int(s) for s in str(text).split(",") if s] for text in (args.sizes, args.sizes3d))
    return args


def attempt(report, what, fn, *args):
    """fn(*args), or None with its error noted (CUDA errors are RuntimeErrors)."""
    try:
        return fn(*args)
    except (RuntimeError, MemoryError) as error:
        report["errors"].append(f"{what}: {error}")
        return None
    finally:  # what it left on the device freed
        gc.collect()
        if report["unfused_xp"] == "cupy":
            sys.modules["cupy"].get_default_memory_pool().free_all_blocks()


def ours_row(backend, n, mesh, geometry, u, precision, scheme, args, copy_gbs):
    """Our step in graphs on one mesh: the row's figures."""
    solver = build(backend, mesh, geometry, u, precision, scheme)
    seconds, steps = timed(solver, args.work, args.steps_per_graph, args.repeats)
    cells, stages, floor = solver.ncells, len(solver.stages), floor_bytes(solver)
    gbs = floor["per_cell_step"] * cells / seconds / 1e9
    return {"dim": mesh.dim, "n": n, "cells": cells, "precision": precision, "stages": stages,
            "steps": steps, "s_per_step": seconds,
            "gcell_stages_per_s": cells * stages / seconds / 1e9,
            "floor_bytes": floor, "gbs": gbs, "frac_floor": gbs / copy_gbs,
            "kernel_gbs": floor["kernel_bytes_per_cell_step"] * cells / seconds / 1e9}


def run(args):
    start = time.perf_counter()
    cuda = args.backend == "cuda"
    backend = get_backend(args.backend)
    xp = __import__("cupy") if cuda else np  # the unfused runs': CuPy on cuda, else NumPy
    ceil = ceilings.measure(args.backend)
    scheme = {**SCHEME, "time_integrator": args.time_integrator}
    report = {"card": backend.describe(), "versions": benchrun.versions(cuda), "ceilings": ceil,
              "scheme": scheme, "floor_formula": FLOOR_FORMULA, "unfused_xp": xp.__name__,
              "rows": [], "graph_vs_eager": [], "errors": []}
    host_cache = {}
    # One row per mesh and precision: ours in graphs, the unfused step, ours on the host.
    for dim, sizes in ((2, args.sizes), (3, args.sizes3d)):
        for n in sizes:
            mesh, geometry = make_mesh(dim, n)
            u = smooth_state(geometry.centroids)
            for precision in args.precisions.split(","):
                what = f"{dim}D n={n} {precision}"
                row = attempt(report, what, ours_row, backend, n, mesh, geometry, u, precision,
                              scheme, args, ceil["copy"]["gbs"])
                if row:
                    report["rows"].append(row)
                    row.update(attempt(report, f"{what} unfused", bench_unfused, xp, geometry,
                                       u, row, scheme, args) or {})
                    row.update(attempt(report, f"{what} host", bench_host, host_cache, row,
                                       scheme, args) or {})
    # Graph replay against eager launches, ~20k cells of each kind (triangles: 2 n^2).
    n3 = max(2, round((2 * args.small ** 2 / 6) ** (1 / 3)))
    for dim, n in ((2, args.small), (3, n3)):
        g = attempt(report, f"graph/eager {dim}D n={n}", graph_vs_eager, backend, dim, n,
                    args, scheme)
        report["graph_vs_eager"] += [g] if g else []
    # Time to solution: the vortex to t = 2, ours against the unfused loop.
    report["tts"] = attempt(report, "time to solution", time_to_solution, backend, xp,
                            args.tts_size, args, scheme)
    report["targets"] = targets(report)
    report["wall_seconds"] = time.perf_counter() - start
    return report


def passed(report):
    return not report["errors"] and bool(report["tts"]) and report["tts"]["ok"]


def main(argv=None):
    return benchrun.main("bench_euler_unstructured", parse_args(argv),
                         "--backend host --sizes 16 --sizes3d 4", run, table, passed)


if __name__ == "__main__":
    sys.exit(main())
