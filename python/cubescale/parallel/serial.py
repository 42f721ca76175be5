"""One process without MPI: a one-rank communicator that needs neither mpi4py nor an MPI
library.

:class:`SerialComm` has the part of mpi4py's ``Intracomm`` that cubescale's collective
algorithms use (and that small programs use: ``bcast``, ``allreduce``, ``gather`` ...), with
the results MPI gives on one rank. :data:`MPI` stands in for the ``mpi4py.MPI`` module with
that communicator as ``COMM_WORLD`` and the constants the algorithms name, so that
``write_report(SerialComm(), profile, path)`` writes a report on a machine without MPI
(``cubescale run`` without mpirun, ``cubescale demo`` without mpirun).

Example
-------
>>> import numpy as np, os, tempfile
>>> import cubescale
>>> from cubescale.parallel import write_report
>>> from cubescale.parallel.serial import SerialComm
>>> from cubescale import Metric, Region
>>> from cubescale.profile import LocalProfile
>>> p = LocalProfile([Metric(name="time")], [Region(name="main")], [-1], [0],
...                  [("Master thread", "thread")], [np.full((1, 1), 1.5)], host="n1")
>>> out = os.path.join(tempfile.mkdtemp(), "serial.cubex")
>>> _ = write_report(SerialComm(), p, out)
>>> cubescale.open(out).values("time").tolist()
[[1.5]]
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

__all__ = ["MPI", "SerialComm"]


class _Constant:
    """A named MPI constant (an operation, ``IN_PLACE``, ``COMM_NULL``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<serial MPI.{self.name}>"


def _flat(buffer: Any) -> np.ndarray:
    return np.asarray(buffer).reshape(-1).view(np.uint8)


class SerialComm:
    """The communicator of one process alone: rank 0 of 1, no messages.

    Example
    -------
    >>> comm = SerialComm()
    >>> comm.rank, comm.size, comm.allreduce(3, op=MPI.SUM), comm.gather("x", root=0)
    (0, 1, 3, ['x'])
    """

    rank = 0
    size = 1

    def Get_rank(self) -> int:  # noqa: N802 - mpi4py's names
        return 0

    def Get_size(self) -> int:  # noqa: N802
        return 1

    # Objects: on one rank every collective hands back what the rank gave.
    def bcast(self, obj: Any, root: int = 0) -> Any:
        return obj

    def allreduce(self, obj: Any, op: Any = None) -> Any:
        return obj

    def reduce(self, obj: Any, op: Any = None, root: int = 0) -> Any:
        return obj

    def scan(self, obj: Any, op: Any = None) -> Any:
        return obj

    def gather(self, obj: Any, root: int = 0) -> list:
        return [obj]

    def allgather(self, obj: Any) -> list:
        return [obj]

    def scatter(self, objs: Any, root: int = 0) -> Any:
        return list(objs)[0]

    def alltoall(self, objs: Any) -> list:
        return list(objs)

    def barrier(self) -> None:
        return None

    Barrier = barrier  # noqa: N815

    # Buffers.
    def Bcast(self, buf: Any, root: int = 0) -> None:  # noqa: N802
        return None

    def Allreduce(self, sendbuf: Any, recvbuf: Any, op: Any = None) -> None:  # noqa: N802
        if sendbuf is not MPI.IN_PLACE:
            _flat(recvbuf)[:] = _flat(sendbuf)

    def Reduce(self, sendbuf: Any, recvbuf: Any, op: Any = None, root: int = 0) -> None:  # noqa: N802
        if sendbuf is not MPI.IN_PLACE:
            _flat(recvbuf)[:] = _flat(sendbuf)

    def Alltoall(self, sendbuf: Any, recvbuf: Any) -> None:  # noqa: N802
        if sendbuf is not MPI.IN_PLACE:
            _flat(recvbuf)[:] = _flat(sendbuf)

    def Gather(self, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:  # noqa: N802
        if sendbuf is not MPI.IN_PLACE:
            _flat(recvbuf)[:] = _flat(sendbuf)

    def Gatherv(self, sendbuf: Any, recvbuf: Any, root: int = 0) -> None:  # noqa: N802
        target = recvbuf[0] if isinstance(recvbuf, (list, tuple)) else recvbuf
        data = _flat(sendbuf)
        _flat(target)[:len(data)] = data

    # Communicators.
    def Split(self, color: int = 0, key: int = 0) -> Any:  # noqa: N802
        return MPI.COMM_NULL if color == MPI.UNDEFINED else SerialComm()

    def Dup(self) -> SerialComm:  # noqa: N802
        return SerialComm()

    def Free(self) -> None:  # noqa: N802
        return None

    def send(self, obj: Any, dest: int, tag: int = 0) -> None:
        raise ValueError(f"rank {dest} does not exist: a serial communicator has one rank")

    def recv(self, buf: Any = None, source: int = 0, tag: int = 0, status: Any = None) -> Any:
        raise ValueError(f"rank {source} does not exist: a serial communicator has one rank")

    def __repr__(self) -> str:
        return "<SerialComm: one process, no MPI>"


MPI = types.SimpleNamespace(
    COMM_WORLD=SerialComm(), COMM_SELF=SerialComm(), COMM_NULL=_Constant("COMM_NULL"),
    IN_PLACE=_Constant("IN_PLACE"), UNDEFINED=-32766,
    SUM=_Constant("SUM"), PROD=_Constant("PROD"), MAX=_Constant("MAX"), MIN=_Constant("MIN"),
    LAND=_Constant("LAND"), LOR=_Constant("LOR"), BAND=_Constant("BAND"), BOR=_Constant("BOR"))
"""A stand-in for ``mpi4py.MPI`` in one process without MPI (communicators and constants)."""
