"""The ``cubescale`` command line.

Each subcommand lives in its own module under :mod:`cubescale.commands` and registers
itself with :func:`add_parser`; this file only dispatches, and turns every error a user can
cause (bad input, missing files, too little memory, a missing optional dependency, an error
on another MPI rank) into one line on stderr and exit status 2.

Example
-------
>>> from cubescale.cli import main
>>> main(["systree", "--shape", "node:2 process:4"])  # doctest: +ELLIPSIS
machine ×1 > node ×2 > process ×4
...
0
>>> main(["info", "/nonexistent/profile.cubex"])  # prints: cubescale: error: /nonexistent/...
2
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from . import __version__
from .commands import COMMANDS
from .errors import USER_ERRORS, error_text

# Errors a user causes (cubescale.errors.USER_ERRORS); anything else is a bug of cubescale and
# keeps its traceback. CollectiveError (an error on some MPI rank, raised on every rank) is
# handled apart: a command that never used MPI cannot raise it.


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, from one rank under mpirun."""

    def error(self, message: str):  # type: ignore[override]
        from .parallel._mpi import environment_rank

        if environment_rank() != 0:
            self.exit(2)
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand (for ``--help`` and tests).

    Example
    -------
    >>> "trace-profile" in build_parser().format_help()
    True
    """
    parser = _Parser(
        prog="cubescale",
        description="Small, fast, explorable performance data of very large parallel runs.",
    )
    parser.add_argument("--version", action="version", version=f"cubescale {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 success, 2 bad input).

    Example
    -------
    >>> main([])  # doctest: +ELLIPSIS
    usage: cubescale [-h] [--version] COMMAND ...
    ...
    0
    """
    _whole_lines_on_stderr()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # `cubescale` alone: what it can do
        parser.print_help()
        return 0
    if not getattr(args, "every_rank", False) and not _this_rank_runs(args.command):
        return 0
    try:
        # Checks of the arguments alone (kinds of input, outputs that are inputs): every rank
        # under mpirun finds the same, before any rank waits for another.
        prepare = getattr(args, "prepare", None)
        if prepare is not None:
            prepare(args)
    except USER_ERRORS as e:
        return _fail(e, everywhere=True)
    try:
        status = args.run(args) or 0
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader went away (`cubescale dump ... | head`): stop quietly, as Unix tools do,
        # and keep Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for such a tool
    except KeyboardInterrupt:
        return 130  # 128 + SIGINT; the user knows why
    except Exception as e:  # noqa: BLE001 - sorted below: user errors in one line, bugs re-raised
        return _handle(e, args)


def _this_rank_runs(command: str) -> bool:
    """Whether this process runs a command that runs in one process (``info``, ``stat``,
    ``view`` ...). Started by ``mpirun -n N``, rank 0 runs it and says so on stderr, and the
    other ranks end at once, so that its output is printed once and its files are written
    once. The commands that share their work between ranks set ``every_rank``."""
    rank, size, _ = _world()
    if size <= 1:  # no mpirun, or a launcher that does not say how many ranks: every process runs it
        return True
    if rank == 0:
        print(f"cubescale {command}: runs in one process; ranks 1-{size - 1} of mpirun do nothing",
              file=sys.stderr, flush=True)
    return rank == 0


def _handle(error: BaseException, args) -> int:
    collective = sys.modules.get("cubescale.parallel.collective")
    if collective is not None and isinstance(error, collective.CollectiveError):
        return _fail(error, everywhere=True)
    if not isinstance(error, USER_ERRORS):
        raise error
    return _fail(error, everywhere=False)


def one_line(error: BaseException) -> str:
    """What went wrong, in one line without the exception's machinery.

    Example
    -------
    >>> one_line(FileNotFoundError(2, "No such file or directory", "x.cubex"))
    'x.cubex: No such file or directory'
    >>> one_line(KeyError("no metric 'tme'")), one_line(MemoryError())
    ("no metric 'tme'", 'out of memory')
    """
    if isinstance(error, MemoryError):
        text = f"out of memory{': ' + str(error) if str(error) else ''}"
    else:
        text = error_text(error) or type(error).__name__
    if type(error).__name__ == "CollectiveError":  # "rank 3: FormatError: ...": the rank says enough
        text = re.sub(r"^(rank \d+: )[A-Za-z_]\w*(Error|Exception): ", r"\1", text)
    return " / ".join(line.strip() for line in text.splitlines() if line.strip())


def _fail(error: BaseException, everywhere: bool) -> int:
    """One line on stderr, exit status 2. Under mpirun an error every rank has (the same
    arguments, or a :class:`CollectiveError`) is printed by rank 0 alone; an error only this
    rank has is printed with its rank, and the job is aborted, since other ranks may be
    waiting for this one (``mpirun -q`` keeps Open MPI's own notice of that away)."""
    rank, size, communicating = _world()
    text = one_line(error)
    if size <= 1:  # a collective error of one process: no rank to tell apart
        text = re.sub(r"^rank 0: ", "", text)
    if size > 1 and communicating and not everywhere:
        print(f"cubescale: error: rank {rank}: {text}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        sys.modules["mpi4py.MPI"].COMM_WORLD.Abort(2)
        return 2
    if rank == 0:
        print(f"cubescale: error: {text}", file=sys.stderr, flush=True)
    return 2


def _whole_lines_on_stderr() -> None:
    """Python writes a redirected stderr through unbuffered: ``print`` makes two writes, the text
    and its newline, and under mpirun, which forwards each rank's writes as they come, one
    rank's line then lands inside another's. Line buffering makes a line one write."""
    reconfigure = getattr(sys.stderr, "reconfigure", None)  # (a replaced stderr may have none)
    if reconfigure is not None and not sys.stderr.line_buffering:
        try:
            reconfigure(line_buffering=True, write_through=False)
        except (ValueError, OSError):  # a closed or detached stream: leave it
            pass


def _world() -> tuple[int, int, bool]:
    """(rank, size, whether the ranks communicate): from MPI if this process started it; else
    each process ran on its own, and the environment tells the rank."""
    from .parallel._mpi import environment_rank, mpi_up

    if mpi_up():
        world = sys.modules["mpi4py.MPI"].COMM_WORLD
        return world.rank, world.size, True

    size = os.environ.get("OMPI_COMM_WORLD_SIZE") or os.environ.get("PMI_SIZE") or "1"
    return environment_rank(), int(size) if size.isdigit() else 1, False


if __name__ == "__main__":
    sys.exit(main())
