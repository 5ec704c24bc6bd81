"""The SpMV part of scripts/bench_linalg.py (its docstring defines the bytes and times): our
CSR, SELL and stencil operators against the baseline's SpMV on the same matrices, checked
against SciPy in float64.
"""

import numpy as np
from linalg_matrices import laplacian_7pt

from solvers.linalg import CsrMatrix, SellMatrix, StencilLaplacian

SPMV_LAUNCHES = 20  # launches per timed repeat, at least
MAX_SETS = 16  # (x, y) pairs an SpMV cycles through, at most
TOLERANCE = {"fp32": 1e-5, "fp64": 1e-12}  # SpMV check: ||y - ref|| / ||ref||


def stencil(dev, n, precision="fp32", coefficient=None):
    return StencilLaplacian((n, n, n), (1.0 / n,) * 3, coefficient=coefficient,
                            backend=dev.backend, precision=precision)


def check_assembly(dev, n=6):
    """laplacian_7pt equals StencilLaplacian.to_scipy (the reference the tests trust)."""
    op = stencil(dev, n)
    ours, theirs = laplacian_7pt(op), op.to_scipy()
    difference = abs(ours - theirs).max() / abs(theirs).max()
    return {"rel_difference": float(difference), "ok": bool(difference < 1e-14
                                                              and ours.nnz == theirs.nnz)}


def spmv_bytes(rows, nnz, itemsize):
    return nnz * (itemsize + 4) + (rows + 1) * 4 + 2 * rows * itemsize


