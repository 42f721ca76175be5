"""The one place that imports mpi4py, lazily: exploring a report needs no MPI."""

from __future__ import annotations

import os


def mpi(comm=None):
    """The ``mpi4py.MPI`` module, imported on first use; for a
    :class:`~cubescale.parallel.serial.SerialComm` its stand-in, which needs no MPI.

    Example
    -------
    >>> mpi().COMM_SELF.size
    1
    >>> from cubescale.parallel.serial import SerialComm
    >>> mpi(SerialComm()).COMM_WORLD
    <SerialComm: one process, no MPI>
    """
    from .serial import MPI as serial
    from .serial import SerialComm

    if isinstance(comm, SerialComm):
        return serial
    try:
        from mpi4py import MPI
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError("cubescale.parallel needs mpi4py: pip install 'cubescale[mpi]'") from e
    return MPI


def launched_by_mpirun() -> bool:
    """Whether this process was started by mpirun / mpiexec / srun (their environment).

    Example
    -------
    >>> isinstance(launched_by_mpirun(), bool)
    True
    """
    return any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"))
