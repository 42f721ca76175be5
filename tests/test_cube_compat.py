"""Reports as Scalasca 2 and early CUBE 4.0 writers leave them (issue #19): data members with
rows beyond their index, extra tar members, and large files that shrink while open.

Every altered report starts as a report written by our writer; the alteration is done the way
those writers do it, and the values must equal those of the untouched report (Cube reads the
indexed rows and ignores the rest)."""

from __future__ import annotations

import os
import struct
import zlib

import numpy as np
import pytest
from tar_members import archive, read_members

import cubescale
from cubescale._core import cube as _core
from cubescale.cli import main

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
# blast.p64: 64 locations, UINT64 and DOUBLE metrics; all_dtypes: every data type CUBE has
# (row widths 1 ... 848 x locations bytes).
SOURCES = ["blast.p64.cubex", "all_dtypes.cubex"]


# ------------------------------------------------------------------------------ helpers

def _written(tmp_path, source: str, compress: bool = False) -> str:
    """`source` written again by our writer."""
    path = str(tmp_path / f"ours-{compress}-{source}")
    cubescale.write(cubescale.open(os.path.join(DATA, source)), path, compress=compress)
    return path


def _row_bytes(report: cubescale.Report, metric) -> int:
    stored = report.values(metric, inclusive=None)
    return stored.nbytes // report.shape[0]


def _index_rows(index: bytes) -> int:
    assert index[17] == 1  # our writer: SPARSE, little-endian
    return struct.unpack_from("<I", index, 18)[0]


def _same_values(a: cubescale.Report, b: cubescale.Report) -> None:
    assert [m.name for m in a.metrics] == [m.name for m in b.metrics]
    for m in a.metrics:
        x, y = a.values(m.name, inclusive=None), b.values(m.name, inclusive=None)
        assert x.tobytes() == y.tobytes(), m.name
        assert (a.present(m.name) == b.present(m.name)).all(), m.name


def _open_altered(tmp_path, members: dict[str, bytes], name="altered.cubex") -> cubescale.Report:
    path = tmp_path / name
    path.write_bytes(archive(members))
    return cubescale.open(path)


def _data_members(members: dict[str, bytes]) -> list[str]:
    return [n for n in members if n.endswith(".data")]


# ------------------------------------------------------------------------------ trailing rows

@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("rows", [1, 3])
def test_trailing_zero_rows_in_every_metric(tmp_path, source, rows):
    """Scalasca's analyzer writes one all-zero row per metric after the indexed ones."""
    path = _written(tmp_path, source)
    untouched = cubescale.open(path)
    members = read_members(path)
    added = {}
    for name in _data_members(members):
        metric = int(name.split(".")[0])
        width = _row_bytes(untouched, metric)
        members[name] += bytes(rows * width)
        added[metric] = rows * width
    altered = _open_altered(tmp_path, members)
    _same_values(altered, untouched)
    for metric, n in added.items():
        padding = len(read_members(path)[f"{metric}.data"]) - 10 - _index_rows(members[f"{metric}.index"]) * _row_bytes(untouched, metric)
        assert altered.ignored_bytes(metric) == n + padding


@pytest.mark.parametrize("source", SOURCES)
def test_trailing_nonzero_rows_in_every_metric(tmp_path, source):
    """CUBE 4.0 files can hold rows of call paths their index does not list: any bytes."""
    path = _written(tmp_path, source)
    untouched = cubescale.open(path)
    members = read_members(path)
    rng = np.random.default_rng(7)
    for name in _data_members(members):
        width = _row_bytes(untouched, int(name.split(".")[0]))
        members[name] += rng.integers(1, 256, 2 * width, dtype=np.uint8).tobytes()
    _same_values(_open_altered(tmp_path, members), untouched)


