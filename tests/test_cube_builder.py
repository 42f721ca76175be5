"""Reports built by a program (cubescale.ReportBuilder): written, they read back with the
same definitions and values in cubescale and in pycubexr; bad parts raise ValueError."""

from __future__ import annotations

import numpy as np
import pytest

import cubescale
from cubescale.systree import SingleNodeTree, SystemTree


def _converter_like_report() -> tuple[cubescale.Report, dict]:
    """What a converter from another tool would build: a metric tree with a child metric and
    an INCLUSIVE counter, a call tree with a parameterised loop, a machine from a shape."""
    b = cubescale.ReportBuilder(SystemTree.from_shape("node:2 process:2 thread:3"))
    time = b.add_metric("time", unit="sec", description="wall-clock time")
    b.add_metric("mpi", unit="sec", parent=time, display_name="MPI time")
    b.add_metric("visits", unit="occ", dtype="UINT64", kind="INCLUSIVE")
    b.add_metric("min_time", unit="sec", dtype="MINDOUBLE")
    main = b.add_region("main", module="app.c", begin=3, end=90)
    solve = b.add_region("solve", module="solver.c", begin=10, end=50)
    send = b.add_region("MPI_Send", paradigm="mpi")
    root = b.add_cnode(main)
    s = b.add_cnode(solve, parent=root, parameters={"n": 64, "method": "cg"})
    b.add_cnode(send, parent=s)
    b.add_cnode(send, parent=root)
    report = b.build()
    rng = np.random.default_rng(7)
    values = {
        "time": rng.random(report.shape),
        "mpi": rng.random(report.shape) / 10,
        "min_time": rng.random(report.shape),
    }
    exclusive_visits = rng.integers(0, 1000, report.shape, dtype=np.uint64)
    # Inclusive visits: each row plus its descendants' (parents precede children).
    inclusive = exclusive_visits.copy()
    parents = report.cnode_parents
    for c in range(report.shape[0] - 1, 0, -1):
        inclusive[parents[c]] += inclusive[c]
    values["visits"] = inclusive
    for name, v in values.items():
        report.set_values(name, v)
    values["visits_exclusive"] = exclusive_visits
    return report, values


def test_built_report_has_the_definitions_given():
    report, _ = _converter_like_report()
    assert [m.name for m in report.metrics] == ["time", "mpi", "visits", "min_time"]
    assert report.metric("mpi").parent == 0 and report.metric("mpi").display_name == "MPI time"
    assert [r.name for r in report.regions] == ["main", "solve", "MPI_Send"]
    assert report.cnode_parents.tolist() == [-1, 0, 1, 0]
    assert report.shape == (4, 12)
    assert [loc.name for loc in report.locations][:3] == ["thread 0", "thread 1", "thread 2"]


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zlib"])
def test_built_report_written_reads_back(compress, tmp_path):
    report, values = _converter_like_report()
    path = tmp_path / "built.cubex"
    cubescale.write(report, path, compress=compress)
    back = cubescale.open(path)
    for name in ("time", "mpi", "min_time"):
        assert (back.values(name, inclusive=None) == values[name]).all(), name
    assert (back.values("visits", inclusive=True) == values["visits"]).all()
    assert (back.values("visits", inclusive=False) == values["visits_exclusive"]).all()
    assert [(r.name, r.module, r.begin, r.end, r.paradigm) for r in back.regions] == [
        ("main", "app.c", 3, 90, "user"), ("solve", "solver.c", 10, 50, "user"), ("MPI_Send", "", -1, -1, "mpi")]
    assert back.cnode_parameters(1) == [{"partype": "numeric", "parkey": "n", "parvalue": "64"},
                                        {"partype": "string", "parkey": "method", "parvalue": "cg"}]
    assert back.metric("time").description == "wall-clock time"
    assert [loc.name for loc in back.locations] == [loc.name for loc in report.locations]


def test_pycubexr_reads_a_built_report(tmp_path):
    pycubexr = pytest.importorskip("pycubexr")
    report, values = _converter_like_report()
    path = tmp_path / "built.cubex"
    cubescale.write(report, path)
    with pycubexr.CubexParser(str(path)) as parsed:
        metrics = {m.name: m for m in parsed.all_metrics()}
        assert set(metrics) == {"time", "mpi", "visits", "min_time"}
        assert len(parsed.get_locations()) == 12
        for name in ("time", "mpi", "visits"):
            read = parsed.get_metric_values(metrics[name], allow_full_uint64_values=True)
            theirs = np.stack([np.asarray(read.cnode_values(parsed.get_cnode(c))) for c in range(4)])
            assert (theirs.astype(values[name].dtype) == values[name]).all(), name


def test_single_node_tree_is_taken_in_preorder():
    # Elements created out of depth-first order: the columns follow the depth-first order.
    t = SingleNodeTree()
    machine = t.add_root("machine", "m")
    a = t.add(machine, "node", "a")
    b = t.add(machine, "node", "b")
    pb = t.add(b, "process", "rank 1")
    pa = t.add(a, "process", "rank 0")
    t.add(pb, "thread", "b-thread")
    t.add(pa, "thread", "a-thread")
    builder = cubescale.ReportBuilder(t)
    builder.add_metric("time")
    builder.add_cnode(builder.add_region("main"))
    report = builder.build()
    assert [loc.name for loc in report.locations] == ["a-thread", "b-thread"]
    assert [loc.process_rank for loc in report.locations] == [0, 1]


def _minimal(system=None) -> cubescale.ReportBuilder:
    return cubescale.ReportBuilder(system or SystemTree.from_shape("node:1 process:1 thread:1"))


def test_call_tree_out_of_preorder_is_rejected():
    b = _minimal()
    b.add_metric("time")
    r = b.add_region("f")
    root = b.add_cnode(r)
    child = b.add_cnode(r, parent=root)
    b.add_cnode(r)  # a second root
    b.add_cnode(r, parent=child)  # child's subtree is closed
    with pytest.raises(ValueError, match="cnode 3: parent 1 .*not preorder"):
        b.build()


@pytest.mark.parametrize("break_it, message", [
    (lambda b: b.add_metric("x", dtype="QUATERNION"), "metric x: unknown CUBE data type"),
    (lambda b: b.add_metric("x", kind="BOTH"), "INCLUSIVE or EXCLUSIVE"),
    (lambda b: b.add_metric("x", parent=5), "not preorder"),
    (lambda b: b.add_cnode(7), "calls region 7"),
    (lambda b: b.add_cnode(0, parent=9), "out of range"),
])
def test_bad_parts_are_rejected(break_it, message):
    b = _minimal()
    b.add_metric("time")
    b.add_cnode(b.add_region("main"))
    with pytest.raises(ValueError, match=message):  # when added (fields) or built (trees)
        break_it(b)
        b.build()


def test_empty_parts_are_rejected():
    with pytest.raises(ValueError, match="at least one metric"):
        _minimal().build()
    b = _minimal()
    b.add_metric("time")
    with pytest.raises(ValueError, match="at least one call path"):
        b.build()
    t = SingleNodeTree()
    t.add(t.add_root("machine", "m"), "thread", "orphan")
    b = _minimal(t)
    b.add_metric("time")
    b.add_cnode(b.add_region("main"))
    with pytest.raises(ValueError, match="location belongs to a location group"):
        b.build()
    with pytest.raises(TypeError):
        cubescale.ReportBuilder("node:1 process:1")
