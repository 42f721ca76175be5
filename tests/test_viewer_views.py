"""The viewer's lazy metric pane, flat profile, machine in sequence form and worker threads,
checked against Report.panes, Report.location_values and SystemTree on the shared reports."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import cubescale
from cubescale.systree import SystemTree

pytest.importorskip("aiohttp")

from viewer_process import running_viewer, topology_cells, write_topology_report  # noqa: E402

from cubescale.viewer.model import Explorer, QueryError, _Sequence  # noqa: E402

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..",
                                                                           "shared", "data")), "cubex")
EVERY_REPORT = sorted(f for f in os.listdir(DATA) if f.endswith(".cubex")) if os.path.isdir(DATA) else []


def _loaded(report: cubescale.Report) -> list[int]:
    return [m.index for m in report.metrics if report._core.loaded(m.index)]


def test_opening_reads_no_metric_and_a_selection_reads_only_its_own():
    """The first answer (/api/report) reads no values; the call pane of one metric reads that
    metric (and, expanded, the children it subtracts), not the 64 others."""
    report = cubescale.open(os.path.join(DATA, "bt-mz.B.8x4.remapped.cubex"))
    ex = Explorer(cubescale.open(report.path))
    summary = ex.report_summary()
    assert _loaded(ex.report) == []
    assert all(m["inclusive"] is None and m["exclusive"] is None for m in summary["metrics"])
    time_metric = report.metric("time")
    roots = ex.call_children({"metric": str(time_metric.index), "parent": "-1"})
    assert _loaded(ex.report) == []  # a first look: the roots' stored rows, read alone from the file
    ex.call_children({"metric": str(time_metric.index), "parent": str(roots["children"][0]["index"])})
    assert _loaded(ex.report) == [time_metric.index]
    inclusive, exclusive = report.metric_totals(True), report.metric_totals(False)
    answer = ex.metric_values({"metric": str(time_metric.index)})
    assert np.isclose(answer["inclusive"], inclusive[time_metric.index], rtol=1e-12)
    assert answer["exclusive"] is None  # children unread
    answer = ex.metric_values({"metric": str(time_metric.index), "expanded": "1"})
    assert np.isclose(answer["exclusive"], exclusive[time_metric.index], rtol=1e-12)
    # the children's totals: from their roots' rows (stored INCLUSIVE) or their whole matrices
    assert set(_loaded(ex.report)) <= {time_metric.index, *time_metric.children}
    # the metric pane now carries what was computed, and nothing else
    known = {m["index"]: m["inclusive"] for m in ex.report_summary()["metrics"] if m["inclusive"] is not None}
    assert set(known) == {time_metric.index, *time_metric.children}


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.remapped.cubex", "all_dtypes.cubex", "time.p4.cubex"])
def test_lazy_metric_values_are_the_metric_totals(name):
    report = cubescale.open(os.path.join(DATA, name))
    ex = Explorer(cubescale.open(report.path))
    inclusive, exclusive = report.metric_totals(True), report.metric_totals(False)
    for m in report.metrics:
        got = ex.metric_values({"metric": str(m.index), "expanded": "1"})
        for key, want in (("inclusive", inclusive[m.index]), ("exclusive", exclusive[m.index])):
            assert (got[key] is None) if not np.isfinite(want) else np.isclose(got[key], want, rtol=1e-12), (m.name, key)


@pytest.mark.parametrize("name", EVERY_REPORT)
def test_a_first_look_reads_rows_and_shows_the_panes_values(name):
    """On a fresh explorer, the metric pane's total and the call pane's roots of every metric
    stored INCLUSIVE come from the roots' rows (and their children's) alone, with the values
    Report.panes shows; the metric stays unloaded (compressed rows aside)."""
    report = cubescale.open(os.path.join(DATA, name))
    totals = report.metric_totals(True)
    for m in report.metrics:
        if m.kind != "INCLUSIVE" or m.derived:
            continue
        ex = Explorer(cubescale.open(report.path))
        got = ex.metric_values({"metric": str(m.index)})["inclusive"]
        assert (got is None) if not np.isfinite(totals[m.index]) else np.isclose(got, totals[m.index], rtol=1e-12), m.name
        page = ex.call_children({"metric": str(m.index), "parent": "-1"})
        if totals[m.index] == totals[m.index] and report.values(m).dtype.names is None:
            p = report.panes(m.index)
            for child in page["children"]:
                c = child["index"]
                assert np.isclose(child["inclusive"], p.call_inclusive[c], rtol=1e-12, atol=1e-12), (m.name, c)
                assert np.isclose(child["exclusive"], p.call_exclusive[c], rtol=1e-9, atol=1e-9), (m.name, c)
        few = len(page["children"]) <= 16 and sum(len(report.cnodes[c["index"]].children) for c in page["children"]) <= 16
        if "zcubex" not in name and m.dtype in ("DOUBLE", "FLOAT") and few:
            assert m.index not in _loaded(ex.report), m.name


def _flat_reference(report: cubescale.Report, metric: int, expanded: bool):
    """Per region, from Report.panes and a walk up each call path in plain Python."""
    p = report.panes(metric, metric_expanded=expanded)
    combine = {"MINDOUBLE": min, "MAXDOUBLE": max}.get(report.metrics[metric].dtype, lambda a, b: a + b)
    own: dict[int, float] = {}
    whole: dict[int, float] = {}
    for c in report.cnodes:
        r = c.region.index
        own[r] = combine(own[r], p.call_exclusive[c.index]) if r in own else p.call_exclusive[c.index]
        walk, recursive = c.parent, False
        while walk is not None:
            recursive |= report.cnodes[walk].region.index == r
            walk = report.cnodes[walk].parent
        if not recursive:
            whole[r] = combine(whole[r], p.call_inclusive[c.index]) if r in whole else p.call_inclusive[c.index]
    return own, whole


@pytest.mark.parametrize("name, metric", [("bt-mz.B.8x4.cubex", "time"), ("bt-mz.B.8x4.remapped.cubex", "time"),
                                          ("time.p4.cubex", "visits"), ("call_tree_test.cubex", "min_time"),
                                          ("cubelib_example.p64.cubex", "time")])
def test_flat_profile_matches_cube_flat_view(name, metric):
    report = cubescale.open(os.path.join(DATA, name))
    ex = Explorer(cubescale.open(report.path))
    m = report.metric(metric).index
    for expanded in (False, True):
        answer = ex.flat_profile({"metric": str(m), "metric_expanded": str(int(expanded)), "limit": "1000"})
        own, whole = _flat_reference(report, m, expanded)
        assert answer["count"] == len(own) == len({c.region.index for c in report.cnodes})
        inclusive = [r["inclusive"] for r in answer["children"]]
        assert inclusive == sorted(inclusive, reverse=True)  # largest first
        for r in answer["children"]:
            assert np.isclose(r["exclusive"], own[r["index"]], rtol=1e-12, atol=1e-12), r["name"]
            assert np.isclose(r["inclusive"], whole[r["index"]], rtol=1e-12, atol=1e-12), r["name"]
            assert r["calls"] == sum(c.region.index == r["index"] for c in report.cnodes)


def test_a_region_conditions_the_system_pane_as_its_call_paths_do():
    """Selecting a region of the flat profile: per location, its call paths' values (expanded:
    exclusive of all; collapsed: inclusive of those without a caller of the same region)."""
    report = cubescale.open(os.path.join(DATA, "bt-mz.B.8x4.cubex"))
    ex = Explorer(cubescale.open(report.path))
    m = report.metric("time").index
    top = ex.flat_profile({"metric": str(m), "limit": "3"})["children"]
    for r in top:
        calls = [c.index for c in report.cnodes if c.region.index == r["index"]]
        for own in (True, False):
            want = sum(report.panes(m, cnode=c, cnode_expanded=own).system for c in calls)
            query = {"metric": str(m), "region": str(r["index"]), "region_expanded": str(int(own)), "bins": "5"}
            d = ex.distribution(query)
            assert np.isclose(d["max"], want.max(), rtol=1e-12) and np.isclose(d["mean"], want.mean(), rtol=1e-12)
            total = ex.system_children({**query, "parent": "-1"})["total"]
            assert np.isclose(total, want.sum(), rtol=1e-12)
            assert np.isclose(total, r["exclusive" if own else "inclusive"], rtol=1e-12)
    with pytest.raises(QueryError):
        ex.distribution({"metric": str(m), "region": str(len(report.regions))})


@pytest.mark.parametrize("name", EVERY_REPORT)
def test_sequence_form_folds_as_systree_does(name):
    """The records (depth, class, copies) are those of SystemTree.from_single on the report's
    own system tree, and each record's instances add up to its parent's."""
    report = cubescale.open(os.path.join(DATA, name))
    ex = Explorer(cubescale.open(report.path))
    seq = ex._folded()
    folded = SystemTree.from_single(report.system)
    want = Counter((r.depth, r.cls, r.copies) for r in folded.records())
    got = Counter((r["depth"], r["class"], r["copies"]) for r in seq.records)
    assert got == want, folded.render()
    for r in seq.records[1:]:
        assert r["instances"] == r["copies"] * seq.records[r["parent"]]["instances"]
    locations = sum(r["instances"] for r in seq.records if not r["children"])
    assert locations == report.shape[1]
    # an independent fold (NumPy, structural hashes by class name) gives the same records and
    # the same record for every element
    core = report.system._core
    by_class = _fold(core, ex._element_of_location, ex._ancestors_at,
                     lambda e: np.asarray([hash(core.class_name(x)) % 1000 for x in e.tolist()], dtype=np.int64))
    assert by_class.records == seq.records
    for a, b, x, y in zip(by_class.elements, seq.elements, by_class.record_of, seq.record_of):
        assert np.array_equal(a, b) and np.array_equal(x, y)


@pytest.mark.parametrize("name", ["l2dcm.p128.cubex", "bt-mz.B.8x4.cubex", "blast.p64.cubex"])
def test_sequence_values_are_min_mean_max_over_instances(name):
    """Each record: min / mean / max / sum of its instances' values, against Report.location_values
    (an independent path through the core) at the record's depth."""
    report = cubescale.open(os.path.join(DATA, name))
    ex = Explorer(cubescale.open(report.path))
    m = report.metric("time")
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    seq = ex._folded()
    tree = report.system
    for r, record in enumerate(seq.records):
        query = {"metric": str(m.index), "cnode": str(root), "parent": str(record["parent"])}
        answer = next(x for x in ex.sequence(query)["records"] if x["index"] == r)
        values, _ = report.location_values(m, record["depth"])
        per_element = dict(zip(np.unique(report._core.location_ancestors(record["depth"])).tolist(), values[root]))
        page = ex.instances({"metric": str(m.index), "cnode": str(root), "record": str(r), "limit": "1000"})
        assert page["count"] == record["instances"]
        mine = np.array([per_element[e["index"]] for e in page["children"]])
        assert np.allclose([e["inclusive"] for e in page["children"]], mine, rtol=1e-12)
        assert all(tree.class_name(e["index"]) == record["class"] for e in page["children"])
        if page["count"] <= 1000:
            assert np.isclose(answer["min"], mine.min()) and np.isclose(answer["max"], mine.max())
            assert np.isclose(answer["mean"], mine.mean()) and np.isclose(answer["sum"], mine.sum())


