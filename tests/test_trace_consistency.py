"""OTF2 archives whose files disagree with each other or with their definitions are a
FormatError for every reader of them (events, counts, timelines, profiles), not only for
``trace-profile``: records of an unknown type, Enter/Leave that do not nest, bytes after the
anchor's content. Built from the shared traces with one byte changed (found by flipping
bytes at random and comparing ``events()`` with ``trace-profile``)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

import cubescale
from cubescale import testing, trace


def _copy(shared_data: Path, tmp_path: Path, trace: str) -> Path:
    d = tmp_path / trace
    shutil.copytree(shared_data / "otf2" / trace, d)
    for p in d.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)  # the shared data is read-only
    return d


def _changed(shared_data: Path, tmp_path: Path, trace: str, member: str, offset: int, was: int, now: int) -> Path:
    d = _copy(shared_data, tmp_path, trace)
    data = bytearray((d / member).read_bytes())
    assert data[offset] == was
    data[offset] = now
    (d / member).write_bytes(bytes(data))
    return next(d.glob("*.otf2"))


def _every_reader(anchor: Path) -> list[cubescale.FormatError]:
    """The error of each way of reading a trace's events."""
    readers = [
        lambda: trace.events(anchor),
        lambda: trace.open(anchor).event_counts(),
        lambda: trace.open(anchor).timelines(),
        lambda: trace.profile(anchor),
    ]
    errors = []
    for read in readers:
        with pytest.raises(cubescale.FormatError) as e:
            read()
        errors.append(e.value)
    return errors


def test_a_record_of_unknown_type_is_refused_by_every_reader(shared_data, tmp_path):
    # A record type changed to one OTF2 does not know: libotf2 skips the record and still
    # counts it, so the count the definitions announce matched and events() returned 300,815
    # of the trace's 300,816 events without a word.
    anchor = _changed(shared_data, tmp_path, "jacobi-hybrid", "traces/0.evt", 61816, 12, 141)
    assert testing.read_with_empty_callbacks(anchor) == 300_816  # what libotf2 counts
    for e in _every_reader(anchor):
        assert (e.member, e.offset) == ("traces/0.evt", 4784)
        assert "a damaged record" in str(e)


def test_regions_that_do_not_nest_are_refused_by_every_reader(shared_data, tmp_path):
    # A changed timestamp: trace-profile refused the Leave before its Enter, events() read it.
    anchor = _changed(shared_data, tmp_path, "jacobi-hybrid", "traces/0.evt", 683554, 147, 141)
    errors = _every_reader(anchor)
    for e in errors:
        assert (e.member, e.offset) == ("traces/0.evt", 52615)
        assert 'Leave of "cuLaunchKernel" before its Enter' in str(e)
    assert len({str(e) for e in errors}) == 1  # one check, one message


@pytest.mark.parametrize("damage, why", [("remove", "the file is missing"), ("empty", "the file is empty (0 bytes)"),
                                         ("directory", "a directory, not a file")])
def test_an_event_file_that_cannot_be_opened_says_why(shared_data, tmp_path, damage, why):
    # libotf2 says "Unable to open file" for each of them: a crashed rank's missing file, an
    # empty one and a directory (a copy gone wrong) read the same before.
    d = _copy(shared_data, tmp_path, "ping-pong")
    events = d / "traces" / "1.evt"
    events.unlink()
    if damage == "empty":
        events.write_bytes(b"")
    elif damage == "directory":
        events.mkdir()
    for e in _every_reader(d / "traces.otf2"):
        assert (e.member, e.offset) == ("traces/1.evt", 0)
        assert str(e).endswith(f"cannot open the events: {why}"), str(e)
    with pytest.raises(cubescale.FormatError, match=re.escape(why)):
        cubescale.analyze(d / "traces.otf2", os.fspath(tmp_path / "scout.cubex"))
    assert not (tmp_path / "scout.cubex").exists()


def test_a_leave_of_another_region_is_refused_by_events_too(tmp_path):
    testing.write_ring_trace(tmp_path, "bad", processes=2, iterations=3, defect="mismatched_leave")
    with pytest.raises(cubescale.FormatError) as e:
        trace.events(tmp_path / "bad.otf2")
    assert e.value.member == "bad/0.evt"
    assert 'Leave of "solve" inside "compute"' in str(e.value)


def test_regions_left_open_at_the_end_are_read(tmp_path):
    # A run that crashed leaves its outermost regions open: tolerated (the profile closes them).
    written = testing.write_ring_trace(tmp_path, "cut", processes=2, iterations=3, defect="unclosed")
    assert len(trace.events(tmp_path / "cut.otf2")) == written


@pytest.mark.parametrize("extra", [9, 10 << 20])
def test_bytes_after_the_anchor_are_refused(shared_data, tmp_path, extra):
    d = _copy(shared_data, tmp_path, "late-sender-barrier")
    anchor = d / "traces.otf2"
    size = anchor.stat().st_size
    with open(anchor, "ab") as f:
        f.write(b"\xa5" * extra)
    with pytest.raises(cubescale.FormatError) as e:
        trace.open(anchor)
    # The content ends 2 bytes before the file did (the buffer's closing records follow it).
    assert (e.value.member, e.value.offset) == ("anchor", size - 2)
    assert f"{extra + 2} bytes follow the anchor's content" in str(e.value)


def test_the_closing_bytes_of_every_shared_anchor_are_accepted(shared_data, tmp_path):
    # The anchors end 2 (format 3) or 3 (format 2) bytes after their content; a few more
    # bytes are tolerated, nothing beyond.
    for folder in sorted((shared_data / "otf2").iterdir()):
        d = _copy(shared_data, tmp_path, folder.name)
        anchor = next(d.glob("*.otf2"))
        with open(anchor, "ab") as f:
            f.write(b"\0" * 5)
        trace.open(anchor)
