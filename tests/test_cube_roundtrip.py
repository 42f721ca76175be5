"""Round trip: read every shared report, write it, read it back: identical values. pycubexr
(the reader Extra-P uses) reads every file we write and gets the same values."""

from __future__ import annotations

import glob
import io
import os
import re
import tarfile

import numpy as np
import pytest

import cubescale

# ../shared/data beside the checkout, unless CUBESCALE_SHARED_DATA says otherwise.
DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
FILES = sorted(glob.glob(os.path.join(DATA, "*.cubex")))


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    # Byte equality: NaNs and -0.0 must survive too.
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zlib"])
@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_write_and_read_back_gives_identical_values(path, compress, tmp_path):
    original = cubescale.open(path)
    out = tmp_path / "copy.cubex"
    cubescale.write(original, out, compress=compress)
    copy = cubescale.open(out)
    assert copy.shape == original.shape
    assert [(m.name, m.kind, m.dtype, m.parent) for m in copy.metrics] == \
        [(m.name, m.kind, m.dtype, m.parent) for m in original.metrics]
    assert [(c.region.name, c.parent) for c in copy.cnodes] == [(c.region.name, c.parent) for c in original.cnodes]
    assert [(loc.name, loc.type, loc.rank, loc.process_rank) for loc in copy.locations] == \
        [(loc.name, loc.type, loc.rank, loc.process_rank) for loc in original.locations]
    for m in original.metrics:
        for inclusive in (None, True, False):
            assert _same(copy.values(m.name, inclusive), original.values(m.name, inclusive)), (m.name, inclusive)


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_a_second_round_trip_writes_the_same_bytes(path, tmp_path):
    # A report we wrote, written again, is the same file: nothing accumulates (once, every write
    # added a blank line to the <topologies> it copies). (The first copy of another writer's
    # report may order its members differently.)
    first, second, third = tmp_path / "first.cubex", tmp_path / "second.cubex", tmp_path / "third.cubex"
    cubescale.write(cubescale.open(path), first)
    cubescale.write(cubescale.open(first), second)
    cubescale.write(cubescale.open(second), third)
    assert second.read_bytes() == third.read_bytes()


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_written_files_are_plain_tar_without_512_multiples(path, tmp_path):
    out = tmp_path / "copy.cubex"
    cubescale.write(cubescale.open(path), out)
    with tarfile.open(out) as tar:  # Python's tarfile checks every header checksum
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names[-1] == "anchor.xml"
    assert all(m.size % 512 != 0 for m in members)
    assert os.listdir(tmp_path) == ["copy.cubex"]  # no temporary left beside it


def test_our_system_tree_member_is_used_when_reading(tmp_path):
    out = tmp_path / "copy.cubex"
    original = cubescale.open(os.path.join(DATA, "bt-mz.B.8x4.cubex"))
    cubescale.write(original, out)
    with tarfile.open(out) as tar:
        assert "cubescale.systree" in tar.getnames()
        anchor = tar.extractfile("anchor.xml").read()
    # Other names in the XML system tree prove that the reader takes the member instead. (The
    # XML must still spell out the elements the member expands to: removing them, as this test
    # did before, is now a FormatError, see test_cube_consistency.py.)
    start, end = anchor.index(b"<systemtreenode"), anchor.index(b"<topologies>")
    renamed = tmp_path / "renamed.cubex"
    with tarfile.open(out) as tar, tarfile.open(renamed, "w", format=tarfile.USTAR_FORMAT) as dst:
        for member in tar.getmembers():
            data = tar.extractfile(member).read()
            if member.name == "anchor.xml":
                data = anchor[:start] + anchor[start:end].replace(b"thread", b"strand") + anchor[end:]
            member.size = len(data)
            dst.addfile(member, io.BytesIO(data))
    copy = cubescale.open(renamed)
    assert any("thread" in loc.name for loc in original.locations)
    assert [(loc.name, loc.process) for loc in copy.locations] == [(loc.name, loc.process) for loc in original.locations]
    assert _same(copy.values("time"), original.values("time"))


pycubexr = pytest.importorskip("pycubexr")


