"""A status line while whole traces are read: `cubescale trace-profile` and `cubescale info` of
a trace show how many events are read on a terminal (rank 0's under mpirun with --progress,
tests/mpi), nothing when stderr is a pipe or a file."""

from __future__ import annotations

import subprocess
import sys

from terminal import stderr_on_a_terminal

from cubescale import testing
from cubescale._polled import reading_status, run_polled
from cubescale.trace import open as open_trace


def _ring(tmp_path) -> str:
    testing.write_ring_trace(tmp_path, "ring", processes=4, iterations=20_000, counters=False)
    return str(tmp_path / "ring.otf2")


def test_the_status_counts_the_events_read_since_it_was_made(tmp_path):
    trace = open_trace(_ring(tmp_path))
    total = int(trace.announced_events().sum())
    trace.local_profile()  # an earlier read does not count for the next status
    status = reading_status(trace, total)
    assert status() == f"reading events: 0 of {total / 1e6:.1f} M (0 %)"
    seen: list[str] = []
    run_polled(trace.local_profile, status, seen.append, every=0.001)
    assert seen[0].endswith("(0 %)") and status() == f"reading events: {total / 1e6:.1f} M of {total / 1e6:.1f} M (100 %)"


def test_trace_profile_shows_its_reading_on_a_terminal_only(tmp_path):
    path, output = _ring(tmp_path), str(tmp_path / "profile.cubex")
    command = [sys.executable, "-m", "cubescale", "trace-profile", path, "-o", output]
    status, terminal = stderr_on_a_terminal(command)
    assert status == 0
    assert b"cubescale trace-profile: reading events: 0 of " in terminal
    assert b"cubescale trace-profile: writing profile.cubex" in terminal
    assert terminal.endswith(b"\r\x1b[K")  # the line cleared before the summary
    piped = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert piped.returncode == 0 and b"reading events" not in piped.stderr + piped.stdout


def test_info_of_a_trace_shows_its_one_pass_on_a_terminal(tmp_path):
    path = _ring(tmp_path)
    total = int(open_trace(path).announced_events().sum())
    status, terminal = stderr_on_a_terminal([sys.executable, "-m", "cubescale", "info", path])
    assert status == 0
    assert f"cubescale info: reading events: 0 of {total / 1e6:.1f} M (0 %)".encode() in terminal
    assert terminal.endswith(b"\r\x1b[K")
