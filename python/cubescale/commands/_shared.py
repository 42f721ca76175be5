"""What the subcommands share: a progress line, and the communicator a command runs on.

Example
-------
>>> from cubescale.commands._shared import communicator
>>> communicator().size          # not under mpirun: one rank, no MPI initialized
1
"""

from __future__ import annotations

import sys
from typing import TextIO


def progress(text: str, stream: TextIO | None = None) -> None:
    """A status line on ``stream`` (default stderr) that overwrites itself on a terminal;
    logs get only the final line.

    Example
    -------
    >>> progress("reading metric 1/2")   # prints nothing when stderr is not a terminal
    """
    stream = stream or sys.stderr
    if stream.isatty():
        print(f"\r\x1b[K{text}", end="", file=stream, flush=True)


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


def check_output_where_written(comm, output: str, inputs: list[str]) -> None:
    """:func:`~cubescale.commands._inputs.check_output` on rank 0, which writes the output, and
    its verdict on every rank of ``comm`` (a node-local output directory exists on rank 0's node
    only; a verdict of one rank alone would leave the others waiting for it).

    Example
    -------
    >>> try:
    ...     check_output_where_written(communicator(), "/nonexistent/out.cubex", [])
    ... except FileNotFoundError as e:
    ...     print(e.strerror)
    no such directory for the output
    """
    from ..cli import USER_ERRORS
    from ._inputs import check_output

    error = None
    if comm.rank == 0:
        try:
            check_output(output, inputs)
        except USER_ERRORS as e:
            error = e
    if comm.size > 1:
        error = comm.bcast(error, root=0)
    if error is not None:
        raise error
