"""The report of scripts/bench_euler_unstructured.py: the issue's targets and the table it
prints."""

TARGET_FLOOR, TARGET_SPEEDUP = 0.40, 20.0  # fp32, the largest mesh of each kind


def targets(report):
    """At the largest mesh of each kind, fp32: the floor share and the unfused speedup."""
    out = []
    for dim in (2, 3):
        rows = [r for r in report["rows"] if r["dim"] == dim and r["precision"] == "fp32"]
        if rows:
            r = max(rows, key=lambda r: r["cells"])
            floor, speedup = r["frac_floor"], r.get("speedup", 0.0)
            out += [f"{dim}D {r['cells']} cells: floor {floor:.0%} (>= {TARGET_FLOOR:.0%}) "
                    f"{'PASS' if floor >= TARGET_FLOOR else 'MISS'}, unfused {speedup:.1f}x "
                    f"(>= {TARGET_SPEEDUP:g}x) {'PASS' if speedup >= TARGET_SPEEDUP else 'MISS'}"]
    return out


def table(report):
    """The compact summary printed last."""
    card, scheme, label = report["card"], report["scheme"], report["unfused_xp"]
    lines = [f"Euler unstructured, MUSCL-{scheme['limiter']}/HLLC/{scheme['time_integrator']}, "
             f"walls, on {card.get('device', card)}; copy {report['ceilings']['copy']['gbs']:.0f}"
             " GB/s; B/c-st: the floor's bytes a cell-stage (module docstring)",
             f"{'mesh':>9} {'prec':4} {'cells':>9} {'st':>2} {'ms/step':>9} {'Gcs/s':>7} "
             f"{'B/c-st':>6} {'GB/s':>7} {'%floor':>6} {'unf ms':>9} {'x unf':>6} "
             f"{'host Gcs/s':>10} {'(cells)':>9}"]
    for r in report["rows"]:
        unfused = (f"{1e3 * r['unfused_s_per_step']:9.3f} {r['speedup']:5.1f}x"
                   if "speedup" in r else f"{'-':>9} {'-':>6}")
        host = (f"{r['host_gcell_stages_per_s']:10.4f} {r['host_cells']:>9}"
                if "host_cells" in r else f"{'-':>10} {'-':>9}")
        lines.append(
            f"{'tri' if r['dim'] == 2 else 'tet'} {r['n']:>5} {r['precision']:4} "
            f"{r['cells']:>9} {r['stages']:>2} {1e3 * r['s_per_step']:9.4f} "
            f"{r['gcell_stages_per_s']:7.3f} {r['floor_bytes']['per_cell_stage']:>6} "
            f"{r['gbs']:7.1f} {100 * r['frac_floor']:5.1f}% {unfused} {host}")
    lines.append(f"unfused: {label}{'' if label == 'cupy' else ' (CuPy absent)'}; Gcs/s: "
                 "Gcell-stage updates per second; host: ours on the host backend")
    for g in report["graph_vs_eager"]:
        lines.append(f"graph vs eager, {g['dim']}D {g['cells']} cells fp32: graph "
                     f"{1e3 * g['graph_s']:.4f} ms/step, eager {1e3 * g['eager_s']:.4f} "
                     f"ms/step, {g['graph_over_eager']:.2f}x")
    t = report["tts"]
    if t:
        lines.append(f"time to solution, {t['case']}, {t['cells']} triangles to t = "
                     f"{t['t_end']:g}: ours {t['ours_s']:.3f} s ({t['ours_steps']} steps), "
                     f"unfused {label} {t['unfused_s']:.3f} s ({t['unfused_steps']} steps), "
                     f"{t['speedup']:.1f}x; states differ by {t['rel_diff']:.1e} "
                     f"{'ok' if t['ok'] else 'FAILED'}; L1 rho error {t['l1_rho_error']:.2e}; "
                     f"ours MUSCL-Hancock cfl 0.9 {t['hancock_s']:.3f} s "
                     f"({t['hancock_steps']} steps)")
    lines += [f"ERROR: {e}" for e in report["errors"]]
    lines.append("targets: " + ("; ".join(report["targets"]) or "none at these sizes"))
    return "\n".join(lines)
