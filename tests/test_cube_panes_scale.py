"""Cube's panes from the stored values (cpp/include/cubescale/cube/panes.hpp): the per-cnode
totals of both kinds and one cnode's row equal NumPy over the converted matrix, for every metric
and call path of every shared report (MIN/MAX, integers of every width, TAU_ATOMIC, RATE,
COMPLEX, HISTOGRAM, NDOUBLES, SCALE_FUNC); the totals are computed once per metric and kept;
a pane query builds no matrix."""

from __future__ import annotations

import gc
import glob
import os

import numpy as np
import pytest

import cubescale
from cubescale import scale_func
from cubescale._core import cube as _cube

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
REPORTS = sorted(glob.glob(os.path.join(DATA, "*.cubex")))


def as_doubles(values: np.ndarray, dtype: str) -> np.ndarray:
    """The number a pane shows for each value, computed in NumPy (or Python's SCALE_FUNC decoder)."""
    if dtype == "SCALE_FUNC":
        return np.array([[scale_func.decode(v).asymptotic for v in row] for row in values], dtype=float)
    if dtype == "TAU_ATOMIC":
        return values["sum"].astype(float)
    if dtype == "RATE":
        return values["main"].astype(float)
    if dtype.startswith("HISTOGRAM"):
        return values["bins"].sum(axis=-1)
    if dtype.startswith("NDOUBLES"):
        return values[..., 0].astype(float)
    if dtype == "COMPLEX":
        return values.real.astype(float)
    return values.astype(float)


def combine(rows: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "MINDOUBLE":
        return rows.min(axis=1)
    if dtype == "MAXDOUBLE":
        return rows.max(axis=1)
    return rows.sum(axis=1)


@pytest.mark.parametrize("path", REPORTS, ids=os.path.basename)
def test_totals_and_rows_equal_numpy_for_every_metric_and_call_path(path):
    report = cubescale.open(path)
    for m in report.metrics:
        inclusive_rows = as_doubles(report.values(m, inclusive=True), m.dtype)
        # Exclusive totals subtract inclusive ones: their rounding is that of the inclusive sums.
        scale = max(1.0, float(np.abs(inclusive_rows).sum(axis=1).max(initial=0.0)))
        for inclusive in (True, False):
            rows = inclusive_rows if inclusive else as_doubles(report.values(m, inclusive=False), m.dtype)
            where = f"{m.name} ({m.dtype}, stored {m.kind}), inclusive={inclusive}"
            if m.dtype != "SCALE_FUNC":  # its totals add functions, not numbers (test_cube_scale_func.py)
                np.testing.assert_allclose(report.cnode_values(m, inclusive), combine(rows, m.dtype),
                                           rtol=1e-12, atol=1e-13 * scale, err_msg=where)
            for c in range(report.shape[0]):
                np.testing.assert_allclose(report.system_values(m, c, inclusive), rows[c],
                                           rtol=1e-12, atol=1e-13 * scale, err_msg=f"{where}, cnode {c}")


def test_min_and_max_totals_take_only_stored_rows():
    # call_tree_test: min_time / max_time are stored EXCLUSIVE, inclusive min/max come from the
    # subtree's rows; an absent row must not contribute a zero.
    report = cubescale.open(os.path.join(DATA, "call_tree_test.cubex"))
    for name in ("min_time", "max_time"):
        values = report.values(name, inclusive=True)
        np.testing.assert_array_equal(report.cnode_values(name, inclusive=True), combine(values, report.metric(name).dtype))
        assert (report.cnode_values(name, inclusive=True) != 0).all()


def test_totals_are_computed_once_per_metric_and_kept():
    report = cubescale.open(os.path.join(DATA, "cubelib_example.p64.cubex"))
    m = report.metric("time").index
    first = _cube.cnode_totals(report._core, m, True)
    assert not first.flags.writeable
    report.panes("time", cnode=3)
    report.panes("time", cnode=5, cnode_expanded=True)
    again = _cube.cnode_totals(report._core, m, True)
    # The same memory: the report kept the totals of the first pass instead of passing again.
    assert again.__array_interface__["data"][0] == first.__array_interface__["data"][0]
    exclusive = _cube.cnode_totals(report._core, m, False)
    np.testing.assert_allclose(exclusive, report.values("time", inclusive=False).sum(axis=1), rtol=1e-12, atol=1e-9)
    # New values (time is stored INCLUSIVE) replace the kept totals.
    report.set_values("time", np.ones(report.shape))
    replaced = _cube.cnode_totals(report._core, m, True)
    np.testing.assert_array_equal(replaced, np.full(report.shape[0], report.shape[1], dtype=float))
    np.testing.assert_array_equal(first, again)  # arrays handed out earlier keep their values


def test_cnode_values_are_fresh_arrays():
    report = cubescale.open(os.path.join(DATA, "time.p4.cubex"))
    values = report.cnode_values("time")
    values[:] = -1  # the caller's copy: the kept totals do not change
    assert (report.cnode_values("time") >= 0).all()


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def _anchor(cnodes: int, locations: int) -> str:
    """A call chain 0 > 1 > ... of one EXCLUSIVE DOUBLE metric over one process's threads."""
    tree = "".join(f'<cnode id="{i}" calleeId="0">' for i in range(cnodes)) + "</cnode>" * cnodes
    threads = "".join(f'<location Id="{i}"><name>t{i}</name><rank>{i}</rank><type>thread</type></location>'
                      for i in range(locations))
    return ('<cube version="4.4"><metrics><metric id="0" type="EXCLUSIVE"><uniq_name>t</uniq_name>'
            '<dtype>DOUBLE</dtype></metric></metrics><program><region id="0" mod="" begin="0" end="0">'
            f'<name>main</name></region>{tree}</program><system><systemtreenode Id="0"><name>m</name>'
            '<class>machine</class><locationgroup Id="0"><name>p</name><rank>0</rank><type>process</type>'
            f'{threads}</locationgroup></systemtreenode></system></cube>')


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's peak-RSS reset")
def test_a_pane_query_builds_no_matrix():
    cnodes, locations = 64, 131072  # a 64 MiB matrix
    report = cubescale.Report.from_anchor_xml(_anchor(cnodes, locations))
    report.set_values("t", np.random.default_rng(1).random((cnodes, locations)))
    gc.collect()
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets the peak (VmHWM) to the current RSS
    p = report.panes("t", cnode=0)  # inclusive root row: every row of the stored EXCLUSIVE matrix
    report.panes("t", cnode=10, cnode_expanded=True)
    grown = _status("VmHWM") - before
    matrix = cnodes * locations * 8
    # A converted matrix (or a double copy of one) would add 64 MiB; one row is 1 MiB.
    assert grown < matrix // 8, f"peak grew by {grown / 2**20:.1f} MiB during the queries"
    np.testing.assert_allclose(p.system, report.values("t", inclusive=True)[0], rtol=1e-12)
