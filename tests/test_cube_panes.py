"""Cube's three panes for a selection (Report.panes), checked against the published CSVs
(independent of our own value path) and, for metric-tree inclusion, against a brute-force
sum over the metric subtree."""

from __future__ import annotations

import csv
import os

import numpy as np
import pytest

import cubescale

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")


def csv_values(name: str, inclusive: bool, report) -> dict[str, np.ndarray]:
    """metric name -> float array [cnode index, location index] from the reference CSV."""
    path = os.path.join(DATA, f"{name}.{'incl' if inclusive else 'excl'}.csv")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    metrics = [h.strip() for h in rows[0][2:]]
    row_of_id = {int(c.id): c.index for c in report.cnodes}
    column_of_id = {loc.id: loc.index for loc in report.locations}
    out = {m: np.zeros(report.shape) for m in metrics}
    for row in rows[1:]:
        c, loc = row_of_id[int(row[0])], column_of_id[int(row[1])]
        for m, text in zip(metrics, row[2:]):
            out[m][c, loc] = float(text)
    return out


def combine(values: np.ndarray, dtype: str, axis: int) -> np.ndarray:
    if dtype == "MINDOUBLE":
        return values.min(axis=axis)
    if dtype == "MAXDOUBLE":
        return values.max(axis=axis)
    return values.sum(axis=axis)


@pytest.mark.parametrize("name", ["blast.p64", "time.p4"])
def test_panes_equal_the_csv(name):
    report = cubescale.open(os.path.join(DATA, f"{name}.cubex"))
    incl, excl = csv_values(name, True, report), csv_values(name, False, report)
    roots = [c.index for c in report.cnodes if c.parent is None]
    child = next(c.index for c in report.cnodes if c.parent is not None)
    for metric in ("visits", "time", "min_time", "max_time", "bytes_sent"):
        m = report.metric(metric)
        for cnode in (roots[0], child, report.shape[0] - 1):
            for expanded in (False, True):
                p = report.panes(metric, cnode=cnode, cnode_expanded=expanded)
                want_system = (excl if expanded else incl)[metric][cnode]
                np.testing.assert_allclose(p.system.astype(float), want_system, rtol=1e-5, atol=1e-9)
            np.testing.assert_allclose(p.call_inclusive.astype(float), combine(incl[metric], m.dtype, 1),
                                       rtol=1e-5, atol=1e-9)
            np.testing.assert_allclose(p.call_exclusive.astype(float), combine(excl[metric], m.dtype, 1),
                                       rtol=1e-5, atol=1e-9)
        total = combine(incl[metric][roots], m.dtype, None)
        assert p.metric_exclusive[m.index] == pytest.approx(total, rel=1e-5)
        assert p.metric_inclusive[m.index] == pytest.approx(total, rel=1e-5)  # flat metric tree


def test_collapsed_metric_is_stored_and_expanded_subtracts_children():
    """Scalasca's mpi stores its whole subtree: collapsed shows the stored values, expanded
    the stored values minus the children's (never the children added on top)."""
    report = cubescale.open(os.path.join(DATA, "cubelib_example.p64.cubex"))
    mpi = report.metric("mpi")
    assert len(mpi.children) >= 2  # Scalasca's mpi > synchronization/communication/... tree
    stored = report.values("mpi", inclusive=True)
    children = sum(report.values(c, inclusive=True) for c in mpi.children)
    collapsed = report.panes("mpi", cnode=0)
    np.testing.assert_allclose(collapsed.system, stored[0], rtol=1e-12)
    np.testing.assert_allclose(collapsed.call_inclusive, stored.sum(axis=1), rtol=1e-12)
    expanded = report.panes("mpi", cnode=0, metric_expanded=True)
    np.testing.assert_allclose(expanded.system, (stored - children)[0], rtol=1e-9, atol=1e-9)
    roots = [c.index for c in report.cnodes if c.parent is None]
    assert expanded.metric_inclusive[mpi.index] == pytest.approx(stored[roots].sum(), rel=1e-12)
    assert expanded.metric_exclusive[mpi.index] == pytest.approx(
        (stored - children)[roots].sum(), rel=1e-9, abs=1e-9)
    assert collapsed.metric_inclusive[mpi.index] >= collapsed.metric_exclusive[mpi.index]


def test_bad_selection():
    report = cubescale.open(os.path.join(DATA, "time.p4.cubex"))
    with pytest.raises(IndexError, match="out of range"):
        report.panes("time", cnode=report.shape[0])
    with pytest.raises(KeyError):
        report.panes("no such metric")
