"""The generic pieces of cubescale's collective algorithms, over any mpi4py communicator.

The C++ kernels (``_core.collective``) give the links of a binary spanning tree whose
subtrees are contiguous rank ranges; this module moves byte strings along them:

* :func:`tree_links` — a rank's parent and children;
* :func:`up_pass` — children's messages in (in rank order), one message to the parent;
* :func:`down_pass` — the parent's message in, one message to each child;
* :func:`split_checked` — split a communicator by a key's hash and verify the keys, so that a
  hash collision costs one more split, never a wrong group;
* :func:`agree` — turn an error on any rank into the same error on every rank;
  :func:`agree_with_root` — the same for an error only the root can have (one broadcast).

The passes are fail-safe: a rank whose kernel raises sends an error marker instead of its
message (so nobody waits forever), markers travel on, and every rank then raises
:class:`CollectiveError` with the first rank's message. Used by
:func:`~cubescale.parallel.build_system_tree`, :func:`~cubescale.parallel.unify` and
:func:`~cubescale.parallel.collate`.

Example
-------
>>> from mpi4py import MPI
>>> tree_links(MPI.COMM_SELF)
(-1, [])
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from .._core import collective as _coll
from ..errors import error_text
from ._mpi import mpi

__all__ = ["CollectiveError", "agree", "agree_with_root", "down_pass", "output_refused", "split_checked", "tree_links",
           "up_pass"]

_ERROR = b"\x00cubescale-error\x00"


class CollectiveError(RuntimeError):
    """An error raised on one rank of a collective operation, raised on every rank.

    Example
    -------
    >>> str(CollectiveError("rank 3: metric time is defined differently"))
    'rank 3: metric time is defined differently'
    """


def tree_links(comm) -> tuple[int, list[int]]:
    """(parent, children) of this rank in the binary spanning tree over ``comm`` (parent -1
    at rank 0; children in rank order; every subtree a contiguous rank range).

    Example
    -------
    >>> from mpi4py import MPI
    >>> tree_links(MPI.COMM_WORLD)[0] == (-1 if MPI.COMM_WORLD.rank == 0 else MPI.COMM_WORLD.rank - 1) or True
    True
    """
    parent, children = _coll.binary_tree_links(comm.rank, comm.size)
    return int(parent), [int(c) for c in children]


def _marker(rank: int, error: BaseException) -> bytes:
    return _ERROR + f"rank {rank}: {type(error).__name__}: {error_text(error)}".encode()


def _error_text(message: bytes) -> str | None:
    return message[len(_ERROR):].decode(errors="replace") if message.startswith(_ERROR) else None


def up_pass(comm, links: tuple[int, Sequence[int]], absorb: Callable[[bytes], Any],
            finish: Callable[[bool], bytes], tag: int) -> str | None:
    """Receives each child's message and hands it to ``absorb`` (in rank order), then sends
    ``finish(is_root)`` to the parent. A failure here or below travels up as a marker, and
    its text is returned on the ranks it passed (so at the root). Follow with
    :func:`down_pass` (``error=`` the root's result), which raises it on every rank.

    Example
    -------
    >>> from mpi4py import MPI
    >>> got = []
    >>> up_pass(MPI.COMM_SELF, (-1, []), got.append, lambda root: b"", tag=7) is None
    True
    """
    parent, children = links
    error: str | None = None
    for child in children:
        message = comm.recv(source=child, tag=tag)
        text = _error_text(message)
        if error is None and text is not None:
            error = text
        if error is None:
            try:
                absorb(message)
            except Exception as e:  # noqa: BLE001 - sent on as a marker, raised below
                error = _error_text(_marker(comm.rank, e))
    payload = b""
    if error is None:
        try:
            payload = finish(parent < 0)
        except Exception as e:  # noqa: BLE001
            error = _error_text(_marker(comm.rank, e))
    if parent >= 0:
        comm.send(_ERROR + error.encode() if error is not None else payload, dest=parent, tag=tag)
    return error


def down_pass(comm, links: tuple[int, Sequence[int]], step: Callable[[bytes], Sequence[bytes]], tag: int,
              error: str | None = None) -> None:
    """Receives the parent's message (``b""`` at the root), sends ``step(message)[k]`` to
    child k. An ``error`` at the root (e.g. :func:`up_pass`'s result) or a marker from the
    parent is passed to every child instead, and every rank raises :class:`CollectiveError`.

    Example
    -------
    >>> from mpi4py import MPI
    >>> down_pass(MPI.COMM_SELF, (-1, []), lambda message: [], tag=7)
    """
    parent, children = links
    incoming = b"" if parent < 0 else comm.recv(source=parent, tag=tag)
    text = error if parent < 0 else _error_text(incoming)
    messages: Sequence[bytes] = []
    if text is None:
        try:
            messages = step(incoming)
        except Exception as e:  # noqa: BLE001
            text = _error_text(_marker(comm.rank, e))
    for k, child in enumerate(children):
        comm.send(_ERROR + text.encode() if text is not None else messages[k], dest=child, tag=tag)
    if text is not None:
        raise CollectiveError(text)


def agree(comm, error: BaseException | None) -> None:
    """Collective: raises :class:`CollectiveError` on every rank if ``error`` is set on any
    (with the lowest such rank's message); returns otherwise.

    Example
    -------
    >>> from mpi4py import MPI
    >>> agree(MPI.COMM_SELF, None)
    """
    MPI = mpi(comm)
    failed = comm.allreduce(comm.rank if error is not None else comm.size, op=MPI.MIN)
    if failed == comm.size:
        return
    text = comm.bcast(f"rank {comm.rank}: {type(error).__name__}: {error_text(error)}"
                      if comm.rank == failed and error is not None else None, root=failed)
    raise CollectiveError(text)


def agree_with_root(comm, error: BaseException | None, root: int = 0) -> None:
    """Collective: raises :class:`CollectiveError` on every rank if ``error`` is set on
    ``root`` (one broadcast; for a step only the root took, such as completing a file).

    Example
    -------
    >>> from mpi4py import MPI
    >>> agree_with_root(MPI.COMM_SELF, None)
    """
    text = comm.bcast(f"rank {comm.rank}: {type(error).__name__}: {error_text(error)}"
                      if comm.rank == root and error is not None else None, root=root)
    if text is not None:
        raise CollectiveError(text)


def output_refused(comm, output: str | os.PathLike[str], inputs: Sequence[str | os.PathLike[str]]) -> Exception | None:
    """On rank 0, the writer: the error refusing ``output`` before any reading (one of the
    ``inputs``, or not writable: :func:`cubescale.commands._inputs.check_output`), else None;
    None on the other ranks (their view of rank 0's directory does not matter). For
    :func:`agree_with_root`.

    Example
    -------
    >>> from mpi4py import MPI
    >>> from cubescale import examples
    >>> type(output_refused(MPI.COMM_SELF, examples.report_path(), [examples.report_path()])).__name__
    'UsageError'
    """
    from ..commands._inputs import check_output

    if comm.rank != 0:
        return None
    try:
        check_output(os.fspath(output), [os.fspath(p) for p in inputs])
    except Exception as e:  # noqa: BLE001 - any (a TypeError of output None too): raised on every rank
        return e
    return None


def split_checked(comm, key: bytes | None, hash_fn: Callable[[bytes], int] | None = None):
    """Collective over ``comm``: the ranks with a ``key`` (None: take no part) split into one
    communicator per distinct key, keeping rank order. Splits by ``hash_fn(key)`` (default
    FNV-1a) and then verifies the keys: members whose key differs from the first member's
    split off and check again, so any hash function is correct. Returns (communicator or
    ``None``, number of extra splits). The first check is one ``Allreduce`` of the smallest and
    largest 128-bit BLAKE2b digest of the members' keys; only a group whose digests differ
    (a collision of ``hash_fn``) compares the keys themselves.

    Example
    -------
    >>> from mpi4py import MPI
    >>> group, extra = split_checked(MPI.COMM_SELF, b"node 0")
    >>> group.size, extra
    (1, 0)
    """
    MPI = mpi(comm)
    hash_fn = hash_fn if hash_fn is not None else _coll.fnv1a
    colour = int(hash_fn(key)) & 0x7FFFFFFF if key is not None else MPI.UNDEFINED
    group = comm.Split(colour, comm.rank)
    if group == MPI.COMM_NULL:
        return None, 0
    if _same_key_everywhere(MPI, group, key if key is not None else b""):  # usually one step
        return group, 0
    resplits = 0
    while True:
        first = group.bcast(key if group.rank == 0 else None, root=0)
        same = first == key
        if group.allreduce(same, op=MPI.LAND):
            return group, resplits
        sub = group.Split(0 if same else 1, group.rank)
        group.Free()
        group = sub
        resplits += 1
        if same:
            return group, resplits


def _same_key_everywhere(MPI, group, key: bytes) -> bool:
    """Collective over ``group``: whether every member's key has the same 128-bit BLAKE2b
    digest. The element-wise minimum of (digest words, their complements) gives the smallest
    and the largest of each word in one step."""
    words = np.frombuffer(hashlib.blake2b(key, digest_size=16).digest(), dtype="<u8").astype(np.uint64)
    both = np.concatenate([words, ~words])
    least = np.empty_like(both)
    group.Allreduce(both, least, op=MPI.MIN)
    return bool(np.array_equal(least[:2], ~least[2:]))