def _write_report(path: str, cnodes: int, nodes: int) -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    try:
        from cubex_read import write_large_report
    finally:
        sys.path.pop(0)
    write_large_report(path, cnodes, nodes, 32, 4)


def test_a_slow_query_does_not_hold_back_a_fast_one(tmp_path):
    """The first machine view of a metric not read yet reads it (200 MB) and folds the system
    tree (262,144 locations); meanwhile region details and call-tree pages of a metric already
    read are answered at once (worker threads). Answered one at a time on the event loop, the
    first fast answer would wait for the slow one."""
    path = str(tmp_path / "big.cubex")
    _write_report(path, 100, 2048)  # 2,048 nodes x 32 processes x 4 threads: the slowest first view here
    with running_viewer(path) as v:
        assert v.get("/api/calltree?metric=1&parent=-1")[0] == 200  # visits: read now
        done: dict[str, float] = {}

        def slow() -> None:
            status, body = v.get("/api/sequence?metric=0&cnode=0&parent=0")
            assert status == 200 and body["records"][0]["instances"] == 2048
            done["slow"] = time.monotonic()

        start = time.monotonic()
        worker = threading.Thread(target=slow)
        worker.start()
        time.sleep(0.01)
        fast, ends = [], []
        while "slow" not in done and len(fast) < 200:
            t0 = time.monotonic()
            assert v.get("/api/calltree?metric=1&parent=0")[0] == 200
            assert v.get("/api/cnode?cnode=5")[0] == 200
            ends.append(time.monotonic())
            fast.append(ends[-1] - t0)
        worker.join(120)
        slow_time = done["slow"] - start
        # Answered one at a time, the first fast answer would come after the slow one (which takes
        # 25 ms here on an idle machine: a ratio of the two is at the mercy of the load).
        assert ends and ends[0] < done["slow"], (fast[:3], slow_time)
        assert len(fast) >= 2, (fast, slow_time)  # several answers while the slow one ran