def test_index_of_no_rows_with_one_row_of_data(tmp_path):
    """A metric without values: an index of 0 rows, and Scalasca's one zero row of data."""
    path = _written(tmp_path, "blast.p64.cubex")
    untouched = cubescale.open(path)
    members = read_members(path)
    for name in _data_members(members):
        metric = int(name.split(".")[0])
        index = members[f"{metric}.index"]
        members[f"{metric}.index"] = index[:18] + struct.pack("<I", 0)
        members[name] = b"CUBEX.DATA" + bytes(_row_bytes(untouched, metric))
    altered = _open_altered(tmp_path, members)
    for m in altered.metrics:
        assert not altered.values(m.name, inclusive=None).any()
        assert not altered.present(m.name).any()
        assert altered.ignored_bytes(m.name) == _row_bytes(untouched, m.index)


def _zcubex_with_trailing_row(data: bytes, row: bytes) -> bytes:
    """A ZCUBEX.DATA member (little-endian) with one more compressed row after its blocks."""
    count = struct.unpack_from("<Q", data, 11)[0]
    table = list(struct.unpack_from(f"<{3 * count}Q", data, 19))
    streams = data[19 + 24 * count:]
    end = max(table[3 * k + 1] + table[3 * k + 2] for k in range(count))
    covered = table[-3] + len(zlib.decompress(streams[table[-2]:table[-2] + table[-1]]))
    extra = zlib.compress(row)
    table += [covered, end, len(extra)]
    return b"ZCUBEX.DATA" + struct.pack(f"<Q{3 * (count + 1)}Q", count + 1, *table) + streams[:end] + extra