def set_count(dev, rows, itemsize, resident):
    """(x, y) pairs to cycle through: enough that they and `resident` bytes (the matrix)
    span 3x the L2 cache, so that repeats do not run from cache. One on the host."""
    l2 = dev.l2_bytes()
    if not l2:
        return 1
    need = max(0, 3 * l2 - resident)
    return int(min(MAX_SETS, max(1, -(-need // (2 * rows * itemsize)))))


def vector_pairs(dev, n, dtype, count, rng):
    """`count` (x, y) device pairs: x random, y poisoned with NaN."""
    pairs = []
    for _ in range(count):
        x = dev.backend.to_device(rng.uniform(-1, 1, n).astype(dtype))
        y = dev.backend.empty((n,), dtype)
        dev.backend.fill(y, np.nan)
        pairs.append((x, y))
    dev.synchronize()  # fill runs on CuPy's stream, the launches on the backend's
    return pairs


def time_launches(dev, launches, repeats):
    """{'eager', 'graph'}: seconds per launch of `launches` called in turn, >= SPMV_LAUNCHES
    of them per timed repeat, eagerly and replayed from one captured graph."""
    rounds = -(-SPMV_LAUNCHES // len(launches))

    def eager():
        for _ in range(rounds):
            for launch in launches:
                launch()

    count = rounds * len(launches)
    eager()  # warm-up
    graph = dev.backend.capture(eager)
    graph.replay()
    return {"eager": dev.median(eager, repeats) / count,
            "graph": dev.median(graph.replay, repeats) / count}


def check_spmv(dev, op, reference, rng):
    """||y - ref|| / ||ref|| against SciPy in float64 on a fresh random x, and whether y was
    written everywhere (it starts as NaN)."""
    ((x, y),) = vector_pairs(dev, op.n, op.dtype, 1, rng)
    op.bind(x, y)()
    got = dev.backend.to_host(y).astype(np.float64)
    return compare(got, reference @ dev.backend.to_host(x).astype(np.float64))


def compare(got, want):
    error = float(np.linalg.norm(got - want) / np.linalg.norm(want))
    return {"rel_error": error, "written": bool(np.isfinite(got).all())}


def bench_operator(dev, case, op, fmt, reference, nbytes, repeats, rng):
    """One of our operators: check, then eager and graph times over rotating (x, y) pairs."""
    precision = "fp32" if op.dtype == np.float32 else "fp64"
    check = check_spmv(dev, op, reference, rng)
    resident = getattr(op, "nbytes", 0)
    pairs = vector_pairs(dev, op.n, op.dtype, set_count(dev, op.n, op.dtype.itemsize, resident),
                         rng)
    times = time_launches(dev, [op.bind(x, y) for x, y in pairs], repeats)
    return {**case, "format": fmt, "precision": precision, "bytes": nbytes,
            "threads_per_row": getattr(op, "threads_per_row", None),
            "padding_ratio": getattr(op, "padding_ratio", None), "sets": len(pairs),
            "eager_s": times["eager"], "graph_s": times["graph"], **check,
            "ok": check["written"] and check["rel_error"] < TOLERANCE[precision]}


def library_spmv_variants(lib, a, pairs):
    """The baseline's SpMV calls: A @ x (allocates y) and, with cuSPARSE, spmv(A, x, y=y)
    (y preallocated; cupyx still allocates the SpMV workspace from CuPy's pool every call)."""
    variants = {"matmul": lambda: [a @ x for x, _ in pairs]}
    if lib.cusparse is not None and lib.cusparse.check_availability("spmv"):
        spmv = lib.cusparse.spmv
        variants["spmv_y"] = lambda: [spmv(a, x, y=y) for x, y in pairs]
    return variants


def bench_library_spmv(dev, lib, case, a64, precision, repeats, rng):
    """The baseline's SpMV on the same matrix: check, then each call variant, eager only."""
    dtype = np.float32 if precision == "fp32" else np.float64
    a = lib.matrix(a64, dtype)
    x_check = rng.uniform(-1, 1, a64.shape[0]).astype(dtype)
    check = compare(lib.to_host(a @ lib.array(x_check)).astype(np.float64),
                    a64 @ x_check.astype(np.float64))
    itemsize = np.dtype(dtype).itemsize
    resident = a64.nnz * (itemsize + 4)
    count = set_count(dev, a64.shape[0], itemsize, resident)
    pairs = [(lib.array(rng.uniform(-1, 1, a64.shape[0]).astype(dtype)),
              lib.xp.empty(a64.shape[0], dtype)) for _ in range(count)]
    calls = -(-SPMV_LAUNCHES // count)
    variants = {}
    for name, once in library_spmv_variants(lib, a, pairs).items():
        def run(once=once):
            for _ in range(calls):
                once()
        run()  # warm-up: cuSPARSE handle, descriptors, pool blocks
        dev.synchronize()
        variants[name] = dev.median(run, repeats, lib.stream()) / (calls * count)
    best = min(variants, key=variants.get)
    return {**case, "format": "cusparse" if lib.gpu else "scipy", "precision": precision,
            "bytes": spmv_bytes(a64.shape[0], a64.nnz, itemsize), "sets": count,
            "eager_s": variants[best], "graph_s": None, "variant": best, "variants": variants,
            **check, "ok": check["written"] and check["rel_error"] < TOLERANCE[precision]}


def spmv_case(dev, lib, label, a64, ops, repeats, rng):
    """Every format on one matrix: CSR fp32 and fp64, SELL fp32, the given stencil operators
    (format name -> (operator, bytes, reference matrix)), and the baseline."""
    case = {"case": label, "rows": a64.shape[0], "nnz": a64.nnz}
    rows = []
    for precision in ("fp32", "fp64"):
        csr = CsrMatrix.from_scipy(a64, backend=dev.backend, precision=precision)
        nbytes = spmv_bytes(csr.n, csr.nnz, csr.dtype.itemsize)
        rows.append(bench_operator(dev, case, csr, "csr", a64, nbytes, repeats, rng))
        if precision == "fp32":
            sell = SellMatrix.from_csr(csr)
            rows.append(bench_operator(dev, case, sell, "sell", a64, nbytes, repeats, rng))
            del sell
        del csr
        dev.free()
    for fmt, (op, nbytes, reference) in ops.items():
        rows.append(bench_operator(dev, case, op, fmt, reference, nbytes, repeats, rng))
    if lib is not None:
        baselines = [bench_library_spmv(dev, lib, case, a64, p, repeats, rng)
                     for p in ("fp32", "fp64")]
        dev.free()
        compare_to_baseline(rows, baselines)
        rows += baselines
    return rows


def compare_to_baseline(rows, baselines):
    """x_baseline: the baseline's time over ours (same matrix and precision), per mode."""
    by_precision = {b["precision"]: b for b in baselines}
    for row in rows:
        if row["format"] == "stencil-var":  # another matrix (variable k): no like-for-like
            continue
        base = by_precision[row["precision"]]
        row["baseline"] = base["format"]
        row["x_baseline_eager"] = base["eager_s"] / row["eager_s"]
        row["x_baseline_graph"] = base["eager_s"] / row["graph_s"]


def spmv_7pt(dev, lib, n, repeats, rng, variable):
    """The 7-point matrix of size n: CSR, SELL, the stencil, and (when `variable`) the
    variable-coefficient stencil (timed and checked against its own to_scipy)."""
    op = stencil(dev, n)
    a64 = laplacian_7pt(op)
    ops = {"stencil": (op, 2 * op.n * 4, a64)}
    if variable:
        coefficient = np.exp(rng.uniform(-1, 1, (n, n, n)))
        var = stencil(dev, n, coefficient=coefficient)
        ops["stencil-var"] = (var, 3 * var.n * 4, var.to_scipy())
    return spmv_case(dev, lib, f"7pt {n}^3", a64, ops, repeats, rng)


def add_spmv_rates(rows, copy_gbs):
    """GB/s (graph replay, else eager), fraction of the copy bandwidth, GFLOP/s."""
    for row in rows:
        seconds = row["graph_s"] or row["eager_s"]
        row["gbs"] = row["bytes"] / seconds / 1e9
        row["frac_copy"] = row["gbs"] / copy_gbs if copy_gbs else None
        row["gflops"] = 2 * row["nnz"] / seconds / 1e9