def test_sequence_form_tells_threads_and_gpu_streams_apart(tmp_path):
    """Locations of one kind but two classes (CPU threads and CUDA streams of one process) with
    the same shape: folded by kind alone they would be one record; the core's sequence form
    (by kind and class, as SystemTree.from_single) tells them apart."""
    from cubescale.systree import SingleNodeTree
    tree = SingleNodeTree()
    machine = tree.add_root("machine", "m")
    for n in range(3):
        node = tree.add(machine, "node", f"n{n}")
        for p in range(2):
            process = tree.add(node, "process", f"rank {2 * n + p}")
            for t in range(2):
                tree.add(process, "thread", f"thread {t}")
            tree.add(process, "cuda stream", "stream 0", kind="location")
    b = cubescale.ReportBuilder(tree)
    b.add_metric("time", unit="sec")
    b.add_cnode(b.add_region("main"))
    report = b.build()
    report.set_values("time", np.arange(report.shape[1], dtype=float)[None, :])
    path = str(tmp_path / "gpu.cubex")
    cubescale.write(report, path)
    ex = Explorer(cubescale.open(path))
    kind = np.zeros(len(ex._tree), dtype=np.int64)
    kind[ex._element_of_location] = 2
    by_kind = _fold(ex._tree._core, ex._element_of_location, ex._ancestors_at, lambda e: kind[e])
    assert len(by_kind.records) == 4  # threads and streams merged: what folding by kind misses
    got = Counter((r["depth"], r["class"], r["copies"]) for r in ex._folded().records)
    assert got == Counter({(0, "machine", 1): 1, (1, "node", 3): 1, (2, "process", 2): 1, (3, "thread", 2): 1,
                           (3, "cuda stream", 1): 1})
    streams = next(i for i, r in enumerate(ex._folded().records) if r["class"] == "cuda stream")
    page = ex.instances({"metric": "0", "cnode": "0", "record": str(streams)})
    values = np.arange(report.shape[1], dtype=float)
    assert page["count"] == 6 and all(e["inclusive"] == values[e["location"]] for e in page["children"])
    stats = next(r for r in ex.sequence({"metric": "0", "cnode": "0", "parent": str(ex._folded().records[streams]["parent"])})
                 ["records"] if r["index"] == streams)
    locations = [e["location"] for e in page["children"]]
    assert (stats["min"], stats["max"], stats["sum"]) == (values[locations].min(), values[locations].max(),
                                                           values[locations].sum())


