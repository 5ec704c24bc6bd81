"""Every benchmark script runs its CPU smoke test (host backend, small sizes) to the end:
exit status 0, and the JSON report written with the timings of what it ran. The GPU numbers
themselves come from runs on the device (README)."""

import importlib
import json
import sys
from pathlib import Path

import pytest

from solvers.fv.euler import TIME_INTEGRATORS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

SMOKE_TESTS = {
    "bench_euler": ["--sizes", "32", "--precisions", "fp32", "--work", "2e4"],
    "bench_linalg": ["--sizes", "small"],
    "bench_fem": ["--dofs", "small"],
    "bench_heat": ["--dofs", "small"],
    "bench_elasticity": ["--dofs", "small"],
    "bench_incompressible": ["--sizes", "16", "--steady-max-steps", "2000"],
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
    if script == "bench_euler":  # its out-of-package kernel, scripts/kernels/euler_floor.cu, ran
        assert report["copy_floor"]["s_per_step"]["graph"] > 0
        # and the time-to-solution part: each integrator to the end time (JAX where installed)
        tts = report["tts"]
        assert {r["scheme"] for r in tts["runs"] if r["impl"] == "ours"} == set(TIME_INTEGRATORS)
        assert all(r["t"] == pytest.approx(0.25, rel=1e-7) for r in tts["runs"])  # JAX: fp32
        assert not tts["errors"]
