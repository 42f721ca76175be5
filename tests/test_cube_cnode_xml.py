"""Call-tree tags in CubeW's layout are read without the tokenizer (see
cpp/include/cubescale/cube/cnode_xml.hpp); every other tag goes to the general parser. That
parser is the oracle: an extra attribute on every <cnode> and a space in every </cnode> send
every tag to it without changing what the document means, so both readings must give the
same call tree, the same regions called and the same values, on every shared report and on
call trees written in every way the fast reading must either take exactly or leave alone."""

from __future__ import annotations

import os
import re

import pytest
from anchor_oracle import assert_fails_alike, both_readings, open_with_anchor
from tar_members import read_members

from cubescale._core import cube as _core

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
FILES = sorted(f for f in os.listdir(DATA) if f.endswith(".cubex"))
SOURCE = os.path.join(DATA, "bt-mz.B.8x4.cubex")  # indented, big-endian, 169 call paths


def _general(anchor: bytes) -> bytes:
    """The same document with every cnode tag sent to the general parser."""
    return anchor.replace(b"<cnode ", b'<cnode general="1" ').replace(b"</cnode>", b"</cnode >")


def _call_tree(report, with_values: bool = True) -> tuple:
    tree = (report.cnode_parents().tolist(), report.cnode_regions().tolist(), report.cnode_file_ids().tolist(),
            [report.cnode_parameters(c) for c in range(report.cnode_count)])
    if not with_values:
        return tree
    _core.load_all(report)
    return tree + tuple(report.values(m).tobytes() for m in range(report.metric_count))


@pytest.mark.parametrize("name", FILES)
def test_every_shared_report_reads_the_call_tree_the_general_parser_reads(name):
    fast, general = both_readings(os.path.join(DATA, name), _general)
    assert _call_tree(fast) == _call_tree(general)
    assert fast.cnode_count > 0


def _nth(pattern: bytes, n: int, replacement: bytes):
    """Rewrites the n-th match of `pattern` (0-based)."""
    def rewrite(anchor: bytes) -> bytes:
        match = list(re.finditer(pattern, anchor))[n]
        return anchor[:match.start()] + re.sub(pattern, replacement, match.group(0)) + anchor[match.end():]
    return rewrite


OPEN = rb'<cnode id="(\d+)" calleeId="(\d+)">'

VARIANTS = {
    "no white space between tags": lambda a: re.sub(rb">\s+<cnode", b"><cnode", re.sub(rb">\s+</cnode>", b"></cnode>", a)),
    "tabs and CRLF": lambda a: re.sub(rb"\n(\s*)<(/?)cnode", rb"\r\n\t\1<\2cnode", a),
    "a parameter in the 5th call path": _nth(OPEN, 4, rb'<cnode id="\1" calleeId="\2"><parameter partype="numeric" parkey="p" parvalue="7"/>'),
    "an attr in the 2nd": _nth(OPEN, 1, rb'<cnode id="\1" calleeId="\2"><attr key="k" value="v"/>'),
    "a comment before the 9th": _nth(OPEN, 8, rb'<!-- c --><cnode id="\1" calleeId="\2">'),
    "a self-closing leaf": lambda a: re.sub(rb'(<cnode id="\d+" calleeId="\d+")>\s*</cnode>', rb"\1/>", a, count=3),
    "calleeId first": _nth(OPEN, 6, rb'<cnode calleeId="\2" id="\1">'),
    "single quotes": _nth(OPEN, 3, rb"<cnode id='\1' calleeId='\2'>"),
    "two spaces": _nth(OPEN, 10, rb'<cnode  id="\1" calleeId="\2">'),
    "leading zeros": _nth(OPEN, 2, rb'<cnode id="00\1" calleeId="0\2">'),
    "a space in an end tag": lambda a: a.replace(b"</cnode>", b"</cnode >", 5),
    "text in a call path": _nth(OPEN, 12, rb'<cnode id="\1" calleeId="\2">some text'),
}


def _variant(rewrite) -> tuple[dict[str, bytes], bytes]:
    members = read_members(SOURCE)
    anchor = members["anchor.xml"]
    rewritten = rewrite(anchor)
    assert rewritten != anchor
    return members, rewritten


@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
def test_call_trees_in_every_form_read_as_the_general_parser_reads_them(variant):
    members, anchor = _variant(VARIANTS[variant])
    assert _call_tree(open_with_anchor(members, anchor, "fast.cubex")) == _call_tree(open_with_anchor(members, _general(anchor), "general.cubex"))


# Malformed call trees: the fast reading leaves the bad tag alone, so the general parser
# reports it exactly as it would have without the fast reading.
ERRORS = {
    "an id that is not a number": _nth(OPEN, 5, rb'<cnode id="x\1" calleeId="\2">'),
    "an id of 2^32": _nth(OPEN, 5, rb'<cnode id="4294967296" calleeId="\2">'),
    "a negative callee": _nth(OPEN, 5, rb'<cnode id="\1" calleeId="-\2">'),
    "an unknown callee": _nth(OPEN, 5, rb'<cnode id="\1" calleeId="99999">'),
    "an end tag too many": lambda a: a.replace(b"</cnode>", b"</cnode></cnode>", 1),
    "an unclosed call path": lambda a: a.replace(b"</cnode>", b"", 1),
    "an end tag misspelled": lambda a: a.replace(b"</cnode>", b"</cnodes>", 1),
}


@pytest.mark.parametrize("variant", ERRORS, ids=list(ERRORS))
def test_malformed_call_trees_fail_as_in_the_general_parser(variant):
    members, anchor = _variant(ERRORS[variant])
    assert_fails_alike(members, anchor, _general, lambda r: _call_tree(r, with_values=False),
                       inserted={b'general="1" ': 12, b"</cnode >": 1})


def test_call_paths_nested_past_the_limit_fail_as_in_the_general_parser():
    members = read_members(SOURCE)
    anchor = members["anchor.xml"]
    start, end = anchor.index(b"<cnode "), anchor.rindex(b"</cnode>") + len(b"</cnode>")
    depth = 100_000  # with <cube> and <program> above them, the last ones pass the limit
    chain = b"".join(b'<cnode id="%d" calleeId="0">\n' % i for i in range(depth)) + b"</cnode>\n" * depth
    assert_fails_alike(members, anchor[:start] + chain + anchor[end:], _general,
                       lambda r: _call_tree(r, with_values=False), inserted={b'general="1" ': 12, b"</cnode >": 1})
