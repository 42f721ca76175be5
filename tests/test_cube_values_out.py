"""``Report.values(..., out=)``: a reused buffer gets exactly the values of a fresh call,
whatever it held before, for every metric of every shared report; wrong buffers are refused
before anything is written."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import cubescale

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")
FILES = sorted(glob.glob(os.path.join(DATA, "*.cubex")))


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_reused_buffer_gets_the_values_of_a_fresh_call(path):
    report = cubescale.open(path)
    for metric in report.metrics:
        buffer = report.values_like(metric)
        for inclusive in (True, False, None):
            buffer.view(np.uint8)[...] = 0xAB  # garbage from an earlier use
            got = report.values(metric, inclusive=inclusive, out=buffer)
            assert got is buffer
            fresh = report.values(metric, inclusive=inclusive)
            assert buffer.tobytes() == fresh.tobytes(), (metric.uniq_name, inclusive)


def _example():
    return cubescale.open(os.path.join(DATA, "cubelib_example.p64.cubex"))


def test_wrong_buffers_are_refused_untouched():
    report = _example()
    good = np.zeros_like(report.values_like("time"))
    cases = {
        "dtype": good.astype(np.float32),
        "shape": np.zeros((good.shape[0], good.shape[1] + 1)),
        "not contiguous": np.zeros((good.shape[0], 2 * good.shape[1]))[:, ::2],
        "read-only": report.values("time"),
        "not an array": good.tolist(),
    }
    for reason, out in cases.items():
        before = np.array(out, copy=True)
        with pytest.raises(ValueError, match="out="):
            report.values("time", inclusive=False, out=out)
        assert np.array_equal(np.asarray(out), before), reason


def test_misaligned_buffer_is_refused():
    report = _example()
    shape = report.shape
    raw = np.zeros(shape[0] * shape[1] * 8 + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.float64).reshape(shape)
    assert not misaligned.flags.aligned
    with pytest.raises(ValueError, match="aligned"):
        report.values("time", out=misaligned)


def test_one_buffer_serves_every_metric_of_a_type():
    report = _example()
    doubles = [m for m in report.metrics if m.dtype == "FLOAT"]  # CUBE's FLOAT is float64
    assert len(doubles) > 10
    buffer = report.values_like(doubles[0])
    for metric in doubles:
        report.values(metric, inclusive=False, out=buffer)
        assert np.array_equal(buffer, report.values(metric, inclusive=False))


def test_buffers_from_values_like_start_on_a_page():
    from cubescale.dtypes import page_aligned_empty as _page_aligned_empty

    report = _example()
    assert report.values_like("time").ctypes.data % 4096 == 0
    large = _page_aligned_empty((700, 1000), np.dtype("f8"))  # 5.6 MB: its own mapping
    assert large.ctypes.data % 4096 == 0 and large.flags.writeable and large.flags.c_contiguous
    large[...] = 1.5
    assert float(large.sum()) == 1.5 * 700 * 1000


@pytest.mark.parametrize("offset", [8, 16, 64])
def test_buffers_off_a_page_get_the_same_values(offset):
    report = cubescale.open(os.path.join(DATA, "blast.p64.cubex"))
    for metric in report.metrics:
        element, shape = report._layout(metric)
        nbytes = int(np.prod(shape)) * element.itemsize
        raw = np.full(nbytes + 4096 + offset, 0xAB, dtype=np.uint8)
        start = -raw.ctypes.data % 4096 + offset
        out = raw[start:start + nbytes].view(element).reshape(shape)
        for inclusive in (True, False):
            report.values(metric, inclusive=inclusive, out=out)
            assert out.tobytes() == report.values(metric, inclusive=inclusive).tobytes()


@pytest.mark.parametrize("name", ["RATE", "HISTOGRAM5", "TAU_ATOMIC"])
def test_packed_records_need_the_alignment_of_their_fields(name):
    # NumPy calls these record dtypes 1-aligned; the sums still add whole doubles, except for
    # TAU_ATOMIC, whose fields are read one by one at any address.
    report = cubescale.open(os.path.join(DATA, "all_dtypes.cubex"))
    metric = report.metric(name)
    element, shape = report._layout(metric)
    nbytes = int(np.prod(shape)) * element.itemsize
    raw = np.zeros(nbytes + 64, dtype=np.uint8)
    start = -raw.ctypes.data % 64 + 4
    out = raw[start:start + nbytes].view(element).reshape(shape)
    if name == "TAU_ATOMIC":
        report.values(metric, out=out)
        assert out.tobytes() == report.values(metric).tobytes()
    else:
        with pytest.raises(ValueError, match="out= must start at a multiple of 8 bytes"):
            report.values(metric, out=out)
