"""mpi4py calls as MPI regions of the measurement (paper 002, section 5.1).

:func:`trace_mpi` replaces ``mpi4py.MPI.COMM_WORLD`` (and ``COMM_SELF``) by communicators of
a subclass whose point-to-point and collective methods enter a region named as Score-P names
MPI calls (``MPI_Send``, ``MPI_Allreduce`` ...; paradigm ``mpi`` and Score-P's region roles)
and add the bytes of the message to the current call path: the buffer's bytes for the
upper-case methods, the pickled size for the lower-case ones (mpi4py sends exactly that; it
is pickled once more here to count it). Collectives count what a rank contributes as sent and
what it gets as received. Communicators made from traced ones (``Split``, ``Dup``) are traced
too. The wrappers themselves are left out of the automatic mode.
"""

from __future__ import annotations

import pickle
from typing import Any

from .. import measure as _api
from .._core import measure as _measure

__all__ = ["trace_mpi", "untrace_mpi"]

# method -> (region, role, bytes: which arguments / results count as sent and received)
_CALLS: dict[str, tuple[str, str]] = {
    "send": ("MPI_Send", "point2point"), "ssend": ("MPI_Ssend", "point2point"),
    "isend": ("MPI_Isend", "point2point"), "recv": ("MPI_Recv", "point2point"),
    "sendrecv": ("MPI_Sendrecv", "point2point"),
    "Send": ("MPI_Send", "point2point"), "Ssend": ("MPI_Ssend", "point2point"),
    "Isend": ("MPI_Isend", "point2point"), "Recv": ("MPI_Recv", "point2point"),
    "Irecv": ("MPI_Irecv", "point2point"), "Sendrecv": ("MPI_Sendrecv", "point2point"),
    "barrier": ("MPI_Barrier", "barrier"), "Barrier": ("MPI_Barrier", "barrier"),
    "bcast": ("MPI_Bcast", "one2all"), "Bcast": ("MPI_Bcast", "one2all"),
    "scatter": ("MPI_Scatter", "one2all"), "Scatter": ("MPI_Scatter", "one2all"),
    "gather": ("MPI_Gather", "all2one"), "Gather": ("MPI_Gather", "all2one"),
    "reduce": ("MPI_Reduce", "all2one"), "Reduce": ("MPI_Reduce", "all2one"),
    "allreduce": ("MPI_Allreduce", "all2all"), "Allreduce": ("MPI_Allreduce", "all2all"),
    "allgather": ("MPI_Allgather", "all2all"), "Allgather": ("MPI_Allgather", "all2all"),
    "alltoall": ("MPI_Alltoall", "all2all"), "Alltoall": ("MPI_Alltoall", "all2all"),
}


def _pickled(obj: Any) -> int:
    return len(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))


def _buffer_bytes(spec: Any) -> int:
    """Bytes of an mpi4py buffer argument: an array, or [array, ...] / (array, count, type)."""
    if spec is None:
        return 0
    if isinstance(spec, (list, tuple)) and spec:
        spec = spec[0]
    try:
        return memoryview(spec).nbytes
    except TypeError:
        return 0


