"""Wait-state analysis (issue #26), in one run: events per second of the whole analysis
(profile + record extraction + matching + metric tree + writing the report) vs reading the
same events with the OTF2 library alone (empty callbacks: the limit), on the largest shared
trace with MPI and on a generated trace of >= 50 M events (a ring of MPI processes: send,
receive and allreduce in every iteration, written by the C++ writer); one process without MPI
(best of three) on one thread and on a thread per core (``cubescale.analyze``'s default: the
locations cut into whole processes, read at once) and the parallel replay under mpirun at 1, 2
and 4 ranks; per rank its wall
and CPU seconds, its peak memory (ru_maxrss) against the trace's size, and the bytes of records
it held at once per communication event of its share (messages, collectives and OpenMP
synchronization events: fork, team begin and end, join, barrier enter and leave, lock
acquisition); and per trace the one-process analysis step by step (its ``seconds``) on one
thread and on every core: which steps the threads share.

    python benchmarks/waitstate.py [--iterations 900000] [--processes 4] [--ranks 1 2 4] [--data ../shared/data]
                                   [--messages 50000] [--one-way 20000] [--baseline OTHER_PYTHON]

``--messages N`` adds three generated traces of point-to-point messages without collectives (N
iterations on a ring of 4 processes of MPI_Ssend / MPI_Recv, then MPI_Send / MPI_Recv or
MPI_Isend / MPI_Irecv / MPI_Waitall; and only MPI_Isend / MPI_Irecv / MPI_Waitall; 0: none):
the worst cases for the memory of the message exchange.

``--one-way N`` adds a generated trace of 4 processes, two of them each sending N blocking
messages to one of the other two, which only receive, every message with its own tag
(``cubescale.testing.one_way_run``; 0: none): a message queue per message, and at 2 ranks a
rank whose locations only receive.

``--time-correct`` runs every analysis with the time correction (the replay's correction in
rounds over the ranks: about one round per hand-off between ranks, so a long ring or messages
trace takes as many rounds as iterations; ``--iterations 0`` leaves the generated ring out).

``--baseline`` names the interpreter of another installation of cubescale (an earlier commit
in its own virtualenv): its one-process analysis and its replays run in the same run, in
rows of their own beside this installation's, so that a change is measured under the same
load.

With two cores, 4 ranks wait for a core: their wall time is not their CPU time. On a shared
machine the wall times move with the load; the CPU columns (getrusage / process_time, all
threads) compare the work itself.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from cubescale import testing
from cubescale._core import analysis as _analysis
from cubescale.mpirun import local_environment
from cubescale.trace import open as open_trace


def best(function, repeat: int = 3) -> tuple[float, float]:
    """(wall, CPU) seconds of the fastest of ``repeat`` runs (CPU: all threads of this process)."""
    times = []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        function()
        times.append((time.perf_counter() - start, time.process_time() - cpu))
    return min(times)


def trace_bytes(path: str) -> int:
    folder = os.path.splitext(path)[0]
    total = os.path.getsize(path)
    for root, _, files in os.walk(folder):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


# --time-correct: every analysis with the time correction (set by main, handed to the workers).
CORRECT = {"time_correct": False}


def alone_worker(path: str, threads: int = 1) -> None:
    """In a baseline interpreter: the one-process analysis on ``threads`` threads (one where the
    baseline is older than threads), best of three, as one JSON line."""
    trace = open_trace(path)
    locations = trace.location_indices()
    options = dict(CORRECT, threads=threads) if threads > 1 else CORRECT
    wall, cpu = best(lambda: _analysis.analyze(trace._core, locations, **options))
    print(json.dumps({"wall": wall, "cpu": cpu}), flush=True)


def alone_elsewhere(python: str, path: str, threads: int = 1) -> tuple[float, float]:
    """(wall, CPU) of the one-process analysis run by another installation's interpreter."""
    done = subprocess.run([python, os.path.abspath(__file__), "--alone", path, str(threads)] + _correct_flag(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{python} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.splitlines()[-1])
    return result["wall"], result["cpu"]


def write_messages_trace(folder: str, iterations: int, nonblocking: bool, only_nonblocking: bool = False) -> str:
    """``cubescale.testing.messages_only_run`` written into ``folder``; returns its anchor."""
    name = "only-nonblocking" if only_nonblocking else "nonblocking" if nonblocking else "blocking"
    testing.write_mpi_trace(folder, name, *testing.messages_only_run(iterations, nonblocking, only_nonblocking))
    return os.path.join(folder, f"{name}.otf2")


def worker(path: str, output: str) -> None:
    """Under mpirun: one replay, then every rank's costs as one JSON line from rank 0."""
    from mpi4py import MPI

    from cubescale.parallel.analysis import analyze_trace

    comm = MPI.COMM_WORLD
    before = resource.getrusage(resource.RUSAGE_SELF)
    comm.Barrier()
    start = time.perf_counter()
    stats = analyze_trace(comm, path, output, **CORRECT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    mine = {"wall": wall, "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
            "maxrss": after.ru_maxrss * 1024, "maxrss_before": before.ru_maxrss * 1024,
            "record_bytes": stats["record_bytes"], "own": stats["own"], "seconds": stats["seconds"],
            "threads": stats.get("threads", 1)}
    everyone = comm.gather(mine, root=0)
    if comm.rank == 0:
        print(json.dumps({"events": stats["events"], "ranks": everyone}), flush=True)


def _correct_flag() -> list[str]:
    return ["--time-correct"] if CORRECT["time_correct"] else []


def replay(path: str, ranks: int, output: str, python: str = sys.executable, unbound: bool = False) -> dict:
    """One replay under mpirun; ``unbound``: ``--bind-to none`` (a rank may run on every core:
    it reads its share on a thread per core, where Open MPI otherwise binds up to 2 ranks to a
    core each)."""
    command = ["timeout", "-k", "5", "3000", "mpirun", "-n", str(ranks)] + (["--bind-to", "none"] if unbound else []) + [
               python, os.path.abspath(__file__),
               "--worker", path, output] + _correct_flag()
    done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mpirun -n {ranks} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return json.loads(next(line for line in done.stdout.splitlines() if line.startswith("{")))


def measure(name: str, path: str, ranks: list[int], folder: str,
            baseline: str | None = None) -> tuple[list[str], list[str], list[str]]:
    """(speed rows, memory rows, step rows) of one trace; with ``baseline`` (another
    interpreter) its rows too."""
    trace = open_trace(path)
    locations = trace.location_indices()
    events = int(trace.announced_events().sum())
    size = trace_bytes(path)
    limit, limit_cpu = best(lambda: testing.read_with_empty_callbacks(trace, locations))
    alone, alone_cpu = best(lambda: _analysis.analyze(trace._core, locations, threads=1, **CORRECT))
    from cubescale.analysis import available_cores  # here: a baseline older than threads runs this file too

    cores = available_cores()
    threaded, threaded_cpu = best(lambda: _analysis.analyze(trace._core, locations, threads=cores, **CORRECT))
    stats = _analysis.analyze(trace._core, locations, **CORRECT)[1]
    # Where the time goes, step by step: one more run on one thread and on every core.
    one = _analysis.analyze(trace._core, locations, threads=1, **CORRECT)[1]["seconds"]
    every = _analysis.analyze(trace._core, locations, threads=cores, **CORRECT)[1]["seconds"]
    steps = [f"| {name} | {step} | {one[step] * 1e3:.1f} | {every.get(step, 0.0) * 1e3:.1f} |" for step in one]
    steps.append(f"| {name} | all | {sum(one.values()) * 1e3:.1f} | {sum(every.values()) * 1e3:.1f} |")
    rows = [f"| {name} | {events:,} ({size / 2**20:.0f} MiB) | libotf2 alone (limit) | {limit:.2f} | {limit_cpu:.2f} | "
            f"{events / limit / 1e6:.2f} | 100 % | 100 % |",
            f"| {name} | | one process, no MPI, 1 thread | {alone:.2f} | {alone_cpu:.2f} | {events / alone / 1e6:.2f} | "
            f"{limit / alone * 100:.0f} % | {limit_cpu / alone_cpu * 100:.0f} % |",
            f"| {name} | | one process, no MPI, {cores} threads | {threaded:.2f} | {threaded_cpu:.2f} | "
            f"{events / threaded / 1e6:.2f} | {limit / threaded * 100:.0f} % | {limit_cpu / threaded_cpu * 100:.0f} % |"]
    if baseline:
        for n in sorted({1, cores}):
            before, before_cpu = alone_elsewhere(baseline, path, n)
            rows.append(f"| {name} | | baseline: one process, no MPI, {n} thread{'s' if n > 1 else ''} | {before:.2f} | "
                        f"{before_cpu:.2f} | {events / before / 1e6:.2f} | {limit / before * 100:.0f} % | "
                        f"{limit_cpu / before_cpu * 100:.0f} % |")
    memory = []
    # The replays as mpirun binds them, and one rank on every core (reading on a thread per core).
    runs = [(n, False) for n in ranks] + ([(1, True)] if 1 in ranks and cores > 1 else [])
    for n, unbound in runs:
        for label, python in [("", sys.executable)] + ([("baseline: ", baseline)] if baseline else []):
            result = replay(path, n, os.path.join(folder, f"{os.path.basename(folder)}.n{n}.cubex"), python, unbound)
            wall = max(r["wall"] for r in result["ranks"])
            cpu = "/".join(f"{r['cpu']:.2f}" for r in result["ranks"])
            cpu_sum = sum(r["cpu"] for r in result["ranks"])
            waiting = " (4 ranks on 2 cores)" if n > os.cpu_count() else ""  # type: ignore[operator]
            if unbound:
                reading = result["ranks"][0]["threads"]
                waiting = f" on {cores} cores (--bind-to none: reads on {reading} thread{'s' if reading > 1 else ''})"
            rows.append(f"| {name} | | {label}replay, {n} rank{'s' if n > 1 else ''}{waiting} | {wall:.2f} | {cpu} | "
                        f"{events / wall / 1e6:.2f} | {limit / wall * 100:.0f} % | {limit_cpu / cpu_sum * 100:.0f} % |")
            for k, r in enumerate(result["ranks"]):
                own = r["own"]
                communication = own["messages"] + own["collectives"] + own.get("omp_syncs", 0)
                memory.append(f"| {name} | {label}{n}{' unbound' if unbound else ''} | {k} | {own['events']:,} | {communication:,} | "
                              f"{r['maxrss'] / 2**20:.0f} | {(r['maxrss'] - r['maxrss_before']) / 2**20:.0f} | "
                              f"{size / 2**20:.0f} | {r['record_bytes'] / max(communication, 1):.1f} |")
    rows.append(f"| {name} | {stats['messages'] + stats['collectives']:,} communication events | | | | | | |")
    return rows, memory, steps


def main() -> None:
    CORRECT["time_correct"] = "--time-correct" in sys.argv
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--alone":
        alone_worker(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else 1)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=900000)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--messages", type=int, default=50000, help="iterations of the messages-only trace (0: none)")
    parser.add_argument("--one-way", type=int, default=20000,
                        help="messages per sender of the one-way trace, each its own tag (0: none)")
    parser.add_argument("--baseline", help="interpreter of another cubescale installation to run side by side")
    parser.add_argument("--time-correct", action="store_true", help="every analysis with the time correction")
    parser.add_argument("--data", default=os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")))
    args = parser.parse_args()
    folder = tempfile.mkdtemp()
    try:
        speed, memory, steps = measure("jacobi-hybrid (shared)", os.path.join(args.data, "otf2", "jacobi-hybrid", "traces.otf2"),
                                args.ranks, folder, args.baseline)
        if args.iterations:
            start = time.perf_counter()
            written = testing.write_ring_trace(folder, "ring", processes=args.processes, iterations=args.iterations,
                                               counters=False)
            print(f"generated ring: {written:,} events in {time.perf_counter() - start:.1f} s", flush=True)
            more = measure(f"generated ring ({args.processes} processes)", os.path.join(folder, "ring.otf2"),
                           args.ranks, folder, args.baseline)
            speed, memory, steps = speed + more[0], memory + more[1], steps + more[2]
        for nonblocking, only in [(False, False), (True, False), (True, True)] if args.messages else []:
            kind = "only non-blocking" if only else "non-blocking" if nonblocking else "blocking"
            more = measure(f"generated {kind} messages only (4 processes)",
                           write_messages_trace(folder, args.messages, nonblocking, only), args.ranks, folder,
                           args.baseline)
            speed, memory, steps = speed + more[0], memory + more[1], steps + more[2]
        if args.one_way:
            testing.write_mpi_trace(folder, "one-way", *testing.one_way_run(args.one_way, pairs=2))
            more = measure("generated one-way messages, a tag each (4 processes)", os.path.join(folder, "one-way.otf2"),
                           args.ranks, folder, args.baseline)
            speed, memory, steps = speed + more[0], memory + more[1], steps + more[2]
    finally:
        shutil.rmtree(folder)
    print("| trace | events | what | wall s | CPU s (per rank) | M events/s | of the limit (wall) |"
          " of the limit (CPU, all ranks) |")
    print("|---|---|---|---:|---|---:|---:|---:|")
    print("\n".join(speed))
    print()
    print("| trace | ranks | rank | own events | own communication events | ru_maxrss MiB | maxrss growth MiB |"
          " trace MiB | record bytes per own communication event |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(memory))
    print()
    print("| trace | step (one process) | 1 thread ms | every core ms |")
    print("|---|---|---:|---:|")
    print("\n".join(steps))


if __name__ == "__main__":
    main()
