"""``cubescale run``: measure a Python program (one process, or every rank under mpirun)
and write one ``.cubex``.

Example
-------
>>> import os, tempfile
>>> from cubescale.cli import main
>>> d = tempfile.mkdtemp()
>>> app = os.path.join(d, "app.py")
>>> with open(app, "w") as f:
...     _ = f.write("def work(n):\\n    return sum(range(n))\\nfor i in range(3):\\n    work(1000)\\n")
>>> main(["run", "-o", os.path.join(d, "app.cubex"), "--quiet", app])
0
"""

from __future__ import annotations

import argparse
import builtins
import os
import socket
import sys
import types

from .. import measure
from .._core import measure as _core_measure
from ..measure.depth import depth_warning
from ._program_exit import exit_status
from ._run_options import check_run_options
from ._shared import progress


def add_parser(subparsers) -> None:
    """Register the ``run`` subcommand."""
    p = subparsers.add_parser(
        "run", help="measure a Python program (every function call, threads, mpi4py calls) into one .cubex",
        description="Runs APP with its arguments as __main__ and records its call paths per thread: every "
                    "Python function call through the C-level profiling hook (or only cubescale.region's with "
                    "--manual), mpi4py calls as MPI regions with their bytes. Under mpirun every rank measures "
                    "itself and rank 0 writes one report (unification and collation over MPI). If APP raises or "
                    "exits, the report of what ran is written first, then it ends as `python APP` would (its "
                    "traceback from its own first frame, sys.exit's message and status). A child the program "
                    "forks writes nothing.",
        epilog="examples:\n  cubescale run app.py --size 100\n"
               "  mpirun -n 4 python -m cubescale run -o run.cubex --threads key app.py\n"
               "  cubescale run --filter scorep.filt --depth 20 app.py",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", default="cubescale.cubex", help="report to write (default cubescale.cubex)")
    p.add_argument("--threads", choices=("sum", "set", "key", "calltree", "value"),
                   help="aggregate each process's threads before collation")
    p.add_argument("--filter", help="Score-P filter file (SCOREP_REGION_NAMES_BEGIN / EXCLUDE / INCLUDE), or such text "
                                         "(with a line break or SCOREP_..._BEGIN)")
    p.add_argument("--manual", action="store_true", help="record only cubescale.region's and MPI calls")
    p.add_argument("--c-calls", action="store_true", help="record calls of builtins (C functions) too")
    p.add_argument("--depth", type=int, default=128,
                   help="deepest call path recorded, at least 1 (default 128); deeper calls go into one COLLAPSE "
                        "below the call path at the limit, as in Score-P's profile")
    p.add_argument("--trace", action="store_true", help="also write an OTF2 trace of the run (see --trace-dir)")
    p.add_argument("--trace-dir", metavar="DIR",
                   help="the trace's folder (default: the report's name with -trace; must not exist); "
                                         "implies --trace")
    p.add_argument("--trace-buffer", type=int, default=1 << 20, metavar="BYTES",
                   help="event buffer per thread, flushed to the trace when full (default 1 MiB, at least 262144: 256 KiB)")
    p.add_argument("--quiet", action="store_true", help="no progress or summary line")
    p.add_argument("app", help="Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    p.set_defaults(run=run_app, prepare=prepare_run, every_rank=True)


def _program(path: str) -> tuple[types.CodeType, types.ModuleType]:
    """The program's code and a fresh ``__main__`` module, as ``python app.py`` has them."""
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    return code, main


def prepare_run(args) -> None:
    """The options, before the program runs (:func:`._run_options.check_run_options`)."""
    check_run_options(args)


def run_app(args) -> int:
    from ..measure.mpi import finalize_mpi, start_mpi, trace_mpi_on_import, untrace_mpi
    from ..measure.trace import Later
    from ..parallel._mpi import environment_rank, launched_by_mpirun

    under_mpirun = launched_by_mpirun()
    path = os.path.abspath(args.app)
    code, module = _program(path)  # compiled before measuring: not the program's time
    program = measure.region(os.path.basename(args.app), file=path, line=1)
    saved = sys.argv, sys.modules["__main__"], list(sys.path)
    sys.argv, sys.path[0:0] = [args.app, *args.args], [os.path.dirname(path)]
    sys.modules["__main__"] = module  # pickles of the program's classes name __main__
    own: list = []
    trace = (args.trace_dir or os.path.splitext(args.output)[0] + "-trace") if args.trace else None

    def connect() -> None:
        # Once the program has initialized MPI (as Score-P in its MPI_Init), under mpirun: the
        # report travels over a communicator of its own, so if some ranks raise while others
        # still wait in the program's MPI calls, the report's messages never match the
        # program's (the job then waits instead of mixing them).
        from ..measure.mpi import world

        own.append(world().Dup())
        if trace is not None:
            from ..measure.trace import join_trace

            join_trace(own[0])

    _core_measure.ignore_code(connect.__code__)  # the measurement's own start is no region
    # MPI is the program's: traced when it initializes MPI itself (its import of mpi4py, or
    # its MPI.Init with rc.initialize = False), with its own rc settings (thread level).
    trace_mpi_on_import(connect if under_mpirun else None)
    measurer = os.getpid()  # a child the program forks runs on below, with a copy of the measurement
    measure.start(auto=not args.manual, c_calls=args.c_calls, filter=args.filter, depth_limit=args.depth,
                  trace=trace, trace_buffer=args.trace_buffer,
                  comm=Later(environment_rank()) if under_mpirun else None)
    try:
        outcome = _execute(code, module, program)
    finally:
        measure.stop()
        if under_mpirun and not own and os.getpid() == measurer:  # the program never started MPI
            start_mpi()  # (the report needs it)
        untrace_mpi()
        sys.argv, sys.modules["__main__"], sys.path[:] = saved
    try:
        if os.getpid() == measurer:  # a forked child's copy would overwrite the parent's files
            try:
                _write(args, program, trace, own[0] if own else None)
            finally:
                finalize_mpi()  # where the program's MPI.Finalize waited for the report
    finally:  # the program's ending is told even when the report could not be written
        status = exit_status(outcome, code)
    return status


def _execute(code: types.CodeType, module: types.ModuleType, program: measure.region) -> BaseException | None:
    """Runs the program right below its region (exec is no region); how it ended, handled after
    the measurement stopped (any call here would be measured)."""
    try:
        with program:
            exec(code, module.__dict__)
    except BaseException as e:  # noqa: BLE001 - the program's own ending: exit_status tells it
        return e
    return None


def _write(args, program: measure.region, trace: str | None, own) -> None:
    """The report, then the trace: a report that cannot be written still leaves the trace."""
    from ..measure.mpi import world
    from ..parallel._mpi import mpi_up
    from ..parallel.serial import SerialComm

    # Without mpirun the report is written by this process alone, through MPI only if the
    # program initialized it, else through a communicator that needs no MPI at all.
    comm = own if own is not None else world() if mpi_up() else SerialComm()
    process = f"MPI Rank {comm.rank}" if not isinstance(comm, SerialComm) else "Process 0"
    warning = depth_warning(args.depth)
    if warning is not None:
        print(warning if comm.size == 1 else f"{warning} ({process})", file=sys.stderr, flush=True)
    failed = None
    try:
        _write_report(args, comm, measure.profile(host=socket.gethostname(), process=process, program=program))
    except Exception as e:  # noqa: BLE001 - raised again once the trace is written
        failed = e
    if trace is not None:  # collective over the same ranks as the report
        measure.write_trace(comm, host=socket.gethostname(), process=process)
    if own is not None:
        own.Free()
    if failed is not None:
        raise failed


def _write_report(args, comm, profile) -> None:
    from ..parallel import write_report

    writing = None
    if comm.rank == 0 and not args.quiet and sys.stderr.isatty():
        def writing(done: int, total: int) -> None:
            progress(f"cubescale: writing {args.output}: metric {done}/{total}")
    write_report(comm, profile, args.output, progress=writing, threads=args.threads, thread_names=True)
    if comm.rank == 0 and not args.quiet:
        progress("")
        print(f"cubescale: wrote {args.output} ({comm.size} process{'es' if comm.size > 1 else ''})",
              file=sys.stderr, flush=True)


_core_measure.ignore_builtin(exec)  # between the program's region and its <module> with --c-calls
_core_measure.ignore_code(_execute.__code__)  # called while measuring: the program's region is the root
