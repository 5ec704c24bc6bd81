"""The two kernels of an unstructured Euler stage (raw_kernels/fv/euler_unstructured.cu) keep
their work in registers: compiled by NVRTC for the H100/H200 (sm_90) in fp32 at their launch
bounds (4 blocks of RATE_THREADS a multiprocessor, 64 registers a thread), ptxas reports no
stack frame and no spills for euler_gradients and euler_stage, in 2D and 3D with every Riemann
solver and slot count (local memory in these latency-bound gathers: docs/euler_unstructured.md,
the register budget). Compile-time figures: only the NVRTC library is needed, no GPU; as in
test_backend_kernels_compile.py, SOLVERS_REQUIRE_NVRTC=1 turns a missing NVRTC into a failure."""

import sys
from pathlib import Path

import pytest
from test_backend_kernels_compile import nvrtc

from solvers.fv.euler_unstructured import SOURCE, compiled_kernels

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))
from kernel_resources import kernel_resources  # noqa: E402

KERNELS = ("euler_gradients", "euler_stage")
VARIANTS = [defines for source, defines in compiled_kernels() if source == SOURCE]


@pytest.mark.parametrize("defines", VARIANTS,
                         ids=[f"dim{d['DIM']}-riemann{d['RIEMANN']}-faces{d['FACES']}"
                              for d in VARIANTS])
def test_stage_kernels_use_no_local_memory(defines):
    found = kernel_resources(nvrtc(), SOURCE, defines, arch="sm_90", real_bits=32)
    local = {kernel: found[kernel] for kernel in KERNELS
             if any(found[kernel][field] for field in ("stack", "spill_stores", "spill_loads"))}
    assert not local, local
