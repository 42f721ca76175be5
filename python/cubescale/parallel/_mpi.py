"""The one place that imports mpi4py, lazily: exploring a report needs no MPI."""

from __future__ import annotations

import os
from typing import Any

from .serial import MPI as serial
from .serial import SerialComm

_MPI: Any = None  # mpi4py.MPI once imported


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
    global _MPI
    if isinstance(comm, SerialComm):
        return serial
    if _MPI is None:  # the import machinery costs microseconds per call: a replay's rounds call this often
        try:
            from mpi4py import MPI
        except ImportError as e:  # pragma: no cover - depends on the installation
            raise ImportError("cubescale.parallel needs mpi4py: pip install 'cubescale[mpi]'") from e
        _MPI = MPI
    return _MPI


def launched_by_mpirun() -> bool:
    """Whether this process was started by mpirun / mpiexec / srun (their environment).

    Example
    -------
    >>> isinstance(launched_by_mpirun(), bool)
    True
    """
    return any(k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"))


def environment_rank() -> int:
    """This process's rank as mpirun / srun tell it (0 without them), without starting MPI.

    Example
    -------
    >>> environment_rank() >= 0
    True
    """
    for key in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"):
        if os.environ.get(key, "").isdigit():
            return int(os.environ[key])
    return 0


def mpi_up() -> bool:
    """Whether this process has started MPI and not finalized it (through mpi4py), without
    importing mpi4py where the program did not.

    Example
    -------
    >>> isinstance(mpi_up(), bool)
    True
    """
    import sys

    MPI = sys.modules.get("mpi4py.MPI")
    return MPI is not None and bool(MPI.Is_initialized() and not MPI.Is_finalized())
