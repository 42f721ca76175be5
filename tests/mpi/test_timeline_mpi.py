"""Staged evaluation of aggregate expressions under mpirun -n 1, 2, 4, 8 (paper 004): the
results equal the analytic values, are bit-identical for every worker count, and the
messages have the same size for 50x more events."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from launch import mpirun
from timeline_machines import machine, rates

SIZES = [1, 2, 4, 8]


@functools.cache
def results(size: int) -> dict:
    out = {}
    for r in mpirun(size, "worker_timeline.py", timeout=240):
        out[(r["expression"], r.get("target"), r.get("samples"))] = r
    return out


def _rates_below(target: int, metric: str) -> int:
    parents, _ = machine()
    total = 0
    for e, (m, rate) in rates().items():
        x = e
        while x != -1 and x != target:
            x = parents[x]
        total += rate if (x == target and m == metric) else 0
    return total


@pytest.mark.parametrize("size", SIZES)
def test_energy_per_flop_is_analytic_on_any_worker_count(size):
    _, kinds = machine()
    r = results(size)
    for where, target in (("machine", 0), ("node", kinds["node"][1]), ("package", kinds["package"][0])):
        watts = _rates_below(target, "energy")
        flops = _rates_below(target, "flops")
        for samples in (1, 50):
            v = np.array(r[("energy_per_flop", where, samples)]["values"])
            assert np.allclose(v, watts / flops, rtol=1e-12), (where, samples)
            assert np.allclose(r[("watts", where, samples)]["values"], watts, rtol=1e-12)


@pytest.mark.parametrize("size", SIZES[1:])
def test_results_are_bit_identical_across_worker_counts(size):
    one, many = results(1), results(size)
    for key, r in one.items():
        if "sha256" in r:
            assert many[key]["sha256"] == r["sha256"], key


@pytest.mark.parametrize("size", SIZES[1:])
def test_message_size_is_flat_in_events_and_bounded_by_the_grid(size):
    r = results(size)
    for key, line in r.items():
        if "message_bytes" not in line:
            continue
        name, where, samples = key
        assert line["message_bytes"] == r[(name, where, 1)]["message_bytes"]
        assert 0 < line["message_bytes"] <= 13 + 16 * line["times"][2]


@pytest.mark.parametrize("size", SIZES)
def test_a_bad_metric_fails_on_every_rank(size):
    assert "no element below the target has the metrics 'wats'" in results(size)[("typo", None, None)]["error"]
