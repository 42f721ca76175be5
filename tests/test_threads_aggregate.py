"""Thread aggregation on Score-P's multi-threaded reports (bt-mz: 8 x 4 and 2 x 4 threads):
every strategy keeps each process's totals, SET's tuples and num_threads match NumPy on the
per-thread columns, KEY picks the fastest and slowest workers by work, CALLTREE groups equal
visited call paths; the results write and read back (also with pycubexr)."""

from __future__ import annotations

import numpy as np
import pytest

import cubescale
from cubescale import threads
from cubescale.profile import LocalProfile

REPORTS = ["bt-mz.B.8x4.cubex", "bt-mz.p2x4.bad_checksums.cubex"]
STRATEGIES = list(threads.STRATEGIES)


@pytest.fixture(scope="module", params=REPORTS)
def report(request, shared_data):
    return cubescale.open(shared_data / "cubex" / request.param)


def _processes(report) -> list[list[int]]:
    """Location indices per process (location group), in column order."""
    by_rank: dict[int, list[int]] = {}
    for loc in report.locations:
        by_rank.setdefault(loc.process_rank, []).append(loc.index)
    return [by_rank[k] for k in sorted(by_rank)]


def _output_processes(aggregated) -> list[list[int]]:
    return _processes(aggregated)


def _sum_like(metric) -> bool:
    return metric.dtype not in ("MINDOUBLE", "MAXDOUBLE") and not metric.derived


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_keeps_each_process_totals(report, strategy):
    out = threads.aggregate(report, strategy)
    before, after = _processes(report), _output_processes(out)
    assert len(before) == len(after)
    for m in report.metrics:
        if not _sum_like(m):
            continue
        x = report.values(m.name, inclusive=None)
        y = out.values(m.name, inclusive=None)
        if strategy == "set":
            y = y["sum"]
        for cols_in, cols_out in zip(before, after):
            a = x[:, cols_in].sum(axis=1)
            b = y[:, cols_out].sum(axis=1)
            if np.issubdtype(x.dtype, np.integer) and strategy != "set":
                assert np.array_equal(a, b), m.name
            else:  # one rounding per addition at most
                tolerance = len(cols_in) * np.spacing(np.abs(a).astype(np.float64) + 1e-300)
                assert np.all(np.abs(a.astype(np.float64) - b) <= tolerance + 1e-12 * np.abs(a)), m.name


def _visited(report) -> np.ndarray:
    return report.values("visits", inclusive=None) > 0


def test_set_tuples_match_numpy_on_the_thread_columns(report):
    out = threads.aggregate(report, "set")
    visited = _visited(report)
    for m in report.metrics:
        x = report.values(m.name, inclusive=None).astype(np.float64)
        y = out.values(m.name, inclusive=None)
        assert out.metric(m.name).dtype == "TAU_ATOMIC"
        for p, cols in enumerate(_processes(report)):
            v = visited[:, cols]
            n = v.sum(axis=1)
            assert np.array_equal(y["n"][:, p], n), m.name
            rows = n > 0
            masked_min = np.where(v, x[:, cols], np.inf).min(axis=1)
            masked_max = np.where(v, x[:, cols], -np.inf).max(axis=1)
            assert np.array_equal(y["min"][rows, p], masked_min[rows]), m.name
            assert np.array_equal(y["max"][rows, p], masked_max[rows]), m.name
            assert np.allclose(y["sum2"][:, p], (x[:, cols] ** 2).sum(axis=1), rtol=1e-12, atol=0), m.name


@pytest.mark.parametrize("strategy", ["sum", "calltree", "value"])
def test_num_threads_counts_the_member_threads_that_visited(report, strategy):
    out = threads.aggregate(report, strategy)
    visited = _visited(report)
    members = threads.memberships(out)
    counts = out.values("num_threads", inclusive=None)
    assert out.metric("num_threads").dtype == ("UINT64" if strategy == "sum" else "UINT32")
    rank_of = {loc.index: loc.rank for loc in report.locations}
    for p, (cols_in, cols_out) in enumerate(zip(_processes(report), _output_processes(out))):
        for col in cols_out:
            loc = out.locations[col]
            if strategy == "sum":
                chosen = cols_in
            else:
                ranks = members[(loc.process_rank, loc.name)]
                chosen = [c for c in cols_in if rank_of[c] in ranks]
            assert np.array_equal(counts[:, col], visited[:, chosen].sum(axis=1)), (p, loc.name)


def test_min_and_max_metrics_take_the_extremes_of_visiting_threads(report):
    out = threads.aggregate(report, "sum")
    visited = _visited(report)
    for name, fold, empty in (("min_time", np.min, np.inf), ("max_time", np.max, -np.inf)):
        x = report.values(name, inclusive=None)
        y = out.values(name, inclusive=None)
        for p, cols in enumerate(_processes(report)):
            v = visited[:, cols]
            expect = fold(np.where(v, x[:, cols], empty), axis=1)
            rows = v.any(axis=1)
            assert np.array_equal(y[rows, p], expect[rows]), name


