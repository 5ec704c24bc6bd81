"""bench_euler.py's time-to-solution part (issue 19): the Kelvin-Helmholtz case of
cases/kelvin_helmholtz.toml in fp32 to t = 0.25 with each of our time integrators
(solvers.fv.euler.TIME_INTEGRATORS, at the case file's cfl unless --tts-cfl gives one) in CUDA
graphs, against the JAX baselines of jax_euler.py measured in the same run; the step of each
integrator in a graph on the same case at the small sizes of the targets; and the 3D grid, where
StructuredGrid has one. Each target of the issue is printed as PASS, MISS or n/a.

Our wall time is Simulation.run() from t = 0 to the end time: every graph replay and the clock
read after each (synchronising), after a first advance (kernel compiles, the graph's capture)
whose state is then put back. JAX's is the jitted run to the end time, compiled ahead of time
for the same shapes and launched once before (to a hundredth of the end time).
"""

import dataclasses
import math
import time
from pathlib import Path

import devicetime
import jax_euler
import numpy as np

import solvers
from solvers.backend.stepper import Stepper
from solvers.fv.euler import TIME_INTEGRATORS, EulerSolver
from solvers.mesh.structured import StructuredGrid
from solvers.solver import RunError

KH_CASE = Path(__file__).resolve().parents[1] / "cases" / "kelvin_helmholtz.toml"
HANCOCK, REFERENCE = "hancock", "ssp_rk3"  # the one-stage integrator; the case's default
SPEEDUP_TARGETS = {4096: 5.0, 1024: 3.0}  # fastest of ours over the JAX baseline, by size
HANCOCK_STEP_TARGETS_US = {512: 15.0, 256: 8.0}  # a hancock step in a graph, fp32
FLOOR_TARGETS = {(4096, REFERENCE): 0.6, (4096, HANCOCK): 0.6}  # fraction of the floor, 2D
FLOOR_TARGET_3D, MEMORY_TARGET_3D, SIZE_3D_TARGET = 0.5, 48, 512  # 512^3 fp32, B/cell
GAMMA_3D = 1.4
WORD = 4  # bytes of an fp32 value


def stage_count(name):
    """Updates of the state a step: hancock's floor is the state read and written once."""
    return 1 if name == HANCOCK else len(TIME_INTEGRATORS[name])


def floor_seconds(name, cells, nvar, copy_gbs):
    """The floor of a step: each conserved variable read and written once a stage, at the
    measured copy bandwidth."""
    return stage_count(name) * nvar * WORD * 2 * cells / (copy_gbs * 1e9)


def kh_run(backend_name, n, name, cfl, t_end):
    """The case at n^2 with integrator `name`, fp32, no output; cfl None: the case's."""
    scheme = {"time_integrator": name, **({} if cfl is None else {"cfl": cfl})}
    return solvers.load_case(KH_CASE, mesh={"nx": n, "ny": n}, time={"end": t_end},
                             scheme=scheme, output={"interval": 0.0, "plot": False},
                             run={"backend": backend_name, "precision": "fp32"})


