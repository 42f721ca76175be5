"""`cubescale run --trace` and `measure.start(trace=...)` in one process: the OTF2 archive has
exactly the Enter/Leave events of the regions the profile records (filters and depth limit
alike), otf2-print validates it, the profile derived from the trace has the profile's call
tree and visits with times within 1 %, a small buffer is flushed while the program runs (and
the flushes are a region of the profile), and a program that raises leaves a whole archive."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from call_path_totals import visits_and_time

import cubescale
import cubescale.trace
from cubescale import measure

APP = textwrap.dedent("""
    import sys

    def leaf():
        return 1

    def work(n):
        total = 0
        for _ in range(n):
            total += leaf()
        return total

    for _ in range(int(sys.argv[1])):
        work(int(sys.argv[2]))
    if sys.argv[3] == "raise":
        raise ValueError("the program failed")
""")


def _run(tmp_path, *args, options=(), name="app"):
    """`cubescale run -o NAME.cubex --trace` (its trace in NAME-trace by default)."""
    app = tmp_path / "app.py"
    app.write_text(APP)
    out = tmp_path / f"{name}.cubex"
    trace = tmp_path / f"{name}-trace"
    done = subprocess.run([sys.executable, "-m", "cubescale", "run", "-o", str(out), "--quiet", "--trace", *options,
                           str(app), *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return done, out, trace / "traces.otf2"


def _validate(anchor) -> None:
    """otf2-print (Debian's otf2-tools) reads every record and treats warnings as errors."""
    if shutil.which("otf2-print") is None:
        pytest.skip("otf2-print (otf2-tools) is not installed")
    done = subprocess.run(["otf2-print", "--silent", "-Werror", str(anchor)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def _names(anchor, location=0) -> list[str]:
    e = cubescale.trace.open(anchor).events(locations=[location], types=["ENTER", "LEAVE"])
    return [("+" if t == "ENTER" else "-") + str(n) for t, n in zip(e["Event Type"], e["Name"])]


def _calls(program: str, calls: int, n: int, depth: int = 99, collapse: bool = True) -> list[str]:
    """The expected Enter (+) and Leave (-) events of APP's main thread: levels up to ``depth``
    (with ``collapse``, the depth limit: the level below it is a COLLAPSE)."""
    def region(name, inner, level):
        if collapse and level == depth + 1:  # the outermost call below the limit, as in the profile
            return ["+COLLAPSE", "-COLLAPSE"]
        return [] if level > depth else [f"+{name}", *inner, f"-{name}"]
    leaf = region("leaf", [], 4)
    work = region("work", leaf * n, 3)
    return region(program, region("<module>", work * calls, 2), 1)


def test_exactly_the_calls_and_otf2_print_validates(tmp_path):
    done, out, anchor = _run(tmp_path, "3", "4", "ok")
    assert done.returncode == 0, done.stderr
    assert _names(anchor) == _calls("app.py", 3, 4)
    _validate(anchor)
    t = cubescale.trace.open(anchor)
    assert t.locations["name"].tolist() == ["Master thread"]
    assert os.path.exists(out)  # the profile of the same run
    assert not os.path.exists(str(anchor.parent) + ".partial")


def test_trace_profile_has_the_profiles_tree_visits_and_times(tmp_path):
    done, out, anchor = _run(tmp_path, "50", "200", "ok")
    assert done.returncode == 0, done.stderr
    recorded, derived = visits_and_time(cubescale.open(out)), visits_and_time(cubescale.trace.profile(anchor))
    assert set(recorded) == set(derived)
    for path, (visits, time) in recorded.items():
        assert derived[path][0] == visits, path
        assert derived[path][1] == pytest.approx(time, rel=0.01, abs=1e-9), path
    assert recorded[("app.py", "<module>", "work", "leaf")][0] == 50 * 200


def test_filter_and_depth_limit_apply_as_in_the_profile(tmp_path):
    done, _, anchor = _run(tmp_path, "2", "3", "ok", options=("--depth", "3"))
    assert done.returncode == 0, done.stderr
    assert _names(anchor) == _calls("app.py", 2, 3, depth=3)
    filt = tmp_path / "f.filt"
    filt.write_text("SCOREP_REGION_NAMES_BEGIN\n EXCLUDE leaf\nSCOREP_REGION_NAMES_END\n")
    done, _, anchor = _run(tmp_path, "2", "3", "ok", options=("--filter", str(filt)), name="filtered")
    assert done.returncode == 0, done.stderr
    assert _names(anchor) == _calls("app.py", 2, 3, depth=3, collapse=False)  # leaf filtered out


def test_small_buffer_is_flushed_while_running_and_the_events_stay_exact(tmp_path):
    calls = 60000  # 120,000 leaf events: more than 512 KiB (a chunk size other than the smallest)
    done, out, anchor = _run(tmp_path, "1", str(calls), "ok", options=("--trace-buffer", str(512 * 1024)))
    assert done.returncode == 0, done.stderr
    t = cubescale.trace.open(anchor)
    counts = t.event_counts()
    flushes = int(counts.loc[0, "BUFFER_FLUSH"])
    assert flushes >= 1
    e = t.events(types=["ENTER"])
    assert int((e["Name"] == "leaf").sum()) == calls
    _validate(anchor)
    r = cubescale.open(out)  # the flushes are visits of Score-P's region in the profile
    rows = [c.index for c in r.cnodes if c.region.name == "TRACE BUFFER FLUSH"]
    assert int(r.values("visits", inclusive=False)[rows].sum()) == flushes
    size = os.path.getsize(anchor.parent / "traces" / "0.evt")
    # Bytes per event on disk: libotf2 stores a changed timestamp in full (9 bytes), so 12 is
    # about its floor for Enter/Leave; issue #27's goal is at most 12.
    assert size / counts.loc[0].sum() < 12.5


def test_a_program_that_raises_leaves_a_whole_archive(tmp_path):
    done, out, anchor = _run(tmp_path, "2", "3", "raise")
    assert done.returncode == 1
    assert "the program failed" in done.stderr
    names = _names(anchor)
    assert names == _calls("app.py", 2, 3)  # every region closed
    _validate(anchor)


def test_an_existing_directory_is_refused_before_the_program_runs(tmp_path):
    os.makedirs(tmp_path / "app-trace")
    done, out, _ = _run(tmp_path, "1", "1", "ok")
    assert done.returncode != 0
    assert "exists" in done.stderr
    assert not os.path.exists(out)
    with pytest.raises(OSError) as e:
        measure.start(trace=tmp_path / "app-trace")
    assert e.value.errno == errno.EEXIST
    measure.stop()
    with pytest.raises(ValueError, match="positive"):
        measure.start(trace=tmp_path / "other-trace", trace_buffer=-1)
    done, _, _ = _run(tmp_path, "1", "1", "ok", options=("--trace-buffer", "0"), name="zero")
    assert done.returncode != 0 and "at least 262144" in done.stderr and "Traceback" not in done.stderr


def test_measure_start_trace_with_threads_and_manual_regions(tmp_path):
    import threading

    d = tmp_path / "api-trace"
    measure.start(trace=d)
    with measure.region("main"):
        worker = threading.Thread(target=lambda: measure.region("in thread").__enter__().__exit__(None, None, None),
                                  name="worker")
        worker.start()
        worker.join()
    measure.stop()
    anchor = measure.write_trace()
    t = cubescale.trace.open(anchor)
    assert t.locations["name"].tolist() == ["Master thread", "worker"]
    # The thread's create and join inside pthread_create / pthread_join, as Score-P has them.
    assert _names(anchor, 0) == ["+main", "+pthread_create", "-pthread_create", "+pthread_join", "-pthread_join",
                                 "-main"]
    assert _names(anchor, 1) == ["+in thread", "-in thread"]
    p = measure.profile()
    assert np.array_equal(np.sort(p.values("visits").sum(axis=1)), [1, 1, 1, 1])
    _validate(anchor)


def test_threads_and_mpi4py_without_mpirun(tmp_path):
    """A program that starts a thread and imports mpi4py itself (no mpirun): a location per
    thread, and its MPI calls with their events on a one-rank MPI_COMM_WORLD."""
    pytest.importorskip("mpi4py")
    app = tmp_path / "threads.py"
    app.write_text(textwrap.dedent("""
        import threading
        from mpi4py import MPI

        def side():
            return sum(range(10))

        t = threading.Thread(target=side, name="side")
        t.start()
        t.join()
        MPI.COMM_WORLD.allreduce(1)
        MPI.COMM_WORLD.Barrier()
    """))
    trace = tmp_path / "threads-trace"
    done = subprocess.run([sys.executable, "-m", "cubescale", "run", "-o", str(tmp_path / "threads.cubex"), "--quiet",
                           "--trace", "--trace-dir", str(trace), str(app)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    t = cubescale.trace.open(trace / "traces.otf2")
    names = t.locations["name"].tolist()
    assert names[0] == "Master thread" and "side" in names
    side = names.index("side")
    assert _names(trace / "traces.otf2", side)[0] == "+side"
    e = t.events(locations=[0], types=["MPI_COLLECTIVE_END"])
    assert len(e) == 2
    assert (e["Bytes"].tolist(), e["Partner"].tolist()) == ([5, 0], [-1, -1])  # the pickled 1; no root
    _validate(trace / "traces.otf2")


THREADS_APP = textwrap.dedent("""
    import threading

    barrier = threading.Barrier(2)

    def work():
        barrier.wait()

    def starter():  # starts a thread of its own and joins it: who started whom
        inner = threading.Thread(target=work, name="inner")
        inner.start()
        inner.join()

    outer = threading.Thread(target=starter, name="outer")
    outer.start()
    work()
    outer.join()
    outer.join(timeout=5.0)  # a second join waits for nothing: no second ThreadWait
""")


def _inside(anchor) -> dict[str, list[str]]:
    """{THREAD_CREATE / THREAD_WAIT: the innermost open region at each of them} from otf2-print's
    listing, over every location."""
    done = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    stacks: dict[str, list[str]] = {}
    out: dict[str, list[str]] = {"THREAD_CREATE": [], "THREAD_WAIT": []}
    for line in done.stdout.splitlines():
        fields = line.split()
        if not fields or fields[0] not in ("ENTER", "LEAVE", *out):
            continue
        stack = stacks.setdefault(fields[1], [])
        if fields[0] == "ENTER":
            stack.append(line.split('Region: "')[1].split('"')[0])
        elif fields[0] == "LEAVE":
            stack.pop()
        else:
            out[fields[0]].append(stack[-1] if stack else "")
    return out


def _thread_events(anchor) -> dict[str, list[tuple[str, int]]]:
    """{location name: [(THREAD_CREATE/BEGIN/END/WAIT, sequence count)]} as otf2-print reads them."""
    done = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    locations = cubescale.trace.open(anchor).locations
    names = dict(zip(locations["id"], locations["name"]))
    out: dict[str, list[tuple[str, int]]] = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] in ("THREAD_CREATE", "THREAD_BEGIN", "THREAD_END", "THREAD_WAIT"):
            sequence = int(line.split("Sequence Count:")[1].split(",")[0])
            out.setdefault(names[int(fields[1])], []).append((fields[0], sequence))
    return out


def test_threads_who_started_whom_joins_and_barrier_waits(tmp_path):
    if shutil.which("otf2-print") is None:
        pytest.skip("otf2-print (otf2-tools) is not installed")
    app = tmp_path / "app.py"
    app.write_text(THREADS_APP)
    done = subprocess.run([sys.executable, "-m", "cubescale", "run", "-o", str(tmp_path / "t.cubex"), "--quiet",
                           "--trace", str(app)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    anchor = tmp_path / "t-trace" / "traces.otf2"
    _validate(anchor)
    events = _thread_events(anchor)
    # The main thread starts "outer" (1), which starts "inner" (2); each joins the one it started.
    assert events == {"Master thread": [("THREAD_CREATE", 1), ("THREAD_WAIT", 1)],
                      "outer": [("THREAD_BEGIN", 1), ("THREAD_CREATE", 2), ("THREAD_WAIT", 2), ("THREAD_END", 1)],
                      "inner": [("THREAD_BEGIN", 2), ("THREAD_END", 2)]}
    trace = cubescale.trace.open(anchor)
    e = trace.events(types=["ENTER"])
    waits = e[e["Name"] == "pthread_barrier_wait"]
    assert len(waits) == 2  # the main thread's and inner's, one each
    regions = trace.regions
    row = regions[regions["name"] == "pthread_barrier_wait"].iloc[0]
    assert (row["paradigm"], row["role"]) == ("pthread", "barrier")
    # named after the process: "Process 0" alone, "MPI Rank 0" where mpi4py gave the communicator
    assert {"Threads of Process 0", "Threads of MPI Rank 0"} & set(trace.table("communicators")["name"])
    # As Score-P's pthread adapter: the create and the wait inside pthread_create / pthread_join
    # (they came before the start's region and after the join's).
    assert _inside(anchor) == {"THREAD_CREATE": ["pthread_create"] * 2, "THREAD_WAIT": ["pthread_join"] * 2}
    for name, role in [("pthread_create", "thread_create"), ("pthread_join", "thread_wait")]:
        assert regions[regions["name"] == name].iloc[0][["paradigm", "role"]].tolist() == ["pthread", role]
    # The wrappers call nothing of threading's that the hook would record as the program's (an
    # Event.is_set under the program's module, a Thread.is_alive after each join): those two
    # are called by threading's own methods only.
    for path in cubescale.views.call_paths(cubescale.open(tmp_path / "t.cubex")):
        *callers, callee = path.split("/")
        if callee in ("Event.is_set", "Thread.is_alive"):
            assert callers[-1].split(".")[0] in ("Thread", "Event", "Condition", "Barrier"), path


def test_a_killed_run_leaves_a_partial_trace_that_info_names_and_clean_removes(tmp_path):
    from cubescale.files import record_partial_writer

    app = tmp_path / "app.py"
    app.write_text("import os, signal\ndef work():\n    return 1\nwork()\nos.kill(os.getpid(), signal.SIGKILL)\n")
    cli = [sys.executable, "-m", "cubescale"]
    done = subprocess.run([*cli, "run", "-o", str(tmp_path / "k.cubex"), "--quiet", "--trace", str(app)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == -9
    partial = tmp_path / "k-trace.partial"
    host, pid = (partial / "writer.0").read_text().split()
    assert int(pid) > 0 and not (tmp_path / "k-trace").exists()
    record_partial_writer(tmp_path / "live-trace.partial", rank=0)  # a live writer's (this process's)
    for given in (tmp_path / "k-trace", partial):
        info = subprocess.run([*cli, "info", str(given)], capture_output=True, text=True, timeout=60)
        assert info.returncode == 2 and "Traceback" not in info.stderr
        assert "unfinished trace" in info.stderr and "cubescale clean" in info.stderr, info.stderr
        assert len(info.stderr.strip().splitlines()) == 1
    # info of the directory lists the dead run's folder (not the live writer's) beside the report
    listing = subprocess.run([*cli, "info", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert "1 unfinished trace folder of traced runs that died" in listing.stdout, (listing.stdout, listing.stderr)
    assert "k-trace.partial" in listing.stdout and "live-trace" not in listing.stdout
    clean = subprocess.run([*cli, "clean", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert clean.returncode == 0, clean.stderr
    assert "unfinished trace k-trace" in clean.stdout and "1 of running writers" in clean.stdout, clean.stdout
    assert not partial.exists() and (tmp_path / "live-trace.partial").exists()
    app.write_text("def work():\n    return 1\nwork()\n")  # the same run again writes its trace whole
    done = subprocess.run([*cli, "run", "-o", str(tmp_path / "k.cubex"), "--quiet", "--trace", str(app)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "k-trace" / "traces.otf2").is_file() and not partial.exists()
