"""Every shared .cubex opens, every metric loads, and the values obey the aggregation rules."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np
import pytest

import cubescale

# ../shared/data beside the checkout, unless CUBESCALE_SHARED_DATA says otherwise.
DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
FILES = sorted(glob.glob(os.path.join(DATA, "*.cubex")))


def test_the_shared_data_is_there():
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_opens_and_loads_every_metric(path):
    report = cubescale.open(path)
    cnodes, locations = report.shape
    assert cnodes > 0 and locations > 0
    for m in report.metrics:
        stored = report.values(m, inclusive=None)
        assert stored.shape[:2] == (cnodes, locations)
        assert not stored.flags.writeable


def test_opening_reads_no_metric_until_asked():
    report = cubescale.open(os.path.join(DATA, "blast.p64.cubex"))
    assert not any(report._core.loaded(m.index) for m in report.metrics)
    report.values("time")
    assert report._core.loaded(report.metric("time").index)
    assert not report._core.loaded(report.metric("visits").index)


def test_stored_values_are_not_copied():
    report = cubescale.open(os.path.join(DATA, "blast.p64.cubex"))
    a = report.values("time", inclusive=True)  # time is stored inclusive
    b = report.values("time", inclusive=None)
    assert np.shares_memory(a, b)


def _metric(report, dtype):
    return next(m for m in report.metrics if m.dtype == dtype)


def test_all_data_types_decode():
    report = cubescale.open(os.path.join(DATA, "all_dtypes.cubex"))
    dtypes = {m.dtype for m in report.metrics}
    assert {"TAU_ATOMIC", "HISTOGRAM(5)", "NDOUBLES(10)", "SCALE_FUNC", "COMPLEX", "RATE", "INT8", "UINT64"} <= dtypes
    tau = report.values(_metric(report, "TAU_ATOMIC"), inclusive=None)
    assert tau.dtype.names == ("n", "min", "max", "sum", "sum2")
    present = tau[report.present(_metric(report, "TAU_ATOMIC"))]
    assert (present["min"] <= present["max"]).all()
    nd = report.values(_metric(report, "NDOUBLES(10)"), inclusive=None)
    assert nd.shape == report.shape + (10,)


def test_tau_atomic_aggregates_field_wise():
    report = cubescale.open(os.path.join(DATA, "all_dtypes.cubex"))
    m = _metric(report, "TAU_ATOMIC")
    excl = report.values(m, inclusive=False)
    incl = report.values(m, inclusive=True)
    parents = report.cnode_parents
    for c in range(report.shape[0]):
        subtree = [c] + [d for d in range(c + 1, len(parents)) if _descends(parents, d, c)]
        rows = excl[subtree]
        assert (incl[c]["n"] == rows["n"].sum(axis=0)).all()
        np.testing.assert_allclose(incl[c]["sum"], rows["sum"].sum(axis=0))
        np.testing.assert_allclose(incl[c]["max"], rows["max"].max(axis=0))


def _descends(parents, d, c):
    while d >= 0:
        if d == c:
            return True
        d = parents[d]
    return False


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_inclusive_and_exclusive_are_inverse(path):
    report = cubescale.open(path)
    parents = report.cnode_parents
    for m in report.metrics:
        if m.dtype not in ("DOUBLE", "FLOAT", "UINT64", "INT64"):
            continue
        incl = report.values(m, inclusive=True)
        excl = report.values(m, inclusive=False)
        # inclusive(c) = exclusive(c) + sum of inclusive(children)
        rebuilt = excl.copy()
        for c in range(len(parents) - 1, 0, -1):
            if parents[c] >= 0:
                rebuilt[parents[c]] += incl[c]
        if np.issubdtype(incl.dtype, np.integer):
            assert (rebuilt == incl).all(), m.name
        else:
            np.testing.assert_allclose(rebuilt, incl, rtol=1e-9, atol=1e-12 * max(1.0, float(np.abs(incl).max())))


def test_location_ids_out_of_document_order_map_to_columns():
    report = cubescale.open(os.path.join(DATA, "all_dtypes.cubex"))
    ids = [loc.id for loc in report.locations]
    assert ids != list(range(len(ids)))  # this file has Ids out of document order
    assert sorted(ids) == list(range(len(ids)))


def test_system_tree_and_locations():
    report = cubescale.open(os.path.join(DATA, "bt-mz.B.8x4.cubex"))
    assert report.shape[1] == 32
    assert {loc.type for loc in report.locations} == {"thread"}
    assert sorted({loc.process_rank for loc in report.locations}) == list(range(8))
    per_process, names = report.location_values("time", "process")
    assert per_process.shape == (report.shape[0], 8)
    np.testing.assert_allclose(per_process.sum(axis=1), report.values("time").sum(axis=1))


def test_cnode_and_metric_totals():
    report = cubescale.open(os.path.join(DATA, "call_tree_test.cubex"))
    assert report.cnode_values("visits")[0] == 72
    totals = report.metric_totals(inclusive=False)
    assert totals[report.metric("visits").index] == 72


def test_text_html_and_dataframe():
    report = cubescale.open(os.path.join(DATA, "call_tree_test.cubex"))
    text = report.call_tree_text("time")
    assert "main" in text and text.count("\n") == 18
    assert "<table>" in report._repr_html_()
    pytest.importorskip("pandas")
    df = report.to_dataframe(["visits"], inclusive=False)
    assert int(df["visits"].sum()) == 72


def test_open_takes_an_experiment_directory_and_names_what_is_no_report(tmp_path):
    # The API said "member tar header: offset 0: truncated tar header" of a text file and of an
    # OTF2 anchor, and IsADirectoryError of a Score-P experiment directory, where every command
    # of the command line reads its profile.cubex.
    experiment = Path(DATA).parent / "otf2" / "late-sender-barrier"
    assert cubescale.open(experiment).path == str(experiment / "profile.cubex")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a report\n")
    with pytest.raises(cubescale.FormatError, match="a text file, not a .cubex report"):
        cubescale.open(notes)
    with pytest.raises(cubescale.FormatError, match="an OTF2 trace's anchor, not a .cubex report"):
        cubescale.open(experiment / "traces.otf2")
    with pytest.raises(cubescale.FormatError, match="an OTF2 event file"):
        cubescale.open(experiment / "traces" / "0.evt")
    with pytest.raises(FileNotFoundError):
        cubescale.open(tmp_path / "missing.cubex")
    with pytest.raises(IsADirectoryError, match="a directory without a report"):
        cubescale.open(tmp_path)
    fifo = tmp_path / "fifo.cubex"
    os.mkfifo(fifo)
    with pytest.raises(cubescale.FormatError, match="not a regular file"):  # (reading it would wait)
        cubescale.open(fifo)
