"""mpi4py calls as MPI regions of the measurement (the Scalasca architecture paper, section 5.1).

:func:`trace_mpi` replaces ``mpi4py.MPI.COMM_WORLD`` and ``COMM_SELF`` by communicators of a
subclass, and ``MPI.Request`` by a subclass, whose methods enter a region named as Score-P
names the MPI call (``MPI_Send``, ``MPI_Allreduce``, ``MPI_Wait`` ...; paradigm ``mpi`` and
Score-P's region roles: point2point, barrier, one2all, all2one, all2all, other collective,
function) and add the bytes of the message to the current call path:

* sends count what they send: the buffer's bytes as its count and datatype give them
  (upper-case methods), or the pickle mpi4py sends (lower-case ones; pickled once more here
  with mpi4py's own pickler to count it);
* blocking receives count the message they received, from its status (a buffer larger than
  the message counts the message); non-blocking receives count at the wait or test that
  completes them, as Score-P does;
* collectives count as Score-P counts them (docs/measure.md): what goes to every rank and
  comes from every rank, the rank's own block included unless ``MPI.IN_PLACE`` keeps it in
  place (a Bcast root sends N blocks and receives one); the lower-case methods by the same
  rules, each block a pickle mpi4py sends.

mpi4py is traced once the program has initialized MPI (:func:`trace_mpi_on_import`): the
measurement never starts MPI itself nor changes ``mpi4py.rc``.

Communicators made from traced ones (``Split``, ``Dup``, ``Create_cart`` ...) are traced too
and their creation is a region. The wrappers live in this file, which the automatic mode
leaves out. Persistent requests (``Send_init``, ``Start``), one-sided communication and MPI
I/O are not recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core import measure as _measure

__all__ = ["finalize_mpi", "start_mpi", "trace_mpi", "trace_mpi_on_import", "untrace_mpi", "world"]

P2P, BARRIER, ONE2ALL, ALL2ONE, ALL2ALL, OTHER = (
    "point2point", "barrier", "one2all", "all2one", "all2all", "other collective")

# method -> (MPI name, role, how its bytes count). One name for the pickle-based (lower-case)
# and the buffer-based (upper-case) method where both exist.
_CALLS: dict[str, tuple[str, str, str]] = {}
for _methods, _call, _role, _kind in (
        (("send", "Send"), "MPI_Send", P2P, "send"), (("ssend", "Ssend"), "MPI_Ssend", P2P, "send"),
        (("bsend", "Bsend"), "MPI_Bsend", P2P, "send"), (("Rsend",), "MPI_Rsend", P2P, "send"),
        (("isend", "Isend"), "MPI_Isend", P2P, "send"), (("issend", "Issend"), "MPI_Issend", P2P, "send"),
        (("ibsend", "Ibsend"), "MPI_Ibsend", P2P, "send"), (("Irsend",), "MPI_Irsend", P2P, "send"),
        (("recv", "Recv"), "MPI_Recv", P2P, "recv"), (("irecv", "Irecv"), "MPI_Irecv", P2P, "irecv"),
        (("sendrecv", "Sendrecv"), "MPI_Sendrecv", P2P, "sendrecv"),
        (("Sendrecv_replace",), "MPI_Sendrecv_replace", P2P, "sendrecv_replace"),
        (("Isendrecv",), "MPI_Isendrecv", P2P, "isendrecv"),
        (("probe", "Probe"), "MPI_Probe", P2P, "none"), (("iprobe", "Iprobe"), "MPI_Iprobe", P2P, "none"),
        (("mprobe", "Mprobe"), "MPI_Mprobe", P2P, "none"), (("improbe", "Improbe"), "MPI_Improbe", P2P, "none"),
        (("barrier", "Barrier"), "MPI_Barrier", BARRIER, "none"), (("Ibarrier",), "MPI_Ibarrier", BARRIER, "none"),
        (("bcast", "Bcast"), "MPI_Bcast", ONE2ALL, "bcast"), (("Ibcast",), "MPI_Ibcast", ONE2ALL, "bcast"),
        (("scatter", "Scatter"), "MPI_Scatter", ONE2ALL, "scatter"), (("Iscatter",), "MPI_Iscatter", ONE2ALL, "scatter"),
        (("Scatterv",), "MPI_Scatterv", ONE2ALL, "scatter"), (("Iscatterv",), "MPI_Iscatterv", ONE2ALL, "scatter"),
        (("gather", "Gather"), "MPI_Gather", ALL2ONE, "gather"), (("Igather",), "MPI_Igather", ALL2ONE, "gather"),
        (("Gatherv",), "MPI_Gatherv", ALL2ONE, "gather"), (("Igatherv",), "MPI_Igatherv", ALL2ONE, "gather"),
        (("reduce", "Reduce"), "MPI_Reduce", ALL2ONE, "gather"), (("Ireduce",), "MPI_Ireduce", ALL2ONE, "gather"),
        (("allreduce", "Allreduce"), "MPI_Allreduce", ALL2ALL, "all"),
        (("Iallreduce",), "MPI_Iallreduce", ALL2ALL, "all"),
        (("allgather", "Allgather"), "MPI_Allgather", ALL2ALL, "all"),
        (("Iallgather",), "MPI_Iallgather", ALL2ALL, "all"),
        (("Allgatherv",), "MPI_Allgatherv", ALL2ALL, "all"), (("Iallgatherv",), "MPI_Iallgatherv", ALL2ALL, "all"),
        (("alltoall", "Alltoall"), "MPI_Alltoall", ALL2ALL, "all"), (("Ialltoall",), "MPI_Ialltoall", ALL2ALL, "all"),
        (("Alltoallv",), "MPI_Alltoallv", ALL2ALL, "all"), (("Ialltoallv",), "MPI_Ialltoallv", ALL2ALL, "all"),
        (("Alltoallw",), "MPI_Alltoallw", ALL2ALL, "all"),
        (("Reduce_scatter",), "MPI_Reduce_scatter", ALL2ALL, "all"),
        (("Reduce_scatter_block",), "MPI_Reduce_scatter_block", ALL2ALL, "all"),
        (("scan", "Scan"), "MPI_Scan", OTHER, "all"), (("Iscan",), "MPI_Iscan", OTHER, "all"),
        (("exscan", "Exscan"), "MPI_Exscan", OTHER, "all"), (("Iexscan",), "MPI_Iexscan", OTHER, "all")):
    for _method in _methods:
        _CALLS[_method] = (_call, _role, _kind)

# Methods that make communicators: traced too, their call an MPI region (role "function").
_MAKERS = {"Dup": "MPI_Comm_dup", "Clone": "MPI_Comm_dup", "Split": "MPI_Comm_split",
           "Split_type": "MPI_Comm_split_type", "Create": "MPI_Comm_create",
           "Create_group": "MPI_Comm_create_group", "Create_cart": "MPI_Cart_create",
           "Create_graph": "MPI_Graph_create", "Create_dist_graph": "MPI_Dist_graph_create",
           "Create_dist_graph_adjacent": "MPI_Dist_graph_create_adjacent",
           "Create_intercomm": "MPI_Intercomm_create", "Merge": "MPI_Intercomm_merge"}

# Request completion: instance methods of one request (_ONE), class methods of a list.
_ONE, _ANY, _SOME = {"Wait", "wait", "Test", "test"}, {"Waitany", "waitany", "Testany", "testany"}, \
    {"Waitsome", "Testsome"}
_COMPLETIONS = {"Wait": "MPI_Wait", "wait": "MPI_Wait", "Test": "MPI_Test", "test": "MPI_Test",
                "Waitall": "MPI_Waitall", "waitall": "MPI_Waitall", "Waitany": "MPI_Waitany",
                "waitany": "MPI_Waitany", "Waitsome": "MPI_Waitsome", "Testall": "MPI_Testall",
                "testall": "MPI_Testall", "Testany": "MPI_Testany", "testany": "MPI_Testany",
                "Testsome": "MPI_Testsome"}

# Where a receive's status goes (argument position), so that its count can be read.
_STATUS_AT = {"recv": 3, "Recv": 3, "sendrecv": 6, "Sendrecv": 6, "Sendrecv_replace": 5}


class _Region:
    """An MPI region's id in the current measurement (registered again after a reset)."""

    def __init__(self, name: str, role: str):
        self.name, self.role, self.epoch, self.id = name, role, -1, 0

    def __call__(self) -> int:
        epoch = _measure.epoch()
        if epoch != self.epoch:
            # "MPI" as the source file, as Score-P names it (Scalasca's tools find MPI calls by it)
            self.epoch, self.id = epoch, _measure.region(self.name, "MPI", -1, "mpi", self.role)
        return self.id


