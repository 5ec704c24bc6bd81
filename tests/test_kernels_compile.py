"""Every kernel source compiles with NVRTC for the RTX 4090 (sm_89) and the H100 (sm_90), in
fp32 and fp64, without errors or warnings, and fp32 builds contain no FP64 arithmetic outside
kernels marked REDUCTION. Only the NVRTC library is needed (no GPU, no CUDA toolkit); in CI
SOLVERS_REQUIRE_NVRTC=1 turns a missing NVRTC into a failure instead of a skip. The host
compiler must accept the same sources with -Wall -Wextra silently."""

import os
import re
import subprocess

import pytest

from solvers.backend.cuda import NVRTC_FLAGS
from solvers.backend.host import CXX_FLAGS, compiler, launcher_source
from solvers.backend.source import define_flags, kernel_dir, load_source, parse_signatures
from solvers.fe import assembly as fe_assembly
from solvers.fe import heat as fe_heat
from solvers.fe import system as fe_system
from solvers.fe import time_values as fe_values
from solvers.fv import euler
from solvers.fv.incompressible import solver as incompressible
from solvers.linalg import amg, csr, krylov, multigrid, refinement, stencil

# Each source with every set of defines it is compiled with.
VARIANTS = {
    "amg.cu": list(amg.kernel_variants()),
    "control.cu": [{}],
    "euler.cu": list(euler.kernel_variants()),
    "euler_tile.cu": list(euler.kernel_variants(ndims=(2,))),
    "euler_floor.cu": [euler.kernel_defines(2, "muscl", "mc", "hllc")],
    "fe_assemble.cu": list(fe_assembly.kernel_variants()),
    "fe_heat.cu": list(fe_heat.kernel_variants()),
    "fe_system.cu": list(fe_system.kernel_variants()),
    "fe_values.cu": list(fe_values.kernel_variants()),
    "incompressible.cu": list(incompressible.kernel_variants()),
    "krylov.cu": list(krylov.kernel_variants()),
    "multigrid.cu": list(multigrid.kernel_variants()),
    "refinement.cu": list(refinement.kernel_variants()),
    "spmv.cu": list(csr.kernel_variants()),
    "stencil.cu": list(stencil.kernel_variants()),
}
# CUDA-only sources (not in the dialect; the host backend has no use for them): their kernels.
CUDA_ONLY = {"graph_loop.cu": {"set_loop_condition"}}
ARCHS = ("compute_89", "compute_90")


def nvrtc():
    try:
        from cupy.cuda import nvrtc as module
        module.getVersion()
        return module
    except Exception as error:  # a missing wheel or library shows up as various errors
        if os.environ.get("SOLVERS_REQUIRE_NVRTC") == "1":
            pytest.fail(f"NVRTC required but not loadable: {error}")
        pytest.skip(f"NVRTC not available: {error}")


def nvrtc_compile(source, options):
    """(ptx, log) for one compilation; an NVRTC error fails the test with the log."""
    module = nvrtc()
    program = module.createProgram(source, "kernel.cu", [], [])
    try:
        module.compileProgram(program, options)
    except module.NVRTCError:
        pytest.fail(f"NVRTC error with {options}:\n{module.getProgramLog(program)}")
    log = module.getProgramLog(program)
    log = log.decode() if isinstance(log, bytes) else log
    ptx = module.getPTX(program)
    return (ptx.decode() if isinstance(ptx, bytes) else ptx), log.strip()


def ptx_entries(ptx):
    """{kernel name: PTX body} of every .entry in a PTX text."""
    pieces = re.split(r"\.entry\s+(\w+)\s*\(", ptx)
    return dict(zip(pieces[1::2], pieces[2::2]))


# ptxas refuses a kernel whose static __shared__ arrays exceed 48 KiB; NVRTC's PTX does not.
STATIC_SHARED_LIMIT = 48 * 1024


def static_shared_bytes(body):
    """Bytes of the .shared arrays a PTX entry declares."""
    return sum(int(size) for size in re.findall(r"\.shared\s[^;]*\[(\d+)\];", body))


def fp64_lines(body):
    return [line.strip() for line in body.splitlines()
            if re.search(r"\.f64\b", line) and not line.strip().startswith("//")]


def test_every_kernel_source_is_checked():
    sources = {path.name for path in kernel_dir().iterdir() if path.name.endswith(".cu")}
    assert sources == set(VARIANTS) | set(CUDA_ONLY)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("filename", sorted(CUDA_ONLY))
def test_nvrtc_compiles_cuda_only_sources(filename, arch):
    ptx, log = nvrtc_compile(load_source(filename), [f"--gpu-architecture={arch}", "-std=c++17"])
    assert log == "", f"{filename}: NVRTC warnings:\n{log}"
    entries = ptx_entries(ptx)
    assert set(entries) == CUDA_ONLY[filename]
    assert not any(fp64_lines(body) for body in entries.values())


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("filename", sorted(VARIANTS))
def test_nvrtc_compiles_clean(filename, arch, bits):
    source = load_source(filename)
    signatures = {sig.name: sig for sig in parse_signatures(source)}
    for defines in VARIANTS[filename]:
        flags = define_flags({**defines, "REAL_BITS": bits})
        ptx, log = nvrtc_compile(source, [f"--gpu-architecture={arch}", *NVRTC_FLAGS, *flags])
        assert log == "", f"{filename} {flags}: NVRTC warnings:\n{log}"
        entries = ptx_entries(ptx)
        assert set(entries) == set(signatures), f"{filename}: PTX entries {set(entries)}"
        for name, body in entries.items():
            shared = static_shared_bytes(body)
            assert shared <= STATIC_SHARED_LIMIT, (
                f"{filename} {flags}: kernel {name} declares {shared} bytes of shared memory")
        if bits == 32:
            for name, body in entries.items():
                found = fp64_lines(body)
                assert signatures[name].reduction or not found, (
                    f"{filename} {flags}: kernel {name} has FP64 arithmetic in fp32:\n"
                    + "\n".join(found[:10]))


def test_shared_memory_count_reads_the_declarations():
    source = ('extern "C" __global__ void f(double* a) { __shared__ double s[7000]; '
              's[threadIdx.x] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = s[6999]; }')
    ptx, _ = nvrtc_compile(source, ["--gpu-architecture=compute_90"])
    assert static_shared_bytes(ptx_entries(ptx)["f"]) == 56000 > STATIC_SHARED_LIMIT


def test_fp64_check_catches_double_literals():
    """The PTX scan itself: a bare 0.1 promotes float arithmetic to double."""
    source = ('extern "C" __global__ void f(float* a) '
              '{ a[threadIdx.x] = a[threadIdx.x] * 0.1; }')
    ptx, _ = nvrtc_compile(source, ["--gpu-architecture=compute_90"])
    assert fp64_lines(ptx_entries(ptx)["f"])


@pytest.mark.parametrize("filename", sorted(VARIANTS))
def test_host_compiler_accepts_sources_without_warnings(filename):
    source = load_source(filename)
    text = source + launcher_source(parse_signatures(source))
    flags = [f for f in CXX_FLAGS if f not in ("-shared",)]
    for defines in VARIANTS[filename]:
        for bits in (32, 64):
            command = [compiler(), *flags, "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                       *define_flags({**defines, "REAL_BITS": bits}), "-"]
            result = subprocess.run(command, input=text, capture_output=True, text=True)
            assert result.returncode == 0, f"{filename} {defines} {bits}:\n{result.stderr}"
