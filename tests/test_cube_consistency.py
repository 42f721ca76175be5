"""Parts of a .cubex file that disagree are a FormatError naming file, member and offset
instead of a silent misread (issue #30): ids named twice, value members without their
partner, member names that are not UTF-8, a member of the report named twice, data members
with more rows than the call tree, a system member that expands to other elements than
anchor.xml spells out. What the reader tolerates on purpose still reads: metrics without
values, a stale pair of value members, rows beyond the index, an extra member named twice.
Every case is a shared report with one change."""

from __future__ import annotations

import io
import os
import tarfile

import numpy as np
import pytest
from tar_members import archive, read_members

import cubescale
from cubescale._core import cube as _core

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")


def _members(name: str) -> dict[str, bytes]:
    return read_members(os.path.join(DATA, name))


def _load(data: bytes):
    report = _core.open_cubex_bytes(data, "bad.cubex")
    _core.load_all(report)
    report.regions()
    return report


def _error(data: bytes) -> cubescale.FormatError:
    with pytest.raises(cubescale.FormatError) as info:
        _load(data)
    assert info.value.file == "bad.cubex"
    return info.value


def _header_offset(data: bytes, member: str, nth: int = 0) -> int:
    """Where the tar header of the nth member called `member` starts."""
    offset, seen = 0, 0
    while True:
        header = data[offset:offset + 512]
        size = int(header[124:136].strip(b"\0 ") or b"0", 8)
        if header[:100].rstrip(b"\0").decode(errors="surrogateescape") == member:
            if seen == nth:
                return offset
            seen += 1
        offset += 512 + (size + 511) // 512 * 512


def _second(anchor: bytes, text: bytes, now: bytes) -> tuple[bytes, int]:
    """`anchor` with `text` replaced by `now` once, and where that happened."""
    at = anchor.index(text)
    return anchor[:at] + now + anchor[at + len(text):], at


# ------------------------------------------------------------------------------ ids named twice

@pytest.mark.parametrize("what, text, now", [
    ("metric", b'<metric id="1"', b'<metric id="0"'),   # time (DOUBLE) with visits' id (UINT64)
    ("region", b'<region id="1"', b'<region id="0"'),
    ("cnode", b'<cnode id="1"', b'<cnode id="0"'),
])
def test_an_id_named_twice(what, text, now):
    members = _members("time.p4.cubex")
    members["anchor.xml"], at = _second(members["anchor.xml"], text, now)
    error = _error(archive(members))
    assert (error.member, error.offset) == ("anchor.xml", at)
    assert f"a second {what} with id 0" in error.message


def test_a_location_id_named_twice():
    members = _members("time.p4.cubex")
    members["anchor.xml"], at = _second(members["anchor.xml"], b'<location Id="1"', b'<location Id="0"')
    error = _error(archive(members))
    assert (error.member, error.offset) == ("anchor.xml", at)
    assert "location Id 0 is not a unique number" in error.message


def test_two_metrics_with_one_id_read_as_another_type_before():
    # What the duplicate id did: time read visits' UINT64 bytes as DOUBLE (tiny subnormals).
    members = _members("time.p4.cubex")
    members["anchor.xml"], _ = _second(members["anchor.xml"], b'<metric id="1"', b'<metric id="0"')
    with pytest.raises(cubescale.FormatError):
        cubescale.Report(_core.open_cubex_bytes(archive(members), "bad.cubex"))


# ------------------------------------------------------------------------------ value members

@pytest.mark.parametrize("lost, kept", [("1.data", "1.index"), ("1.index", "1.data")])
def test_a_value_member_without_its_partner(lost, kept):
    members = _members("call_tree_test.cubex")
    del members[lost]
    data = archive(members)
    error = _error(data)
    assert (error.member, error.offset) == (kept, _header_offset(data, kept))
    assert f"{kept} without {lost}" in error.message


def test_metrics_without_values_and_a_stale_pair_still_read():
    # Score-P leaves out metrics without values (4..7 here); a pair of an id no metric has is
    # ignored (the writer renumbers ids).
    members = _members("call_tree_test.cubex")
    untouched = cubescale.Report(_load(archive(members)))
    members["99.index"], members["99.data"] = members["0.index"], members["0.data"]
    altered = cubescale.Report(_load(archive(members)))
    for metric in untouched.metrics:
        np.testing.assert_array_equal(altered.values(metric.name, inclusive=None),
                                      untouched.values(metric.name, inclusive=None))


def test_a_member_name_that_is_not_utf8():
    # A flipped byte in "1.data": the metric read as all zero before.
    members = _members("call_tree_test.cubex")
    members["1.d\udce1ta"] = members.pop("1.data")  # the byte 0xE1 in the tar header
    data = archive(members)
    assert b"1.d\xe1ta" in data
    error = _error(data)
    assert (error.member, error.offset) == ("1.d\\xe1ta", _header_offset(data, "1.d\udce1ta") + 3)
    assert "not UTF-8" in error.message


def _tar(items: list[tuple[str, bytes]]) -> bytes:
    """A ustar archive of `items`, names repeated as given."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in items:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize("member", ["anchor.xml", "1.data", "1.index"])
def test_a_member_of_the_report_named_twice(member):
    # Which one counts is ambiguous: tar extracts the last, the reader took the first.
    members = _members("call_tree_test.cubex")
    data = _tar([*members.items(), (member, members[member])])
    error = _error(data)
    assert (error.member, error.offset) == (member, _header_offset(data, member, nth=1))
    assert f"a second member named {member}" in error.message


def test_an_extra_member_named_twice_still_reads():
    members = _members("call_tree_test.cubex")
    data = _tar([("notes.txt", b"first"), ("notes.txt", b"second"), *members.items()])
    assert _header_offset(data, "notes.txt", nth=1) > 0
    report = cubescale.Report(_load(data))
    assert report.extra_member_bytes("notes.txt") == b"first"


# ------------------------------------------------------------------------------ rows

def _with_rows(members: dict[str, bytes], metric: int, rows: int, width: int) -> bytes:
    members = dict(members)
    members[f"{metric}.data"] += bytes(rows * width)
    return archive(members)


def test_rows_beyond_the_index_up_to_one_per_call_path_and_one_more():
    members = _members("call_tree_test.cubex")
    report = cubescale.Report(_load(archive(members)))
    cnodes, width = report.shape[0], 8 * report.shape[1]  # visits: UINT64 per location
    index_rows = int.from_bytes(members["0.index"][18:22], "little")
    _load(_with_rows(members, 0, cnodes + 1, width))
    error = _error(_with_rows(members, 0, cnodes + 2, width))
    assert error.member == "0.data"
    assert error.offset == 10 + (index_rows + cnodes + 1) * width
    assert f"holds {index_rows + cnodes + 2} rows of {width} bytes" in error.message


# ------------------------------------------------------------------------------ system member

def test_a_system_member_that_disagrees_with_anchor_xml(tmp_path):
    written = tmp_path / "written.cubex"
    cubescale.write(cubescale.open(os.path.join(DATA, "bt-mz.B.8x4.cubex")), written)
    members = read_members(str(written))
    assert "cubescale.systree" in members
    _load(archive(members))
    anchor = members["anchor.xml"]
    # One location fewer in the XML (the member still has 32).
    start = anchor.index(b'<location Id="31"')
    end = anchor.index(b"</location>", start) + len(b"</location>")
    members["anchor.xml"] = anchor[:start] + anchor[end:]
    error = _error(archive(members))
    assert error.member == "cubescale.systree"
    assert "expands to 32 locations, anchor.xml's <system> at byte" in error.message
    assert "spells out 31" in error.message