def test_topologies_in_every_coordinate_form(tmp_path):
    """Cartesian topologies as CubeLib reads them: a 3-D grid of locations (locId), processes
    (CUBE3's procId: the sum over a process's threads), threads (thrdId), nodes (nodeId: the
    n-th non-root system-tree node) and the machine (machId), against Report.panes for each
    call path collapsed and expanded; a cell without coordinates is null."""
    report = write_topology_report(str(tmp_path / "topology.cubex"))
    ex = Explorer(cubescale.open(report.path))
    tops = ex.report_summary()["topologies"]
    assert [t["name"] for t in tops] == ["Grid 3-D", "Processes", "Threads", "Nodes"]
    assert [d["size"] for d in tops[0]["dims"]] == [3, 2, 2] and tops[0]["dims"][1]["periodic"]
    for topology in range(4):
        for cnode in (0, 1):
            for expanded in (False, True):
                got = ex.topology({"metric": "0", "cnode": str(cnode), "cnode_expanded": str(int(expanded)),
                                   "topology": str(topology)})["values"]
                want = topology_cells(report, topology, 0, cnode, expanded)
                assert [g is None for g in got] == [w is None for w in want]
                assert np.allclose([g for g in got if g is not None], [w for w in want if w is not None], rtol=1e-12)


