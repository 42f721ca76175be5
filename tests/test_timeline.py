"""Metric timelines and aggregate expressions (paper 004) in one process: parsing with the
position of a bad token, resampling in every mode and timing, aggregates over the subtree of
a target, energy per FLOP equal to the analytic value, and partials that merge to the same
result in any split."""

from __future__ import annotations

import numpy as np
import pytest
from timeline_machines import SECONDS, machine, rates, store

from cubescale._core import timeline as _timeline
from cubescale.timeline import MOST_POINTS, Timeline, TimelineStore, evaluate, parse, source

ENERGY_PER_FLOP = ('"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot '
                   '"flops" "stairstep" source-counter "sum" aggregate "0" diff-quot /')


@pytest.mark.parametrize("text,position,message", [
    ('"2" source-counter', 4, "needs a metric"),
    ('"2" "cubic" source-counter', 4, "unknown interpolation 'cubic'"),
    ('"e" "stairstep" source-counter "median" aggregate', 31, "unknown aggregate function 'median'"),
    ('"e" "stairstep" source-counter "x" diff-quot', 31, "window of diff-quot"),
    ('"e" "stairstep" source-counter "sum" aggregate "sum" aggregate', 53, "aggregates may not nest"),
    ('"e" "stairstep" source-counter +', 31, "needs an expression"),
    ('"e" "stairstep" source-counter "2"', 31, "2 results left"),
    ('"e" "stairstep" source-counter sqrt', 31, "unknown operator 'sqrt'"),
    ('"e', 0, "unterminated"),
    ('1 ' + '1 + ' * 1000, 2048, "nested deeper than 512 levels"),
    ('', 0, "empty expression"),
])
def test_parse_errors_name_the_position(text, position, message):
    with pytest.raises(ValueError, match=f"position {position}: .*{message}"):
        parse(text)


def test_expressions_print_back_canonically_and_builders_agree():
    e = parse(ENERGY_PER_FLOP)
    assert e.aggregate_count == 2
    assert str(parse(str(e))) == str(e)
    built = source("energy").aggregate("sum").diff_quot() / source("flops").aggregate("sum").diff_quot()
    assert str(parse(str(built))) == str(e)
    assert str(parse('"e" "linear" source-counter 2 *')) == '"e" "linear" source-counter "2" *'


