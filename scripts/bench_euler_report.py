"""The printed side of scripts/bench_euler.py: the compact table of its report and the issue's
targets judged on it."""

import euler_tts


def percent(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def table(report):
    """The compact summary printed last."""
    ceil, card = report["ceilings"], report["card"]
    fp = "  ".join(f"{p} {ceil[p]['gflops']:.0f} GFLOP/s" for p in ("fp32", "fp64") if ceil[p])
    lines = [f"Euler 2D MUSCL-MC/HLLC/SSP-RK3 periodic on {card['device']} ({card['backend']}); "
             f"copy {ceil['copy']['gbs']:.0f} GB/s  {fp}"]
    # The step table, unless only the time-to-solution part ran.
    if report["only"] != "tts":
        lines += step_table(report)
    lines += [f"ERROR: {e}" for e in report["errors"]]
    lines.append("checks (fused vs unfused, 3 steps): " + ", ".join(
        f"{p} {c['rel_error']:.1e} {'ok' if c['ok'] else 'FAILED'}"
        for p, c in report["checks"].items()))
    if "tts" in report:
        lines.append(euler_tts.table(report["tts"]))
    return "\n".join(lines)


def step_table(report):
    """The lines of the step table, its targets last."""
    lines = [f"FLOP/cell-stage: fused as executed (halo included) in column flop; "
             f"{report['flops_per_cell_stage_no_halo']} without the halo; bytes/cell-step 24 words",
             f"{'size':>7} {'prec':4} {'impl':7} {'ms/step':>9} {'Gcell/s':>8} {'GB/s':>7} "
             f"{'%copy':>6} {'GFLOP/s':>8} {'%fp':>6} {'flop':>5} {'xfloor':>7} {'B/cell':>11} "
             f"{'g/e':>6}"]
    for r in report["runs"]:
        mem = r.get("bytes_per_cell_measured")
        mem = "-" if mem is None else f"{mem:.1f}"
        if "bytes_per_cell" in r:
            mem += f" ({r['bytes_per_cell']})"
        speedup = f"{r['graph_over_eager']:.1f}x" if "graph_over_eager" in r else ""
        lines.append(f"{r['n']:>5}^2 {r['precision']:4} {r['impl']:7} "
                     f"{1e3 * r['s_per_step']:9.4f} {r['cell_updates_per_s'] / 1e9:8.3f} "
                     f"{r['gbs']:7.1f} {percent(r['frac_copy_bw']):>6} {r['gflops']:8.1f} "
                     f"{percent(r['frac_fp_peak']):>6} {r['flops_per_cell_stage']:5.0f} "
                     f"{r['x_floor']:7.1f} {mem:>11} "
                     f"{speedup:>6}")
    floor = report.get("copy_floor")
    if floor:
        times = floor["s_per_step"]
        lines.append(f"{floor['n']:>5}^2 {floor['precision']:4} step of copy-only stages (the "
                     f"floor of graph replay): graph {1e3 * times['graph']:.4f} ms, eager "
                     f"{1e3 * times['eager']:.4f} ms, {floor['graph_over_eager']:.1f}x")
    lines += [f"skipped: {s}" for s in report["skipped"]]
    lines.append("targets: " + "; ".join(targets(report)))
    return lines


def targets(report):
    """The issue's targets: fp32 graph at 4096^2 >= 40% of the copy bandwidth by the floor's
    bytes, graph >= 5x eager at 256^2, <= 64 B/cell in fp32."""
    out = []
    for r in report["runs"]:
        if r["impl"] == "graph" and r["n"] == 4096 and r["precision"] == "fp32":
            verdict = "PASS" if r["frac_copy_bw"] >= 0.4 else "MISS"
            out.append(f"4096^2 fp32 graph {percent(r['frac_copy_bw'])} of copy (>= 40%) "
                       f"{verdict}")
        if r["impl"] == "graph" and r["n"] == 256:
            verdict = "PASS" if r["graph_over_eager"] >= 5 else "MISS"
            floor = report.get("copy_floor") or {}
            beside = (f" (copy-only stages {floor['graph_over_eager']:.1f}x)"
                      if (floor.get("n"), floor.get("precision")) == (256, r["precision"]) else "")
            out.append(f"graph/eager at 256^2 {r['precision']} {r['graph_over_eager']:.1f}x "
                       f"(>= 5x) {verdict}{beside}")
    fp32 = [r for r in report["runs"] if r["impl"] == "graph" and r["precision"] == "fp32"]
    if fp32:
        worst = max(r["bytes_per_cell"] if r["bytes_per_cell_measured"] is None
                    else r["bytes_per_cell_measured"] for r in fp32)
        verdict = "PASS" if worst <= 64 else "MISS"
        out.append(f"fp32 memory {worst:.1f} B/cell (<= 64) {verdict}")
    return out or ["none at these sizes"]


def passed(report):
    return (all(c["ok"] for c in report["checks"].values()) and not report["errors"]
            and not report.get("tts", {}).get("errors"))
