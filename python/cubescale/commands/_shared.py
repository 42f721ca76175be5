"""What the subcommands share: a progress line, and the communicator a command runs on.

Example
-------
>>> from cubescale.commands._shared import communicator
>>> communicator().size          # not under mpirun: one rank, no MPI initialized
1
"""

from __future__ import annotations

import sys


def progress(text: str) -> None:
    """A status line that overwrites itself on a terminal; logs get only the final line.

    Example
    -------
    >>> progress("reading metric 1/2")   # prints nothing when stderr is not a terminal
    """
    if sys.stderr.isatty():
        print(f"\r\x1b[K{text}", end="", file=sys.stderr, flush=True)


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