def test_resampling_modes_timings_and_interpolations():
    t = [1.0, 2.0, 4.0]
    grid = (0.0, 5.0, 11)  # every half second
    step = Timeline(t, [10.0, 20.0, 40.0]).resample(*grid)
    assert step.tolist() == [10, 10, 10, 10, 20, 20, 20, 20, 40, 40, 40]
    last = Timeline(t, [10.0, 20.0, 40.0], timing="last").resample(*grid)
    assert last.tolist() == [10, 10, 10, 20, 20, 40, 40, 40, 40, 40, 40]
    linear = Timeline(t, [10.0, 20.0, 40.0]).resample(*grid, interpolation="linear")
    assert linear.tolist() == [10, 10, 10, 15, 20, 25, 30, 35, 40, 40, 40]
    relative = Timeline(t, [10.0, 10.0, 20.0], mode="relative")
    assert relative.values.tolist() == [10, 20, 40] and relative.mode == "accumulated"
    with pytest.raises(ValueError, match="must not decrease"):
        Timeline([2.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="unknown metric mode"):
        Timeline([1.0], [1.0], mode="sampled")


def test_energy_per_flop_equals_the_analytic_value():
    s = store()
    parents, kinds = machine()
    r = rates()
    watts = sum(rate for e, (m, rate) in r.items() if m == "energy")
    flops = sum(rate for e, (m, rate) in r.items() if m == "flops")
    t, v = evaluate(ENERGY_PER_FLOP, s, target=0, points=SECONDS + 1)
    assert t.tolist() == list(range(SECONDS + 1))
    assert np.allclose(v, watts / flops, rtol=1e-12)
    # One node: its packages, GPU and cores only.
    node = kinds["node"][0]
    below = [e for e in r if _below(parents, e, node)]
    node_watts = sum(r[e][1] for e in below if r[e][0] == "energy")
    node_flops = sum(r[e][1] for e in below if r[e][0] == "flops")
    assert np.allclose(evaluate(ENERGY_PER_FLOP, s, target=node, points=SECONDS + 1)[1], node_watts / node_flops)


def _below(parents, e, target):
    while e != -1:
        if e == target:
            return True
        e = parents[e]
    return False


@pytest.mark.parametrize("function", ["sum", "min", "max", "avg"])
def test_aggregate_over_a_node_equals_numpy_on_the_same_grid(function):
    s = store()
    parents, kinds = machine()
    expr = f'"flops" "linear" source-counter "{function}" aggregate'
    t, v = evaluate(expr, s, target=kinds["node"][1], points=37)
    cores = [c for c in kinds["core"] if _below(parents, c, kinds["node"][1])]
    columns = np.array([np.interp(t, np.arange(SECONDS + 1), np.floor(rates()[c][1] * np.arange(SECONDS + 1.0)))
                        for c in cores])
    expect = {"sum": columns.sum(0), "min": columns.min(0), "max": columns.max(0), "avg": columns.mean(0)}[function]
    assert np.allclose(v, expect, rtol=1e-12)


def test_partials_merge_to_the_same_result_in_any_split():
    whole = store()
    e = parse(ENERGY_PER_FLOP)
    reference = evaluate(e, whole, 0, points=SECONDS + 1)[1]
    for size in (2, 3, 5):
        parts = [store(rank, size) for rank in range(size)]
        partials = []
        for k in range(e.aggregate_count):
            merged = None
            for p in parts:
                mine = _timeline.partial_aggregate(e, k, p, 0, 0.0, float(SECONDS), SECONDS + 1)
                merged = mine if merged is None else _timeline.merge_partials(merged, mine)
            assert len(merged) == 13 + 16 * (SECONDS + 1)
            partials.append(merged)
        v = _timeline.evaluate(e, partials, whole, 0, 0.0, float(SECONDS), SECONDS + 1)
        assert v.tobytes() == reference.tobytes()


def test_missing_metrics_and_bad_partials_are_clear_errors():
    s = store()
    with pytest.raises(ValueError, match="no element below the target has the metrics 'watts'"):
        evaluate('"watts" "stairstep" source-counter "sum" aggregate', s, 0)
    with pytest.raises(ValueError, match="no timeline of metric 'flops' on element 0"):
        evaluate('"flops" "stairstep" source-counter', s, 0)
    with pytest.raises(ValueError, match="not a timeline partial"):
        _timeline.merge_partials(b"junk", b"junk")
    with pytest.raises(ValueError, match="grid needs"):
        evaluate(ENERGY_PER_FLOP, s, 0, points=0)
    # A grid is for a picture or a summary: 10^11 points tried to allocate 745 GiB before the
    # core's bound (then 2^24) was reached; now one line, before anything is allocated.
    for points in (10**11, MOST_POINTS + 1):
        with pytest.raises(ValueError, match=f"a grid needs 1 to {MOST_POINTS} points, not {points}"):
            evaluate(ENERGY_PER_FLOP, s, 0, points=points)
        with pytest.raises(ValueError, match=f"a grid needs 1 to {MOST_POINTS} points, not {points}"):
            Timeline([0.0, 1.0], [0.0, 1.0]).resample(0.0, 1.0, points)
    assert MOST_POINTS == 100_000 and len(evaluate(ENERGY_PER_FLOP, s, 0, points=MOST_POINTS)[0]) == MOST_POINTS
    with pytest.raises(ValueError, match="no samples"):
        evaluate(ENERGY_PER_FLOP, TimelineStore([-1]), 0)
