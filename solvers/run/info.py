"""`solvers info`: what this machine offers the solvers."""

import shutil

from .._metadata import DISTRIBUTION
from ..backend.host import cache_dir, compiler, compiler_version, cpu_name
from .runner import versions


def _cuda_lines():
    from ..backend import BackendError, get_backend

    try:
        from cupy.cuda import nvrtc
        nvrtc_version = ".".join(map(str, nvrtc.getVersion()))
    except Exception as error:  # any failure to load NVRTC means "not available"
        nvrtc_version = f"not available ({type(error).__name__})"
    lines = [f"  NVRTC:        {nvrtc_version}"]
    try:
        facts = get_backend("cuda").describe()
        lines.insert(0, f"  cuda backend: {facts['device']} (compute capability "
                     f"{facts['compute_capability']}, driver {facts['cuda_driver']}, "
                     f"runtime {facts['cuda_runtime']})")
    except BackendError as error:
        lines.insert(0, f"  cuda backend: not available: {error}")
    return lines


def info_lines():
    lines = ["solvers " + versions().get(DISTRIBUTION, "(not installed)")]
    lines.append("  " + ", ".join(f"{k} {v}" for k, v in versions().items()))
    lines += _cuda_lines()
    have_cxx = shutil.which(compiler()) is not None
    lines.append(f"  host backend: {cpu_name()}, compiler "
                 + (compiler_version() if have_cxx else f"'{compiler()}' not found"))
    lines.append(f"  kernel cache: {cache_dir()} (host); CuPy keeps its own for cuda")
    return lines
