"""The printed side of scripts/bench_linalg.py: the issue's expectations judged on a report,
the compact tables, and whether every check passed."""

TARGET_SPMV, TARGET_CG = 1.0, 4.0  # the issues' expectations: vs cuSPARSE, vs cupyx cg
TARGET_MG_MS = {128: 1.2, 256: 8.0}  # MG-PCG to 1e-6 on n^3 (issue 20)
# The floor of a CG iteration: its five vectors (x r z p q) each read and written once, at the
# copy bandwidth; a stencil CG iteration should come within TARGET_FLOOR of it (issue 20).
FLOOR_VECTORS, TARGET_FLOOR = 10, 1.5


def verdict(ok):
    return "PASS" if ok else "MISS"


def spmv_expectations(report):
    """Per matrix and precision: ours (graph replay) against cuSPARSE, every format."""
    out, groups = [], {}
    for row in report["spmv"]:
        if row.get("baseline") == "cusparse":
            groups.setdefault((row["case"], row["precision"]), []).append(row)
    for (case, precision), rows in groups.items():
        worst = min(r["x_baseline_graph"] for r in rows)
        ratios = " ".join(f"{r['format']} {r['x_baseline_graph']:.2f}x "
                          f"({r['x_baseline_eager']:.2f}x eager)" for r in rows)
        stress = " (a stress matrix beyond the issue's)" if case.startswith("irregular") else ""
        out.append(f"SpMV {case}{stress} {precision} vs cuSPARSE (>= {TARGET_SPMV:g}x, graph): "
                   f"{ratios} {verdict(worst >= TARGET_SPMV)}")
    return out or ["SpMV vs cuSPARSE: not measured"]


def cg_expectation(report):
    """The fused CG iteration on the 7-point problem (matrix-free, what this library offers for
    it) against cupyx's cg on its CSR matrix; ours on CSR is shown beside it: its SpMV alone
    moves the matrix, more than half of the iteration's bytes, and bounds it."""
    rows = {r["impl"]: r for r in report["cg_iteration"]}
    if "ours stencil" not in rows or "cupyx csr" not in rows:
        return "CG iteration vs cupyx cg: not measured"
    stencil, n = rows["ours stencil"], rows["ours stencil"]["n"]
    csr_x = rows.get("ours csr", {}).get("x_baseline", float("nan"))
    floor = stencil.get("x_floor")
    floor_line = ("" if floor is None else
                  f"; stencil CG iteration <= {TARGET_FLOOR:g}x its floor ({FLOOR_VECTORS} "
                  f"vectors at the copy bandwidth, {1e6 * stencil['floor_s']:.1f} us): "
                  f"{floor:.2f}x {verdict(floor <= TARGET_FLOOR)}")
    return (f"CG iteration {n}^3 vs cupyx cg (>= {TARGET_CG:g}x): stencil "
            f"{stencil['x_baseline']:.1f}x {verdict(stencil['x_baseline'] >= TARGET_CG)} "
            f"(csr {csr_x:.1f}x){floor_line}")


def mg_expectations(report):
    out = []
    for n, target in TARGET_MG_MS.items():
        rows = [r for r in report["solves"] if r["impl"] == "mg-pcg" and r["n"] == n]
        if not rows:
            out.append(f"mg-pcg {n}^3 to 1e-6: not measured")
            continue
        ms = 1e3 * rows[0]["seconds"]
        ok = ms <= target and rows[0]["status"] == "converged"
        out.append(f"mg-pcg {n}^3 to 1e-6 (<= {target:g} ms): {ms:.2f} ms {verdict(ok)}")
    return out


def expectations(report, cuda):
    if not cuda:
        return ["not judged: the issue's expectations are for the GPU"]
    return spmv_expectations(report) + [cg_expectation(report)] + mg_expectations(report)


def fmt(value, spec, scale=None):
    if value is None:
        return "-"
    return format(value if scale is None else scale * value, spec)


