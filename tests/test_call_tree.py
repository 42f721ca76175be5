"""One-pass walks over the call tree (cubescale.call_tree, views.call_path) give what walking
every call path up to its root gives, on every shared report and on a 3,000-deep chain (a
recursion as Score-P records it) — where walking up is call paths x depth."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from conftest import SHARED_DATA

import cubescale
from cubescale.call_tree import above_marked, outermost_calls
from cubescale.views import call_path, call_paths

REPORTS = sorted(glob.glob(os.path.join(SHARED_DATA, "cubex", "*.cubex")))


def _ancestors(parents: list[int], c: int) -> list[int]:
    out = []
    while parents[c] >= 0:
        c = parents[c]
        out.append(c)
    return out


def _check(parents: np.ndarray, regions: np.ndarray) -> None:
    p = parents.tolist()
    expected = [all(regions[a] != regions[c] for a in _ancestors(p, c)) for c in range(len(p))]
    assert outermost_calls(parents, regions).tolist() == expected
    marked = regions == regions.max()  # e.g. MPI calls: which call paths lead to one
    above = [False] * len(p)
    for c in np.flatnonzero(marked).tolist():
        for a in _ancestors(p, c):
            above[a] = True
    assert above_marked(parents, marked).tolist() == above


@pytest.mark.parametrize("path", REPORTS, ids=os.path.basename)
def test_walks_equal_walking_up_on_every_shared_report(path):
    r = cubescale.open(path)
    _check(np.asarray(r.cnode_parents), np.asarray(r._core.cnode_regions()))
    paths = call_paths(r)
    assert [call_path(r, c) for c in range(len(paths))] == paths


def test_a_deep_recursion_with_siblings():
    # main > (r > r > ... 3000 deep, each r also calling g); a second root repeats r.
    parents, regions = [-1], [0]
    for level in range(3000):
        parents.append(len(parents) - 1 if level == 0 else len(parents) - 2)
        regions.append(1)
        parents.append(len(parents) - 1)
        regions.append(2)
    parents += [-1, len(parents)]
    regions += [1, 1]
    _check(np.asarray(parents), np.asarray(regions))
    assert outermost_calls(np.asarray(parents), np.asarray(regions)).sum() == 1 + 1 + 3000 + 1
