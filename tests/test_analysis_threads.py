"""``cubescale.analyze(..., threads=N)``: the one-process analysis reading its events on several
threads, each a share of the trace's processes, gives the same report byte for byte, the same
statistics and the same errors as one thread (the shared traces, every synthetic shape, OpenMP
threads below their processes, broken traces)."""

from __future__ import annotations

import filecmp
import re

import pytest
from analysis_cases import BROKEN, OMP, SHAPES, shared_anchors
from otf2_oracle import SHARED_OTF2

import cubescale
from cubescale import analysis, testing
from cubescale.cli import main

THREADS = (2, 3, 8)  # fewer parts than threads where the trace has fewer processes


def same_analysis(tmp_path, anchor, **options):
    """Analyzes `anchor` with 1 and each of THREADS threads; asserts equal files and statistics,
    also with the steps after the pass cut into chunks of one record (same_chunked)."""
    one = tmp_path / "threads-1.cubex"
    stats = analysis.statistics(cubescale.analyze(anchor, one, threads=1, **options))
    for n in THREADS:
        out = tmp_path / f"threads-{n}.cubex"
        other = analysis.statistics(cubescale.analyze(anchor, out, threads=n, **options))
        assert filecmp.cmp(one, out, shallow=False), (anchor, n)
        assert other == stats, (anchor, n)
    same_chunked(tmp_path, anchor, **options)


def chunked_report(anchor, path, **options):
    """The report and pattern statistics of the core analysis with `options` (chunk_records,
    threads), written to `path` the way :func:`cubescale.analyze` writes its report."""
    from cubescale._core import analysis as core_analysis
    from cubescale.profile import LocalProfile
    from cubescale.trace import open as open_trace

    trace = open_trace(anchor)
    core, stats = core_analysis.analyze(trace._core, trace.location_indices(), **options)
    assert stats.pop("seconds")  # wall seconds per step: not the same twice
    for timed in ("root_cause_seconds", "root_cause_read_seconds"):
        stats.pop(timed)
    local = LocalProfile.__new__(LocalProfile)
    local._core, local.host, local.process = core, None, None
    trace._report(local, path, False)
    return stats


def same_chunked(tmp_path, anchor, **options):
    """With a chunk of at least one record, the steps after the pass cut every trace into a
    chunk per location (up to the threads): the same report and statistics as one thread."""
    one = chunked_report(anchor, tmp_path / "one.cubex", threads=1, **options)
    for n in THREADS:
        other = chunked_report(anchor, tmp_path / f"chunks-{n}.cubex", threads=n, chunk_records=1, **options)
        assert filecmp.cmp(tmp_path / "one.cubex", tmp_path / f"chunks-{n}.cubex", shallow=False), (anchor, n)
        assert other == one, (anchor, n)


def shared(name):
    anchors = dict(shared_anchors())
    anchors["openmp-nested"] = next(iter(sorted((SHARED_OTF2 / "openmp-nested").glob("*.otf2"))), None)
    if anchors.get(name) is None or not anchors[name].exists():
        pytest.skip("shared data not found")
    return anchors[name]


@pytest.mark.parametrize("name", ["late-sender-barrier", "ping-pong", "bcast-scorep8", "jacobi-hybrid",
                                  "openmp-nested"])
def test_shared_traces_same_report_on_threads(tmp_path, name):
    same_analysis(tmp_path, shared(name))


def test_time_correction_same_report_on_threads(tmp_path):
    # jacobi-hybrid: 4 processes of 2 OpenMP threads; with a latency the correction moves
    # messages, collectives and OpenMP events across the parts' records.
    same_analysis(tmp_path, shared("jacobi-hybrid"), time_correct=True, min_latency=1e-5)


@pytest.mark.parametrize("name", ["late-sender-barrier", "jacobi-hybrid"])
def test_root_causes_same_report_on_threads(tmp_path, name):
    # The root-cause analysis reads the locations again after the threads' pass.
    same_analysis(tmp_path, shared(name), root_cause=True)


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_synthetic_shapes_same_report_on_threads(tmp_path, case):
    ranks, end = SHAPES[case]
    testing.write_mpi_trace(tmp_path, case, ranks, end)
    same_analysis(tmp_path, tmp_path / f"{case}.otf2")


