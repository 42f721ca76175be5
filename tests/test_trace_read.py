"""The OTF2 reader on every shared trace: definitions, event counts per location and type
equal to otf2-print's, streaming subsets, and FormatError on broken archives."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from otf2_oracle import anchor_ids, anchors, have_otf2_print, otf2_print_counts

import cubescale
from cubescale import trace
from cubescale.trace import EVENT_TYPES as trace_types
from cubescale.trace import open as open_trace


@pytest.mark.parametrize("anchor", anchors(), ids=anchor_ids())
def test_counts_equal_otf2_print(anchor: Path):
    if not have_otf2_print():
        pytest.skip("otf2-print (Debian otf2-tools) not installed")
    trace = open_trace(anchor)
    counts = trace.event_counts(all_types=True)
    ids = trace.locations["id"].to_numpy()
    ours = {(int(ids[loc]), t): int(n) for loc, row in counts.iterrows() for t, n in row.items() if n}
    assert ours == otf2_print_counts(anchor)


@pytest.mark.parametrize("anchor", anchors(), ids=anchor_ids())
def test_region_visits_in_the_counting_pass_equal_the_event_columns(anchor: Path):
    """`cubescale info`'s one pass: the counts as count_events gives them, and per region its
    Enter and PROGRAM_BEGIN events as the event columns (another sink over the same reader) list
    them."""
    trace = open_trace(anchor)
    everywhere = trace.location_indices()
    counts, visits = trace._core.region_visits(everywhere)
    assert (counts == trace._core.count_events(everywhere)).all()
    kinds = [trace_types.index("ENTER"), trace_types.index("PROGRAM_BEGIN")]
    entered = np.asarray(trace._core.event_columns(locations=everywhere, types=kinds)["region"], dtype=np.int64)
    expected = np.bincount(entered[entered >= 0], minlength=len(visits))
    assert visits.tolist() == expected.tolist() and visits.sum() > 0


@pytest.mark.parametrize("anchor", anchors(), ids=anchor_ids())
def test_totals_per_location_match_events(anchor: Path):
    trace = open_trace(anchor)
    counts = trace.event_counts(all_types=True).sort_index()
    per_location = counts.sum(axis=1)
    announced = trace.locations["events"]
    assert (per_location.to_numpy() == announced.to_numpy()).all()
    frame = trace.events()
    assert len(frame) == int(per_location.sum())
    rows = frame.groupby("Location").size().reindex(counts.index, fill_value=0)
    assert (rows.to_numpy() == per_location.to_numpy()).all()
    by_type = frame["Event Type"].value_counts()
    for name, n in counts.sum(axis=0).items():
        assert int(by_type.get(name, 0)) == int(n), name
    # Each location's events come in recorded (time) order.
    for _, group in frame.groupby("Location"):
        assert np.all(np.diff(group["Ticks"].to_numpy().astype(np.int64)) >= 0)


def test_definitions_ping_pong_papi(shared_data):
    t = trace.open(shared_data / "otf2" / "ping-pong-papi" / "traces.otf2")
    assert t.clock[0] == 2095191439
    assert t.metrics["name"].tolist() == ["PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP"]
    assert set(t.metrics["mode"]) == {"accumulated_start"}
    assert t.location_groups["name"].tolist() == ["MPI Rank 0", "MPI Rank 1"]
    nodes = t.system_tree_nodes
    assert nodes["name"].tolist() == ["Linux", "quartz10"]
    assert nodes["domains"].tolist() == [["machine"], ["shared_memory"]]
    assert nodes["properties"][0] == [("platform", "Linux")]
    barrier = t.region_indices("MPI_Barrier")
    assert t.regions.loc[barrier, ["role", "paradigm"]].values.tolist() == [["barrier", "mpi"]]
    assert "MPI_COMM_WORLD" in t.table("communicators")["name"].tolist()
    assert t.sequence_tree().render() == "machine ×1 > node ×1 > process ×2 > thread ×1"


def test_openmp_threads_and_gpu_streams(shared_data):
    t = trace.open(shared_data / "otf2" / "jacobi-hybrid" / "traces.otf2")
    assert sorted(set(t.locations["type"])) == ["accelerator_stream", "cpu_thread"]
    tree = t.system_tree()
    classes = [tree.class_name(e) for e in tree.preorder()]
    assert classes.count("gpu") == 2 and classes.count("thread") == 8 and classes.count("process") == 2
    assert t.process_groups() == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_undefined_references_are_tolerated(shared_data):
    # OTF2's own integrity trace: locations in an undefined group, sends on an undefined
    # communicator. Read as otf2-print reads it, with warnings.
    t = trace.open(shared_data / "otf2" / "integrity" / "TestTrace.otf2")
    assert any("location group" in w for w in t.warnings)
    assert t.sequence_tree().render() == "machine ×1 > process ×4 > thread ×1"
    assert int(t.event_counts()["MPI_SEND"].sum()) == 80000


def test_subset_of_locations_streams_only_those(shared_data):
    t = trace.open(shared_data / "otf2" / "jacobi-hybrid" / "traces.otf2")
    everything = t.event_counts(all_types=True)
    some = t.event_counts([9, 2], all_types=True)
    assert some.loc[9].tolist() == everything.loc[9].tolist()
    assert some.loc[2].tolist() == everything.loc[2].tolist()
    assert set(t.events(locations=[4])["Location"]) == {4}


def _writable_copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def test_missing_event_file(shared_data, tmp_path):
    d = _writable_copy(shared_data / "otf2" / "ping-pong", tmp_path / "t")
    (d / "traces" / "1.evt").unlink()
    t = trace.open(d / "traces.otf2")  # definitions are fine
    with pytest.raises(cubescale.FormatError) as e:
        t.event_counts()
    assert e.value.file == str(d / "traces.otf2") and e.value.member == "traces/1.evt"


def test_truncated_event_file(shared_data, tmp_path):
    d = _writable_copy(shared_data / "otf2" / "late-sender-barrier", tmp_path / "t")
    evt = d / "traces" / "2.evt"
    evt.write_bytes(evt.read_bytes()[: evt.stat().st_size // 2])
    with pytest.raises(cubescale.FormatError) as e:
        trace.open(d / "traces.otf2").events()
    assert e.value.member == "traces/2.evt"
    with pytest.raises(cubescale.FormatError):
        trace.profile(d / "traces.otf2")


def test_truncated_definitions(shared_data, tmp_path):
    d = _writable_copy(shared_data / "otf2" / "ping-pong", tmp_path / "t")
    (d / "traces.def").write_bytes((d / "traces.def").read_bytes()[:300])
    with pytest.raises(cubescale.FormatError) as e:
        trace.open(d / "traces.otf2")
    assert e.value.member == "traces.def"


@pytest.mark.parametrize("content", [b"", b"not an anchor\n", b"\x00" * 64])
def test_wrong_anchor(tmp_path, content):
    bad = tmp_path / "traces.otf2"
    bad.write_bytes(content)
    with pytest.raises(cubescale.FormatError) as e:
        trace.open(bad)
    assert e.value.file == str(bad)


def test_anchor_of_another_format(shared_data):
    with pytest.raises(cubescale.FormatError):
        trace.open(shared_data / "otf2" / "late-sender-barrier" / "profile.cubex")
    with pytest.raises(FileNotFoundError):  # as cubescale.open says it (was libotf2's FormatError)
        trace.open(shared_data / "otf2" / "no-such-trace.otf2")


def test_strings_that_are_not_utf8_are_replaced_and_named(shared_data, tmp_path):
    # OTF2 strings carry no encoding: a Latin-1 name (é = 0xE9) must not break reading.
    d = _writable_copy(shared_data / "otf2" / "ping-pong", tmp_path / "t")
    defs = (d / "traces.def").read_bytes()
    assert defs.count(b"MPI_Send") >= 1
    (d / "traces.def").write_bytes(defs.replace(b"MPI_Send", b"MPI_S\xe9nd"))
    t = trace.open(d / "traces.otf2")
    names = set(t.regions["name"])
    assert "MPI_S\ufffdnd" in names and "MPI_Send" not in names
    assert any("not UTF-8" in w for w in t.warnings)
    report = trace.profile(d / "traces.otf2")
    assert "MPI_S\ufffdnd" in {r.name for r in report.regions}


def _one_byte_changed(shared_data, tmp_path, trace: str, member: str, offset: int, was: int, now: int) -> Path:
    """A copy of a shared trace with one byte of one archive file changed; returns its anchor."""
    d = _writable_copy(shared_data / "otf2" / trace, tmp_path / "t")
    data = bytearray((d / member).read_bytes())
    assert data[offset] == was
    data[offset] = now
    (d / member).write_bytes(bytes(data))
    return next(d.glob("*.otf2"))


# Found by fuzz/otf2_mutate.py, each with the change that showed it:
def test_a_damaged_chunk_that_sends_the_reader_back_is_an_error_not_a_hang(shared_data, tmp_path):
    # A timestamp record type (5) changed to 141 makes libotf2 deliver location 1's events
    # again and again (otf2-print prints for ever); reading stopped one event past the announced.
    # Now the first record of a type OTF2 does not know stops it (libotf2 would skip it).
    anchor = _one_byte_changed(shared_data, tmp_path, "integrity", "TestTrace/1.evt", 1244918, 5, 141)
    for read in (lambda: trace.profile(anchor), lambda: trace.open(anchor).timelines()):
        with pytest.raises(cubescale.FormatError) as e:
            read()
        assert e.value.member == "TestTrace/1.evt"
        assert "a damaged record" in str(e.value)


def test_a_metric_sample_earlier_than_the_one_before_is_a_format_error(shared_data, tmp_path):
    # Was a bare ValueError from the timeline ("times must not decrease"), naming no file.
    anchor = _one_byte_changed(shared_data, tmp_path, "ping-pong-papi", "traces/1.evt", 1338, 0xE5, 0x1C)
    with pytest.raises(cubescale.FormatError) as e:
        trace.open(anchor).timelines()
    assert e.value.member == "traces/1.evt"
    assert "must be in time order" in str(e.value)


def test_definitions_that_end_early_without_an_error_are_caught_by_the_anchor(shared_data, tmp_path):
    # libotf2 ends the global definitions before any location without an error; profiling
    # then failed on an empty call tree.
    anchor = _one_byte_changed(shared_data, tmp_path, "ping-pong-papi", "traces.def", 3244, 0x17, 0x1F)
    with pytest.raises(cubescale.FormatError) as e:
        trace.open(anchor)
    assert e.value.member == "traces.def"
    assert "announces 2 locations" in str(e.value)


_READ_EACH_IN_ONE_PROCESS = r"""
import resource, sys
import cubescale
from cubescale import trace
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # the old failure was an OOM kill
for anchor in sys.argv[1:]:
    try:
        opened = trace.open(anchor)
        opened.sequence_tree()
        trace.profile(anchor)
        opened.timelines()
    except cubescale.FormatError as e:
        print(e.member, e, flush=True)