def _pycubexr_values(parsed, metric, cnode_id, inclusive):
    values = parsed.get_metric_values(metric, allow_full_uint64_values=True)
    cnode = parsed.get_cnode(cnode_id)
    from pycubexr.classes.metric import MetricType

    stored_inclusive = metric.metric_type == MetricType.INCLUSIVE
    result = values.cnode_values(cnode, convert_to_inclusive=inclusive and not stored_inclusive,
                                 convert_to_exclusive=not inclusive and stored_inclusive)
    # pycubexr wraps MIN/MAXDOUBLE values in its own class around an ndarray.
    return np.asarray(result if isinstance(result, np.ndarray) else result._values)


SCALARS = {"DOUBLE", "FLOAT", "UINT64", "INT64", "MINDOUBLE", "MAXDOUBLE", "UINT32", "INT32"}


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zlib"])
@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_pycubexr_reads_what_we_write(path, compress, tmp_path):
    from pycubexr import CubexParser

    ours = cubescale.open(path)
    out = tmp_path / "copy.cubex"
    cubescale.write(ours, out, compress=compress)
    with CubexParser(str(out)) as parsed:
        metrics = {m.name: m for m in parsed.all_metrics()}
        assert set(metrics) == {m.name for m in ours.metrics}
        assert len(parsed.get_locations()) == ours.shape[1]
        assert len(parsed.all_cnodes()) == ours.shape[0]
        for m in ours.metrics:
            if m.dtype not in SCALARS:
                continue
            stored = ours.values(m, inclusive=None)
            theirs = np.stack([_pycubexr_values(parsed, metrics[m.name], c, m.kind == "INCLUSIVE")
                               for c in range(ours.shape[0])])
            # pycubexr hands out the values it read: they must equal ours exactly.
            assert (theirs.astype(stored.dtype) == stored).all(), m.name
        # And its own exclusive/inclusive conversion agrees with ours on sums.
        for m in ours.metrics[:3]:
            if m.dtype in ("DOUBLE", "UINT64"):
                converted = ours.values(m, inclusive=m.kind != "INCLUSIVE")
                theirs = np.stack([_pycubexr_values(parsed, metrics[m.name], c, m.kind != "INCLUSIVE")
                                   for c in range(ours.shape[0])])
                np.testing.assert_allclose(theirs.astype(np.float64), converted.astype(np.float64), rtol=1e-9)


def test_topologies_follow_renumbered_locations(tmp_path):
    """all_dtypes.cubex numbers its locations out of document order; we write them in order.
    A Cartesian topology over them must still put every location at its coordinate."""
    source = os.path.join(DATA, "all_dtypes.cubex")
    with tarfile.open(source) as tar:
        anchor = tar.extractfile("anchor.xml").read().decode()
    original = cubescale.open(source)
    ids = [loc.id for loc in original.locations]
    assert ids != sorted(ids)  # the premise: Ids out of document order
    coords = "".join(f'<coord locId="{i}">{i} 0</coord>\n' for i in sorted(ids))
    cart = (f'<cart name="grid" ndims="2">\n<dim name="x" size="{len(ids)}" periodic="false"/>\n'
            f'<dim name="y" size="1" periodic="false"/>\n{coords}</cart>\n')
    start, end = anchor.index("<topologies>") + len("<topologies>"), anchor.index("</topologies>")
    report = cubescale.Report.from_anchor_xml(anchor[:start] + cart + anchor[end:])
    out = tmp_path / "topology.cubex"
    cubescale.write(report, out)

    back = cubescale.open(out)
    text = back._core.topologies_xml
    placed = {int(m.group(2)): int(m.group(1)) for m in re.finditer(r'<coord locId="(\d+)">(\d+) 0</coord>', text)}
    assert sorted(placed) == sorted(ids)
    by_old_id = {loc.id: (loc.process, loc.name) for loc in original.locations}
    by_new_id = {loc.id: (loc.process, loc.name) for loc in back.locations}
    for coordinate, written_id in placed.items():  # the coordinate was the old Id
        assert by_new_id[written_id] == by_old_id[coordinate]
    assert [loc.id for loc in back.locations] == list(range(len(ids)))
