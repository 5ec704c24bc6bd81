"""The `solvers` command: run a case, sweep parameters, show the machine.

Exit status: 0 success, 1 a run stopped early (divergence, step limit, an error writing its
output), 2 bad input (case file, option, backend, output folder), 128 + N ended by signal N
(130 SIGINT, 143 SIGTERM, 129 SIGHUP). Errors are one line on stderr, never a traceback.
"""

import argparse
import contextlib
import sys
import warnings

from .backend import NAMES as BACKENDS
from .backend import BackendError, notices
from .backend.mpi import abort, world
from .cases import CaseError, parse_override
from .io.safe import OutputError
from .run.signals import Interrupted, handled
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
    ranks = ""
    if run.comm is not None:  # a decomposed run: its ranks, process grid and exchange
        block = run.solver.parallel
        ranks = (f", {run.comm.Get_size()} MPI ranks (process grid "
                 f"{' x '.join(map(str, block.dims))}, halos {block.path})")
    return (f"{run.name}: {solver.report(result).summary} in {result.wall_seconds:.2f} s on "
            f"{solver.backend.name} ({device}), {solver.precision}{ranks}\n  wrote {files}")


def command_run(args):
    from .run.progress import progress_for
    from .run.runner import load_case

    run = load_case(args.case, restart=args.restart, comm=args.comm, **_overrides(args))
    result = run.run(progress=progress_for(run, quiet=args.quiet))
    if not args.quiet and run.root:
        print(_summary_line(run, result))
    return 0


def command_sweep(args):
    from .run.sweep import exit_status, parameters_from_sets, sweep

    base = _overrides(argparse.Namespace(set=None, backend=args.backend, precision=args.precision,
                                         out=None, no_graph=args.no_graph))
    parameters = parameters_from_sets(args.set or [])
    executor = None
    if args.dask:
        try:  # the adapter and dask.distributed are optional: imported only when asked for
            from .run.sweep_dask import DaskExecutor
            executor = DaskExecutor(args.dask)
        except ImportError as error:
            print(f"solvers: error: --dask: {_one_line(error)}", file=sys.stderr)
            return 2
    with executor or contextlib.nullcontext():  # a Dask client made here is closed at the end
        records = sweep(args.case, parameters, jobs=args.jobs, out=args.out, rerun=args.rerun,
                        executor=executor, quiet=args.quiet, streams=args.streams,
                        mps=args.mps, **base)
    return exit_status(records, quiet=args.quiet)


def command_cases(args):
    from .cases.shipped import copy_case, shipped_cases

    if args.action == "copy":
        files = copy_case(args.name, args.dir)
        print(f"copied {', '.join(str(f) for f in files)}; run it with: solvers run {files[0]}")
        return 0
    cases = shipped_cases()
    width = max((len(name) for name in cases), default=0)
    for case in cases.values():
        print(f"{case.name:<{width}}  {case.description}")
    return 0


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


def _jobs(text):
    """--jobs: a positive integer."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of runs, got {text!r}")
    return int(text)


class _Parser(argparse.ArgumentParser):
    """A usage error is one line too (exit 2), naming the help to read; subcommands' parsers
    are of this class as well."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)\n")


def parser():
    from ._metadata import version

    top = _Parser(prog="solvers", description=__doc__.splitlines()[0])
    top.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a case file")
    _add_run_options(run)
    run.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE",
                     help="override a case value (repeatable)")
    run.add_argument("--restart", metavar="FILE", help="continue from a checkpoint "
                     "(NAME.checkpoint.h5) or an interrupted run's NAME.partial.h5")
    run.set_defaults(handler=command_run)
    sweep = commands.add_parser("sweep", help="run the cartesian product of parameter values")
    _add_run_options(sweep)
    sweep.add_argument("--set", action="append", metavar="SECTION.KEY=A,B,C",
                       help="values to sweep (repeatable); one value fixes a key")
    sweep.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                       help="runs at once, each in a worker process (default 1)")
    sweep.add_argument("--streams", action="store_true",
                       help="the --jobs runs in threads of one process, each with its own CUDA "
                       "stream (else worker processes)")
    sweep.add_argument("--mps", action="store_true",
                       help="the --jobs worker processes share the GPU through CUDA MPS (the "
                       "active daemon, else a private one for the sweep)")
    sweep.add_argument("--rerun", action="store_true",
                       help="run again the runs an earlier sweep finished (default: skipped)")
    sweep.add_argument("--dask", metavar="ADDRESS", help="run on a Dask cluster "
                       "(scheduler address, e.g. tcp://host:8786; needs dask.distributed)")
    sweep.set_defaults(handler=command_sweep)
    info = commands.add_parser("info", help="backends, card, versions, compiler, cache")
    info.set_defaults(handler=command_info)
    cases = commands.add_parser("cases", help="list the shipped cases; `cases copy NAME DIR` "
                                "copies one (with its mesh files) into DIR")
    cases.set_defaults(handler=command_cases, action=None)
    copy = cases.add_subparsers(dest="action").add_parser(
        "copy", help="copy a shipped case and the mesh files it reads into DIR")
    copy.add_argument("name", help="a name listed by `solvers cases`")
    copy.add_argument("dir", help="target folder (made if missing)")
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    # Started by mpiexec with several ranks: a run is split among them (backend/mpi.py).
    args.comm = world() if args.handler is command_run else None
    if args.comm is None:
        return _main(args)
    try:
        return _main(args)
    except Exception as error:  # noqa: BLE001 - one rank's failure must end them all
        abort(args.comm, f"solvers: error: {_one_line(f'{type(error).__name__}: {error}')}")


def _fail(args, message, status, everywhere=False):
    """Print an error line; returns the exit status. In a decomposed run an error every rank
    meets alike (everywhere: the case, the backend, the shared clock's verdict) is printed by
    rank 0 alone and each rank exits; any other ends all ranks (MPI Abort), as the others may
    be waiting for this one in an exchange."""
    comm = args.comm
    if comm is None or (everywhere and comm.Get_rank() == 0):
        print(message, file=sys.stderr)
    elif not everywhere:
        abort(comm, message, status)
    return status


def _main(args):
    try:
        # SIGTERM and SIGHUP end a run as SIGINT does; --quiet silences the backend notice;
        # NumPy's RuntimeWarnings (overflow in extreme input) give way to the one-line error.
        with handled(), notices(not getattr(args, "quiet", False)), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return args.handler(args)
    except (CaseError, BackendError) as error:
        return _fail(args, f"solvers: error: {_one_line(error)}", 2, everywhere=True)
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        return _fail(args, f"solvers: error: {_one_line(f'{where}{error.strerror or error}')}",
                     2)
    except OutputError as error:
        return _fail(args, f"solvers: {_one_line(error)}{_kept(error)}", 1)
    except RunError as error:
        return _fail(args, f"solvers: run stopped: {error}{_kept(error)}", 1, everywhere=True)
    except KeyboardInterrupt as error:
        # A new line ends a progress bar redrawn on a terminal.
        start = "\n" if sys.stderr.isatty() else ""
        if isinstance(error, Interrupted):
            print(f"{start}solvers: interrupted by {error.signal_name}{_kept(error)}",
                  file=sys.stderr)
            return 128 + error.signum
        print(f"{start}solvers: interrupted{_kept(error)}", file=sys.stderr)
        return 130


def _one_line(text):
    """An error message as one line: line breaks from names in the input shown escaped."""
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


def _kept(error):
    partial = getattr(error, "partial_output", None)
    return f"; output so far kept in {partial}" if partial else ""


if __name__ == "__main__":
    sys.exit(main())
