"""SCALE_FUNC values of all_dtypes.cubex (written by CubeLib 4.8.2): the slot width is
CubeLib's, the terms decode to valid functions, and inclusive values add the functions term
by term as CubeLib does, checked against an independent decoding in Python."""

from __future__ import annotations

import os
import struct
import tarfile
from collections import defaultdict

import numpy as np
import pytest

import cubescale
from cubescale import scale_func

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
PATH = os.path.join(DATA, "all_dtypes.cubex")


def _terms_of(raw: bytes) -> dict[tuple[int, int, int], float]:
    """Independent decoding: {(b, c, d): a} of one 848-byte slot."""
    n_terms, _ = struct.unpack_from("<II", raw, 0)
    out: dict[tuple[int, int, int], float] = defaultdict(float)
    for i in range(n_terms):
        a, b, c, d = struct.unpack_from("<diIi", raw, 8 + 20 * i)
        out[(b, c, d)] += a
    return dict(out)


@pytest.fixture(scope="module")
def report():
    return cubescale.open(PATH)


def test_slot_width_matches_the_data_member(report):
    metric = report.metric("SCALE_FUNC3")
    with tarfile.open(PATH) as tar:
        size = tar.getmember(f"{metric.index}.data").size  # ids equal indices in this file
    assert size == len(b"CUBEX.DATA") + report.shape[0] * report.shape[1] * 848
    assert report.values(metric, inclusive=None).dtype.itemsize == 848


def test_stored_values_are_valid_functions(report):
    values = report.values("SCALE_FUNC3", inclusive=None)
    for value in values.reshape(-1):
        f = scale_func.decode(value)
        assert 1 <= len(f.terms) <= 30
        assert all(t.c >= 1 and t.a > 0 for t in f.terms)


def test_inclusive_adds_functions_term_by_term(report):
    exclusive = report.values("SCALE_FUNC3", inclusive=False)
    inclusive = report.values("SCALE_FUNC3", inclusive=True)
    parents = report.cnode_parents.tolist()
    for c in range(report.shape[0]):
        subtree = [x for x in range(report.shape[0]) if x == c or _is_below(x, c, parents)]
        for loc in range(report.shape[1]):
            expected: dict = defaultdict(float)
            for x in subtree:
                for key, a in _terms_of(exclusive[x, loc].tobytes()).items():
                    expected[key] += a
            assert _terms_of(inclusive[c, loc].tobytes()) == pytest.approx(dict(expected))


def test_panes_show_cubelibs_number(report):
    panes = report.panes("SCALE_FUNC3", cnode=0, cnode_expanded=True)
    stored = report.values("SCALE_FUNC3", inclusive=False)
    assert panes.system.tolist() == pytest.approx([scale_func.decode(v).asymptotic for v in stored[0]])
    assert np.isfinite(panes.call_inclusive).all()


def _is_below(x: int, c: int, parents: list[int]) -> bool:
    while parents[x] >= 0:
        x = parents[x]
        if x == c:
            return True
    return False