def graph_step_seconds(dev, stepper, cells, work, repeats):
    """Seconds a step of `stepper`'s graph, replayed for about `work` cell updates (20 to 2000
    steps); the median of `repeats`."""
    replays = -(-int(min(2000, max(20, work / cells))) // stepper.steps_per_graph)

    def run():
        for _ in range(replays):
            stepper.advance()

    run()  # the capture, if not yet done, and a warm-up
    return devicetime.median(dev.backend, run, repeats) / (replays * stepper.steps_per_graph)


def step_row(n, ndim, name, seconds, copy_gbs):
    cells = n**ndim
    floor = floor_seconds(name, cells, ndim + 2, copy_gbs)
    return {"n": n, "ndim": ndim, "scheme": name, "s_per_step": seconds,
            "cell_updates_per_s": cells / seconds, "floor_s_per_step": floor,
            "frac_floor": floor / seconds}


def time_ours(dev, n, name, cfl, opts):
    """Our run of the case to the end time: (row, step row, initial and final states, the
    run's (dx, dy, gamma))."""
    dev.free()
    run = kh_run(opts.backend, n, name, cfl, opts.t_end)
    sim, solver = run.simulation, run.solver
    start_state, initial = solver.checkpoint(), solver.conserved()
    start = time.perf_counter()
    sim.stepper.advance()
    dev.backend.synchronize()
    setup = time.perf_counter() - start
    solver.restore(start_state)
    sim.resume(None)
    result = sim.run()
    final = solver.conserved()
    row = {"n": n, "impl": "ours", "scheme": name, "cfl": solver.scheme["cfl"],
           "method": "fused kernels in CUDA graphs, dt = cfl/max((|vx|+c)/dx+(|vy|+c)/dy)",
           "t": result.t, "steps": result.steps_run, "wall_s": result.wall_seconds,
           "ms_per_step": 1e3 * result.wall_seconds / result.steps_run, "setup_s": setup}
    # The step alone: graph replays from the final state, the clock let run on.
    solver.clock.set(t_stop=math.inf)
    seconds = graph_step_seconds(dev, sim.stepper, n * n, opts.work, opts.repeats)
    return (row, step_row(n, 2, name, seconds, opts.copy_gbs), initial, final,
            (solver.grid.dx, solver.grid.dy, solver.gamma))


def jax_status(dev):
    """(jax, None), or (None, why the JAX baselines are skipped)."""
    try:
        jax = jax_euler.import_jax()
    except ImportError as error:
        return None, f"jax is not importable ({error}): the JAX baselines are skipped"
    if dev.cuda and jax.default_backend() not in ("gpu", "cuda"):
        return None, (f"jax runs on {jax.default_backend()}, not the GPU: the JAX baselines "
                      "are skipped")
    return jax, None


def jax_schemes(cfls):
    """The JAX variants: the issue's baseline, and ours on Hancock's one stage at the cfl our
    hancock ran at (without a hancock, at our reference integrator's)."""
    matched = dataclasses.replace(jax_euler.SCHEMES["matched"],
                                  cfl=cfls.get(HANCOCK, cfls[REFERENCE]))
    return {"jax baseline": jax_euler.SCHEMES["baseline"], "jax matched": matched}


def drift(initial, final):
    """Largest change of a conserved total (a sum over the cells) over the largest total."""
    before = initial.reshape(len(initial), -1).sum(axis=1, dtype=np.float64)
    after = final.reshape(len(final), -1).sum(axis=1, dtype=np.float64)
    return float(np.abs(after - before).max() / np.abs(before).max())


def tts_size(dev, n, opts, out):
    """Every run to the end time at n^2, appended to out['runs'] (their steps to
    out['steps'])."""
    rows, cfls, densities, start = [], {}, {}, None
    for name in TIME_INTEGRATORS:
        try:
            row, steps, initial, final, spacing = time_ours(dev, n, name, opts.cfl.get(name),
                                                            opts)
        except (RunError, RuntimeError, MemoryError) as error:  # CUDA errors are RuntimeErrors
            out["errors"].append(f"{n}^2 {name}: {error}")
            continue
        row["mass_energy_drift"] = drift(initial, final)
        cfls[name], densities[name], start = row["cfl"], final[0], (initial, *spacing)
        rows.append(row)
        out["steps"].append(steps)
    # The JAX runs from the same initial state, where jax runs here (on the GPU on cuda).
    if start is not None and REFERENCE in cfls and out["jax_version"]:
        initial, dx, dy, gamma = start
        for label, scheme in jax_schemes(cfls).items():
            dev.free()
            try:
                result = jax_euler.time_to_solution(initial.transpose(0, 2, 1), dx, dy, gamma,
                                                    opts.t_end, scheme, opts.t_end / 100)
            except (RuntimeError, MemoryError) as error:  # XLA's errors are RuntimeErrors
                out["errors"].append(f"{n}^2 {label}: {error}")
                continue
            final = result.pop("u").transpose(0, 2, 1)
            if not (result["t"] == np.float32(opts.t_end) and np.isfinite(final).all()):
                out["errors"].append(f"{n}^2 {label}: ended at t={result['t']} with "
                                     f"{np.count_nonzero(~np.isfinite(final))} non-finite values")
                continue
            densities[label] = final[0]
            rows.append({"n": n, "impl": "jax", "scheme": label, "cfl": scheme.cfl,
                         "method": scheme.describe(), **result,
                         "ms_per_step": 1e3 * result["wall_s"] / result["steps"],
                         "mass_energy_drift": drift(initial, final)})
    # Speedups over the JAX runs, and each final density against our reference integrator's
    # and our hancock's.
    jax_walls = {r["scheme"]: r["wall_s"] for r in rows if r["impl"] == "jax"}
    for row in rows:
        row["speedup"] = {label: wall / row["wall_s"] for label, wall in jax_walls.items()}
        row["l1_rho_vs"] = {name: float(np.abs(densities[row["scheme"]] - rho).mean())
                            for name, rho in densities.items() if name in (REFERENCE, HANCOCK)}
    out["runs"] += rows


def step_size(dev, n, opts, out):
    """The step of each integrator in a graph on the case at n^2 (no run to the end time)."""
    for name in TIME_INTEGRATORS:
        dev.free()
        run = kh_run(opts.backend, n, name, opts.cfl.get(name), opts.t_end)
        seconds = graph_step_seconds(dev, run.simulation.stepper, n * n, opts.work,
                                     opts.repeats)
        out["steps"].append(step_row(n, 2, name, seconds, opts.copy_gbs))


def has_3d():
    """Whether StructuredGrid takes nz (the 3D solver's grid)."""
    return "nz" in {field.name for field in dataclasses.fields(StructuredGrid)}


def state_3d(n, rng):
    """Conserved variables (5, n, n, n) [i, j, k], fp32: density, pressure and velocity of a
    random state near rest, so that the Riemann branches vary from cell to cell."""
    shape = (n, n, n)
    rho = 1 + 0.1 * rng.random(shape, np.float32)
    p = 1 + 0.1 * rng.random(shape, np.float32)
    velocity = [0.2 * (rng.random(shape, np.float32) - 0.5) for _ in range(3)]
    energy = p / (GAMMA_3D - 1) + 0.5 * rho * sum(v * v for v in velocity)
    return np.stack([rho, *(rho * v for v in velocity), energy])


def step_3d(dev, u, name, opts):
    """The step of integrator `name` in a graph on the periodic grid of state u (5, n, n, n),
    with the memory it takes: (row, None), or (None, why there is none)."""
    n = u.shape[1]
    dev.free()
    before = dev.used_bytes()
    grid = StructuredGrid(nx=n, x=(0.0, 1.0), ny=n, y=(0.0, 1.0), nz=n, z=(0.0, 1.0))
    periodic = {f"{axis}_{end}": "periodic" for axis in "xyz" for end in ("lo", "hi")}
    cfl = opts.cfl.get(name)
    try:
        solver = EulerSolver(grid, periodic, gamma=GAMMA_3D, time_integrator=name,
                             backend=dev.backend, precision="fp32",
                             **({} if cfl is None else {"cfl": cfl}))
    except ValueError as error:  # an integrator the solver has only in 1D and 2D
        return None, f"skipped: {error}"
    solver.set_conserved(u)
    solver.clock.set(t_stop=math.inf)
    stepper = Stepper(dev.backend, solver.step, opts.steps_per_graph)
    stepper.advance()
    dev.backend.synchronize()
    measured = None if before is None else (dev.used_bytes() - before) / n**3
    seconds = graph_step_seconds(dev, stepper, n**3, opts.work, opts.repeats)
    if solver.clock.read().diverged:
        return None, "diverged"
    return {**step_row(n, 3, name, seconds, opts.copy_gbs), "cfl": solver.scheme["cfl"],
            "bytes_per_cell": solver.bytes_per_cell, "bytes_per_cell_measured": measured}, None


def size_3d(dev, n, opts, out):
    """The step of each integrator on an n^3 grid, appended to out['steps'] (a divergence to
    out['errors'], an integrator the 3D solver lacks to out['notes'])."""
    u = state_3d(n, np.random.default_rng(3))
    for name in TIME_INTEGRATORS:
        row, why = step_3d(dev, u, name, opts)
        if row is not None:
            out["steps"].append(row)
        else:
            out["errors" if why == "diverged" else "notes"].append(f"3D {n}^3 {name}: {why}")


def run(dev, opts):
    """The whole part, as the report's 'tts' entry. opts: backend, t_end, cfl ({integrator:
    cfl}, the case's for the others), sizes, step_sizes, sizes_3d, work (cell updates a step
    timing replays), repeats, steps_per_graph (3D), copy_gbs (the measured ceiling)."""
    jax, jax_note = jax_status(dev)
    out = {"case": KH_CASE.name, "t_end": opts.t_end, "precision": "fp32",
           "jax_device": str(jax.devices()[0]) if jax else None,
           "jax_version": jax.__version__ if jax else None,
           "notes": [jax_note] if jax_note else [], "runs": [], "steps": [], "errors": []}
    for n in opts.sizes:
        tts_size(dev, n, opts, out)
    for n in opts.step_sizes:
        step_size(dev, n, opts, out)
    if not has_3d():
        out["notes"].append("3D: StructuredGrid takes no nz here; the 3D rows are skipped")
    for n in opts.sizes_3d if has_3d() else ():
        # An interface the 3D work has not finished (TypeError, ValueError) or a device error
        # ends this size, not the report.
        try:
            size_3d(dev, n, opts, out)
        except (TypeError, ValueError, RuntimeError, MemoryError) as error:
            out["errors"].append(f"3D {n}^3: {type(error).__name__}: {error}")
    dev.free()
    out["targets"] = targets(out)
    return out


def verdict(ok):
    return "PASS" if ok else "MISS"


def floor_figure(row):
    return (f"{row['frac_floor']:.1%} ({1e3 * row['s_per_step']:.4f} ms, floor "
            f"{1e3 * row['floor_s_per_step']:.4f} ms)")


def targets(out):
    """The issue's targets as lines: PASS or MISS with the figure and the target, or n/a."""
    lines = []
    for n, target in SPEEDUP_TARGETS.items():
        ours = [r for r in out["runs"] if r["n"] == n and r["impl"] == "ours"]
        base = [r for r in out["runs"] if r["n"] == n and r["scheme"] == "jax baseline"]
        if not ours or not base:
            why = "not run" if not ours else "; ".join(out["notes"]) or "no JAX baseline"
            lines.append(f"KH {n}^2 fastest ours vs JAX baseline (>= {target:g}x): n/a ({why})")
            continue
        best = min(ours, key=lambda r: r["wall_s"])
        x = base[0]["wall_s"] / best["wall_s"]
        lines.append(f"KH {n}^2 fastest ours ({best['scheme']} {best['wall_s']:.3f} s) vs JAX "
                     f"baseline {base[0]['wall_s']:.3f} s: {x:.2f}x (>= {target:g}x) "
                     f"{verdict(x >= target)}")
    steps = {(r["n"], r["ndim"], r["scheme"]): r for r in out["steps"]}
    for n, target in HANCOCK_STEP_TARGETS_US.items():
        row = steps.get((n, 2, HANCOCK))
        figure = ("n/a (no hancock in TIME_INTEGRATORS)" if HANCOCK not in TIME_INTEGRATORS
                  else "n/a (not run)" if row is None
                  else f"{1e6 * row['s_per_step']:.2f} us "
                  + verdict(1e6 * row["s_per_step"] <= target))
        lines.append(f"{n}^2 hancock step in a graph (<= {target:g} us): {figure}")
    for (n, name), target in FLOOR_TARGETS.items():
        row = steps.get((n, 2, name))
        figure = ("n/a (not run)" if row is None
                  else f"{floor_figure(row)} {verdict(row['frac_floor'] >= target)}")
        lines.append(f"{n}^2 {name} step, fraction of its floor (>= {target:.0%}): {figure}")
    rows_3d = [r for r in out["steps"] if r["ndim"] == 3 and r["n"] == SIZE_3D_TARGET]
    if not rows_3d:
        lines.append(f"3D {SIZE_3D_TARGET}^3 >= {FLOOR_TARGET_3D:.0%} of the floor, <= "
                     f"{MEMORY_TARGET_3D} B/cell: n/a (not run)")
    for row in rows_3d:
        memory = row["bytes_per_cell_measured"] or row["bytes_per_cell"]
        lines.append(f"3D {SIZE_3D_TARGET}^3 {row['scheme']}, fraction of the floor (>= "
                     f"{FLOOR_TARGET_3D:.0%}): {floor_figure(row)} "
                     f"{verdict(row['frac_floor'] >= FLOOR_TARGET_3D)}; {memory:.1f} B/cell "
                     f"(<= {MEMORY_TARGET_3D}) {verdict(memory <= MEMORY_TARGET_3D)}")
    return lines


def table(out):
    """The compact summary of this part."""
    lines = [f"Time to solution: {out['case']} fp32 to t = {out['t_end']:g}; wall s: every "
             "replay to the end time, synchronised (JAX: the jitted run, its compile apart)",
             f"{'size':>7} {'impl':4} {'scheme':12} {'cfl':>4} {'steps':>6} {'wall s':>8} "
             f"{'ms/step':>8} {'xJAXbase':>8} {'xJAXmat':>8} {'L1 rho':>8} {'drift':>8} "
             f"{'setup/compile s':>15}"]
    for r in out["runs"]:
        speedup = [f"{r['speedup'][k]:.2f}x" if k in r["speedup"] else "-"
                   for k in ("jax baseline", "jax matched")]
        l1 = r["l1_rho_vs"].get(REFERENCE)
        l1 = "-" if l1 is None else f"{l1:.1e}"
        lines.append(f"{r['n']:>5}^2 {r['impl']:4} {r['scheme']:12} {r['cfl']:4.2f} "
                     f"{r['steps']:6d} {r['wall_s']:8.3f} {r['ms_per_step']:8.4f} "
                     f"{speedup[0]:>8} {speedup[1]:>8} {l1:>8} {r['mass_energy_drift']:8.1e} "
                     f"{r.get('setup_s', r.get('compile_s')):15.2f}")
    methods = {r["scheme"]: r["method"] for r in out["runs"]}
    lines += [f"  {scheme}: {method}" for scheme, method in methods.items()]
    lines.append(f"  L1 rho: mean |rho - rho({REFERENCE})| at the end; drift: the largest "
                 "change of a conserved total over the largest total; setup: our first advance "
                 "(kernel compiles, graph capture)")
    lines.append(f"{'size':>9} {'scheme':12} {'graph us/step':>13} {'Gcell/s':>8} "
                 f"{'%floor':>7}   (the step alone; floor: each conserved variable read and "
                 "written once a stage, hancock once a step, at the copy bandwidth)")
    for r in out["steps"]:
        size = f"{r['n']}^{r['ndim']}"
        lines.append(f"{size:>9} {r['scheme']:12} {1e6 * r['s_per_step']:13.2f} "
                     f"{r['cell_updates_per_s'] / 1e9:8.3f} {r['frac_floor']:7.1%}")
    lines += [f"note: {note}" for note in out["notes"]]
    lines += [f"ERROR: {error}" for error in out["errors"]]
    lines += [f"target: {line}" for line in out["targets"]]
    return "\n".join(lines)
