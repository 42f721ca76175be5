"""How collation's blocks travel to the writer (rank 0): by request, from the ranks that
hold values of them, and from no one else.

Every rank knows the plan (the sequence of gathered blocks) and cuts its part of each block
itself (:class:`~cubescale._core.profile.RowSource`); most parts are empty (a rank holds a
few columns of a wide row, or never visited a block's call paths). A rank takes part only in
the blocks where its part is not empty:

* one ``Gather`` tells the writer every rank's first non-empty block and its size;
* the writer asks each sender of a block for its part with a small message and receives
  it (point to point); every part is followed by 16 bytes naming the sender's next
  non-empty block and its size, so the writer always knows who sends what next;
* the writer asks for block i + 1 before it writes block i (when the plan cut blocks to
  half the budget), so senders are at work while it writes; a sender never sends before it
  is asked, so nothing queues on the writer beyond the two blocks it asked for.

The writer's bookkeeping is one pending entry per rank (its next block and size); its work
per block and every other rank's work grow with the block's senders, not with the number of
ranks (a ``Gatherv`` takes a count from every rank for every block). A rank whose part
fails to cut stops sending (its last part says "nothing follows") and raises at the end
with everyone (``agree`` in :func:`~cubescale.parallel.collate`).

Example
-------
>>> part = (5, np.arange(3, dtype=np.uint8))
>>> first_of(part), _trailer(part).view("<i8").tolist(), _trailer(None).view("<i8").tolist()
([5, 3], [5, 3], [-1, 0])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["TRAILER", "BlockReceiver", "first_of", "nonempty_parts", "send_parts"]

_GO, _DATA = 61, 62
TRAILER = 16  # bytes after every part: (index, size) of the sender's next part, int64 each
_NOTHING = -1
Part = tuple[int, np.ndarray]


def nonempty_parts(count: int, part_of: Callable[[int], np.ndarray]) -> Iterator[Part]:
    """This rank's non-empty parts of the blocks 0..count-1, in block order."""
    for i in range(count):
        part = part_of(i)
        if len(part):
            yield i, part


def _trailer(following: Part | None) -> np.ndarray:
    index, size = (following[0], len(following[1])) if following is not None else (_NOTHING, 0)
    return np.array([index, size], dtype="<i8").view(np.uint8)


def first_of(part: Part | None) -> list[int]:
    """(block index, size) of a rank's first part, for the writer's ``Gather``."""
    return [part[0], len(part[1])] if part is not None else [_NOTHING, 0]


def send_parts(comm, first: Part | None, rest: Iterator[Part], stats: dict) -> None:
    """A sender's side: each part when the writer asks for it, followed by its trailer."""
    MPI = _mpi(comm)
    current, request = first, None
    ask = np.empty(1, dtype=np.uint8)
    while current is not None:
        following = next(rest, None)  # cut before waiting: the trailer names it
        asked = comm.Irecv([ask, MPI.BYTE], source=0, tag=_GO)
        asked.Wait()
        if request is not None:
            request.Wait()  # received by now: the writer asks only after taking the last part
        message = np.concatenate([current[1], _trailer(following)])
        request = comm.Isend([message, MPI.BYTE], dest=0, tag=_DATA)
        stats["bytes_sent"] += len(message)
        stats["blocks"] += 1
        current = following
    if request is not None:
        request.Wait()


class BlockReceiver:
    """The writer's side: ``take(i)`` returns block i's gathered bytes and the part size of
    each sender (each part followed by ``TRAILER`` bytes), in rank order, the writer's own
    part first. Blocks must be taken in order."""

    def __init__(self, comm, firsts: np.ndarray, own_first: Part | None, own_rest: Iterator[Part], blocks: int,
                 prefetch: bool):
        self.comm, self.MPI = comm, _mpi(comm)
        self.blocks, self.prefetch = blocks, prefetch
        self.own, self.own_rest = own_first, own_rest
        self.waiting: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}  # block -> (ranks, sizes) chunks
        ranks = np.flatnonzero((firsts[:, 0] >= 0) & (np.arange(len(firsts)) != comm.rank))
        self._wait_for(firsts[ranks, 0], ranks, firsts[ranks, 1])
        self.posted: dict[int, tuple] = {}
        self.ask = np.zeros(1, dtype=np.uint8)

    def _wait_for(self, blocks: np.ndarray, ranks: np.ndarray, sizes: np.ndarray) -> None:
        for b in np.unique(blocks):
            at = blocks == b
            self.waiting.setdefault(int(b), []).append((ranks[at], sizes[at]))

    def _post(self, i: int) -> None:
        chunks = self.waiting.pop(i, [])
        ranks = np.concatenate([c[0] for c in chunks]) if chunks else np.empty(0, np.int64)
        sizes = np.concatenate([c[1] for c in chunks]) if chunks else np.empty(0, np.int64)
        order = np.argsort(ranks, kind="stable")
        ranks, sizes = ranks[order], sizes[order]
        own = None
        if self.own is not None and self.own[0] == i:
            own = self.own[1]
            self.own = next(self.own_rest, None)
        own_size = len(own) + TRAILER if own is not None else 0
        buffer = np.empty(own_size + int(sizes.sum()) + TRAILER * len(sizes), dtype=np.uint8)
        if own is not None:
            buffer[:len(own)] = own
            buffer[len(own):own_size] = _trailer(None)  # the writer tracks its own parts itself
        requests, at = [], own_size
        for rank, size in zip(ranks.tolist(), sizes.tolist()):
            requests.append(self.comm.Irecv([buffer[at:at + size + TRAILER], self.MPI.BYTE], source=rank, tag=_DATA))
            requests.append(self.comm.Isend([self.ask, self.MPI.BYTE], dest=rank, tag=_GO))
            at += size + TRAILER
        part_sizes = np.concatenate([[len(own)] if own is not None else [], sizes]).astype(np.int64)
        self.posted[i] = (buffer, part_sizes, ranks, sizes, requests, own is not None)

    def take(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        if i not in self.posted:
            self._post(i)
        buffer, part_sizes, ranks, sizes, requests, has_own = self.posted.pop(i)
        if requests:
            self.MPI.Request.Waitall(requests)
        if len(ranks):
            own_size = part_sizes[0] + TRAILER if has_own else 0
            starts = own_size + np.cumsum(sizes + TRAILER) - TRAILER
            trailers = buffer[starts[:, None] + np.arange(TRAILER)].view("<i8").reshape(-1, 2)
            follows = trailers[:, 0] >= 0
            self._wait_for(trailers[follows, 0], ranks[follows], trailers[follows, 1])
        if self.prefetch and i + 1 < self.blocks:
            self._post(i + 1)  # its senders work while this block is written
        return buffer, part_sizes

    def held(self) -> int:
        """Bytes of the blocks asked for and not yet taken."""
        return sum(p[0].nbytes for p in self.posted.values())


def _mpi(comm):
    from ._mpi import mpi

    return mpi(comm)
