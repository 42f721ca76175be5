"""Memory of the wait-state replay step by step (issue #26): the bytes of records and of the
buffers beside them (``Replay.record_bytes() + Replay.beside_bytes()``) per communication
event of each rank's share, at their largest in each phase of the complete replay (extraction;
rounds begun; during the message rounds; after ``messages_beside``; every later step), with
the ranks' exchanges done by hand in one process (as ``parallel.analysis`` runs the steps under
mpirun, without MPI). Beside this installation, ``--baseline`` runs the same traces in another
installation's interpreter, side by side in one run (the numbers do not depend on the load).

    python benchmarks/waitstate_memory.py [--baseline OTHER_PYTHON] [--iterations 8000]

The traces, written once by this installation: the ring of ``tests/test_analysis_waitstates``
(send, receive and allreduce per iteration; 500 iterations), messages only (``testing.
messages_only_run``: blocking, half non-blocking, only non-blocking), the one-way case of
``testing.one_way_run`` (two pairs, every message its own tag) and one process sending 20,000
blocking messages to one receiving them by ``MPI_Irecv``/``MPI_Wait`` (one tag, and every
message its own tag in a scrambled order: out of queue order), at 1, 2 and 4 ranks (the
last at 1 and 2: two processes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

PHASES = ["extraction", "rounds begun", "rounds", "after messages_beside", "later"]


def _exchange(outgoing, counts, incoming, size):
    """Alltoallv by hand between the replays of one process: ``outgoing[r]`` holds
    ``counts[r][to]`` records of ``size`` bytes for each rank ``to``; returns the counts of the
    way back (``received[to][r]``)."""
    ranks = len(outgoing)
    received = [[int(counts[r][to]) for r in range(ranks)] for to in range(ranks)]
    starts = [np.concatenate([[0], np.cumsum(np.asarray(c, dtype=np.int64))]) for c in counts]
    for to in range(ranks):
        blocks = [outgoing[r][size * starts[r][to]:size * starts[r][to + 1]] for r in range(ranks)]
        incoming[to](sum(received[to]))[:] = np.concatenate(blocks)
    return received


def phases(path: str, ranks: int) -> dict[str, list[float]]:
    """Per phase each rank's largest bytes per own communication event (messages, collectives,
    OpenMP synchronization events) over the complete replay's steps on ``ranks`` ranks."""
    from cubescale._core import analysis as core
    from cubescale.parallel.analysis import ROUND_BYTES
    from cubescale.parallel.trace import rank_share
    from cubescale.trace import open as open_trace

    trace = open_trace(path)
    shares = [rank_share(trace, ranks, r)[1] for r in range(ranks)]
    owner = np.zeros(len(trace.locations), dtype=np.uint32)
    for r, share in enumerate(shares):
        owner[share] = r
    replays = [core.Replay(trace._core, trace.location_indices(), share, complete=True) for share in shares]
    events = [max(1, r.stats()["messages"] + r.stats()["collectives"] + r.omp_sync_events()) for r in replays]
    out: dict[str, list[float]] = {p: [0.0] * ranks for p in PHASES}

    def held(phase):
        now = [(r.record_bytes() + r.beside_bytes()) / e for r, e in zip(replays, events)]
        out[phase] = [max(a, b) for a, b in zip(out[phase], now)]

    def each(step, *args, phase="later"):
        result = [getattr(r, step)(*args) for r in replays]
        held(phase)
        return result

    held("extraction")
    totals = each("begin_sends", owner, ranks, phase="rounds begun")
    for to, r in enumerate(replays):
        r.expect_sends(sum(int(t[to]) for t in totals))
    for _ in range(max(r.send_rounds(ROUND_BYTES) for r in replays)):
        counts = each("pack_round", phase="rounds")
        sent = _exchange([r.outgoing_sends() for r in replays], counts, [r.incoming_round for r in replays],
                         core.Replay.send_bytes)
        each("answer_round", phase="rounds")
        _exchange([r.home_posted() for r in replays], sent, [r.posted for r in replays], 8)
        held("rounds")
        each("late_receiver_round", phase="rounds")
    each("messages_beside", phase="after messages_beside")
    each("match_messages")
    each("late_receiver")
    counts = [r.pack_collectives(ranks, list(range(ranks))) for r in replays]
    received = _exchange([r.outgoing_collectives() for r in replays], counts, [r.incoming_collectives for r in replays],
                         core.Replay.collective_bytes)
    held("later")
    each("collectives_beside_home")
    _exchange([r.home_extras() for r in replays], received, [r.extras for r in replays], core.Replay.extra_bytes)
    held("later")
    each("collectives_beside")
    each("reduce_collectives")
    _exchange([r.home_reductions() for r in replays], received, [r.reductions for r in replays],
              core.Replay.reduction_bytes)
    held("later")
    each("collective_severities")
    each("late_receiver_after")
    return out


