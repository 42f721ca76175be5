"""The wait-state analysis' progress line: the events read as the pass goes (the reader's
counter, polled while the core runs on a thread), the steps after it, the time correction's
rounds under mpirun, and `cubescale analyze` printing it on a terminal only."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from terminal import stderr_on_a_terminal

import cubescale
from cubescale import testing
from cubescale._core import analysis as _analysis
from cubescale._polled import run_polled
from cubescale.trace import open as open_trace


def _ring(tmp_path, iterations: int) -> str:
    testing.write_ring_trace(tmp_path, "ring", processes=4, iterations=iterations, counters=False)
    return str(tmp_path / "ring.otf2")


def test_the_reader_counts_every_event_it_read(tmp_path):
    trace = open_trace(_ring(tmp_path, 300))
    total = int(trace.announced_events().sum())
    assert trace._core.events_read() == 0
    _analysis.analyze(trace._core, trace.location_indices(), threads=2)
    assert trace._core.events_read() == total
    _analysis.analyze(trace._core, trace.location_indices(), root_cause=True)  # and its second read
    assert trace._core.events_read() > 2 * total


def test_the_status_line_follows_the_reader(tmp_path):
    from cubescale.analysis import _reading_status

    trace = open_trace(_ring(tmp_path, 20_000))
    total = int(trace.announced_events().sum())
    assert _reading_status(trace) == f"reading events: 0 of {total / 1e6:.1f} M (0 %)"
    _analysis.analyze(trace._core, trace.location_indices())
    assert _reading_status(trace) == f"{total / 1e6:.1f} M events read: matching, collectives, critical path"
    _analysis.analyze(trace._core, trace.location_indices(), root_cause=True)
    assert _reading_status(trace, root_cause=True).startswith("root causes: events read again: ")


def test_progress_lines_while_the_analysis_runs(tmp_path):
    path = _ring(tmp_path, 60_000)  # 3.4 M events: about a second of reading, polled every quarter second
    total = int(open_trace(path).announced_events().sum())
    lines: list[str] = []
    report = cubescale.analyze(path, threads=1, progress=lines.append)
    assert report.values("mpi_latesender").sum() > 0
    assert lines[0] == f"reading events: 0 of {total / 1e6:.1f} M (0 %)"
    read = [float(m.group(1)) for line in lines if (m := re.match(r"reading events: ([\d.]+) M of", line))]
    assert read == sorted(read), lines
    assert all(line.startswith(("reading events: ", f"{total / 1e6:.1f} M events read: matching")) for line in lines)


def test_run_polled_raises_the_work_s_error_on_the_calling_thread():
    def fail():
        raise cubescale.FormatError("cut short", "t.otf2", "t/0.evt", 12)

    seen: list[str] = []
    with pytest.raises(cubescale.FormatError, match="cut short"):
        run_polled(fail, lambda: "working", seen.append)
    assert seen[0] == "working"


def test_cli_prints_progress_on_a_terminal_only(tmp_path):
    path = _ring(tmp_path, 20_000)
    command = [sys.executable, "-m", "cubescale", "analyze", path, "-o", str(tmp_path / "out.cubex")]
    status, terminal = stderr_on_a_terminal(command)
    assert status == 0
    assert b"cubescale analyze: reading events: 0 of " in terminal
    assert terminal.endswith(b"\r\x1b[K")  # the line cleared before the summary
    piped = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert piped.returncode == 0 and b"reading events" not in piped.stderr and b"reading events" not in piped.stdout


def test_progress_under_mpirun_on_rank_0_only(tmp_path):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi"))
    from launch import mpirun

    (result,) = mpirun(2, "worker_progress.py", str(tmp_path))
    lines = result["lines"]
    assert lines[0].startswith("rank 0 of 2: reading events: 0 of ")
    assert "correcting the clocks: round 0" in lines
    assert lines[-1] == "writing ring.cubex" and "critical path" in lines
    assert result["others"] == [0]  # rank 1 was given no progress
