"""Location groups in CubeW's layout are read in one pass without the tokenizer (see
cpp/include/cubescale/cube/system_xml.hpp); any other layout goes to the general parser. That
parser is the oracle: an extra attribute on every <locationgroup> start tag sends every group
to it without changing what the document means, so both readings must give the same system
tree, locations, ranks and location Ids, on every shared report and on groups written in
every way the fast reading must either take exactly or leave alone."""

from __future__ import annotations

import os
import re

import pytest
from anchor_oracle import assert_fails_alike, both_readings, open_with_anchor
from tar_members import read_members

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
FILES = sorted(f for f in os.listdir(DATA) if f.endswith(".cubex"))
SOURCE = os.path.join(DATA, "l2dcm.p128.cubex")


def _general(anchor: bytes) -> bytes:
    """The same document with every group sent to the general parser."""
    return anchor.replace(b"<locationgroup ", b'<locationgroup general="1" ')


def _system(report) -> tuple:
    tree = report.system_tree()
    return (tree.serialize(), report.location_elements().tolist(), report.location_group_elements().tolist(),
            report.location_ranks().tolist(), report.location_group_ranks().tolist(),
            report.location_file_ids().tolist())


@pytest.mark.parametrize("name", FILES)
def test_every_shared_report_reads_the_system_tree_the_general_parser_reads(name):
    fast, general = both_readings(os.path.join(DATA, name), _general)
    assert _system(fast) == _system(general)
    assert len(fast.system_tree()) > 1


def _with_first_group(rewrite) -> tuple[dict[str, bytes], bytes]:
    """SOURCE's members and its anchor.xml with the first group rewritten (it must change)."""
    members = read_members(SOURCE)
    anchor = members["anchor.xml"]
    start = anchor.index(b"<locationgroup ")
    end = anchor.index(b"</locationgroup>", start) + len(b"</locationgroup>")
    rewritten = rewrite(anchor[start:end])
    assert rewritten != anchor[start:end]
    return members, anchor[:start] + rewritten + anchor[end:]


# Each rewrites the first group of l2dcm.p128's anchor.xml; the 127 groups after it stay plain.
VARIANTS = {
    "no white space between tags": lambda g: re.sub(rb">\s+<", b"><", g),
    "tabs, CRLF and indentation": lambda g: g.replace(b"\n", b"\r\n\t  "),
    "fields in another order": lambda g: g.replace(b"<rank>0</rank>\n<type>process</type>", b"<type>process</type>\n<rank>0</rank>", 1),
    "no rank": lambda g: re.sub(rb"<rank>\d+</rank>\n", b"", g),
    "no type": lambda g: g.replace(b"<type>process</type>\n", b"", 1),
    "an empty name": lambda g: g.replace(b"<name>MPI Rank 0</name>", b"<name></name>", 1),
    "space around a name": lambda g: g.replace(b"<name>MPI Rank 0</name>", b"<name>  MPI Rank 0 \n</name>", 1),
    "'>' in a name": lambda g: g.replace(b"<name>MPI Rank 0</name>", b"<name>a > b</name>", 1),
    "an entity in a name": lambda g: g.replace(b"<name>MPI Rank 0</name>", b"<name>a &amp; b</name>", 1),
    "a repeated field": lambda g: g.replace(b"<name>MPI Rank 0</name>", b"<name>first</name><name>second</name>", 1),
    "three locations": lambda g: g.replace(b"</location>", b'</location>\n<location Id="128">\n<name>t1</name>\n<rank>1</rank>\n<type>thread</type>\n</location><location Id="129"></location>', 1),
    "no location": lambda g: re.sub(rb"<location .*</location>\n", b"", g, flags=re.S),
    "an attr in a location": lambda g: g.replace(b"<type>thread</type>", b'<type>thread</type><attr key="k" value="v"/>', 1),
    "a comment": lambda g: g.replace(b"<rank>", b"<!-- c --><rank>", 1),
    "a lowercase id": lambda g: g.replace(b'<locationgroup Id="0"', b'<locationgroup id="0"', 1),
    "single quotes": lambda g: g.replace(b'<location Id="0"', b"<location Id='0'", 1),
    "a field after the location": lambda g: g.replace(b"</locationgroup>", b"<name>late</name></locationgroup>", 1),
    "a negative rank": lambda g: g.replace(b"<rank>0</rank>", b"<rank>-3</rank>", 1),
    "a rank with leading zeros": lambda g: g.replace(b"<rank>0</rank>", b"<rank>007</rank>", 1),
    "a location Id with leading zeros": lambda g: g.replace(b'<location Id="0"', b'<location Id="000"', 1),
}


@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
def test_groups_in_every_form_read_as_the_general_parser_reads_them(variant):
    members, anchor = _with_first_group(VARIANTS[variant])
    if variant == "no location":  # location Ids must stay 0..n-1
        anchor = anchor.replace(b'<location Id="127"', b'<location Id="0"')
    expected = _system(open_with_anchor(members, _general(anchor), "general.cubex"))
    assert _system(open_with_anchor(members, anchor, "fast.cubex")) == expected


# Malformed groups: the fast reading leaves them alone, so the general parser reports them
# exactly as it would have without the fast reading.
ERRORS = {
    "a bad rank": lambda g: g.replace(b"<rank>0</rank>", b"<rank>0x</rank>", 1),
    "a rank too large": lambda g: g.replace(b"<rank>0</rank>", b"<rank>99999999999999999999</rank>", 1),
    "a location Id too large": lambda g: g.replace(b'<location Id="0"', b'<location Id="4294967296"', 1),
    "a bad location Id": lambda g: g.replace(b'<location Id="0"', b'<location Id="-1"', 1),
    "a repeated location Id": lambda g: g.replace(b'<location Id="0"', b'<location Id="1"', 1),
    "an unclosed location": lambda g: g.replace(b"</location>", b"", 1),
    "a mismatched end tag": lambda g: g.replace(b"</locationgroup>", b"</locationgroop>", 1),
    "a raw '<' in a name": lambda g: g.replace(b"<name>MPI Rank 0</name>", b"<name>a < b</name>", 1),
}


@pytest.mark.parametrize("variant", ERRORS, ids=list(ERRORS))
def test_malformed_groups_fail_as_in_the_general_parser(variant):
    members, anchor = _with_first_group(ERRORS[variant])
    assert_fails_alike(members, anchor, _general, lambda report: report, inserted={b'general="1" ': 12})


def test_groups_nested_at_the_limit_fail_as_in_the_general_parser():
    """Unknown elements may wrap the system tree: where a location would pass the nesting limit
    the fast reading must leave the group to the general parser, which reports it."""
    members = read_members(SOURCE)
    # <cube>, <system>, the wrappers, machine and node: the group's start tag is within the
    # limit, its fields and location are one level past it.
    depth = 100_000 - 5
    anchor = members["anchor.xml"].replace(b"<system>", b"<system>" + b"<a>" * depth, 1)
    anchor = anchor.replace(b"</system>", b"</a>" * depth + b"</system>", 1)
    assert_fails_alike(members, anchor, _general, lambda report: report, inserted={b'general="1" ': 12})
