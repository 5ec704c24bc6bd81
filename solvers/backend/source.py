"""Kernel sources in raw_kernels/: loading, include expansion and signature parsing.

A source is named by its path relative to raw_kernels/ ("fv/euler.cu"), or given as a
pathlib.Path for a kernel kept outside the package (a benchmark's, under scripts/). Both
backends compile the same expanded text, so a kernel's source is one string with its local
`#include "x.h"` lines replaced by the headers (each at most once): a header is looked up in the
including file's folder first, then in raw_kernels/core/ (prelude.h, reduce.h, clock.h). The
signatures parsed here let a backend check and convert launch arguments, and let the host
backend generate its OpenMP launchers.
"""

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

import numpy as np

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.MULTILINE)
_KERNEL = re.compile(r"(REDUCTION\s+)?\b(BLOCK_KERNEL|KERNEL)\s+(?:LAUNCH_BOUNDS\([^)]*\)\s+)?"
                     r"void\s+(\w+)\s*\(([^)]*)\)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(-?\d+)\b", re.MULTILINE)
_PARAM = re.compile(r"^(const\s+)?(real|double|float|int)\s*(\*)?\s*(?:__restrict__\s*)?(\w+)$")


CORE = "core"  # the folder of raw_kernels/ searched for a header after the includer's own


def kernel_dir():
    """raw_kernels/ as a directory on disk: the package solvers._kernels, which the build maps
    from the repository's top-level raw_kernels/ (setup.py; installed unzipped, and mapped by
    an editable install too), or raw_kernels/ beside the package in a checkout imported without
    being installed."""
    try:
        return Path(str(resources.files("solvers._kernels")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "raw_kernels"


def source_path(source):
    """The file of a source: raw_kernels/<source> for a str, the path itself for a Path."""
    if isinstance(source, Path):
        return source
    if (not isinstance(source, str) or PurePosixPath(source).is_absolute()
            or ".." in PurePosixPath(source).parts):
        raise ValueError(f"a kernel source is a path relative to raw_kernels/ ('fv/euler.cu') "
                         f"or a pathlib.Path, got {source!r}")
    return kernel_dir() / source


def source_name(source):
    """How messages name a source: raw_kernels/fv/euler.cu, or the path of an outside one."""
    return str(source) if isinstance(source, Path) else f"raw_kernels/{source}"


def load_source(source):
    """The text of a source (see source_path) with its local includes expanded: a header is
    taken from the including file's folder if it is there, else from raw_kernels/core/."""
    seen = set()
    core = kernel_dir() / CORE

    def expand(path, chain):
        key = path.resolve()
        if key in seen:
            return ""
        seen.add(key)
        text = path.read_text().replace("#pragma once", "")

        def include(match):
            name = match.group(1)
            for folder in (path.parent, core):
                if (folder / name).is_file():
                    return expand(folder / name, (*chain, name))
            raise FileNotFoundError(f"{' -> '.join(chain)}: #include \"{name}\" is neither in "
                                    f"{path.parent} nor in {core}")

        return _INCLUDE.sub(include, text)

    path = source_path(source)
    if not path.is_file():
        raise FileNotFoundError(f"{source_name(source)}: no such kernel source")
    return expand(path, (source_name(source),))


@dataclass(frozen=True)
class Param:
    name: str
    base: str  # real, double, float or int
    pointer: bool
    const: bool

    def c_type(self):
        """The C type of this parameter, as written in the generated host launcher."""
        return ("const " if self.const else "") + self.base + ("*" if self.pointer else "")

    def dtype(self, real_dtype):
        return np.dtype({"real": real_dtype, "double": np.float64, "float": np.float32,
                         "int": np.int32}[self.base])


@dataclass(frozen=True)
class Signature:
    name: str
    params: tuple
    block: bool  # BLOCK_KERNEL: runs once per block on host, with PHASE loops inside
    reduction: bool  # may contain FP64 arithmetic in fp32 builds


def parse_signatures(source):
    """Every KERNEL and BLOCK_KERNEL declared in an expanded source, in order."""
    signatures = []
    for match in _KERNEL.finditer(_COMMENT.sub("", source)):
        reduction, kind, name, arglist = match.groups()
        params = []
        for raw in arglist.split(","):
            text = " ".join(raw.split())
            param = _PARAM.match(text)
            if not param:
                raise ValueError(f"kernel {name}: cannot parse parameter '{text}' "
                                 "(allowed: [const] real|double|float|int [*] [__restrict__] name)")
            const, base, star, pname = param.groups()
            params.append(Param(pname, base, bool(star), bool(const)))
        signatures.append(Signature(name, tuple(params), kind == "BLOCK_KERNEL", bool(reduction)))
    return signatures


def integer_defines(source):
    """{name: value} of the `#define NAME <integer>` lines of one source file (not its
    includes): how Python reads a layout that a header defines once, such as core/clock.h."""
    return {name: int(value) for name, value in _DEFINE.findall(source_path(source).read_text())}


def define_flags(defines):
    """-D flags for a {name: value} mapping, in a stable order (it is part of cache keys)."""
    return [f"-D{key}={value}" for key, value in sorted(defines.items())]