def _keeps(report: cubescale.Report, text: str) -> tuple[set[int], set[int]]:
    """The call paths whose region name contains ``text`` and every call path on a path from a
    root to one of them: an independent walk up each match."""
    match = {c.index for c in report.cnodes if text.casefold() in c.region.name.casefold()}
    keep = set()
    for c in match:
        walk: int | None = c
        while walk is not None and walk not in keep:
            keep.add(walk)
            walk = report.cnodes[walk].parent
    return match, keep


@pytest.mark.parametrize("name, text", [("bt-mz.B.8x4.cubex", "mpi_"), ("blast.p64.cubex", "Send"),
                                        ("kripke.p8.cubex", "nothing matches this")])
def test_call_tree_filtered_by_name(name, text):
    """The filtered call tree holds exactly the matches and the call paths above them, each
    once, with the whole tree's values (Report.panes) and has_children only where a match is
    below; ``match`` marks the matches."""
    report = cubescale.open(os.path.join(DATA, name))
    ex = Explorer(cubescale.open(report.path))
    m = report.metric("time").index
    p = report.panes(m, cnode=int(np.flatnonzero(report.cnode_parents < 0)[0]))
    match, keep = _keeps(report, text)
    seen: list[int] = []
    stack = [-1]
    while stack:
        parent = stack.pop()
        page = ex.call_children({"metric": str(m), "parent": str(parent), "filter": text, "limit": "1000"})
        for c in page["children"]:
            seen.append(c["index"])
            assert c["match"] == (c["index"] in match)
            assert c["has_children"] == any(k in keep for k in report.cnodes[c["index"]].children)
            assert np.isclose(c["inclusive"], p.call_inclusive[c["index"]], rtol=1e-12, atol=1e-12)
            assert np.isclose(c["exclusive"], p.call_exclusive[c["index"]], rtol=1e-12, atol=1e-12)
            if c["has_children"]:
                stack.append(c["index"])
    assert sorted(seen) == sorted(keep)
    for bad in ("", "x" * 201):
        with pytest.raises(QueryError):
            ex.call_children({"metric": str(m), "parent": "-1", "filter": bad})


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.cubex", "all_dtypes.cubex", "blast.p64.cubex"])
def test_distribution_over_processes(name):
    """over=processes: each process's locations combined as its metric combines (sum, min or
    max), against Report.panes' location values grouped by each location's parent in the
    system tree; min / mean / max, the count, and where the max is."""
    report = cubescale.open(os.path.join(DATA, name))
    ex = Explorer(cubescale.open(report.path))
    tree = report.system
    parents = [tree.parent(int(e)) for e in report._core.location_elements().tolist()]
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    for m in report.metrics:
        if m.derived or m.dtype in ("SCALE_FUNC", "COMPLEX", "TAU_ATOMIC", "RATE", "HISTOGRAM", "NDOUBLES"):
            continue
        system = report.panes(m.index, cnode=root).system
        combine = {"MINDOUBLE": min, "MAXDOUBLE": max}.get(m.dtype, sum)
        per: dict[int, list[float]] = {}
        for p, v in zip(parents, system.tolist()):
            per.setdefault(p, []).append(v)
        want = {p: combine(vs) for p, vs in per.items()}
        d = ex.distribution({"metric": str(m.index), "cnode": str(root), "over": "processes", "bins": "7"})
        assert d["count"] == len(want) and sum(d["counts"]) == len(want), m.name
        values = np.array(list(want.values()), dtype=float)
        assert np.isclose(d["min"], values.min(), rtol=1e-12) and np.isclose(d["max"], values.max(), rtol=1e-12)
        assert np.isclose(d["mean"], values.mean(), rtol=1e-12), m.name
        assert np.isclose(want[d["max_at"]["element"]], values.max(), rtol=1e-12)
        assert d["max_at"]["name"] == tree.name(d["max_at"]["element"])
    with pytest.raises(QueryError):
        ex.distribution({"metric": "0", "cnode": str(root), "over": "nodes"})


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.cubex", "l2dcm.p128.cubex"])
def test_peers_of_the_system_pane(name):
    """The system answer's peers: the largest location value and the smallest non-zero one,
    against Report.panes, for a call path collapsed and expanded."""
    report = cubescale.open(os.path.join(DATA, name))
    ex = Explorer(cubescale.open(report.path))
    m = report.metric("time").index
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    for own in (False, True):
        system = report.panes(m, cnode=root, cnode_expanded=own).system
        peers = ex.system_children({"metric": str(m), "cnode": str(root), "cnode_expanded": str(int(own)),
                                    "parent": "-1"})["peers"]
        assert np.isclose(peers["max"], system.max(), rtol=1e-12)
        assert np.isclose(peers["min_nonzero"], system[system != 0].min(), rtol=1e-12)