def test_openmp_process_is_one_part(tmp_path):
    # One process of 3 threads cannot be cut: 8 threads asked, the same report as one.
    regions, threads, end = OMP["omp-ties"]
    testing.write_omp_trace(tmp_path, "omp", regions, threads=threads, end=end)
    same_analysis(tmp_path, tmp_path / "omp.otf2")


def test_more_threads_than_255(tmp_path):
    # 300 processes on 300 threads: at most 255 parts (the time lines number them in a byte).
    testing.write_ring_trace(tmp_path, "ring", processes=300, iterations=2, counters=False)
    one = tmp_path / "one.cubex"
    cubescale.analyze(tmp_path / "ring.otf2", one, threads=1)
    cubescale.analyze(tmp_path / "ring.otf2", tmp_path / "many.cubex", threads=300)
    assert filecmp.cmp(one, tmp_path / "many.cubex", shallow=False)
    same_chunked(tmp_path, tmp_path / "ring.otf2")  # up to 8 chunks of many locations each


def test_ring_parts_split_processes(tmp_path):
    # 8 processes, messages between neighbours on other threads' parts.
    testing.write_ring_trace(tmp_path, "ring", processes=8, iterations=50)
    anchor = tmp_path / "ring.otf2"
    same_analysis(tmp_path, anchor, time_correct=True)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_traces_same_error_on_threads(tmp_path, case):
    ranks, member, message = BROKEN[case]
    testing.write_mpi_trace(tmp_path, case, ranks, 100)
    errors = []
    for n in (1, 4):
        with pytest.raises(cubescale.FormatError) as info:
            cubescale.analyze(tmp_path / f"{case}.otf2", tmp_path / "out.cubex", threads=n)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and member in errors[0] and message in errors[0]
    assert not (tmp_path / "out.cubex").exists()
    for n in THREADS:  # the steps after the pass in chunks: the earliest chunk's error, one thread's
        with pytest.raises(cubescale.FormatError) as info:
            chunked_report(tmp_path / f"{case}.otf2", tmp_path / "broken.cubex", threads=n, chunk_records=1)
        assert str(info.value) == errors[0], n


def test_truncated_later_part_same_error_on_threads(tmp_path):
    # The error of the part that fails (here the last one's location), at the event where one
    # thread meets it. What libotf2 says about the cut chunk varies from run to run (it decodes
    # the rest of its buffer: "Load of next chunk failed", or the events end early, "truncated?"),
    # so the file, member and offset are compared.
    testing.write_ring_trace(tmp_path, "ring", processes=4, iterations=200)
    anchor = tmp_path / "ring.otf2"
    events = tmp_path / "ring" / "3.evt"
    events.write_bytes(events.read_bytes()[: events.stat().st_size // 2])
    errors = []
    for n in (1, 2, 4):
        with pytest.raises(cubescale.FormatError, match="3.evt") as info:
            cubescale.analyze(anchor, tmp_path / "out.cubex", threads=n)
        errors.append(re.match(r".*?: member \S+: offset \d+", str(info.value)).group(0))
    assert len(set(errors)) == 1
    assert not (tmp_path / "out.cubex").exists()


@pytest.mark.parametrize("threads", [0, -1, 1.5, True])
def test_bad_thread_counts_are_refused(threads):
    with pytest.raises(ValueError, match="threads"):
        cubescale.analyze(cubescale.examples.trace_path(), threads=threads)


def test_cli_threads(tmp_path, capsys):
    out = tmp_path / "scout.cubex"
    assert main(["analyze", cubescale.examples.trace_path(), "-o", str(out), "--threads", "2"]) == 0
    assert "mpi_latesender" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["analyze", cubescale.examples.trace_path(), "-o", str(out), "--threads", "0"])
    assert info.value.code == 2
    assert "--threads" in capsys.readouterr().err
