"""Registers, stack frame and spills of a kernel source's functions, as ptxas reports them when
NVRTC compiles the source for one architecture on this machine (no GPU needed: compile-time
figures, not a measurement). tests/test_fv_euler_unstructured_resources.py imports it.

    python scripts/kernel_resources.py fv/euler_unstructured.cu DIM=3 RIEMANN=2 RATE_THREADS=256
        [--arch sm_90] [--real-bits 32]
"""

import argparse
import re
from pathlib import Path

from solvers.backend.cuda import NVRTC_FLAGS
from solvers.backend.source import define_flags, load_source

# ptxas -v: a function's name (an entry's, or an out-of-line device function's), then its stack
# and spills, then (an entry's) registers.
_FUNCTION = re.compile(r"(?:Compiling entry function '|Function properties for )(\w+)")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGISTERS = re.compile(r"Used (\d+) registers")
FIELDS = ("registers", "stack", "spill_stores", "spill_loads")


def program_log(nvrtc, program):
    """An NVRTC program's log as text (ptxas -v writes NUL characters into it)."""
    log = nvrtc.getProgramLog(program)
    return (log.decode() if isinstance(log, bytes) else log).replace("\0", "")


def ptxas_log(nvrtc, source, defines, arch="sm_90", real_bits=32):
    """The NVRTC log of `source` (as load_source takes it) compiled with `defines` for `arch` with
    ptxas -v; nvrtc: cupy.cuda.nvrtc (the caller decides what a missing one means)."""
    options = [*NVRTC_FLAGS, *define_flags(dict(defines, REAL_BITS=real_bits)),
               f"-arch={arch}", "-Xptxas=-v"]
    program = nvrtc.createProgram(load_source(source), str(source), [], [])
    try:
        nvrtc.compileProgram(program, options)
    except nvrtc.NVRTCError as error:
        raise RuntimeError(f"NVRTC failed on {source} with {options}:\n"
                           f"{program_log(nvrtc, program)}") from error
    return program_log(nvrtc, program)


def parse_resources(log):
    """{function: {registers, stack, spill_stores, spill_loads}} from a ptxas -v log (registers
    of entries only)."""
    found, current = {}, None
    for line in log.splitlines():
        if match := _FUNCTION.search(line):
            current = found.setdefault(match.group(1), {})
        elif current is not None and (match := _STACK.search(line)):
            current.update(zip(FIELDS[1:], map(int, match.groups())))
        elif current is not None and (match := _REGISTERS.search(line)):
            current["registers"] = int(match.group(1))
    return found


def kernel_resources(nvrtc, source, defines, arch="sm_90", real_bits=32):
    """parse_resources of one compilation (see ptxas_log)."""
    return parse_resources(ptxas_log(nvrtc, source, defines, arch, real_bits))


def define(text):
    """NAME=integer -> (NAME, integer)."""
    name, value = text.split("=", 1)
    return name, int(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a path relative to raw_kernels/, or a kernel file")
    parser.add_argument("defines", nargs="*", type=define, help="NAME=integer")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--real-bits", type=int, default=32, choices=(32, 64))
    args = parser.parse_args()
    from cupy.cuda import nvrtc

    source = Path(args.source) if Path(args.source).is_file() else args.source
    table = kernel_resources(nvrtc, source, dict(args.defines), args.arch, args.real_bits)
    print(f"{'function':<24}" + "".join(f"{field:>14}" for field in FIELDS))
    for name, figures in table.items():
        print(f"{name:<24}" + "".join(f"{figures.get(field, '-'):>14}" for field in FIELDS))


if __name__ == "__main__":
    main()
