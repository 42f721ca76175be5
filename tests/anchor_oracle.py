"""Test helpers for the fast readings of anchor.xml: the general parser is their oracle.

A test rewrites a document so that the general parser reads every element a fast reading
would take (by markup that changes nothing the document means), and compares both readings.
"""

from __future__ import annotations

import gzip
from typing import Callable

import pytest
from tar_members import archive, read_members

import cubescale
from cubescale._core import cube as _core


def anchor_text(members: dict[str, bytes]) -> bytes:
    """The anchor.xml of `members`, inflated when it is gzipped."""
    anchor = members["anchor.xml"]
    return gzip.decompress(anchor) if anchor[:2] == b"\x1f\x8b" else anchor


def open_with_anchor(members: dict[str, bytes], anchor: bytes, name: str):
    """The report of `members` with `anchor` as its anchor.xml."""
    return _core.open_cubex_bytes(archive(members | {"anchor.xml": anchor}), name)


def both_readings(path: str, general: Callable[[bytes], bytes]):
    """(report as stored, report with every element sent to the general parser) of `path`."""
    members = read_members(path)
    anchor = anchor_text(members)
    name = path.rsplit("/", 1)[-1]
    return open_with_anchor(members, anchor, name), open_with_anchor(members, general(anchor), name)


def assert_fails_alike(members: dict[str, bytes], anchor: bytes, general: Callable[[bytes], bytes],
                       read: Callable, inserted: dict[bytes, int]) -> None:
    """Both readings of a malformed `anchor` fail with the same message at the same place; the
    general document is longer by inserted[marker] bytes for each marker before the error."""
    with pytest.raises(cubescale.FormatError) as fast:
        read(open_with_anchor(members, anchor, "bad.cubex"))
    with pytest.raises(cubescale.FormatError) as oracle:
        read(open_with_anchor(members, general(anchor), "bad.cubex"))
    before = general(anchor)[:oracle.value.offset]
    shift = sum(before.count(marker) * added for marker, added in inserted.items())
    assert (fast.value.file, fast.value.member) == ("bad.cubex", "anchor.xml")
    assert fast.value.offset == oracle.value.offset - shift
    assert fast.value.message == oracle.value.message
