"""The one-process analysis tells a trace too large for the memory while it reads it
(`cubescale._memory`): the growth so far projected over the trace's announced events, against
the memory available (`CUBESCALE_MEMORY_AVAILABLE` stands in for a machine's smaller memory)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

import cubescale
from cubescale import testing
from cubescale._memory import MemoryProjection, available_memory, resident_memory


@pytest.fixture(scope="module")
def ring(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("memory")
    # 5.6 M events: about a second of reading on one thread, polled every quarter second.
    testing.write_ring_trace(folder, "ring", processes=4, iterations=100_000, counters=False)
    return str(folder / "ring.otf2")


def test_the_machine_s_memory_is_read():
    available, held = available_memory(), resident_memory()
    assert available is not None and available > 2**20
    assert held is not None and 2**20 < held < available * 64


def test_the_environment_takes_the_machine_s_place(monkeypatch):
    monkeypatch.setenv("CUBESCALE_MEMORY_AVAILABLE", "12345")
    assert available_memory() == 12345
    monkeypatch.setenv("CUBESCALE_MEMORY_AVAILABLE", "lots")
    with pytest.raises(ValueError, match="a number of bytes"):
        available_memory()


def test_a_projection_needs_a_share_of_the_events_read():
    watch = MemoryProjection(total=1_000_000, available=0)
    assert watch.least == 50_000
    assert watch.projected(49_999) is None and watch.check(49_999) is None
    grown = bytearray(64 * 2**20)  # 64 MiB this process holds more since the projection began
    grown[::4096] = b"\1" * len(grown[::4096])
    projected = watch.projected(500_000)
    assert projected is not None and projected >= 2 * 64 * 2**20 * 1.3 * 0.9  # twice the events read, then 1.3 times
    warning = watch.check(500_000)
    assert warning is not None and "of 1,000,000 events" in warning and "mpirun -n N" in warning
    assert watch.check(600_000) is None  # once
    del grown


def test_no_warning_within_the_margin():
    watch = MemoryProjection(total=1_000_000, available=2**40)
    assert watch.check(1_000_000) is None


def test_the_api_warns_while_it_reads(ring, monkeypatch):
    monkeypatch.setenv("CUBESCALE_MEMORY_AVAILABLE", "1")
    with pytest.warns(RuntimeWarning, match=r"on course for about [\d.,]+ GiB more memory, 0\.0 GiB were available"):
        report = cubescale.analyze(ring, threads=1)
    assert report.values("mpi_latesender").sum() > 0  # a warning, not an error


def test_no_warning_where_the_memory_suffices(ring):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        cubescale.analyze(ring, threads=1)


def test_the_command_prints_the_warning_as_one_line(ring, tmp_path):
    out = tmp_path / "scout.cubex"
    command = [sys.executable, "-m", "cubescale", "analyze", ring, "-o", str(out), "--threads", "1"]
    done = subprocess.run(command, env={**os.environ, "CUBESCALE_MEMORY_AVAILABLE": "1"}, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(lines) == 1 and lines[0].startswith("cubescale analyze: warning: after "), done.stderr
    assert "Traceback" not in done.stderr and out.exists()
    quiet = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr


def test_each_rank_of_the_replay_warns_for_its_share(ring, tmp_path):
    """Under mpirun every rank projects its own share against its part of the node's memory
    (the memory available divided among the node's ranks), one line each."""
    from cubescale.mpirun import local_environment

    out = tmp_path / "mpirun.cubex"
    command = ["timeout", "-k", "5", "200", "mpirun", "-q", "-n", "2", sys.executable, "-m", "cubescale", "analyze",
               ring, "-o", str(out)]
    env = {**local_environment(), "CUBESCALE_MEMORY_AVAILABLE": "1"}
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=250)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(lines) == 2, done.stderr
    for line in lines:
        assert line.startswith("cubescale analyze: warning: after ") and "the 2 ranks on its node share" in line, line
    assert sorted(rank for line in lines for rank in (0, 1) if f"rank {rank} of 2's share" in line) == [0, 1], lines
    assert "Traceback" not in done.stderr and out.exists()