_MPI: list[Any] = []


def _mpi() -> Any:
    """``mpi4py.MPI``, imported once (an import statement in a wrapper would be a call of
    importlib's, recorded below the MPI region)."""
    if not _MPI:
        from ..parallel._mpi import mpi

        _MPI.append(mpi())
    return _MPI[0]


def _pickled(obj: Any) -> int:
    """The bytes mpi4py sends for a Python object."""
    return len(_mpi().pickle.dumps(obj))


def _buffer_bytes(spec: Any) -> int:
    """Bytes of a buffer argument: ``buf``, ``[buf, type]``, ``[buf, count, type]`` or
    ``[buf, (count, displ), type]``; 0 for ``None`` and ``MPI.IN_PLACE``."""
    MPI = _mpi()
    if spec is None or spec is MPI.IN_PLACE:
        return 0
    if isinstance(spec, (list, tuple)) and spec:
        datatype = spec[-1] if isinstance(spec[-1], MPI.Datatype) else None
        if len(spec) >= 3 and datatype is not None:
            count = spec[1][0] if isinstance(spec[1], (list, tuple)) else spec[1]
            if isinstance(count, int):
                return count * datatype.Get_size()
        spec = spec[0]
    try:
        return memoryview(spec).nbytes
    except TypeError:
        return 0


