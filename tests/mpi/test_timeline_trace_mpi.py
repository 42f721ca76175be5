"""Trace metrics staged over mpirun -n 1, 2, 4, 8 on synthetic OTF2 traces (paper 004): energy
per FLOP equals the analytic value and is bit-identical for every worker count; messages have
the same size for 25x more events."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from launch import mpirun

from cubescale import testing

SIZES = [1, 2, 4, 8]


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace_metrics")
    return (testing.write_hardware_trace(d / "short", "traces", seconds=16, samples_per_second=1),
            testing.write_hardware_trace(d / "long", "traces", seconds=16, samples_per_second=25))


@functools.cache
def results(size: int, short: str, long: str) -> dict:
    return {(r["trace"], r["target"]): r for r in mpirun(size, "worker_timeline_trace.py", short, long, timeout=240)}


@pytest.mark.parametrize("size", SIZES)
def test_analytic_and_identical_for_every_worker_count(size, traces):
    short, long = traces
    r, one = results(size, short, long), results(1, short, long)
    analytic = {"machine": 1e6 * 640 / 136000, "node 1": 1e6 * (50 + 55 + 250) / 100000}
    for (trace, target), line in r.items():
        assert np.allclose(line["values"], analytic[target], rtol=1e-12), (trace, target)
        assert line["sha256"] == one[(trace, target)]["sha256"]


@pytest.mark.parametrize("size", SIZES[1:])
def test_messages_do_not_grow_with_events(size, traces):
    short, long = traces
    r = results(size, short, long)
    for target in ("machine", "node 1"):
        few, many = r[(short, target)], r[(long, target)]
        assert many["events"] > 20 * few["events"]
        assert many["message_bytes"] == few["message_bytes"] <= 13 + 16 * 17
