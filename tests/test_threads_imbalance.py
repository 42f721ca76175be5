"""Paper 003's imbalance case and the edges of KEY: 8 threads, 5 run 4000 iterations, 1 runs
3000, 2 run 2000, then wait in the implicit barrier. KEY names the fastest and the slowest
thread correctly; VALUE clustering puts the 2000-iteration threads apart, where CALLTREE
cannot (they visit the same call paths). Locations other than threads are kept."""

from __future__ import annotations

import numpy as np
import pytest

import cubescale
from cubescale import threads
from cubescale.systree import SingleNodeTree

ITERATIONS = [4000, 4000, 4000, 4000, 4000, 3000, 2000, 2000]
SECONDS_PER_ITERATION = 1e-3


def _imbalanced_report(iterations=ITERATIONS, extra_locations=()):
    """main > parallel > (loop, implicit barrier); time stored INCLUSIVE as Score-P does."""
    tree = SingleNodeTree()
    machine = tree.add_root("machine")
    node = tree.add(machine, "node", "n1")
    process = tree.add(node, "process", "rank 0")
    for t in range(len(iterations)):
        tree.add(process, "thread", "Master thread" if t == 0 else f"OMP thread {t}", kind="location")
    for name, cls in extra_locations:
        tree.add(process, cls, name, kind="location")
    b = cubescale.ReportBuilder(tree)
    b.add_metric("visits", dtype="UINT64", unit="occ")
    b.add_metric("time", unit="sec", kind="INCLUSIVE")
    main = b.add_cnode(b.add_region("main"))
    parallel = b.add_cnode(b.add_region("!$omp parallel @jacobi.c:10", paradigm="openmp", role="parallel"), parent=main)
    loop = b.add_cnode(b.add_region("!$omp for @jacobi.c:12", paradigm="openmp", role="loop"), parent=parallel)
    barrier = b.add_cnode(b.add_region("!$omp implicit barrier @jacobi.c:20", paradigm="openmp",
                                       role="implicit barrier"), parent=parallel)
    report = b.build()
    n = report.shape[1]
    visits = np.zeros(report.shape, dtype=np.uint64)
    time = np.zeros(report.shape)
    longest = max(iterations) * SECONDS_PER_ITERATION
    for t, it in enumerate(iterations):
        visits[[parallel, loop, barrier], t] = 1
        time[loop, t] = it * SECONDS_PER_ITERATION
        time[barrier, t] = longest - time[loop, t]
        time[parallel, t] = longest
        time[main, t] = longest  # inclusive: a worker's main holds its parallel region (visits 0)
    visits[main, 0] = 1
    time[main, 0] = longest + 0.05
    for extra in range(len(iterations), n):  # a GPU stream, say: its own values
        visits[[main], extra] = 7
        time[main, extra] = 1.5
    report.set_values("visits", visits)
    report.set_values("time", time)
    return report


def _members(report):
    return {name: ranks for (_, name), ranks in threads.memberships(report).items()}


def test_key_names_the_slowest_and_the_fastest_thread():
    out = threads.aggregate(_imbalanced_report(), "key")
    m = _members(out)
    assert m["master thread"] == [0]
    assert ITERATIONS[m["slowest thread"][0]] == 4000
    assert ITERATIONS[m["fastest thread"][0]] == 2000
    assert sorted(m["aggregated worker threads"] + m["slowest thread"] + m["fastest thread"]) == list(range(1, 8))
    # Location ranks say which thread was chosen.
    ranks = {loc.name: loc.rank for loc in out.locations}
    assert ranks["fastest thread"] == m["fastest thread"][0]


def test_value_clustering_separates_the_2000_iteration_threads_calltree_does_not():
    report = _imbalanced_report()
    value = _members(threads.aggregate(report, "value"))
    clusters = sorted(value.values())
    assert [6, 7] in clusters
    assert [5] in clusters
    assert [0, 1, 2, 3, 4] in clusters
    calltree = sorted(_members(threads.aggregate(report, "calltree")).values())
    assert calltree == [[0], [1, 2, 3, 4, 5, 6, 7]]  # master visits main: only that differs
    assert not any(c == [6, 7] for c in calltree)


def test_value_clustering_is_bounded_and_deterministic():
    report = _imbalanced_report()
    one = _members(threads.aggregate(report, "value", max_clusters=1))
    assert list(one.values()) == [list(range(8))]
    two = threads.aggregate(report, "value", max_clusters=2)
    assert len(_members(two)) == 2
    assert threads.memberships(two) == threads.memberships(threads.aggregate(report, "value", max_clusters=2))
    loose = _members(threads.aggregate(report, "value", tolerance=10.0))
    assert len(loose) == 1


@pytest.mark.parametrize("works", [[5, 1], [1, 5], [3, 3], [2, 9, 1, 9]])
def test_key_keeps_both_extremes_whichever_thread_sets_them(works):
    iterations = [4000] + [w * 100 for w in works]
    out = threads.aggregate(_imbalanced_report(iterations), "key")
    m = _members(out)
    fastest, slowest = m["fastest thread"][0], m["slowest thread"][0]
    assert fastest != slowest
    assert iterations[fastest] == min(iterations[1:])
    assert iterations[slowest] == max(iterations[1:])


def test_key_with_one_worker_keeps_it_once_as_the_slowest():
    out = threads.aggregate(_imbalanced_report([4000, 1000]), "key")
    assert [loc.name for loc in out.locations] == ["master thread", "slowest thread"]
    only = threads.aggregate(_imbalanced_report([4000]), "key")
    assert [loc.name for loc in only.locations] == ["master thread"]


def test_non_thread_locations_are_kept_unchanged():
    report = _imbalanced_report(extra_locations=[("CUDA stream 1", "gpu")])
    for strategy in threads.STRATEGIES:
        out = threads.aggregate(report, strategy)
        assert out.locations[-1].name == "CUDA stream 1"
        assert out.locations[-1].type == "gpu"
        time = out.values("time", inclusive=False)[:, -1]
        if strategy == "set":
            time = time["sum"]
        assert np.array_equal(time, report.values("time", inclusive=False)[:, -1]), strategy


def test_synchronization_override_changes_what_counts_as_work():
    report = _imbalanced_report()
    # Calling the loop the waiting and the barrier the work turns fastest and slowest around.
    flipped = threads.aggregate(report, "key", synchronization=lambda r: r.role == "loop")
    m = _members(flipped)
    assert ITERATIONS[m["slowest thread"][0]] == 2000
    assert ITERATIONS[m["fastest thread"][0]] == 4000


def test_sum_counts_threads_and_folds_time():
    report = _imbalanced_report()
    out = threads.aggregate(report, "sum")
    assert [loc.name for loc in out.locations] == ["aggregated threads"]
    assert out.values("num_threads", inclusive=None)[:, 0].tolist() == [1, 8, 8, 8]
    assert np.allclose(out.values("time", inclusive=False)[:, 0], report.values("time", inclusive=False).sum(axis=1))
