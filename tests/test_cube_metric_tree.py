"""Values along the metric tree follow CubeLib: a metric's stored values include its child
metrics, so a collapsed metric shows them as stored and an expanded one subtracts its
children's stored values (CubeLib's services::expand_metrics); children are never added to a
parent. Checked on a built report with known values and on Scalasca's own reports."""

from __future__ import annotations

import os

import numpy as np
import pytest

import cubescale
from cubescale.panes import subtracted_children
from cubescale.systree import SystemTree

DATA = os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
CUBEX = os.path.join(DATA, "cubex")


def _scalasca_like_report() -> tuple[cubescale.Report, dict[str, np.ndarray]]:
    """time > mpi > late_sender > late_sender_wo, with bytes (another unit) under time and
    min_time (MINDOUBLE) under time, every parent's stored value including its children,
    as Scalasca writes them. Values are exclusive along the call tree."""
    b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:2 thread:2"))
    time = b.add_metric("time", unit="sec")
    mpi = b.add_metric("mpi", unit="sec", parent=time)
    ls = b.add_metric("late_sender", unit="sec", parent=mpi)
    b.add_metric("late_sender_wo", unit="sec", parent=ls)
    b.add_metric("bytes", unit="bytes", dtype="UINT64", parent=time)
    b.add_metric("min_time", unit="sec", dtype="MINDOUBLE", parent=time)
    main = b.add_region("main")
    recv = b.add_region("MPI_Recv", paradigm="mpi")
    root = b.add_cnode(main)
    b.add_cnode(recv, parent=root)
    report = b.build()
    rng = np.random.default_rng(3)
    shape = report.shape
    wo = rng.random(shape)
    ls_v = wo + rng.random(shape)
    mpi_v = ls_v + rng.random(shape)
    time_v = mpi_v + rng.random(shape)
    values = {"time": time_v, "mpi": mpi_v, "late_sender": ls_v, "late_sender_wo": wo,
              "bytes": rng.integers(0, 100, shape).astype(np.uint64), "min_time": rng.random(shape)}
    for name, v in values.items():
        report.set_values(name, v)
    return report, values


def test_collapsed_metric_is_its_stored_value():
    report, values = _scalasca_like_report()
    totals = report.metric_totals(inclusive=True)
    for name in ("time", "mpi", "late_sender", "late_sender_wo"):
        assert totals[report.metric(name).index] == pytest.approx(values[name].sum(), rel=1e-12), name
    assert totals[report.metric("min_time").index] == pytest.approx(values["min_time"].min())


def test_expanded_metric_subtracts_its_children_of_the_same_unit():
    report, values = _scalasca_like_report()
    own = report.metric_totals(inclusive=False)
    # time's children: mpi (sec) subtracted; bytes (another unit) and min_time (MINDOUBLE) not.
    assert subtracted_children(report, report.metric("time")) == [report.metric("mpi").index]
    expect = {
        "time": values["time"] - values["mpi"],
        "mpi": values["mpi"] - values["late_sender"],
        "late_sender": values["late_sender"] - values["late_sender_wo"],
        "late_sender_wo": values["late_sender_wo"],
    }
    for name, v in expect.items():
        assert own[report.metric(name).index] == pytest.approx(v.sum(), rel=1e-12), name
    assert own[report.metric("bytes").index] == values["bytes"].sum()