def spmv_table(report):
    lines = [f"{'SpMV':18} {'rows':>9} {'nnz':>10} {'format':11} {'prec':4} {'tpr':>5} "
             f"{'graph ms':>9} {'eager ms':>9} {'GB/s':>7} {'%copy':>6} {'GFLOP/s':>8} "
             f"{'xbase g/e':>11} {'err':>8}"]
    for r in report["spmv"]:
        base = (f"{r['x_baseline_graph']:.2f}/{r['x_baseline_eager']:.2f}"
                if "x_baseline_eager" in r else "")
        lines.append(
            f"{r['case']:18} {r['rows']:9d} {r['nnz']:10d} {r['format']:11} "
            f"{r['precision']:4} {str(r.get('threads_per_row') or '-'):>5} "
            f"{fmt(r['graph_s'], '.4f', 1e3):>9} {fmt(r['eager_s'], '.4f', 1e3):>9} "
            f"{r['gbs']:7.1f} {fmt(r['frac_copy'], '.1%'):>6} {r['gflops']:8.1f} {base:>11} "
            f"{r['rel_error']:8.1e}{'' if r['ok'] else ' FAILED'}")
    return lines


def cg_table(report):
    lines = [f"{'CG iteration (Jacobi, fp32)':28} {'unknowns':>9} {'ms/iter':>9} "
             f"{'ms/iter all':>11} {'GB/s':>7} {'x base':>7} {'x floor':>7}"]
    for r in report["cg_iteration"]:
        lines.append(f"{r['impl']:28} {r['unknowns']:9d} {1e3 * r['s_per_iter']:9.4f} "
                     f"{1e3 * r['s_per_iter_whole']:11.4f} {fmt(r.get('gbs'), '.1f'):>7} "
                     f"{fmt(r.get('x_baseline'), '.1f'):>6}x {fmt(r.get('x_floor'), '.2f'):>6}x")
    return lines


def solve_table(report):
    lines = [f"{'Solve to 1e-6 (7pt Poisson, fp32)':34} {'iters':>6} {'ms':>10} "
             f"{'setup ms':>9} {'residual':>9} status"]
    for r in report["solves"]:
        lines.append(f"{r['n']:>4}^3 {r['impl']:28} {r['iterations']:6d} "
                     f"{1e3 * r['seconds']:10.2f} {fmt(r.get('setup_s'), '.1f', 1e3):>9} "
                     f"{r['residual']:9.1e} {r['status']}")
    for r in report["refinement"]:
        lines.append(f"refinement {r['n']}^3 to {r['rtol']:g} ({r['inner']} inner rtol "
                     f"{r['inner_rtol']:g}): {1e3 * r['seconds']:.2f} ms, "
                     f"{r['outer_iterations']} outer / {r['inner_iterations']} inner "
                     f"iterations, residual {r['residual']:.1e} "
                     f"{'converged' if r['converged'] else 'NOT CONVERGED'}")
    return lines


def table(report):
    """The compact summary printed last."""
    card, copy = report["card"], report["ceilings"]["copy"]
    bandwidth = f"copy {copy['gbs']:.0f} GB/s (measured)" if copy else "copy bandwidth not measured"
    lines = [f"solvers.linalg on {card['device']} ({card['backend']}); {bandwidth}"]
    lines += spmv_table(report) + cg_table(report) + solve_table(report)
    assembly = report["checks"]["assembly_7pt"]
    lines.append(f"check: 7pt CSR assembly vs StencilLaplacian.to_scipy "
                 f"{assembly['rel_difference']:.1e} {'ok' if assembly['ok'] else 'FAILED'}")
    lines += [f"expect: {e}" for e in report["expectations"]]
    lines += [f"skipped: {s}" for s in report["skipped"]]
    lines += [f"ERROR: {e}" for e in report["errors"]]
    return "\n".join(lines)


def all_ok(report):
    return (report["checks"]["assembly_7pt"]["ok"] and not report["errors"]
            and all(r["ok"] for r in report["spmv"]))