def _work(report) -> np.ndarray:
    """Per location: exclusive time outside synchronization regions (NumPy oracle)."""
    time = report.values("time", inclusive=False)
    work_rows = np.array([not threads.is_synchronization(c.region) for c in report.cnodes])
    return time[work_rows].sum(axis=0)


def test_key_names_master_fastest_and_slowest_by_work(report):
    out = threads.aggregate(report, "key")
    work = _work(report)
    members = threads.memberships(out)
    rank_of = {loc.index: loc.rank for loc in report.locations}
    for cols in _processes(report):
        process = report.locations[cols[0]].process_rank
        workers = [c for c in cols if rank_of[c] != 0]
        by_work = sorted(workers, key=lambda c: work[c])
        assert members[(process, "master thread")] == [0]
        fastest = members[(process, "fastest thread")]
        slowest = members[(process, "slowest thread")]
        assert fastest != slowest
        assert work[[c for c in workers if rank_of[c] == fastest[0]][0]] == work[by_work[0]]
        assert work[[c for c in workers if rank_of[c] == slowest[0]][0]] == work[by_work[-1]]
        every = sorted(r for (p, _), rs in members.items() if p == process for r in rs)
        assert every == sorted(rank_of[c] for c in cols)


def test_calltree_clusters_are_the_sets_of_visited_call_paths(report):
    out = threads.aggregate(report, "calltree")
    visited = _visited(report)
    members = threads.memberships(out)
    rank_of = {loc.index: loc.rank for loc in report.locations}
    for cols in _processes(report):
        process = report.locations[cols[0]].process_rank
        patterns = {}
        for c in cols:
            patterns.setdefault(visited[:, c].tobytes(), []).append(rank_of[c])
        clusters = sorted(rs for (p, _), rs in members.items() if p == process)
        assert clusters == sorted(patterns.values())


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_aggregated_reports_write_and_read_back(report, strategy, tmp_path):
    out = threads.aggregate(report, strategy)
    path = tmp_path / f"{strategy}.cubex"
    cubescale.write(out, path)
    back = cubescale.open(path)
    assert back.shape == out.shape
    assert [loc.name for loc in back.locations] == [loc.name for loc in out.locations]
    for m in out.metrics:
        assert np.array_equal(back.values(m.name, inclusive=None), out.values(m.name, inclusive=None)), m.name
    assert threads.memberships(back) == threads.memberships(out)


@pytest.mark.parametrize("strategy", ["sum", "key", "calltree"])
def test_pycubexr_reads_aggregated_reports(report, strategy, tmp_path):
    pycubexr = pytest.importorskip("pycubexr")
    out = threads.aggregate(report, strategy)
    path = tmp_path / f"{strategy}.cubex"
    cubescale.write(out, path)
    with pycubexr.CubexParser(str(path)) as parsed:
        visits = parsed.get_metric_by_name("visits")
        values = parsed.get_metric_values(visits)
        cnode = parsed.get_root_cnodes()[0]
        got = np.array(values.cnode_values(cnode, convert_to_exclusive=True))
    expect = out.values("visits", inclusive=False)[0]  # the first root, as pycubexr's
    assert np.array_equal(got, expect)


def test_local_profile_aggregation_equals_the_report_aggregation(report):
    for strategy in STRATEGIES:
        out = threads.aggregate(report, strategy)
        part = LocalProfile.from_report(report, part=(0, len(_processes(report))))
        local = threads.aggregate_profile(part, strategy)
        cols = _output_processes(out)[0]
        assert [n for n, _ in local.locations] == [out.locations[c].name for c in cols]
        for m in out.metrics:
            assert np.array_equal(local.values(m.name), out.values(m.name, inclusive=None)[:, cols]), (strategy, m.name)


def test_num_threads_only_where_a_location_stands_for_several_threads(report):
    assert "num_threads" not in [m.name for m in threads.aggregate(report, "key").metrics]
    assert "num_threads" not in [m.name for m in threads.aggregate(report, "set").metrics]


def test_options_and_errors(report):
    with pytest.raises(ValueError, match="unknown thread aggregation strategy"):
        threads.aggregate(report, "average")
    with pytest.raises(KeyError):
        threads.aggregate(report, "key", work_metric="no such metric")
    with pytest.raises(ValueError, match="max_clusters"):
        threads.aggregate(report, "value", max_clusters=0)
    with pytest.raises(ValueError, match="stored metric of numbers"):
        threads.aggregate(report, "key", work_metric=report.metrics[0].index + 10_000)
    # Calling nothing synchronization makes work = all time: the choice may change, but
    # every thread is still kept exactly once.
    out = threads.aggregate(report, "key", synchronization=lambda region: False)
    members = threads.memberships(out)
    assert sum(len(v) for v in members.values()) == report.shape[1]
    by_name = threads.aggregate(report, "key", synchronization=[])
    assert threads.memberships(by_name) == members


def test_progress_reports_every_metric(report):
    seen = []
    threads.aggregate(report, "sum", progress=lambda done, total: seen.append((done, total)))
    total = len(report.metrics) + 1
    assert seen[-1] == (total, total)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