@pytest.mark.parametrize("cnode_expanded", [False, True])
def test_panes_of_a_collapsed_and_an_expanded_metric(cnode_expanded):
    report, values = _scalasca_like_report()
    cnode = 0
    collapsed = report.panes("late_sender", cnode=cnode, cnode_expanded=cnode_expanded)
    expanded = report.panes("late_sender", cnode=cnode, metric_expanded=True, cnode_expanded=cnode_expanded)
    stored = values["late_sender"]
    alone = stored - values["late_sender_wo"]

    def row(v):  # the selected call path's row, with or without its callee (cnode 1)
        return v[cnode] if cnode_expanded else v[cnode] + v[1]

    np.testing.assert_allclose(collapsed.system, row(stored), rtol=1e-12)
    np.testing.assert_allclose(expanded.system, row(alone), rtol=1e-12)
    np.testing.assert_allclose(collapsed.call_exclusive, stored.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(expanded.call_exclusive, alone.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(expanded.call_inclusive, [alone.sum(), alone[1].sum()], rtol=1e-12)
    np.testing.assert_allclose(collapsed.metric_inclusive, report.metric_totals(inclusive=True))
    np.testing.assert_allclose(collapsed.metric_exclusive, report.metric_totals(inclusive=False))


def _summable(metric) -> bool:
    return metric.dtype in ("DOUBLE", "FLOAT")  # FLOAT: CUBE 4.0's name of DOUBLE


def _subtree(report, metric):
    out, stack = [], [metric.index]
    while stack:
        m = report.metrics[stack.pop()]
        out.append(m.index)
        stack.extend(m.children)
    return out


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.remapped.cubex", "cubelib_example.p64.cubex"])
def test_scalasca_parent_collapsed_equals_stored(name):
    report = cubescale.open(os.path.join(CUBEX, name))
    roots = report.cnode_parents < 0
    collapsed = report.metric_totals(inclusive=True)
    expanded = report.metric_totals(inclusive=False)
    checked = 0
    for m in report.metrics:
        if m.derived or not _summable(m) or not m.children:
            continue
        stored = float(report.cnode_values(m, inclusive=True)[roots].sum())
        assert collapsed[m.index] == pytest.approx(stored, rel=1e-12), m.name
        children = sum(float(report.cnode_values(c, inclusive=True)[roots].sum())
                       for c in subtracted_children(report, m))
        assert expanded[m.index] == pytest.approx(stored - children, rel=1e-9, abs=1e-9), m.name
        # Stored values include the children: no child holds more than its parent.
        for c in m.children:
            child = report.metrics[c]
            if child.unit == m.unit and not child.derived and _summable(child):
                assert collapsed[c] <= collapsed[m.index] * (1 + 1e-9) + 1e-9, (m.name, child.name)
        checked += 1
    assert checked >= 5  # Scalasca's deep metric tree: time > execution > mpi > ...


def test_remapped_summary_time_is_the_stored_time():
    """The remapped summary's stored `time` is execution + omp_idle_threads (its children):
    the collapsed value must be that, not the children added on top again."""
    report = cubescale.open(os.path.join(CUBEX, "bt-mz.B.8x4.remapped.cubex"))
    time = report.metric("time")
    roots = report.cnode_parents < 0
    stored = float(report.cnode_values(time, inclusive=True)[roots].sum())
    children = [report.metrics[c] for c in time.children]
    assert {c.name for c in children} >= {"execution", "omp_idle_threads"}
    child_sum = sum(float(report.cnode_values(c, inclusive=True)[roots].sum()) for c in children)
    assert stored == pytest.approx(child_sum, rel=1e-6)  # the file's own invariant
    assert report.metric_totals()[time.index] == pytest.approx(stored, rel=1e-12)
    assert report.metric_totals(inclusive=False)[time.index] == pytest.approx(0.0, abs=1e-6 * stored)


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.remapped.cubex", "cubelib_example.p64.cubex"])
def test_no_call_path_waits_longer_than_it_takes(name):
    """Every waiting-time metric under `time`, collapsed, at any (call path, location) is at
    most the time there: with children added on top again, Late Sender exceeded it."""
    report = cubescale.open(os.path.join(CUBEX, name))
    time = report.metric("time")
    cnode = int(np.flatnonzero(report.cnode_parents < 0)[0])
    time_pane = report.panes(time, cnode=cnode)
    waits = [report.metrics[i] for i in _subtree(report, time)
             if report.metrics[i].unit == "sec" and not report.metrics[i].derived
             and _summable(report.metrics[i]) and i != time.index]
    assert len(waits) >= 5
    for m in waits:
        p = report.panes(m, cnode=cnode)
        tolerance = 1e-9 * max(1.0, float(np.abs(time_pane.call_exclusive).max()))
        assert (p.call_exclusive <= time_pane.call_exclusive + tolerance).all(), m.name
        assert (p.system <= time_pane.system + tolerance).all(), m.name