@pytest.mark.parametrize("source", SOURCES)
def test_compressed_trailing_rows_in_every_metric(tmp_path, source):
    path = _written(tmp_path, source, compress=True)
    untouched = cubescale.open(path)
    members = read_members(path)
    for name in _data_members(members):
        metric = int(name.split(".")[0])
        width = _row_bytes(untouched, metric)
        members[name] = _zcubex_with_trailing_row(members[name], bytes(range(256)) * (width // 256) + bytes(width % 256))
    altered = _open_altered(tmp_path, members)
    _same_values(altered, untouched)
    assert all(altered.ignored_bytes(m) == _row_bytes(untouched, m) for m in untouched.metrics)


# ------------------------------------------------------------------------------ what stays an error

def _format_error(tmp_path, members) -> cubescale.FormatError:
    report = _open_altered(tmp_path, members, "bad.cubex")
    with pytest.raises(cubescale.FormatError) as info:
        report.load_all()
    assert info.value.file == str(tmp_path / "bad.cubex")
    return info.value


def test_part_of_a_row_is_an_error(tmp_path):
    path = _written(tmp_path, "blast.p64.cubex")
    width = _row_bytes(cubescale.open(path), 1)
    members = read_members(path)
    members["1.data"] += bytes(width) + b"\x01"  # a row, then one byte that is not padding
    error = _format_error(tmp_path, members)
    assert error.member == "1.data" and "not a whole number of rows" in error.message


def test_a_wrong_value_width_is_an_error(tmp_path):
    """TAU_ATOMIC rows (36 bytes a value) read as DOUBLE (8): 3 rows of 4 locations leave
    336 bytes after the 96 the index needs, 10.5 rows: reported, not read as values. (A width
    that divides the stored one evenly, DOUBLE read as UINT32, leaves whole rows: no reader can
    tell those from trailing rows.)"""
    path = _written(tmp_path, "all_dtypes.cubex")
    report = cubescale.open(path)
    tau = report.metric("TAU_ATOMIC").index
    members = read_members(path)
    anchor = members["anchor.xml"]
    at = anchor.index(b"<uniq_name>TAU_ATOMIC</uniq_name>")
    members["anchor.xml"] = anchor[:at] + anchor[at:].replace(b"<dtype>TAU_ATOMIC</dtype>", b"<dtype>DOUBLE</dtype>", 1)
    error = _format_error(tmp_path, members)
    assert error.member == f"{tau}.data" and "the values are not DOUBLE" in error.message


@pytest.mark.parametrize("padding, ok", [(1, True), (8, True), (9, False)])
def test_zero_padding_up_to_8_bytes(tmp_path, padding, ok):
    path = _written(tmp_path, "blast.p64.cubex")
    untouched = cubescale.open(path)
    members = read_members(path)
    members["1.data"] += bytes(padding)
    if ok:
        altered = _open_altered(tmp_path, members)
        _same_values(altered, untouched)
        assert altered.ignored_bytes(1) == padding + untouched.ignored_bytes(1)
    else:
        assert _format_error(tmp_path, members).member == "1.data"


def test_fewer_bytes_than_the_index_needs(tmp_path):
    path = _written(tmp_path, "blast.p64.cubex")
    members = read_members(path)
    members["1.data"] = members["1.data"][:-9]
    assert "the index needs" in _format_error(tmp_path, members).message


def test_compressed_member_whose_streams_end_early(tmp_path):
    path = _written(tmp_path, "blast.p64.cubex", compress=True)
    members = read_members(path)
    data = members["1.data"]
    count = struct.unpack_from("<Q", data, 11)[0]
    assert count >= 2
    # The last block dropped from the table: the streams hold fewer rows than the index lists.
    shorter = b"ZCUBEX.DATA" + struct.pack("<Q", count - 1) + data[19:19 + 24 * (count - 1)] + data[19 + 24 * count:]
    assert "the index needs" in _format_error(tmp_path, members | {"1.data": shorter}).message
    # A block that starts after a gap (a stream that ended early).
    table = bytearray(data)
    struct.pack_into("<Q", table, 19 + 24, struct.unpack_from("<Q", data, 19 + 24)[0] + 8)
    assert "the blocks before it end" in _format_error(tmp_path, members | {"1.data": bytes(table)}).message
    # A stream cut short.
    table = bytearray(data)
    struct.pack_into("<Q", table, 19 + 16, struct.unpack_from("<Q", data, 19 + 16)[0] - 4)
    assert "zlib stream" in _format_error(tmp_path, members | {"1.data": bytes(table)}).message


# ------------------------------------------------------------------------------ extra members

def test_extra_members_are_listed_and_kept_on_convert(tmp_path, capsys):
    path = _written(tmp_path, "blast.p64.cubex")
    members = read_members(path)
    extras = {"README.txt": b"measured on JUQUEEN\n", "remapping.spec": b"<?xml version='1.0'?><cube/>\n",
              "exactly512.txt": b"x" * 512}
    source = tmp_path / "extras.cubex"
    source.write_bytes(archive(extras | members))
    report = cubescale.open(source)
    assert report.extra_members == [(n, len(b)) for n, b in extras.items()]
    assert main(["info", str(source)]) == 0
    out = capsys.readouterr().out
    assert all(f"extra member {n} ({len(b)} bytes)" in out for n, b in extras.items())
    for compress in ([], ["--compress"]):
        copy = tmp_path / f"copy{len(compress)}.cubex"
        assert main(["convert", str(source), str(copy)] + compress) == 0
        written = read_members(str(copy))
        assert written["README.txt"] == extras["README.txt"]
        assert written["remapping.spec"] == extras["remapping.spec"]
        # A member of exactly 512 bytes gets a newline (Cube's reader expects no such member).
        assert written["exactly512.txt"] == extras["exactly512.txt"] + b"\n"
        assert [n for n in written if n in extras] == list(extras)  # in their order
        _same_values(cubescale.open(copy), report)


@pytest.mark.parametrize("name", ["call_tree_test.cubex", "bt-mz.p2x4.bad_checksums.cubex", "l2dcm.p128.cubex", "time.p4.cubex"])
def test_remapping_spec_of_real_reports_survives_convert(tmp_path, name):
    source = os.path.join(DATA, name)
    copy = tmp_path / "copy.cubex"
    assert main(["convert", source, str(copy)]) == 0
    original = cubescale.open(source)
    assert [n for n, _ in original.extra_members] == ["remapping.spec"]
    assert read_members(str(copy))["remapping.spec"] == read_members(source)["remapping.spec"]
    assert cubescale.open(copy).extra_member_bytes("remapping.spec") == original.extra_member_bytes("remapping.spec")


def test_values_members_of_unknown_metrics_are_not_extra(tmp_path):
    path = _written(tmp_path, "blast.p64.cubex")
    members = read_members(path)
    report = _open_altered(tmp_path, {"99.data": b"CUBEX.DATA", "99.index": members["0.index"]} | members)
    assert report.extra_members == []


def test_info_mentions_ignored_bytes(tmp_path, capsys):
    path = _written(tmp_path, "blast.p64.cubex")
    width = _row_bytes(cubescale.open(path), 0)
    members = read_members(path)
    members["0.data"] += bytes(width)
    source = tmp_path / "trailing.cubex"
    source.write_bytes(archive(members))
    members["1.data"] += bytes(2 * _row_bytes(cubescale.open(path), 1))
    source.write_bytes(archive(members))
    # One summary line by default (Scalasca leaves such rows in every report) ...
    assert main(["info", str(source)]) == 0
    out = capsys.readouterr().out
    total = width + 2 * _row_bytes(cubescale.open(path), 1)
    assert f"2 metrics with rows beyond their index: {total} bytes ignored" in out
    assert "bytes of its data member beyond" not in out
    # ... and a line per metric with --verbose.
    assert main(["info", str(source), "--verbose"]) == 0
    out = capsys.readouterr().out
    first, second = cubescale.open(source).metrics[:2]
    assert f"{first.name}: {width} bytes of its data member beyond the indexed rows ignored" in out
    assert f"{second.name}: {total - width} bytes of its data member beyond the indexed rows ignored" in out


# ------------------------------------------------------------------------------ large files read on demand

def _padded(tmp_path, source: str, members: dict[str, bytes] | None = None) -> str:
    """`source` with a 5 MiB extra member in front: above the 4 MiB at which files are read on
    demand instead of whole."""
    members = members if members is not None else read_members(os.path.join(DATA, source))
    path = tmp_path / f"padded-{source}"
    path.write_bytes(archive({"padding.bin": bytes(range(256)) * (5 << 12)} | members))
    assert os.path.getsize(path) > 4 << 20
    return str(path)


@pytest.mark.parametrize("source", ["kripke.p8.cubex", "all_dtypes.cubex", "mm.zcubex.cubex", "blast.p64.cubex", "ours"])
def test_large_file_read_on_demand_gives_the_same_values(tmp_path, source):
    """Big-endian rows (byte-swapped), location Ids out of order (gathered), ZCUBEX, gzipped
    anchor, and (ours) little-endian rows of 512 bytes in short runs (read through the
    buffer): each through the on-demand path equals the file read whole."""
    path = _written(tmp_path, "blast.p64.cubex") if source == "ours" else os.path.join(DATA, source)
    padded = cubescale.open(_padded(tmp_path, "x.cubex", read_members(path)))
    _same_values(padded, cubescale.open(path))
    assert padded.regions == cubescale.open(path).regions


def test_large_file_with_trailing_rows(tmp_path):
    path = _written(tmp_path, "all_dtypes.cubex")
    untouched = cubescale.open(path)
    members = read_members(path)
    for name in _data_members(members):
        members[name] += bytes(_row_bytes(untouched, int(name.split(".")[0])))
    _same_values(cubescale.open(_padded(tmp_path, "all_dtypes.cubex", members)), untouched)
    members["1.data"] += b"\x05"
    report = cubescale.open(_padded(tmp_path, "all_dtypes.cubex", members))
    with pytest.raises(cubescale.FormatError, match="not a whole number of rows"):
        report.load_all()


@pytest.fixture
def large_report(tmp_path) -> str:
    """A report of 6 MB written by our writer: 300 call paths x 2,048 locations of doubles."""
    xml = ['<?xml version="1.0" encoding="UTF-8"?>\n<cube version="4.4">\n<metrics>\n']
    for i, (name, kind) in enumerate([("time", "INCLUSIVE"), ("visits", "EXCLUSIVE")]):
        xml.append(f'<metric id="{i}" type="{kind}">\n<disp_name>{name}</disp_name>\n<uniq_name>{name}</uniq_name>\n'
                   f'<dtype>{"DOUBLE" if i == 0 else "UINT64"}</dtype>\n<uom>sec</uom>\n<url></url>\n<descr></descr>\n</metric>\n')
    xml.append('</metrics>\n<program>\n<region id="0" mod="a.c" begin="1" end="2">\n<name>main</name>\n</region>\n')
    xml.append('<region id="1" mod="a.c" begin="3" end="4">\n<name>f</name>\n</region>\n<cnode id="0" calleeId="0">\n')
    xml += [f'<cnode id="{c}" calleeId="1">\n</cnode>\n' for c in range(1, 300)]
    xml.append('</cnode>\n</program>\n<system>\n<systemtreenode Id="0">\n<name>m</name>\n<class>machine</class>\n')
    xml.append('<locationgroup Id="0">\n<name>p</name>\n<rank>0</rank>\n<type>process</type>\n')
    xml += [f'<location Id="{t}">\n<name>t</name>\n<rank>{t}</rank>\n<type>thread</type>\n</location>\n' for t in range(2048)]
    xml.append("</locationgroup>\n</systemtreenode>\n</system>\n</cube>\n")
    report = cubescale.Report.from_anchor_xml("".join(xml))
    rng = np.random.default_rng(3)
    report.set_values("time", rng.random(report.shape))
    report.set_values("visits", rng.integers(0, 9, report.shape, dtype=np.uint64))
    path = str(tmp_path / "large.cubex")
    cubescale.write(report, path)
    assert os.path.getsize(path) > 4 << 20
    return path


@pytest.mark.parametrize("keep", [0, 4096, 3 << 20, 8 << 20])
def test_large_file_truncated_while_open(large_report, keep):
    """A file another process shortens while a Report holds it: FormatError, not SIGBUS."""
    report = cubescale.open(large_report)
    os.truncate(large_report, keep)
    with pytest.raises(cubescale.FormatError) as info:
        report.values("visits")
        report.values("time")
    assert info.value.file == large_report
    assert info.value.member in ("0.data", "0.index", "1.data", "1.index")
    assert "shortened" in info.value.message
    # What was read at open stays usable: definitions, regions (parsed from a copy of anchor.xml).
    assert [r.name for r in report.regions] == ["main", "f"]


def test_large_file_that_loses_only_its_anchor(large_report):
    """anchor.xml is read at open: cutting into it leaves every value loadable."""
    expected = cubescale.open(large_report)
    expected.load_all()
    report = cubescale.open(large_report)
    os.truncate(large_report, os.path.getsize(large_report) - 600)
    _same_values(report, expected)
    assert [r.name for r in report.regions] == ["main", "f"]


def test_large_file_values_loaded_before_truncation_stay(large_report):
    report = cubescale.open(large_report)
    time = report.values("time").copy()
    os.truncate(large_report, 0)
    assert (report.values("time") == time).all()
    with pytest.raises(cubescale.FormatError):
        report.values("visits")


def test_in_memory_archives_still_check_ranges():
    data = open(os.path.join(DATA, "call_tree_test.cubex"), "rb").read()
    report = _core.open_cubex_bytes(data, "mem.cubex")
    _core.load_all(report)
    assert _core.report_extra_members(report) == [("remapping.spec", len(read_members(os.path.join(DATA, "call_tree_test.cubex"))["remapping.spec"]))]


def test_an_extra_member_name_seen_twice_counts_once_first_wins():
    # Found by atheris: two extra members named alike (here ""), listed twice but found once.
    members = read_members(os.path.join(DATA, "call_tree_test.cubex"))
    notes = archive({"notes.txt": b"first"})
    twice = archive({"notes.txt": b"second, longer"})
    block = archive(members)
    # Splice: the two notes members (header + data blocks, without the end-of-archive blocks)
    # before the report's own members.
    body = notes[:1024] + twice[:1024] + block
    report = cubescale.Report(_core.open_cubex_bytes(body, "twice.cubex"))
    assert report.extra_members[:1] == [("notes.txt", 5)]
    assert [n for n, _ in report.extra_members].count("notes.txt") == 1
    assert report.extra_member_bytes("notes.txt") == b"first"
