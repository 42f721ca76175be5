"""A seeded random MPI run for the comparison with scout (tests/test_analysis_scout.py): per
iteration a ring of blocking sends and receives (some synchronous), a random Isend/Irecv
pair completed by MPI_Waitall, and a random collective (barrier, allreduce, allgather, bcast,
reduce, gather, scatter, scan) with random roots; work between calls is random, so every
wait-state pattern occurs at many instances. Times (ns) come from a small simulation that
keeps the clock condition: a receive ends after its send began, a collective's synchronizing
members leave after the last relevant enter."""

from __future__ import annotations

import random

COLLECTIVES = ["MPI_Barrier", "MPI_Allreduce", "MPI_Allgather", "MPI_Bcast", "MPI_Reduce", "MPI_Gather",
               "MPI_Scatter", "MPI_Scan"]
ROOTED = {"MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Scatter"}


def random_run(processes: int = 4, iterations: int = 300, seed: int = 7) -> tuple[list[list[tuple]], int]:
    """(calls per rank as ``write_mpi_trace`` takes them, end time)."""
    rng = random.Random(seed)
    clock = [1000] * processes
    calls: list[list[tuple]] = [[("MPI_Init", 10, 500, [], 0)] for _ in range(processes)]
    latency = 20

    def work(r: int) -> int:
        clock[r] += rng.randint(10, 400)
        return clock[r]

    for it in range(iterations):
        # the ring in two phases (as MPI programs avoid deadlock): even ranks send to the
        # right while odd ranks receive from the left, then the other way round
        sync = it % 5 == 0
        for senders in (0, 1):
            enters = [work(r) for r in range(processes)]
            for r in range(processes):
                right, left = (r + 1) % processes, (r - 1) % processes
                if r % 2 == senders:
                    if right % 2 == senders:  # an odd number of processes: no partner this phase
                        continue
                    leave = max(enters[r], enters[right]) + latency if sync else enters[r] + 5
                    calls[r].append(("MPI_Ssend" if sync else "MPI_Send", enters[r], leave, [right], it % 7))
                elif left % 2 == senders:
                    leave = max(enters[r], enters[left]) + latency
                    calls[r].append(("MPI_Recv", enters[r], leave, [left], it % 7))
                else:
                    continue
                clock[r] = leave
        # a random pair: a sends to b with Isend, b receives with Irecv; both complete in Waitall
        a, b = rng.sample(range(processes), 2)
        ta, tb = work(a), work(b)
        calls[a] += [("MPI_Isend", ta, ta + 3, [b], 100 + it % 3), ("MPI_Waitall", ta + 10, ta + 15, [], 0)]
        wait_enter = tb + 10
        calls[b] += [("MPI_Irecv", tb, tb + 3, [a], 100 + it % 3),
                     ("MPI_Waitall", wait_enter, max(wait_enter, ta) + latency, [a], 100 + it % 3)]
        clock[a], clock[b] = ta + 15, max(wait_enter, ta) + latency
        # a random collective
        op = rng.choice(COLLECTIVES)
        root = rng.randrange(processes)
        enters = [work(r) for r in range(processes)]
        last = max(enters)
        for r in range(processes):
            if op in ("MPI_Barrier", "MPI_Allreduce", "MPI_Allgather"):
                leave = last + latency
            elif op == "MPI_Scan":
                leave = max(enters[: r + 1]) + latency
            elif op in ("MPI_Bcast", "MPI_Scatter"):
                leave = enters[r] + 5 if r == root else max(enters[r], enters[root]) + latency
            else:  # reduce, gather: the root waits for everyone
                leave = last + latency if r == root else enters[r] + 5
            calls[r].append((op, enters[r], leave, [root] if op in ROOTED else [], 0))
            clock[r] = leave
    end = max(clock) + 1000
    for r in range(processes):
        calls[r].append(("MPI_Finalize", end - 500 + 7 * r, end - 100, [], 0))
    return calls, end