def _per_rank(spec: Any, n: int) -> list[int]:
    """Bytes per rank of a v-buffer ``[buf, counts, (displs,) type]``, ``[buf, (counts,
    displs), type]`` or, for ``Alltoallw``, ``[buf, counts, displs, types]``; a buffer
    without counts splits evenly, as mpi4py splits it."""
    MPI = _mpi()
    if isinstance(spec, (list, tuple)) and len(spec) >= 2:
        counts = spec[1]
        if isinstance(counts, tuple) and len(counts) == 2 and not isinstance(counts[0], int):
            counts = counts[0]  # (counts, displs)
        if isinstance(counts, (list, tuple)) and len(counts) == n and all(isinstance(c, int) for c in counts):
            types = spec[-1]
            if isinstance(types, (list, tuple)) and len(types) == n:  # Alltoallw: a datatype per rank
                return [c * t.Get_size() for c, t in zip(counts, types)]
            try:
                size = types.Get_size() if isinstance(types, MPI.Datatype) else memoryview(spec[0]).itemsize
            except TypeError:
                return [0] * n
            return [c * size for c in counts]
    total = _buffer_bytes(spec)
    return [total // n] * n if n else []


def _block(spec: Any, n: int) -> int:
    """Bytes of one rank's block of a buffer of ``n`` equal blocks: ``[buf, count, type]``
    gives the count per rank, a plain buffer splits evenly."""
    MPI = _mpi()
    if isinstance(spec, (list, tuple)) and len(spec) >= 3 and isinstance(spec[1], int) \
            and isinstance(spec[-1], MPI.Datatype):
        return spec[1] * spec[-1].Get_size()
    return _buffer_bytes(spec) // n if n else 0


def _operation(method: str) -> str:
    """The collective a method is, lower-case and blocking: Iallgatherv -> allgatherv."""
    if method[0] == "I" and method[1:2].islower():
        method = method[1:]
    return method.lower()


def _argument(args: tuple, kwargs: dict, index: int, name: str) -> Any:
    return args[index] if len(args) > index else kwargs.get(name)


def _root(method: str, args: tuple, kwargs: dict) -> int:
    """The root rank of a rooted collective (default 0)."""
    at = {"bcast": 1, "Bcast": 1, "Ibcast": 1, "scatter": 1, "gather": 1, "reduce": 2, "Reduce": 3,
          "Ireduce": 3}.get(method, 2)  # upper-case scatter/gather: (sendbuf, recvbuf, root)
    root = _argument(args, kwargs, at, "root")
    return root if isinstance(root, int) else 0


def _collective_bytes(method: str, kind: str, comm: Any, args: tuple, kwargs: dict, result: Any) -> tuple[int, int]:
    """(sent, received) by this rank in one collective call, by Score-P's rules (see the
    module and docs/measure.md): a rank counts what goes to every rank, itself included, and
    what comes from every rank, itself included, except where ``MPI.IN_PLACE`` keeps its own
    block in place. Intercommunicators count nothing."""
    if comm.Is_inter():
        return 0, 0
    n, me, operation = comm.Get_size(), comm.Get_rank(), _operation(method)
    root = _root(method, args, kwargs) if kind in ("bcast", "scatter", "gather") else -1
    if method[0].islower():
        return _pickle_rule(operation, n, me, root, _argument(args, kwargs, 0, "obj" if operation == "bcast"
                                                               else "sendobj"), result)
    first = _argument(args, kwargs, 0, "buf" if operation == "bcast" else "sendbuf")
    return _buffer_rule(operation, n, me, root, first, _argument(args, kwargs, 1, "recvbuf"), args, kwargs)


def _buffer_rule(operation: str, n: int, me: int, root: int, send: Any, receive: Any,
                 args: tuple, kwargs: dict) -> tuple[int, int]:
    """Score-P's bytes of a buffer collective (``send``: the first buffer argument)."""
    MPI = _mpi()
    if operation == "bcast":
        block = _buffer_bytes(send)
        return (n * block, block) if me == root else (0, block)
    if operation in ("gather", "gatherv", "reduce"):
        if me != root:
            return _buffer_bytes(send), 0
        blocks = [_buffer_bytes(send if send is not MPI.IN_PLACE else receive)] * n if operation == "reduce" \
            else _per_rank(receive, n) if operation == "gatherv" else [_block(receive, n)] * n
        return _rooted(blocks, me, send is MPI.IN_PLACE)
    if operation in ("scatter", "scatterv"):
        if me != root:
            return 0, _buffer_bytes(receive)
        blocks = _per_rank(send, n) if operation == "scatterv" else [_block(send, n)] * n
        received, sent = _rooted(blocks, me, receive is MPI.IN_PLACE)
        return sent, received
    return _all_rule(operation, n, me, send, receive, args, kwargs)


def _rooted(blocks: list[int], me: int, in_place: bool) -> tuple[int, int]:
    """(own part, all parts) of the root of a gather (a scatter: the other way round);
    ``IN_PLACE`` moves neither its own block out nor in."""
    if in_place:
        return 0, sum(blocks) - blocks[me]
    return blocks[me], sum(blocks)


def _all_rule(operation: str, n: int, me: int, send: Any, receive: Any, args: tuple,
              kwargs: dict) -> tuple[int, int]:
    """Score-P's bytes of the collectives without a root."""
    MPI = _mpi()
    in_place = send is MPI.IN_PLACE
    if operation in ("allgather", "alltoall"):
        block = _block(receive, n)
        if in_place:
            return (n - 1) * block, (n - 1) * block
        return n * (_block(send, n) if operation == "alltoall" else _buffer_bytes(send)), n * block
    if operation in ("allgatherv", "alltoallv", "alltoallw"):
        blocks = _per_rank(receive, n)
        others = sum(blocks) - blocks[me]
        if in_place:
            return ((n - 1) * blocks[me] if operation == "allgatherv" else others), others
        sent = n * _buffer_bytes(send) if operation == "allgatherv" else sum(_per_rank(send, n))
        return sent, sum(blocks)
    if operation in ("allreduce", "reduce_scatter_block"):
        block = _buffer_bytes(receive)
        if operation == "reduce_scatter_block" and in_place:
            block //= n  # the receive buffer holds every rank's block
        factor = n - 1 if in_place else n
        return factor * block, factor * block
    if operation == "reduce_scatter":
        blocks = _reduce_scatter_blocks(n, me, send, receive, _argument(args, kwargs, 2, "recvcounts"))
        if in_place:
            return sum(blocks) - blocks[me], (n - 1) * blocks[me]
        return sum(blocks), n * blocks[me]
    if operation in ("scan", "exscan"):
        block = _buffer_bytes(receive)
        if in_place or operation == "exscan":  # exscan never combines a rank's own block
            return (n - me - 1) * block, me * block
        return (n - me) * block, (me + 1) * block
    return 0, 0


def _reduce_scatter_blocks(n: int, me: int, send: Any, receive: Any, counts: Any) -> list[int]:
    """Bytes of each rank's result block of ``Reduce_scatter``."""
    MPI = _mpi()
    full = receive if send is MPI.IN_PLACE else send
    if isinstance(counts, (list, tuple)) and len(counts) == n:
        total = sum(counts)
        size = _buffer_bytes(full) // total if total else 0
        return [c * size for c in counts]
    blocks = _per_rank(full, n)  # no counts: only this rank's block is known, the rest split evenly
    if send is not MPI.IN_PLACE:
        mine = _buffer_bytes(receive)
        rest = (_buffer_bytes(full) - mine) // (n - 1) if n > 1 else 0
        blocks = [mine if r == me else rest for r in range(n)]
    return blocks


def _pickle_rule(operation: str, n: int, me: int, root: int, obj: Any, result: Any) -> tuple[int, int]:
    """Score-P's rule of the matching buffer collective, each block being a pickle mpi4py
    sends: this rank's object (``obj``), or for gathered results each rank's object."""
    if operation == "bcast":
        block = _pickled(obj if me == root else result)
        return (n * block, block) if me == root else (0, block)
    if operation == "scatter":
        if me != root:
            return 0, _pickled(result)
        blocks = [_pickled(x) for x in obj]
        return sum(blocks), blocks[me]
    if operation == "gather":
        return (_pickled(obj), 0) if me != root else _rooted([_pickled(x) for x in result], me, False)
    if operation == "allgather":
        return n * _pickled(obj), sum(_pickled(x) for x in result)
    if operation == "alltoall":
        return sum(_pickled(x) for x in obj), sum(_pickled(x) for x in result)
    block = _pickled(obj)
    if operation == "reduce":
        return (block, n * block) if me == root else (block, 0)
    if operation == "allreduce":
        return n * block, n * block
    if operation == "scan":
        return (n - me) * block, (me + 1) * block
    if operation == "exscan":
        return (n - me - 1) * block, me * block
    return 0, 0


def _count(status: Any) -> int:
    """Bytes of the message a status describes."""
    MPI = _mpi()
    count = status.Get_count(MPI.BYTE)
    return count if count != MPI.UNDEFINED and count > 0 else 0


def _wrap(base: type, method: str, region: _Region, kind: str) -> Callable:
    original = getattr(base, method)
    lower = method[0].islower()
    status_at = _STATUS_AT.get(method)

    def call(self, *args, **kwargs):
        status = None
        if status_at is not None:  # a receive: its status tells the message's size
            status = _argument(args, kwargs, status_at, "status")
            if status is None:
                status = _mpi().Status()
                if len(args) > status_at:
                    args = (*args[:status_at], status, *args[status_at + 1:])
                else:
                    kwargs["status"] = status
        _measure.enter(region())
        events, request, counted = _measure.tracing() and hasattr(self, "_cubescale_comm"), None, None
        try:
            if events:  # counted: the bytes of a send, computed once for its event and the profile
                request, counted = _trace_before(self, method, region.name, kind, args, kwargs)
            result = original(self, *args, **kwargs)
            sent = received = 0
            if kind == "send" and counted is not None:
                sent = counted
            elif kind == "send":
                data = _argument(args, kwargs, 0, "obj" if lower else "buf")
                sent = _pickled(data) if lower else _buffer_bytes(data)
            elif kind == "recv":
                received = _count(status)
            elif kind in ("sendrecv", "sendrecv_replace", "isendrecv"):
                data = _argument(args, kwargs, 0, "sendobj" if lower else ("buf" if kind == "sendrecv_replace"
                                                                            else "sendbuf"))
                sent = counted if counted is not None else _pickled(data) if lower else _buffer_bytes(data)
                received = _count(status) if status is not None else 0
            elif kind not in ("none", "irecv"):
                sent, received = _collective_bytes(method, kind, self, args, kwargs, result)
            if sent or received:
                _measure.add_bytes(sent, received)
            if isinstance(result, _base_request()):
                result = _traced_request(result, receive=kind in ("irecv", "isendrecv"))
                if events and request:
                    if request[2] == "collective":  # its bytes, known now, for its completion
                        request = (*request[:3], (*request[3], sent, received))
                    result._cubescale_request = request
            if events:
                _trace_after(self, method, region.name, kind, args, kwargs, status, sent, received)
            return result
        finally:
            _measure.exit()

    call.__name__ = call.__qualname__ = method
    return call


def _wrap_maker(base: type, method: str, region: _Region) -> Callable:
    original = getattr(base, method)

    def make(self, *args, **kwargs):
        _measure.enter(region())
        try:
            made = original(self, *args, **kwargs)
        finally:
            _measure.exit()
        traced = _traced_comm(made)
        if _measure.tracing() and hasattr(self, "_cubescale_comm"):
            _define_comm(self, made, traced)
        return traced

    make.__name__ = make.__qualname__ = method
    return make


_TRACED: dict[type, type] = {}
_SAVED: dict[str, Any] = {}


def _traced_comm(comm: Any) -> Any:
    """``comm`` as an instance of its class's traced subclass (the same communicator)."""
    MPI = _mpi()
    if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL or type(comm) in _TRACED.values():
        return comm
    base = type(comm)
    if base not in _TRACED:
        namespace: dict[str, Any] = {}
        for method, (name, role, kind) in _CALLS.items():
            if hasattr(base, method):
                namespace[method] = _wrap(base, method, _Region(name, role), kind)
        for method, name in _MAKERS.items():
            if hasattr(base, method):
                namespace[method] = _wrap_maker(base, method, _Region(name, "function"))
        _TRACED[base] = type(f"Traced{base.__name__}", (base,), namespace)
    return _TRACED[base](comm)


def _base_request() -> type:
    """mpi4py's own ``Request`` class (``MPI.Request`` is the traced one while tracing)."""
    return _SAVED.get("Request") or _mpi().Request


def _request_class() -> type:
    """``MPI.Request`` with its completion calls (``Wait``, ``Waitall`` ...) as MPI regions
    that count the bytes of the receives they complete."""
    base = _base_request()
    if base not in _TRACED:
        namespace: dict[str, Any] = {}
        for method, name in _COMPLETIONS.items():
            if hasattr(base, method):
                completion = _wrap_completion(base, method, _Region(name, P2P))
                namespace[method] = completion if method in _ONE else classmethod(completion)
        _TRACED[base] = type("TracedRequest", (base,), namespace)
    return _TRACED[base]


def _traced_request(request: Any, receive: bool) -> Any:
    traced = _request_class()(request)
    traced._cubescale_receive = receive  # its completion counts the message's bytes
    return traced


def _is_receive(request: Any) -> bool:
    return bool(getattr(request, "_cubescale_receive", False))


def _wrap_completion(base: type, method: str, region: _Region) -> Callable:
    MPI = _mpi()
    original = getattr(base, method)

    if method in _ONE:  # request.Wait(status) ...
        def complete(self, status=None):
            mine = status if status is not None else MPI.Status()
            _measure.enter(region())
            try:
                result = original(self, mine)
                if _is_receive(self) and self == MPI.REQUEST_NULL:  # completed now
                    _measure.add_bytes(0, _count(mine))
                if self == MPI.REQUEST_NULL and getattr(self, "_cubescale_request", None):
                    _trace_completion(self, mine)
                return result
            finally:
                _measure.exit()

        complete.__name__ = complete.__qualname__ = method
        return complete

    def complete_many(cls, requests, *args, **kwargs):
        requests = list(requests)
        receives = [_is_receive(r) for r in requests]
        key = "status" if method in _ANY else "statuses"
        given = _argument(args, kwargs, 0, key)
        if given is None and any(receives):
            given = MPI.Status() if method in _ANY else [MPI.Status() for _ in requests]
            args, kwargs = (), {**kwargs, key: given}
        active = [r != MPI.REQUEST_NULL for r in requests]
        _measure.enter(region())
        try:
            result = original(requests, *args, **kwargs)
            if given is not None and any(receives):
                _measure.add_bytes(0, _completed_bytes(method, requests, receives, active, given, result))
            if _measure.tracing():
                for i, status in _completed(method, requests, active, given, result):
                    if getattr(requests[i], "_cubescale_request", None):
                        _trace_completion(requests[i], status)
            return result
        finally:
            _measure.exit()

    complete_many.__name__ = complete_many.__qualname__ = method
    return complete_many


def _completed_bytes(method: str, requests: list, receives: list, active: list, given: Any, result: Any) -> int:
    """Bytes of the receives a Waitall / Waitany / Waitsome ... completed (were active, are
    inactive now)."""
    MPI = _mpi()
    if method in _ANY:  # result: index, or (index, ...)
        index = result if isinstance(result, int) else result[0]
        ok = isinstance(index, int) and 0 <= index < len(requests) and receives[index] and active[index]
        return _count(given) if ok else 0
    if method in _SOME:  # result: indices of the completed requests; statuses in that order
        return sum(_count(given[k]) for k, i in enumerate(result or []) if receives[i] and active[i])
    return sum(_count(s) for r, s, receive, was in zip(requests, given, receives, active)
               if receive and was and r == MPI.REQUEST_NULL)


# Event tracing (trace_writer.hpp): the MPI events inside the regions above. Request ids
# number this process's requests; a request remembers (id, comm, kind, collective): kind
# "send", "recv" or "collective", and for a collective (operation, root, sent, received).
_REQUESTS = [0]
_SENDS = {"send", "Send", "ssend", "Ssend", "bsend", "Bsend", "Rsend"}
_ISENDS = {"isend", "Isend", "issend", "Issend", "ibsend", "Ibsend", "Irsend"}
_RECEIVES = {"recv", "Recv"}
_IRECEIVES = {"irecv", "Irecv"}
_SENDRECVS = {"sendrecv", "Sendrecv", "Sendrecv_replace"}


def _tag(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _send_bytes(method: str, args: tuple, kwargs: dict) -> int:
    if method[0].islower():
        return _pickled(_argument(args, kwargs, 0, "sendobj" if method == "sendrecv" else "obj"))
    return _buffer_bytes(_argument(args, kwargs, 0, "sendbuf" if method == "Sendrecv" else "buf"))


def _trace_before(comm: Any, method: str, name: str, kind: str, args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """Events at the start of an MPI call: sends (their message leaves now), the begin of a
    blocking collective, the request of a non-blocking call. Returns what a non-blocking
    call's completion needs (see ``_REQUESTS``; else None) and a send's bytes (else None)."""
    cid = comm._cubescale_comm
    if method in _SENDS or method in _SENDRECVS:
        dest = _argument(args, kwargs, 1, "dest")
        tag = _argument(args, kwargs, 2, "sendtag" if method in _SENDRECVS else "tag")
        sent = _send_bytes(method, args, kwargs)
        _measure.trace_send(dest, cid, _tag(tag), sent)
        return None, sent
    if method in _ISENDS:
        _REQUESTS[0] += 1
        dest, tag = _argument(args, kwargs, 1, "dest"), _argument(args, kwargs, 2, "tag")
        sent = _send_bytes(method, args, kwargs)
        _measure.trace_isend(dest, cid, _tag(tag), sent, _REQUESTS[0])
        return (_REQUESTS[0], cid, "send", None), sent
    if method in _IRECEIVES:
        _REQUESTS[0] += 1
        _measure.trace_irecv_request(_REQUESTS[0])
        return (_REQUESTS[0], cid, "recv", None), None
    if _nonblocking(name) and _collective(_blocking_name(name)):
        _REQUESTS[0] += 1
        _measure.trace_collective_request(_REQUESTS[0])
        root = _root(method, args, kwargs) if kind in ("bcast", "scatter", "gather") else -1
        return (_REQUESTS[0], cid, "collective", (_blocking_name(name), root)), None
    if _collective(name):
        _measure.trace_collective_begin()
    return None, None


def _nonblocking(name: str) -> bool:
    """A non-blocking MPI function by its name (MPI_Iallreduce, MPI_Ibarrier, MPI_Isend ...)."""
    return name.startswith("MPI_I")


def _blocking_name(name: str) -> str:
    """MPI_Iallreduce -> MPI_Allreduce."""
    return "MPI_" + name[5].upper() + name[6:] if name.startswith("MPI_I") else name


def _collective(name: str) -> bool:
    """A collective of OTF2's operations (``name``: the MPI function of its blocking form)."""
    return _measure.collective_operation(name) >= 0


def _trace_after(comm: Any, method: str, name: str, kind: str, args: tuple, kwargs: dict, status: Any,
                 sent: int, received: int) -> None:
    """Events at the end of an MPI call: receives (from their status), collective ends."""
    cid = comm._cubescale_comm
    if (method in _RECEIVES or method in _SENDRECVS) and status is not None:
        _measure.trace_recv(status.Get_source(), cid, _tag(status.Get_tag()), _count(status))
    elif not _nonblocking(name) and _collective(name):
        rooted = kind in ("bcast", "scatter", "gather")
        _measure.trace_collective_end(name, cid, _root(method, args, kwargs) if rooted else -1, sent, received)


def _trace_completion(request: Any, status: Any) -> None:
    """The completion of a traced request (in Wait, Test ...): MpiIrecv with the message's
    source, tag and bytes from its status, MpiIsendComplete, or NonBlockingCollectiveComplete."""
    rid, cid, kind, collective = request._cubescale_request
    if kind == "recv":
        source = status.Get_source() if status is not None else 0
        tag = status.Get_tag() if status is not None else 0
        _measure.trace_irecv(source, cid, _tag(tag), _count(status) if status is not None else 0, rid)
    elif kind == "send":
        _measure.trace_isend_complete(rid)
    else:
        operation, root, sent, received = collective
        _measure.trace_collective_complete(operation, cid, root, sent, received, rid)


def _completed(method: str, requests: list, active: list, given: Any, result: Any) -> list:
    """(index, status or None) of the requests a Waitall / Waitany / Waitsome ... completed."""
    MPI = _mpi()
    if method in _ANY:
        index = result if isinstance(result, int) else result[0]
        ok = isinstance(index, int) and 0 <= index < len(requests) and active[index]
        return [(index, given)] if ok else []
    if method in _SOME:
        return [(i, given[k] if given is not None else None) for k, i in enumerate(result or []) if active[i]]
    return [(i, given[i] if given is not None else None) for i, r in enumerate(requests)
            if active[i] and r == MPI.REQUEST_NULL]


def _define_comm(parent: Any, made: Any, traced: Any) -> None:
    """A communicator made from a traced one: its definition in the trace (members as world
    ranks), counted on the parent also where this rank is not in it (COMM_NULL)."""
    MPI = _mpi()
    members: list[int] = []
    if made != MPI.COMM_NULL and not made.Is_inter():
        group, world = made.Get_group(), _SAVED["COMM_WORLD"].Get_group()
        members = [int(r) for r in MPI.Group.Translate_ranks(group, list(range(group.Get_size())), world)]
        group.Free(), world.Free()
    cid = _measure.trace_communicator(parent._cubescale_comm, members)
    if members and traced is not made:
        traced._cubescale_comm = cid


def trace_mpi() -> None:
    """Makes ``MPI.COMM_WORLD``, ``MPI.COMM_SELF`` and ``MPI.Request`` record their calls
    (see the module), and ``MPI.Finalize`` wait for the report. Call it once MPI is
    initialized, before the program looks these names up (:func:`trace_mpi_on_import` waits
    for the program's own initialization).

    Example
    -------
    >>> from mpi4py import MPI
    >>> from cubescale import measure
    >>> from cubescale.measure.mpi import trace_mpi, untrace_mpi
    >>> measure.start()
    >>> trace_mpi()
    >>> MPI.COMM_WORLD.bcast({"n": 1}, root=0) == {"n": 1}
    True
    >>> untrace_mpi(); measure.stop()
    >>> [(r.name, r.role) for r in measure.profile()._core.regions]
    [('MPI_Bcast', 'one2all')]
    """
    MPI = _mpi()
    if _SAVED:
        return
    if not _up(MPI):  # wrapping a communicator calls MPI (MPI_Comm_test_inter)
        raise RuntimeError("trace_mpi needs MPI initialized and not finalized (trace_mpi_on_import waits for it)")
    for comm_id, name in enumerate(("COMM_WORLD", "COMM_SELF")):
        _SAVED[name] = getattr(MPI, name)
        setattr(MPI, name, _traced_comm(_SAVED[name]))
        getattr(MPI, name)._cubescale_comm = comm_id  # the trace's communicator ids 0 and 1
    _SAVED["Request"] = MPI.Request
    MPI.Request = _request_class()
    _SAVED["Finalize"] = MPI.Finalize
    MPI.Finalize = _finalize


def world() -> Any:
    """mpi4py's own ``MPI.COMM_WORLD`` (not the traced one), for the measurement's messages.

    Example
    -------
    >>> from cubescale.measure.mpi import world
    >>> world().Get_size() >= 1
    True
    """
    return _SAVED.get("COMM_WORLD") or _mpi().COMM_WORLD


def _up(MPI: Any) -> bool:
    # (parallel._mpi.mpi_up asks the same, but is no file of the measurement's own: called
    # while measuring, from the wrappers, it would be recorded as a region of the program)
    return bool(MPI.Is_initialized() and not MPI.Is_finalized())


_FINALIZE = _Region("MPI_Finalize", "function")


_FINALIZE_LATER: list[bool] = []  # the program asked for MPI.Finalize (or start_mpi ran MPI.Init)


def _finalize() -> None:
    """The program's ``MPI.Finalize()`` while traced: a region, and MPI stays up for the
    report; :func:`finalize_mpi` finalizes it afterwards."""
    _measure.enter(_FINALIZE())
    _FINALIZE_LATER[:] = [True]
    _measure.exit()


def finalize_mpi() -> None:
    """After the report: finalizes MPI where the program asked for it while traced, or where
    :func:`start_mpi` initialized it with ``MPI.Init`` (mpi4py finalizes at exit only what its
    import initialized).

    Example
    -------
    >>> from cubescale.measure.mpi import finalize_mpi
    >>> finalize_mpi()  # nothing was asked for
    """
    if _FINALIZE_LATER:
        _FINALIZE_LATER.clear()
        MPI = _mpi()
        if _up(MPI):
            MPI.Finalize()


# Waiting for the program to initialize MPI, as Score-P waits in its MPI_Init wrapper: the
# measurement never initializes MPI itself (that would fix the thread level and make the
# program's own MPI.Init fail), it wraps MPI.Init / Init_thread until they ran.
_ON_INIT: list[Callable[[], None]] = []
_INIT_SAVED: dict[str, Any] = {}


def _initialized(MPI: Any) -> None:
    """MPI is up: trace it, then run what waited for it."""
    for name, original in _INIT_SAVED.items():
        setattr(MPI, name, original)
    _INIT_SAVED.clear()
    trace_mpi()
    while _ON_INIT:
        _ON_INIT.pop(0)()


def _await_init(MPI: Any) -> None:
    """MPI is up now, or later in the program's ``MPI.Init`` / ``MPI.Init_thread``."""
    if _up(MPI):
        _initialized(MPI)
    elif not MPI.Is_finalized() and not _INIT_SAVED:
        for name in ("Init", "Init_thread"):
            _INIT_SAVED[name] = getattr(MPI, name)
            setattr(MPI, name, _init_wrapper(name, _INIT_SAVED[name]))


def _init_wrapper(name: str, original: Callable) -> Callable:
    """The program's ``MPI.Init`` / ``Init_thread`` as a region (``MPI_Init``, as Score-P
    records it), which also holds the measurement's own start over MPI."""
    region = _Region(f"MPI_{name}", "function")

    def init(*args: Any, **kwargs: Any) -> Any:
        _measure.enter(region())
        try:
            result = original(*args, **kwargs)
            _initialized(_mpi())
            return result
        finally:
            _measure.exit()

    init.__name__ = init.__qualname__ = name
    return init


class _TraceOnImport:
    """A ``sys.meta_path`` finder that hooks ``mpi4py.MPI`` right after the program imports
    it: importing it initializes MPI (unless the program set ``mpi4py.rc.initialize =
    False``), which a program that never uses MPI must not need."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "mpi4py.MPI":
            return None
        spec = self._found_by_others(name, path, target)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader

        class Loader:
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                _MPI[:] = [module]
                _await_init(module)

        spec.loader = Loader()  # type: ignore[assignment]  # the loader protocol is enough
        return spec

    def _found_by_others(self, name: str, path: Any, target: Any) -> Any:
        """The spec the import would find without this finder: mpi4py's PyPI wheels find their
        ``MPI`` extension (one per MPI ABI: ``MPI.openmpi.*.so``, ``MPI.mpich.*.so``) through
        a finder of their own, not on the path."""
        import sys

        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                return spec
        return None


def trace_mpi_on_import(on_init: Callable[[], None] | None = None) -> None:
    """Traces mpi4py as :func:`trace_mpi` does once the program has initialized MPI: at its
    import of ``mpi4py.MPI``, or, with ``mpi4py.rc.initialize = False``, in its own
    ``MPI.Init()`` / ``MPI.Init_thread()`` (its ``mpi4py.rc`` settings, such as the thread
    level, are left alone). ``on_init`` runs then too, once. :func:`untrace_mpi` undoes both.

    Example
    -------
    >>> from cubescale.measure.mpi import trace_mpi_on_import, untrace_mpi
    >>> trace_mpi_on_import(); untrace_mpi()
    """
    import sys

    if on_init is not None:
        _ON_INIT.append(on_init)
    module = sys.modules.get("mpi4py.MPI")
    if module is not None:
        _MPI[:] = [module]
        _await_init(module)
    elif not any(isinstance(f, _TraceOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _TraceOnImport())


def start_mpi() -> None:
    """Initializes MPI if the program did not (as mpi4py's ``rc`` says), through the hooks of
    :func:`trace_mpi_on_import`: after a program that never used MPI, its report needs it.

    Example
    -------
    >>> from cubescale.measure.mpi import start_mpi
    >>> start_mpi()
    """
    import importlib

    MPI = importlib.import_module("mpi4py.MPI")  # initializes MPI, unless rc.initialize is False
    if not MPI.Is_initialized():
        MPI.Init()
        _FINALIZE_LATER[:] = [True]


def untrace_mpi() -> None:
    """Restores the original communicators, ``MPI.Request`` and ``MPI.Init``.

    Example
    -------
    >>> from cubescale.measure.mpi import untrace_mpi
    >>> untrace_mpi()
    """
    import sys

    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _TraceOnImport)]
    _ON_INIT.clear()
    if _INIT_SAVED or _SAVED:
        MPI = _mpi()
        for name, value in (*_INIT_SAVED.items(), *_SAVED.items()):
            setattr(MPI, name, value)
        _INIT_SAVED.clear()
        _SAVED.clear()


_measure.ignore_file(__file__)  # the wrappers and their byte counting are no regions themselves
