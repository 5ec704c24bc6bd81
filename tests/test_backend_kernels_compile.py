"""Every kernel source compiles with NVRTC for the RTX 4090 (sm_89) and the H100 (sm_90), in
fp32 and fp64, without errors or warnings, and fp32 builds contain no FP64 arithmetic outside
kernels marked REDUCTION and device functions marked REDUCTION_DEVICE (or called from REDUCTION
kernels only). Only the NVRTC library is needed (no GPU, no CUDA toolkit); in CI
SOLVERS_REQUIRE_NVRTC=1 turns a missing NVRTC into a failure instead of a skip. The host
compiler must accept the same sources with -Wall -Wextra silently."""

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import solvers
from solvers.backend.cuda import NVRTC_FLAGS
from solvers.backend.host import CXX_FLAGS, compiler, launcher_source
from solvers.backend.source import define_flags, kernel_dir, load_source, parse_signatures

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
SCRIPT_KERNELS = SCRIPTS / "kernels"  # benchmark kernels, outside the package


def declaring_modules():
    """Every module of the solvers package, and every script that defines compiled_kernels
    (the scripts import their neighbours, so scripts/ goes on the path as when they run)."""
    for info in pkgutil.walk_packages(solvers.__path__, "solvers."):
        yield importlib.import_module(info.name)
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    for script in sorted(SCRIPTS.glob("*.py")):
        if "def compiled_kernels(" in script.read_text():
            yield importlib.import_module(script.stem)


def declared(function_name):
    """{source: [what, ...]} from every module's own `function_name()`, which yields
    (source, what) pairs; each distinct `what` once, in declaration order."""
    found = {}
    for module in declaring_modules():
        function = getattr(module, function_name, None)
        if function is None or function.__module__ != module.__name__:
            continue  # not declared here (an import of another module's)
        for source, what in function():
            if what not in found.setdefault(source, []):
                found[source].append(what)
    return found


# Each source in the kernel dialect with every set of defines its drivers compile it with
# (REAL_BITS aside: each is checked in fp32 and fp64), from the drivers' compiled_kernels().
VARIANTS = declared("compiled_kernels")
# CUDA-only sources (not in the dialect; the host backend has no use for them): their kernels,
# from cuda_only_kernels() of the modules that load them.
CUDA_ONLY = {source: set().union(*names) for source, names in
             declared("cuda_only_kernels").items()}
SOURCES = sorted(VARIANTS, key=str)


def source_id(source):
    """A test id: the path from raw_kernels/, or from the repository for an outside source."""
    return source if isinstance(source, str) else source.resolve().relative_to(ROOT).as_posix()
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


# The device functions a source marks REDUCTION_DEVICE (prelude.h): out of line on the GPU.
_REDUCTION_DEVICE = re.compile(r"REDUCTION_DEVICE\s+\w+\s+(\w+)\s*\(")
_FUNC = re.compile(r"^(?:\.\w+\s+)*\.func\s+(?:\([^)]*\)\s*)?(\w+)\s*\(", re.MULTILINE)


def ptx_functions(ptx):
    """{PTX name: (source name, PTX body)} of every .func a PTX text defines (declarations
    without a body left out); the source name with C++ mangling (_Z<length><name>...) undone."""
    found = {}
    for match in _FUNC.finditer(ptx):
        after = ptx[match.end():].split(")", 1)[1].lstrip()  # past the parameter list
        if after.startswith(";"):
            continue
        symbol = name = match.group(1)
        mangled = re.match(r"_Z(\d+)", symbol)
        if mangled:
            name = symbol[mangled.end():mangled.end() + int(mangled.group(1))]
        found[symbol] = (name, after[:after.index("\n}")])
    return found


def fp64_lines(body):
    return [line.strip() for line in body.splitlines()
            if re.search(r"\.f64\b", line) and not line.strip().startswith("//")]


