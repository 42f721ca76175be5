"""One call path's row of a metric not loaded yet is read alone from the file (Report.cnode_row
in the kind the metric is stored in): the same values as loading the whole metric, on every
shared report (both byte orders, SPARSE and DENSE indexes, permuted location ids, rows beyond
the index), and the metric stays unloaded; compressed rows (ZCUBEX) load the metric whole."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
from conftest import SHARED_DATA

import cubescale
from cubescale.dtypes import numpy_type

REPORTS = sorted(glob.glob(os.path.join(SHARED_DATA, "cubex", "*.cubex"))) + [cubescale.examples.report_path()]


def _scalar_stored(report):
    return [m for m in report.metrics if not m.derived and not numpy_type(m.dtype)[1] and m.dtype != "SCALE_FUNC"]


@pytest.mark.parametrize("path", REPORTS, ids=os.path.basename)
def test_a_row_alone_equals_the_row_of_the_whole_metric(path):
    whole = cubescale.open(path)
    for m in _scalar_stored(whole):
        stored = whole.values(m, inclusive=None)
        if stored.dtype.names or stored.ndim != 2 or np.iscomplexobj(stored):  # no row of plain doubles
            continue
        cnodes = range(stored.shape[0]) if stored.shape[0] <= 40 else np.linspace(0, stored.shape[0] - 1, 40, dtype=int)
        alone = cubescale.open(path)
        for c in cnodes:
            row = alone.system_values(m, int(c), inclusive=m.kind == "INCLUSIVE")
            assert np.array_equal(row, stored[int(c)].astype(np.float64)), (m.name, int(c))
        if "zcubex" not in os.path.basename(path):  # compressed rows load the metric whole
            assert not alone._core.loaded(m.index), m.name


def test_a_row_of_a_truncated_member_is_a_format_error(tmp_path):
    """Every data member cut in half: a row beyond the cut is a FormatError naming the file and
    the member (rows before it still read)."""
    import io
    import tarfile

    source = os.path.join(SHARED_DATA, "cubex", "time.p4.cubex")
    out = tmp_path / "cut.cubex"
    with tarfile.open(source) as tar, tarfile.open(out, "w") as cut:
        for info in tar.getmembers():
            payload = tar.extractfile(info).read()
            if info.name.endswith(".data"):
                payload = payload[: len(payload) // 2]
            info.size = len(payload)
            cut.addfile(info, io.BytesIO(payload))
    r = cubescale.open(out)
    m = next(m for m in _scalar_stored(r) if m.kind == "INCLUSIVE")
    errors = []
    for c in range(r.shape[0]):
        try:
            r.system_values(m, c)
        except cubescale.FormatError as e:
            errors.append(str(e))
    assert errors and all("cut.cubex" in e and ".data" in e for e in errors), errors[:2]
    assert len(errors) < r.shape[0]  # the rows before the cut are read
