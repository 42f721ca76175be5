"""Binary and JSON forms of sequence trees: round trips and hostile input."""

import json
import struct

import pytest
from hypothesis import given, settings
from systree_strategies import single_trees

import cubescale
from cubescale.systree import SystemTree


@settings(max_examples=100, deadline=None)
@given(single_trees())
def test_bytes_and_json_round_trip(single):
    tree = single.fold()
    assert SystemTree.from_bytes(tree.to_bytes()) == tree
    assert SystemTree.from_json(tree.to_json()) == tree
    assert SystemTree.from_json(tree.to_json(indent=None)) == tree


def test_every_truncation_raises_format_error():
    data = SystemTree.figure4().to_bytes()
    for n in range(len(data)):
        with pytest.raises(cubescale.FormatError) as err:
            SystemTree.from_bytes(data[:n], source="cut.bin")
        assert err.value.file == "cut.bin"
        assert err.value.member == "sequence tree"
        assert 0 <= err.value.offset <= n
        assert "cut.bin" in str(err.value)


def test_wrong_version_is_named():
    data = bytearray(SystemTree.figure4().to_bytes())
    data[8:10] = struct.pack("<H", 2)
    with pytest.raises(cubescale.FormatError, match="version 2") as err:
        SystemTree.from_bytes(bytes(data), source="v2.bin")
    assert err.value.offset == 8


def test_oversized_counts_are_rejected_without_allocating():
    def varint(v):
        out = bytearray()
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
        return bytes(out)

    header = b"CSSEQTRE" + struct.pack("<H", 1)
    absurd_classes = header + varint(2**62)
    with pytest.raises(cubescale.FormatError, match="class count"):
        SystemTree.from_bytes(absurd_classes)
    absurd_records = header + varint(1) + varint(7) + b"machine" + varint(2**50)
    with pytest.raises(cubescale.FormatError, match="record count"):
        SystemTree.from_bytes(absurd_records)
    # Copies whose product exceeds 2^62 elements.
    def rec(cls, copies, children):
        return bytes([0]) + varint(cls) + varint(copies) + varint(0) + varint(children)

    overflow = (header + varint(2) + varint(7) + b"machine" + varint(4) + b"node" + varint(3)
                + rec(0, 1, 1) + rec(1, 2**40, 1) + rec(1, 2**40, 0))
    with pytest.raises(cubescale.FormatError, match="2\\^62"):
        SystemTree.from_bytes(overflow)


def test_malformed_json_is_a_format_error():
    with pytest.raises(cubescale.FormatError, match="malformed JSON"):
        SystemTree.from_json("{", source="bad.json")
    with pytest.raises(cubescale.FormatError, match="not a cubescale-systree"):
        SystemTree.from_json("[]")
    doc = json.loads(SystemTree.figure4().to_json())
    doc["root"]["children"][0]["copies"] = -3
    with pytest.raises(cubescale.FormatError, match="copies must be a positive integer") as err:
        SystemTree.from_json(doc, source="neg.json")
    assert err.value.member == "json root.children[0]"
    doc["root"]["children"][0]["copies"] = 1
    doc["root"]["children"][0]["kind"] = "location"  # a location with children
    with pytest.raises(cubescale.FormatError, match="cannot have children"):
        SystemTree.from_json(doc)


def test_format_error_is_a_value_error_and_pickles():
    import pickle

    e = cubescale.FormatError("bad", "f.cubex", "0.data", 12)
    assert isinstance(e, ValueError)
    back = pickle.loads(pickle.dumps(e))
    assert (back.file, back.member, back.offset, str(back)) == ("f.cubex", "0.data", 12, str(e))