def test_every_kernel_source_is_checked():
    """Every .cu under raw_kernels/ is declared by a driver (by its path from there), every .cu
    under scripts/kernels/ by a script (as a Path), and nothing else is."""
    declared_sources = set(VARIANTS) | set(CUDA_ONLY)
    package = {path.relative_to(kernel_dir()).as_posix() for path in kernel_dir().rglob("*.cu")}
    assert package == {source for source in declared_sources if isinstance(source, str)}
    outside = {path.resolve() for path in SCRIPT_KERNELS.rglob("*.cu")}
    assert outside == {source.resolve() for source in declared_sources
                       if isinstance(source, Path)}
    assert not set(VARIANTS) & set(CUDA_ONLY)
    assert all(VARIANTS.values()) and all(CUDA_ONLY.values())


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("filename", sorted(CUDA_ONLY))
def test_nvrtc_compiles_cuda_only_sources(filename, arch):
    ptx, log = nvrtc_compile(load_source(filename), [f"--gpu-architecture={arch}", "-std=c++17"])
    assert log == "", f"{filename}: NVRTC warnings:\n{log}"
    entries = ptx_entries(ptx)
    assert set(entries) == CUDA_ONLY[filename]
    assert not any(fp64_lines(body) for body in entries.values())


# fp32 for both cards; fp64 once, for sm_90: the fp64 build differs from the fp32 one in the type
# alone, and sm_89 and sm_90 in no feature these sources use (a quarter of the compile time, CI).
BUILDS = [("compute_89", 32), ("compute_90", 32), ("compute_90", 64)]


@pytest.mark.parametrize("arch, bits", BUILDS)
@pytest.mark.parametrize("filename", SOURCES, ids=source_id)
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
            # A function with FP64 is marked REDUCTION_DEVICE, or called from REDUCTION kernels
            # only (a libdevice helper of their double arithmetic).
            reduction_functions = set(_REDUCTION_DEVICE.findall(source))
            for symbol, (name, body) in ptx_functions(ptx).items():
                found = fp64_lines(body)
                callers = [kernel for kernel, code in entries.items() if symbol in code]
                assert (name in reduction_functions or not found or callers and all(
                    signatures[kernel].reduction for kernel in callers)), (
                    f"{filename} {flags}: device function {name} has FP64 arithmetic in fp32:\n"
                    + "\n".join(found[:10]))


def test_shared_memory_count_reads_the_declarations():
    source = ('extern "C" __global__ void f(double* a) { __shared__ double s[7000]; '
              's[threadIdx.x] = a[threadIdx.x]; __syncthreads(); a[threadIdx.x] = s[6999]; }')
    ptx, _ = nvrtc_compile(source, ["--gpu-architecture=compute_90"])
    assert static_shared_bytes(ptx_entries(ptx)["f"]) == 56000 > STATIC_SHARED_LIMIT


def test_fp64_check_reads_out_of_line_functions():
    """A device function kept out of line is a .func of its own, outside every .entry: the check
    reads it by its source name."""
    source = ('__device__ __noinline__ float tenth(float x) { return (float)(x * 0.1); }\n'
              'extern "C" __global__ void f(float* a) { a[threadIdx.x] = tenth(a[0]); }')
    ptx, _ = nvrtc_compile(source, ["--gpu-architecture=compute_90"])
    assert not fp64_lines(ptx_entries(ptx)["f"])
    assert fp64_lines(ptx_functions(ptx)["_Z5tenthf"][1])


def test_fp64_check_catches_double_literals():
    """The PTX scan itself: a bare 0.1 promotes float arithmetic to double."""
    source = ('extern "C" __global__ void f(float* a) '
              '{ a[threadIdx.x] = a[threadIdx.x] * 0.1; }')
    ptx, _ = nvrtc_compile(source, ["--gpu-architecture=compute_90"])
    assert fp64_lines(ptx_entries(ptx)["f"])


@pytest.mark.parametrize("filename", SOURCES, ids=source_id)
def test_host_compiler_accepts_sources_without_warnings(filename):
    source = load_source(filename)
    text = source + launcher_source(parse_signatures(source))
    flags = [f for f in CXX_FLAGS if f not in ("-shared",)]
    # Every variant in fp32, the first in fp64 too (for CI time: REAL is a typedef, the
    # warnings -Wall -Wextra give do not depend on it).
    for index, defines in enumerate(VARIANTS[filename]):
        for bits in (32, 64) if index == 0 else (32,):
            command = [compiler(), *flags, "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                       *define_flags({**defines, "REAL_BITS": bits}), "-"]
            result = subprocess.run(command, input=text, capture_output=True, text=True)
            assert result.returncode == 0, f"{filename} {defines} {bits}:\n{result.stderr}"
