"""Bad input ends in cubescale.FormatError naming the file, the member and the byte offset:
truncated files, wrong magic, absurd counts, malformed XML. Never a crash, never another error."""

from __future__ import annotations

import os

import pytest
from tar_members import archive, read_members

import cubescale
from cubescale._core import cube as _core

# ../shared/data beside the checkout, unless CUBESCALE_SHARED_DATA says otherwise.
DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
SOURCE = os.path.join(DATA, "call_tree_test.cubex")


def _members(path=SOURCE) -> dict[str, bytes]:
    return read_members(path)


def _open_and_load(data: bytes, name="bad.cubex"):
    """Opens, loads every metric and reads the regions (which are parsed on first use)."""
    report = _core.open_cubex_bytes(data, name)
    _core.load_all(report)
    report.regions()
    return report


def _error(data: bytes) -> cubescale.FormatError:
    with pytest.raises(cubescale.FormatError) as info:
        _open_and_load(data)
    assert info.value.file == "bad.cubex"
    return info.value


def test_a_good_rebuilt_archive_opens():
    _open_and_load(archive(_members()))


def test_file_errors_name_the_path(tmp_path):
    path = tmp_path / "truncated.cubex"
    path.write_bytes(open(SOURCE, "rb").read()[:1000])
    with pytest.raises(cubescale.FormatError) as info:
        cubescale.open(path)
    assert info.value.file == str(path)
    assert info.value.member == "remapping.spec"
    assert info.value.offset == 124  # the size field of the header that runs past the end


@pytest.mark.parametrize("cut", [0, 100, 511, 513, 5000, 100000, 125000])
def test_truncated_files(cut):
    data = open(SOURCE, "rb").read()[:cut]
    with pytest.raises(cubescale.FormatError) as info:
        _open_and_load(data)
    assert info.value.member in ("tar header", "anchor.xml", "remapping.spec") or info.value.member.endswith((".data", ".index"))


@pytest.mark.parametrize("name", ["call_tree_test.cubex", "time.p4.cubex", "blast.p64.cubex"])
def test_a_file_cut_between_two_members_says_so(name):
    # Cut where a member's blocks end (no header half read): the anchor, which CubeLib writes
    # last, is lost with the rest; the archive has no end blocks. Not "not a CUBE4 report".
    import tarfile

    path = os.path.join(DATA, name)
    with tarfile.open(path) as t:
        members = t.getmembers()
    second = members[1].offset  # the first member's blocks end here
    error = _error(open(path, "rb").read()[:second])
    assert error.member == "anchor.xml" and error.offset == second
    assert f"ends after member {members[0].name} without tar's end blocks: the file was cut short" in error.message


def test_not_a_tar_file():
    error = _error(b"x" * 1024)
    assert (error.member, error.offset) == ("tar header", 0)


def test_no_anchor():
    members = _members()
    del members["anchor.xml"]
    assert _error(archive(members)).member == "anchor.xml"


def test_wrong_index_magic():
    members = _members()
    members["1.index"] = b"CUBEX.INDEY" + members["1.index"][11:]
    error = _error(archive(members))
    assert (error.member, error.offset) == ("1.index", 0)


def test_wrong_data_magic():
    members = _members()
    members["0.data"] = b"NOTCUBEDATA" + members["0.data"][11:]
    error = _error(archive(members))
    assert (error.member, error.offset) == ("0.data", 0)


def test_absurd_index_count():
    members = _members()
    members["2.index"] = members["2.index"][:18] + b"\xf0\xff\xff\xff" + members["2.index"][22:]
    error = _error(archive(members))
    assert (error.member, error.offset) == ("2.index", 18)
    assert "rows" in error.message


def test_row_position_outside_the_call_tree():
    members = _members()
    index = bytearray(members["2.index"])
    index[22:26] = (1000).to_bytes(4, "little")
    error = _error(archive(members | {"2.index": bytes(index)}))
    assert (error.member, error.offset) == ("2.index", 22)


def test_bad_endianness_marker():
    members = _members()
    members["0.index"] = members["0.index"][:11] + b"\x02\x00\x00\x00" + members["0.index"][15:]
    error = _error(archive(members))
    assert (error.member, error.offset) == ("0.index", 11)


def test_data_shorter_than_the_index_says():
    members = _members()
    members["3.data"] = members["3.data"][:-9]
    assert _error(archive(members)).member == "3.data"