# ---- an independent fold to check the core's (Report.sequence_form) against: structural
# hashes in NumPy over the per-location ancestor arrays (what the viewer itself used before)

def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer over uint64 (wrapping): spreads structural hashes."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _distinct(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_index=True)``; in one pass when ``x`` is sorted (ancestors of
    locations in system-tree order are), else by sorting."""
    if len(x) and bool(np.all(x[1:] >= x[:-1])):
        first = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
        return x[first], first
    return np.unique(x, return_index=True)


def _fold(tree: Any, location_elements: np.ndarray, ancestors_at: Callable[[int], np.ndarray],
          label: Callable[[np.ndarray], np.ndarray]) -> _Sequence:
    """Folds the system tree into sequence records (the Score-P system-description paper):
    bottom-up, an element's structural hash is its label (``label(elements)``: a code per
    element, e.g. its kind or its class) and depth mixed with the sum of its children's mixed
    hashes (a multiset hash: order-free, as the canonical form sorts children); top-down, an
    element's record is (its parent's record, its hash), and a record's ``copies`` is how many
    of its parent's instances' children it holds. All in NumPy over the per-location ancestor
    arrays (one per depth, from the core); elements without locations below are left out."""
    chain = [ancestors_at(0)]
    while not np.array_equal(chain[-1], location_elements) and len(chain) < 64:
        chain.append(ancestors_at(len(chain)))
    # a location's own depth: the first at which its ancestor is itself
    own = np.full(len(location_elements), len(chain) - 1, dtype=np.int64)
    for d in range(len(chain) - 1, -1, -1):
        own[chain[d] == location_elements] = d
    elements, parents = [], []
    for d in range(len(chain)):  # the elements at depth d and, for each, its parent
        below = own >= d
        here, first = _distinct(chain[d][below])
        elements.append(here)
        parents.append(chain[d - 1][below][first] if d else np.full(len(here), -1, dtype=np.int64))
    structure = np.zeros(len(tree), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for d in range(len(chain) - 1, -1, -1):
            here = elements[d]
            structure[here] = _mix(label(here).astype(np.uint64) * np.uint64(257) + np.uint64(d + 1))
            if d + 1 < len(chain) and len(elements[d + 1]):
                np.add.at(structure, parents[d + 1], _mix(structure[elements[d + 1]]))
    record_of_element = np.full(len(tree), -1, dtype=np.int64)
    record_of_element[elements[0]] = 0
    root = int(elements[0][0])
    records: list[dict[str, Any]] = [{"class": tree.class_name(root), "copies": 1, "depth": 0, "parent": -1,
                                      "instances": 1, "children": []}]
    for d in range(1, len(chain)):
        child, up_record = elements[d], record_of_element[parents[d]]
        with np.errstate(over="ignore"):
            keys = _mix(up_record.astype(np.uint64) + np.uint64(1)) ^ structure[child]
        _, first, inverse, count = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        order = np.argsort(first, kind="stable")  # records in the order their first instance appears
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        record_of_element[child] = len(records) + rank[inverse.reshape(-1)]
        for k in order.tolist():  # one per record: a regular machine has few
            up = int(up_record[first[k]])
            records[up]["children"].append(len(records))
            records.append({"class": tree.class_name(int(child[first[k]])), "depth": d, "parent": up,
                            "copies": int(count[k]) // records[up]["instances"], "instances": int(count[k]),
                            "children": []})
    record_of = [record_of_element[here] for here in elements]
    return _Sequence(records, elements, record_of)


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.remapped.cubex", "call_tree_test.cubex", "all_dtypes.cubex"])
def test_the_roots_rows_are_computed_ahead_once_a_metric_is_loaded(name):
    """Once a metric's call pane is computed, a background thread puts the rows a root's click
    would combine from many rows (the inclusive row of a metric stored EXCLUSIVE, the expanded
    root's exclusive row of one stored INCLUSIVE) into the selection cache: equal to
    Report.system_values, and the root's system pane answered from it as Report.panes gives it."""
    report = cubescale.open(os.path.join(DATA, name))
    ex = Explorer(cubescale.open(report.path))
    for m in report.metrics:  # the metric pane loads metrics whose call pane nobody asked for: no rows
        ex.metric_values({"metric": str(m.index), "expanded": "1"})
    assert not ex._warmed and not ex._systems
    children = [list(c.children) for c in report.cnodes]
    roots = [r for r in np.flatnonzero(report.cnode_parents < 0).tolist() if children[r]][:4]
    assert roots
    checked = 0
    for m in [m for m in report.metrics if not m.derived and m.dtype != "SCALE_FUNC"][:8]:
        ex.call_children({"metric": str(m.index), "parent": str(roots[0])})  # the whole call pane
        if report._stores_no_values(m):  # no values in the file: zero rows without a matrix, nothing to warm
            assert not ex.report._core.loaded(m.index) and not report.system_values(m, roots[0]).any()
            continue
        for thread in threading.enumerate():
            if thread.name == f"cubescale-view-roots-{m.index}":
                thread.join(60)
        own = m.kind == "INCLUSIVE"
        for r in roots:
            key = (m.index, False, "cnode", r, own)
            assert key in ex._systems, (m.name, r)
            np.testing.assert_array_equal(ex._systems[key][:-1], report.system_values(m, r, inclusive=not own))
            answer = ex.system_children({"metric": str(m.index), "cnode": str(r), "cnode_expanded": str(int(own)),
                                         "parent": "-1"})
            pane = report.panes(m, cnode=r, cnode_expanded=own).system
            assert answer["children"][0]["inclusive"] == pytest.approx(float(np.sum(pane)), rel=1e-12, abs=1e-9)
            checked += 1
    assert checked
