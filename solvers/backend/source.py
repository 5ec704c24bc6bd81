"""Kernel sources in raw_kernels/: loading, include expansion and signature parsing.

Both backends compile the same expanded text, so a kernel's source is one string with its
local `#include "x.h"` lines replaced by the headers (each at most once). The signatures parsed
here let a backend check and convert launch arguments, and let the host backend generate its
OpenMP launchers.
"""

import re
from dataclasses import dataclass
from importlib import resources

import numpy as np

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.MULTILINE)
_KERNEL = re.compile(r"(REDUCTION\s+)?\b(BLOCK_KERNEL|KERNEL)\s+(?:LAUNCH_BOUNDS\([^)]*\)\s+)?"
                     r"void\s+(\w+)\s*\(([^)]*)\)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_PARAM = re.compile(r"^(const\s+)?(real|double|float|int)\s*(\*)?\s*(?:__restrict__\s*)?(\w+)$")


def kernel_dir():
    return resources.files("raw_kernels")


def load_source(filename):
    """The text of raw_kernels/<filename> with its local includes expanded."""
    seen = set()

    def expand(name):
        if name in seen:
            return ""
        seen.add(name)
        path = kernel_dir() / name
        if not path.is_file():
            raise FileNotFoundError(f"raw_kernels/{name}: no such kernel source")
        text = path.read_text()
        text = text.replace("#pragma once", "")
        return _INCLUDE.sub(lambda m: expand(m.group(1)), text)

    return expand(filename)


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


def define_flags(defines):
    """-D flags for a {name: value} mapping, in a stable order (it is part of cache keys)."""
    return [f"-D{key}={value}" for key, value in sorted(defines.items())]