def irecv_one_way(messages: int, own_tags: bool) -> tuple[list[list[tuple]], int]:
    """One process sending ``messages`` blocking messages to one that receives them by
    ``MPI_Irecv``/``MPI_Wait`` (with ``own_tags`` each its own tag, scrambled), as ``(calls per
    rank, end)`` for ``testing.write_mpi_trace``."""
    sends: list[tuple] = []
    receives: list[tuple] = []
    for i in range(messages):
        t, tag = 1000 * i, (7919 * i) % messages if own_tags else 0
        sends.append(("MPI_Send", t + 100, t + 200, [1], tag))
        receives += [("MPI_Irecv", t + 50, t + 60, [0], tag), ("MPI_Wait", t + 70, t + 250, [0], tag)]
    return [sends, receives], 1000 * messages + 1000


def write_traces(directory: str, iterations: int) -> list[tuple[str, str, list[int]]]:
    """(name, path, rank counts) of the traces measured, written into ``directory``."""
    from cubescale import testing

    cases = [("ring", None), ("blocking messages only", testing.messages_only_run(2000, False)),
             ("half non-blocking messages", testing.messages_only_run(2000, True)),
             ("only non-blocking messages", testing.messages_only_run(iterations, True, True)),
             ("one-way, a tag each", testing.one_way_run(20_000, 2)),
             ("MPI_Irecv receiver, one tag", irecv_one_way(20_000, False)),
             ("MPI_Irecv receiver, a tag each", irecv_one_way(20_000, True))]
    out = []
    for k, (name, calls) in enumerate(cases):
        if calls is None:
            testing.write_ring_trace(directory, f"t{k}", processes=4, iterations=500, counters=False)
        else:
            testing.write_mpi_trace(directory, f"t{k}", *calls)
        out.append((name, os.path.join(directory, f"t{k}.otf2"), [1, 2] if "Irecv" in name else [1, 2, 4]))
    return out


def measure(traces: list[tuple[str, str, list[int]]]) -> list[dict]:
    return [{"trace": name, "ranks": n, "phases": phases(path, n)} for name, path, counts in traces for n in counts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="interpreter of another cubescale installation, run side by side")
    parser.add_argument("--iterations", type=int, default=8000, help="of the only-non-blocking trace")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # JSON of the traces: measure them, print JSON
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(json.loads(args.worker))), flush=True)
        return
    with tempfile.TemporaryDirectory() as directory:
        traces = write_traces(directory, args.iterations)
        rows = {"this": measure(traces)}
        if args.baseline:
            done = subprocess.run([args.baseline, os.path.abspath(__file__), "--worker", json.dumps(traces)],
                                  capture_output=True, text=True, timeout=3000, cwd=directory)
            if done.returncode:
                raise SystemExit(f"baseline failed:\n{done.stderr[-2000:]}")
            rows["baseline"] = json.loads(done.stdout.strip().splitlines()[-1])
    print("bytes of records and buffers per own communication event, each rank's largest in the phase (rank 0 / 1 / ...)")
    print("| trace | ranks | build | " + " | ".join(PHASES) + " | largest |")
    print("|---|---:|---|" + "---:|" * (len(PHASES) + 1))
    for k in range(len(rows["this"])):
        for build in rows:
            r = rows[build][k]
            cells = ["/".join(f"{x:.1f}" for x in r["phases"][p]) for p in PHASES]
            largest = max(max(v) for v in r["phases"].values())
            print(f"| {r['trace']} | {r['ranks']} | {build} | " + " | ".join(cells) + f" | {largest:.1f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
