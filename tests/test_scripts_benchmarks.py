"""Every benchmark script runs its CPU smoke test (host backend, small sizes) to the end:
exit status 0, and the JSON report written with the timings of what it ran. The GPU numbers
themselves come from runs on the device (README)."""

import importlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from solvers.fv.euler import TIME_INTEGRATORS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

SMOKE_TESTS = {
    "bench_euler": ["--sizes", "32", "--precisions", "fp32", "--work", "2e4"],
    "bench_euler_unstructured": ["--sizes", "16", "--sizes3d", "4", "--repeats", "2"],
    "bench_linalg": ["--sizes", "small"],
    "bench_fem": ["--dofs", "small"],
    "bench_heat": ["--dofs", "small"],
    "bench_elasticity": ["--dofs", "small"],
    "bench_incompressible": ["--sizes", "16", "--steady-max-steps", "2000"],
    "bench_incompressible3d": ["--sizes", "16", "--repeats", "2", "--steps-per-graph", "4"],
    "bench_sweep": ["--variants", "4", "--n", "16", "--jobs", "2"],
    "schafer_turek_convergence": ["--n", "40", "--end", "0.3", "--shift", "2"],
    "schafer_turek_2d2": ["--n", "32", "--end", "0.5"],
    "bench_scaling": ["--ranks", "1,2", "--workloads", "euler3d,poisson3d", "--size3d", "8",
                      "--poisson", "16", "--steps", "10", "--repeats", "1",
                      "--exchange", "host_overlap,host_serial"],
}


@pytest.mark.parametrize("script", sorted(SMOKE_TESTS))
def test_benchmark_smoke_test_runs(script, tmp_path, capsys):
    out = tmp_path / f"{script}.json"
    module = importlib.import_module(script)
    status = module.main(["--backend", "host", *SMOKE_TESTS[script], "--json", str(out)])
    assert status == 0, capsys.readouterr().out[-2000:]
    report = json.loads(out.read_text())
    assert report["wall_seconds"] > 0
    assert f"full results: {out}" in capsys.readouterr().out
    if script == "bench_scaling":  # each workload on 1 and 2 ranks, weak and strong, each way
        assert not report["errors"] and len(report["rows"]) == 2 * 2 * 2 * 2
        assert {(r["exchange"], r["overlapped"]) for r in report["rows"] if r["ranks"] == 2} == {
            ("host_overlap", True), ("host_serial", False)}
    if script == "bench_euler":  # its out-of-package kernel, scripts/kernels/euler_floor.cu, ran
        assert report["copy_floor"]["s_per_step"]["graph"] > 0
        # and the time-to-solution part: each integrator to the end time (JAX where installed)
        tts = report["tts"]
        assert {r["scheme"] for r in tts["runs"] if r["impl"] == "ours"} == set(TIME_INTEGRATORS)
        assert all(r["t"] == pytest.approx(0.25, rel=1e-7) for r in tts["runs"])  # JAX: fp32
        assert not tts["errors"]
    if script == "bench_fem":  # and the end-to-end table: each small case to a 1e-8 residual
        e2e = report["e2e"]
        assert not e2e["errors"]
        impls = {"ours", "ours-pyamg"} if importlib.util.find_spec("pyamg") else {"ours"}
        rows = [r for r in e2e["rows"] if r["impl"] in impls]
        assert {(r["problem"], r["impl"]) for r in rows} == {
            (problem, impl) for problem in ("p1-3d", "p2-2d") for impl in impls}
        for r in rows:
            assert r["true_residual"] <= 1e-8 and r["status"] == "converged"
            parts = r["setup_s"] + r["assembly_s"] + r["amg_setup_s"] + r["solve_s"]
            assert 0 < parts <= r["total_s"] * (1 + 1e-9)
        assert any(line.startswith("p1-3d 1e+06 dofs end to end") for line in e2e["targets"])