def _bytes(method: str, comm: Any, args: tuple, kwargs: dict, result: Any) -> tuple[int, int]:
    """(sent, received) by this rank for one call."""
    def arg(i: int, name: str) -> Any:
        return args[i] if len(args) > i else kwargs.get(name)

    upper = method[0].isupper()
    size = (lambda x: _buffer_bytes(x)) if upper else _pickled
    root = arg(1, "root") if method in ("bcast", "scatter", "gather", "reduce") else \
        arg(1, "root") if method in ("Bcast", "Scatter", "Gather", "Reduce") else 0
    is_root = comm.Get_rank() == (root or 0)
    if method in ("send", "ssend", "isend", "Send", "Ssend", "Isend"):
        return size(arg(0, "obj" if not upper else "buf")), 0
    if method in ("recv",):
        return 0, _pickled(result)
    if method in ("Recv", "Irecv"):
        return 0, _buffer_bytes(arg(0, "buf"))
    if method == "sendrecv":
        return _pickled(arg(0, "sendobj")), _pickled(result)
    if method == "Sendrecv":
        return _buffer_bytes(arg(0, "sendbuf")), _buffer_bytes(arg(3, "recvbuf"))
    if method in ("barrier", "Barrier"):
        return 0, 0
    if method in ("bcast", "Bcast"):
        data = arg(0, "obj" if not upper else "buf")
        return (size(data), 0) if is_root else (0, size(result if not upper else data))
    if method in ("scatter",):
        return (sum(_pickled(x) for x in (arg(0, "sendobj") or [])), _pickled(result)) if is_root else (0, _pickled(result))
    if method in ("gather",):
        mine = _pickled(arg(0, "sendobj"))
        return mine, (sum(_pickled(x) for x in result) if is_root and result is not None else 0)
    if method in ("reduce", "allreduce"):
        return _pickled(arg(0, "sendobj")), (_pickled(result) if result is not None else 0)
    if method in ("allgather", "alltoall"):
        return _pickled(arg(0, "sendobj")), sum(_pickled(x) for x in result)
    # Upper-case collectives: send buffer out, receive buffer in.
    return _buffer_bytes(arg(0, "sendbuf")), _buffer_bytes(arg(1, "recvbuf"))


def _wrap(base: type, method: str, region_name: str, role: str):
    original = getattr(base, method)
    ids: dict[int, int] = {}

    def call(self, *args, **kwargs):
        epoch = _measure.epoch()
        region = ids.get(epoch)
        if region is None:
            region = ids[epoch] = _measure.region(region_name, "", -1, "mpi", role)
        _measure.enter(region)
        try:
            result = original(self, *args, **kwargs)
            sent, received = _bytes(method, self, args, kwargs, result)
            _measure.add_bytes(sent, received)
            return result
        finally:
            _measure.exit()

    call.__name__ = method
    call.__qualname__ = f"{base.__name__}.{method}"
    return call


def _traced_class(base: type) -> type:
    namespace: dict[str, Any] = {}
    for method, (name, role) in _CALLS.items():
        if hasattr(base, method):
            namespace[method] = _wrap(base, method, name, role)
    for method in ("Split", "Dup", "Create", "Split_type"):
        if hasattr(base, method):
            namespace[method] = _wrap_maker(base, method)
    cls = type(f"Traced{base.__name__}", (base,), namespace)
    for value in namespace.values():  # the wrappers are not regions of the automatic mode
        _api._ignore(value.__code__)
    return cls


def _wrap_maker(base: type, method: str):
    original = getattr(base, method)

    def make(self, *args, **kwargs):
        made = original(self, *args, **kwargs)
        return _TRACED.get(type(made), lambda c: c)(made)

    return make


_TRACED: dict[type, Any] = {}
_SAVED: dict[str, Any] = {}


def trace_mpi() -> None:
    """Makes ``MPI.COMM_WORLD`` and ``MPI.COMM_SELF`` record their calls (see the module).

    Example
    -------
    >>> from mpi4py import MPI
    >>> from cubescale import measure
    >>> from cubescale.parallel.measure import trace_mpi, untrace_mpi
    >>> measure.start()
    >>> trace_mpi()
    >>> MPI.COMM_WORLD.bcast({"n": 1}, root=0) == {"n": 1}
    True
    >>> untrace_mpi(); measure.stop()
    >>> [r.name for r in measure.profile()._core.regions]
    ['MPI_Bcast']
    """
    from mpi4py import MPI

    if _SAVED:
        return
    if not _TRACED:
        _TRACED[MPI.Intracomm] = _traced_class(MPI.Intracomm)
    traced = _TRACED[MPI.Intracomm]
    for name in ("COMM_WORLD", "COMM_SELF"):
        _SAVED[name] = getattr(MPI, name)
        setattr(MPI, name, traced(_SAVED[name]))
    _TRACED[MPI.Intracomm] = traced
    _TRACED.setdefault(type(_SAVED["COMM_WORLD"]), traced)


def untrace_mpi() -> None:
    """Restores the original communicators.

    Example
    -------
    >>> from cubescale.parallel.measure import untrace_mpi
    >>> untrace_mpi()
    """
    from mpi4py import MPI

    for name, comm in _SAVED.items():
        setattr(MPI, name, comm)
    _SAVED.clear()
