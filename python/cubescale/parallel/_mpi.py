"""The one place that imports mpi4py, lazily: exploring a report needs no MPI."""

from __future__ import annotations


def mpi():
    """The ``mpi4py.MPI`` module, imported on first use.

    Example
    -------
    >>> mpi().COMM_SELF.size
    1
    """
    try:
        from mpi4py import MPI
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError("cubescale.parallel needs mpi4py: pip install 'cubescale[mpi]'") from e
    return MPI
