"""What the subcommands share: argument types, a progress line, and the communicator a command runs on.

Example
-------
>>> from cubescale.commands._shared import communicator
>>> communicator().size          # not under mpirun: one rank, no MPI initialized
1
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import TextIO


def count(text: str) -> int:
    """An argparse ``type`` for counts and depths: a whole number >= 0, else one usage line
    (``argument -n: takes a whole number >= 0, not -1``) and exit status 2.

    Example
    -------
    >>> count("3")
    3
    >>> count("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: takes a whole number >= 0, not -1
    """
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a whole number >= 0, not {text!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"takes a whole number >= 0, not {n}")
    return n


def positive_count(text: str) -> int:
    """An argparse ``type`` for counts that must be at least 1 (threads, clusters): else one
    usage line and exit status 2.

    Example
    -------
    >>> positive_count("4")
    4
    >>> positive_count("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: a whole number of at least 1, not '0'
    """
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text!r}")
    return n


def finite_at_least_zero(what: str) -> Callable[[str], float]:
    """An argparse ``type`` for a finite number of at least 0, ``what`` naming it in the usage
    line ("seconds: a number", "a relative distance").

    Example
    -------
    >>> finite_at_least_zero("a relative distance")("0.25")
    0.25
    >>> finite_at_least_zero("a relative distance")("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: a relative distance of at least 0, not '-1'
    """
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (math.isfinite(value) and value >= 0):
            raise argparse.ArgumentTypeError(f"{what} of at least 0, not {text!r}")
        return value

    return parse


def progress(text: str, stream: TextIO | None = None, always: bool = False) -> None:
    """A status line on ``stream`` (default stderr) that overwrites itself on a terminal;
    logs get only the final line. ``always``: also when the stream is no terminal (mpirun
    passes its ranks' stderr through a pipe to the terminal it runs on).

    Example
    -------
    >>> progress("reading metric 1/2")   # prints nothing when stderr is not a terminal
    """
    stream = stream or sys.stderr
    if always or stream.isatty():
        print(f"\r\x1b[K{text}", end="", file=stream, flush=True)


def status_line(forced: bool = False, rank: int = 0) -> Callable[[str], None] | None:
    """Where a long command shows how far it got: :func:`progress` on rank 0, on a terminal or
    when ``forced`` (the commands' ``--progress``: mpirun passes its ranks' stderr through a
    pipe, so a status line there needs asking for); None where nothing is shown. Call the
    result with ``""`` at the end, so the line does not stay before the prompt.

    Example
    -------
    >>> status_line(rank=1) is None   # the other ranks of mpirun never show one
    True
    """
    if rank != 0 or not (forced or sys.stderr.isatty()):
        return None
    return lambda text: progress(text, always=forced)


def progress_option(parser: argparse.ArgumentParser) -> None:
    """The ``--progress`` option of the commands that read whole traces."""
    parser.add_argument("--progress", action="store_true",
                        help="the status line on stderr also when that is no terminal: under mpirun, which passes "
                             "its ranks' stderr to the terminal through a pipe (default: on a terminal only)")


def communicator(serial: bool = False):
    """``MPI.COMM_WORLD`` when the command was launched by mpirun (and ``serial`` is not
    asked for), else a one-rank communicator that never initializes MPI.

    Example
    -------
    >>> communicator(serial=True).rank
    0
    """
    from ..parallel._mpi import launched_by_mpirun, mpi
    from ..parallel.serial import SerialComm

    if launched_by_mpirun() and not serial:
        return mpi().COMM_WORLD
    return SerialComm()


def check_everywhere(comm, each_rank: Callable[[], None], rank_0: Callable[[], None] | None = None) -> None:
    """The checks of a command's arguments before any rank waits for another, with one verdict
    on every rank of ``comm``: ``each_rank()`` on every rank (the inputs every rank reads),
    then ``rank_0()`` on rank 0 (the output rank 0 alone writes: its directory may exist on
    rank 0's node only). The error of the lowest rank that failed is raised on every rank, so
    that no rank leaves for the command while another reports (a trace on one node's disk
    only, an output directory missing on rank 0's).

    Example
    -------
    >>> from cubescale.commands._inputs import check_output
    >>> try:
    ...     check_everywhere(communicator(), lambda: None, lambda: check_output("/nonexistent/out.cubex", []))
    ... except FileNotFoundError as e:
    ...     print(e.strerror)
    no such directory for the output
    """
    from ..errors import USER_ERRORS

    error: BaseException | None = None
    try:
        each_rank()
        if comm.rank == 0 and rank_0 is not None:
            rank_0()
    except USER_ERRORS as e:
        error = e
    if comm.size > 1:
        from ..parallel._mpi import mpi

        failed = comm.allreduce(comm.rank if error is not None else comm.size, op=mpi(comm).MIN)
        if failed < comm.size:
            error = comm.bcast(error if comm.rank == failed else None, root=failed)
    if error is not None:
        raise error


def check_trace_command(comm, args, output: str | None, also: Callable[[], None] | None = None) -> None:
    """:func:`check_everywhere` for a command that reads the trace ``args.trace`` on every rank
    (an experiment directory resolved to its anchor there) and writes ``output`` (if any) on
    rank 0: none of the trace's files, in a directory that exists; ``also()`` after the trace's
    check on every rank (what else the command needs of the trace: its definitions may be
    damaged on one node only).

    Example
    -------
    >>> import argparse, os
    >>> from cubescale import examples
    >>> args = argparse.Namespace(trace=os.path.dirname(examples.trace_path()))
    >>> check_trace_command(communicator(), args, None)
    >>> os.path.basename(args.trace)
    'traces.otf2'
    """
    from ._inputs import check_trace_output, trace_path

    def trace() -> None:  # every rank reads the trace: each checks it
        args.trace = trace_path(args.trace)
        if also is not None:
            also()

    check_everywhere(comm, trace, (lambda: check_trace_output(output, args.trace)) if output else None)
