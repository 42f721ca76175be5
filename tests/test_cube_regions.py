"""Regions are noted by id and offset when a report opens and parsed on first use, skipping
their bodies where that is safe (see cpp/include/cubescale/cube/region_xml.hpp). Python's own
XML parser is the oracle: on every shared report and on region bodies written in every way
XML allows (comments, CDATA, entities, '>' in values, single quotes, other attribute orders),
the regions and the region of every call path must be what ElementTree reads."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest
from tar_members import archive, read_members

import cubescale
from cubescale._core import cube as _core

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
FILES = sorted(f for f in os.listdir(DATA) if f.endswith(".cubex"))
FIELDS = ("name", "mangled_name", "paradigm", "role", "url", "descr")


def _anchor(members: dict[str, bytes]) -> bytes:
    import gzip

    anchor = members["anchor.xml"]
    return gzip.decompress(anchor) if anchor[:2] == b"\x1f\x8b" else anchor


def _expected(anchor: bytes):
    """(regions as dicts, region index of every cnode in preorder) as ElementTree reads them."""
    root = ET.fromstring(anchor)
    program = root.find("program")
    regions, index_of_id = [], {}
    for r in program.findall("region"):
        index_of_id.setdefault(int(r.get("id")), len(regions))
        entry = {f: (r.findtext(f) or "").strip() for f in FIELDS}
        entry |= {"file_id": int(r.get("id")), "mod": r.get("mod", ""),
                  "begin": int(r.get("begin", -1)), "end": int(r.get("end", -1)),
                  "attrs": {a.get("key"): a.get("value") for a in r.findall("attr")}}
        regions.append(entry)
    calls = [index_of_id[int(c.get("calleeId"))] for c in program.iter("cnode")]
    return regions, calls


def _actual(report):
    # The bound definitions' field names; the XML tags they come from where those differ.
    renamed = {"descr": "description", "mod": "module"}
    regions = [{k: getattr(r, renamed.get(k, k)) for k in (*FIELDS, "file_id", "mod", "begin", "end", "attrs")}
               for r in report.regions()]
    return regions, report.cnode_regions().tolist()


@pytest.mark.parametrize("name", FILES)
def test_every_shared_report_reads_the_regions_elementtree_reads(name):
    path = os.path.join(DATA, name)
    assert _actual(_core.open_cubex(path)) == _expected(_anchor(read_members(path)))


# Each rewrites the first region of call_tree_test.cubex's anchor.xml: bodies the scan must
# not skip (markup that could hide "</region>") and start tags it must not misread.
SOURCE = os.path.join(DATA, "call_tree_test.cubex")
VARIANTS = {
    "comment hiding an end tag": lambda r: r.replace(b"<name>", b"<!-- </region> --><name>", 1),
    "CDATA hiding an end tag": lambda r: r.replace(b"<descr>", b"<descr><![CDATA[</region><region id='9'>]]>", 1),
    "processing instruction": lambda r: r.replace(b"<name>", b"<?pi </region> ?><name>", 1),
    "entities in the name": lambda r: r.replace(b"<name>", b"<name>&lt;x&gt; &amp; ", 1),
    "'>' and '/>' in an attribute value": lambda r: r.replace(b'mod="', b'mod="a>b/>c', 1),
    "single-quoted attributes": lambda r: r.replace(b'id="0"', b"id='0'", 1),
    "mod before id": lambda r: r.replace(b'<region id="0" mod="', b'<region mod="m" id="0" x="', 1),
    "two spaces before id": lambda r: r.replace(b"<region id=", b"<region  id=", 1),
    "space in the end tag": lambda r: r.replace(b"</region>", b"</region\n>", 1),
    "a child named regionx": lambda r: r.replace(b"<name>", b"<regionx>x</regionx><name>", 1),
    "an attr child": lambda r: r.replace(b"<name>", b'<attr key="k" value="v&gt;"/><name>', 1),
    "an unknown empty child": lambda r: r.replace(b"<name>", b"<b x=\"1\"/><name>", 1),
    "empty-element region": lambda r: r[: r.index(b">")] + b"/>",
}


@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
def test_region_bodies_in_every_form_read_as_elementtree_reads_them(variant):
    members = read_members(SOURCE)
    anchor = members["anchor.xml"]
    start = anchor.index(b"<region ")
    end = anchor.index(b"</region>", start) + len(b"</region>")
    anchor = anchor[:start] + VARIANTS[variant](anchor[start:end]) + anchor[end:]
    report = _core.open_cubex_bytes(archive(members | {"anchor.xml": anchor}), "variant.cubex")
    assert _actual(report) == _expected(anchor)


def test_a_malformed_region_body_fails_when_the_regions_are_read():
    members = read_members(SOURCE)
    anchor = members["anchor.xml"].replace(b"</name>", b"</nome>", 1)
    report = _core.open_cubex_bytes(archive(members | {"anchor.xml": anchor}), "bad.cubex")
    _core.load_all(report)  # values do not need the regions' names
    assert report.cnode_count > 0
    for _ in range(2):  # and a failed parse leaves nothing half done: it fails again
        with pytest.raises(cubescale.FormatError) as info:
            report.regions()
        assert (info.value.file, info.value.member) == ("bad.cubex", "anchor.xml")
        assert info.value.offset == anchor.index(b"</nome>")


def test_a_raw_less_than_in_an_attribute_value_is_an_error():
    members = read_members(SOURCE)
    anchor = members["anchor.xml"].replace(b'<region id="0" mod="', b'<region id="0" mod="<', 1)
    with pytest.raises(cubescale.FormatError) as info:
        _core.open_cubex_bytes(archive(members | {"anchor.xml": anchor}), "bad.cubex").regions()
    assert info.value.offset == anchor.index(b'mod="<') + len(b'mod="')


def test_public_api_reads_regions_on_first_use():
    report = cubescale.open(SOURCE)
    report.load_all()
    regions, calls = _expected(_anchor(read_members(SOURCE)))
    assert [c.region.name for c in report.cnodes] == [regions[k]["name"] for k in calls]