def test_absurd_zcubex_block_count():
    members = _members(os.path.join(DATA, "mm.zcubex.cubex"))
    data = members["0.data"]
    members["0.data"] = data[:11] + (2**62).to_bytes(8, "little") + data[19:]
    error = _error(archive(members))
    assert (error.member, error.offset) == ("0.data", 11)


def test_corrupt_zlib_stream():
    members = _members(os.path.join(DATA, "mm.zcubex.cubex"))
    data = bytearray(members["1.data"])
    data[-8:] = b"\xff" * 8
    assert _error(archive(members | {"1.data": bytes(data)})).member == "1.data"


@pytest.mark.parametrize(
    "damage, needle",
    [
        (lambda x: x.replace(b"</program>", b"", 1), b""),
        (lambda x: x.replace(b'<cnode id="3" calleeId="5">', b'<cnode id="3" calleeId=5>', 1), b"calleeId=5"),
        (lambda x: x.replace(b"<dtype>DOUBLE</dtype>", b"<dtype>WIDE</dtype>", 1), b"WIDE"),
        (lambda x: x.replace(b'calleeId="5"', b'calleeId="99"', 1), b'<cnode id="3"'),
        (lambda x: x.replace(b"<location Id=\"0\">", b"<location Id=\"7\">", 1), b'<location Id="7"'),
        (lambda x: x.replace(b"&", b"&bogus;", 1) if b"&" in x else x.replace(b"<name>main", b"<name>&bogus;", 1), b"&bogus;"),
        (lambda x: x[: len(x) // 2], b""),
    ],
    ids=["unclosed", "unquoted", "dtype", "callee", "location-id", "entity", "half"],
)
def test_malformed_xml(damage, needle):
    members = _members()
    anchor = damage(members["anchor.xml"])
    error = _error(archive(members | {"anchor.xml": anchor}))
    assert error.member == "anchor.xml"
    if needle:  # the offset points at the damage
        at = anchor.index(needle)
        assert at - 64 <= error.offset <= at + len(needle) + 64, (error.offset, at)


def test_gzip_anchor_that_is_corrupt():
    import gzip

    members = _members()
    members["anchor.xml"] = gzip.compress(members["anchor.xml"])[:200]
    assert _error(archive(members)).member == "anchor.xml"


def test_deep_nesting_does_not_overflow_the_stack():
    members = _members()
    anchor = members["anchor.xml"].replace(b"</program>", b"<a>" * 200000 + b"</a>" * 200000 + b"</program>", 1)
    assert _error(archive(members | {"anchor.xml": anchor})).member == "anchor.xml"


def test_cli_reports_format_errors(tmp_path, capsys):
    from cubescale.cli import main

    bad = tmp_path / "bad.cubex"
    bad.write_bytes(b"y" * 2048)
    assert main(["info", str(bad)]) == 2
    assert "bad.cubex" in capsys.readouterr().err


def test_second_system_root_is_a_format_error():
    members = _members()
    anchor = members["anchor.xml"]
    start, end = anchor.index(b"<systemtreenode"), anchor.index(b"<topologies>")
    tree = anchor[start:end]
    error = _error(archive(members | {"anchor.xml": anchor[:end] + tree + anchor[end:]}))
    assert (error.member, error.offset) == ("anchor.xml", end)


def test_text_that_is_not_utf8_is_a_format_error():
    members = _members()
    anchor = members["anchor.xml"].replace(b"<name>main</name>", b"<name>ma\xf1n</name>", 1)
    error = _error(archive(members | {"anchor.xml": anchor}))
    assert (error.member, error.offset) == ("anchor.xml", anchor.index(b"\xf1"))


def test_missing_file_and_directory_are_os_errors(tmp_path):
    missing = str(tmp_path / "missing.cubex")
    with pytest.raises(FileNotFoundError) as caught:
        cubescale.open(missing)
    assert caught.value.filename == missing
    with pytest.raises(IsADirectoryError):
        cubescale.open(str(tmp_path))
    target = str(tmp_path / "no" / "such" / "out.cubex")
    with pytest.raises(FileNotFoundError) as caught:  # named by the path asked for, not our temporary
        cubescale.write(cubescale.open(SOURCE), target)
    assert caught.value.filename == target
    undecodable = os.path.join(os.fsencode(tmp_path), b"\xff-missing.cubex")
    with pytest.raises(FileNotFoundError) as caught:
        cubescale.open(undecodable)
    assert os.fsencode(caught.value.filename) == undecodable