"""


def _changed_copy(src: Path, dst: Path, member: str, changes: dict[int, int], cut: int | None = None) -> str:
    d = _writable_copy(src, dst)
    data = bytearray((d / member).read_bytes())
    for offset, now in changes.items():
        data[offset] = now
    (d / member).write_bytes(bytes(data[:cut]))
    return str(next(d.glob("*.otf2")))


def test_a_cut_definitions_file_read_after_damaged_traces_is_a_format_error(shared_data, tmp_path):
    # Three cases of one fuzz batch (seed 593467493): after the first two, libotf2 read the
    # global definitions of ping-pong cut at 2,894 bytes from a stale chunk buffer over and
    # over, and the strings grew until the machine's memory ran out (24 GB, OOM-killed; here
    # a MemoryError under the address-space limit). Whether the buffer is stale depends on the
    # heap: the development build looped 3 times in 3 before the fix, the release wheel
    # reads "Load of next chunk failed". Both end in a FormatError on traces.def now (the
    # loop stops past the records the file can hold).
    otf2_dir = shared_data / "otf2"
    anchors = [
        _changed_copy(otf2_dir / "ping-pong-papi", tmp_path / "a", "traces.def", {446: 219, 7593: 5}),
        _changed_copy(otf2_dir / "integrity", tmp_path / "b", "TestTrace/9.evt",
                      {5466: 180, 173887: 246, 489540: 100, 695566: 82, 848077: 130}),
        _changed_copy(otf2_dir / "ping-pong", tmp_path / "c", "traces.def", {}, cut=2894),
    ]
    done = subprocess.run([sys.executable, "-c", _READ_EACH_IN_ONE_PROCESS, *anchors], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.splitlines()[-1]
    assert last.startswith("traces.def "), done.stdout
