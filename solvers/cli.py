"""The `solvers` command: run a case, sweep parameters, show the machine.

Exit status: 0 success, 1 a run stopped early (divergence, step limit), 2 bad input (case file,
option, backend), 130 interrupted. Errors are one line on stderr, never a traceback.
"""

import argparse
import sys

from .backend import NAMES as BACKENDS
from .backend import BackendError
from .cases import CaseError, parse_override
from .solver import RunError


def _overrides(args):
    """CLI options as case overrides {'section.key': value}."""
    overrides = {}
    for text in args.set or []:
        section, key, value = parse_override(text)
        overrides[f"{section}.{key}"] = value
    if args.backend:
        overrides["run.backend"] = args.backend
    if args.precision:
        overrides["run.precision"] = args.precision
    if args.out:
        overrides["output.dir"] = args.out
    if args.no_graph:
        overrides["run.graph"] = False
    return overrides


def _summary_line(run, result):
    files = ", ".join(str(f) for f in result.files) or "nothing (write disabled)"
    solver = run.solver
    device = solver.backend.describe()["device"]
    return (f"{run.name}: {solver.report(result).summary} in {result.wall_seconds:.2f} s on "
            f"{solver.backend.name} ({device}), {solver.precision}\n  wrote {files}")


def command_run(args):
    from .run.progress import progress_for
    from .run.runner import load_case

    run = load_case(args.case, **_overrides(args))
    result = run.run(progress=progress_for(run, quiet=args.quiet))
    if not args.quiet:
        print(_summary_line(run, result))
    return 0


def command_sweep(args):
    from .run.sweep import run_sweep

    base = _overrides(argparse.Namespace(set=None, backend=args.backend, precision=args.precision,
                                         out=args.out, no_graph=args.no_graph))
    return run_sweep(args.case, args.set or [], base, quiet=args.quiet)


def command_info(_args):
    from .run.info import info_lines

    for line in info_lines():
        print(line)
    return 0


def _add_run_options(parser):
    parser.add_argument("case", help="case file (.toml)")
    parser.add_argument("--backend", choices=BACKENDS, help="default: the case's run.backend")
    parser.add_argument("--precision", choices=("fp32", "fp64"))
    parser.add_argument("--out", help="output folder (overrides output.dir)")
    parser.add_argument("--no-graph", action="store_true", help="launch kernels eagerly")
    parser.add_argument("--quiet", action="store_true", help="no progress or summary")


def parser():
    top = argparse.ArgumentParser(prog="solvers", description=__doc__.splitlines()[0])
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a case file")
    _add_run_options(run)
    run.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE",
                     help="override a case value (repeatable)")
    run.set_defaults(handler=command_run)
    sweep = commands.add_parser("sweep", help="run the cartesian product of parameter values")
    _add_run_options(sweep)
    sweep.add_argument("--set", action="append", metavar="SECTION.KEY=A,B,C",
                       help="values to sweep (repeatable); one value fixes a key")
    sweep.set_defaults(handler=command_sweep)
    info = commands.add_parser("info", help="backends, card, versions, compiler, cache")
    info.set_defaults(handler=command_info)
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return args.handler(args)
    except (CaseError, BackendError) as error:
        print(f"solvers: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"solvers: error: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 2
    except RunError as error:
        print(f"solvers: run stopped: {error}{_kept(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as error:
        print(f"\nsolvers: interrupted{_kept(error)}", file=sys.stderr)
        return 130


def _kept(error):
    partial = getattr(error, "partial_output", None)
    return f"; output so far kept in {partial}" if partial else ""


if __name__ == "__main__":
    sys.exit(main())
