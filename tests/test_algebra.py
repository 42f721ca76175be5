"""Report algebra on real reports: the results equal NumPy computations on arrays this test
aligns itself, by call-path names and process/thread ranks, from the inputs' own values."""

from __future__ import annotations

import doctest
import importlib
import os

import numpy as np
import pytest
from conftest import SHARED_DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cubescale
from cubescale.cli import main
from cubescale.systree import SystemTree

SCALAR = {"DOUBLE", "FLOAT", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
          "MINDOUBLE", "MAXDOUBLE"}


def _example_path(name: str) -> str:
    """A shared report (../shared/data/cubex/NAME)."""
    return str(SHARED_DATA / "cubex" / name)


def path_keys(report: cubescale.Report) -> list[tuple]:
    """Each call path as the tuple of (region name, module, lines, parameters) from its root."""
    keys: list[tuple] = []
    for c in report.cnodes:
        r = c.region
        params = tuple(tuple(sorted(p.items())) for p in report.cnode_parameters(c.index))
        step = (r.name, r.module, r.begin, r.end, params)
        keys.append((keys[c.parent] if c.parent is not None else ()) + (step,))
    return keys


def columns(inp: cubescale.Report, out: cubescale.Report) -> np.ndarray:
    """Where inp's locations are among out's: the same layout keeps them, else by (process rank, rank)."""
    if out.attrs.get("cubescale::algebra::system") == "same":
        assert inp.shape[1] == out.shape[1]
        return np.arange(inp.shape[1])
    where = {(loc.process_rank, loc.rank): loc.index for loc in out.locations}
    return np.array([where[(loc.process_rank, loc.rank)] for loc in inp.locations])


def aligned(inp: cubescale.Report, out: cubescale.Report, metric: str, inclusive: bool | None, dtype=np.float64):
    """inp's values of `metric` on out's call paths and locations, zero where inp has none."""
    result = np.zeros(out.shape, dtype=dtype)
    if metric not in {m.name for m in inp.metrics}:
        return result
    row_of = {k: i for i, k in enumerate(path_keys(out))}
    rows = np.array([row_of[k] for k in path_keys(inp)])
    values = np.asarray(inp.values(metric, inclusive=inclusive)).astype(dtype)
    np.add.at(result, (rows[:, None], columns(inp, out)[None, :]), values)
    return result


def close(got, expected, name: str) -> None:
    """Equal up to rounding: relative to the largest value (exclusive values are differences of
    inclusive ones, so their rounding follows the matrix's scale, not their own)."""
    expected = np.asarray(expected, dtype=np.float64)
    scale = float(np.abs(expected).max()) if expected.size else 0.0
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), expected, rtol=1e-12, atol=1e-12 * scale,
                               err_msg=name)


def kinds(metric: cubescale.report.Metric) -> list[bool | None]:
    """Both call-tree flavours for sums; min/max metrics only as stored (their aggregation is min/max)."""
    return [None] if metric.dtype in ("MINDOUBLE", "MAXDOUBLE") else [True, False]


def scalar_metrics(*reports: cubescale.Report) -> list[str]:
    names: dict[str, None] = {}
    for r in reports:
        for m in r.metrics:
            if not m.derived and m.dtype in SCALAR:
                names[m.name] = None
    return list(names)


def check_diff(a, b, d):
    for name in scalar_metrics(a, b):
        m = d.metric(name)
        integer = m.dtype == "INT64"
        for inclusive in kinds(m):
            dtype = np.int64 if integer else np.float64
            expected = aligned(a, d, name, inclusive, dtype) - aligned(b, d, name, inclusive, dtype)
            got = d.values(name, inclusive=inclusive)
            if integer:
                np.testing.assert_array_equal(got, expected, err_msg=name)
            else:
                close(got, expected, name)


def check_mean(reports, out):
    for name in scalar_metrics(*reports):
        for inclusive in kinds(out.metric(name)):
            expected = sum(aligned(r, out, name, inclusive) for r in reports) / len(reports)
            close(out.values(name, inclusive=inclusive), expected, name)


@pytest.fixture(scope="module")
def bt8():
    return cubescale.open(_example_path("bt-mz.B.8x4.cubex"))


@pytest.fixture(scope="module")
def bt2():
    return cubescale.open(_example_path("bt-mz.p2x4.bad_checksums.cubex"))


@pytest.fixture(scope="module")
def blast():
    return cubescale.open(_example_path("blast.p64.cubex"))


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.cubex", "blast.p64.cubex", "all_dtypes.cubex", "l2dcm.p128.cubex"])
def test_diff_with_itself_is_zero(name):
    a = cubescale.open(_example_path(name))
    d = cubescale.diff(a, a)
    assert d.shape == a.shape
    assert path_keys(d) == path_keys(a)
    for m in d.metrics:
        if not m.derived:
            assert not np.asarray(d.values(m, inclusive=None)).any(), m.name
            if a.metric(m.name).dtype.startswith("UINT"):
                assert m.dtype == "INT64"


@pytest.mark.parametrize("k", [1, 2, 3])
def test_mean_of_copies_is_the_input(bt8, k):
    out = cubescale.mean(*([bt8] * k))
    assert path_keys(out) == path_keys(bt8)
    for name in scalar_metrics(bt8):
        for inclusive in kinds(bt8.metric(name)):
            close(out.values(name, inclusive=inclusive), bt8.values(name, inclusive=inclusive), name)


def test_two_runs_with_different_call_trees_and_machines(bt8, bt2, tmp_path):
    d = cubescale.diff(bt8, bt2)
    assert d.attrs["cubescale::algebra::system"] == "processes"  # 8x4 vs 2x4: collapsed
    assert d.location_group_count == 8 and d.shape[1] == 32
    keys = set(path_keys(d))
    assert set(path_keys(bt8)) <= keys and set(path_keys(bt2)) <= keys
    assert len(keys) > max(bt8.shape[0], bt2.shape[0])  # the call trees differ
    check_diff(bt8, bt2, d)
    check_mean([bt8, bt2], cubescale.mean(bt8, bt2))
    merged = cubescale.merge(bt2, bt8)
    for name in scalar_metrics(bt2, bt8):  # each input in order, bt8 overwriting bt2 where both have values
        dtype = np.asarray(merged.values(name, inclusive=None)).dtype
        expected = np.zeros(merged.shape, dtype=dtype)
        row_of = {k: i for i, k in enumerate(path_keys(merged))}
        for r in (bt2, bt8):
            if name in {m.name for m in r.metrics}:
                cells = np.ix_(sorted({row_of[k] for k in path_keys(r)}), columns(r, merged))
                expected[cells] = aligned(r, merged, name, None, dtype).astype(dtype)[cells]
        np.testing.assert_array_equal(merged.values(name, inclusive=None), expected, err_msg=name)
    with pytest.raises(ValueError, match="different layouts"):
        cubescale.diff(bt8, bt2, system="same")


def test_blast_against_a_copy_with_a_pruned_subtree(blast, tmp_path):
    # The child of the root with the largest subtree: it and its descendants fold into the root.
    sizes = np.zeros(blast.shape[0], dtype=int)
    for c in reversed(blast.cnodes):
        sizes[c.index] += 1
        if c.parent is not None:
            sizes[c.parent] += sizes[c.index]
    target = max(blast.cnodes[0].children, key=lambda c: sizes[c])
    assert sizes[target] > 2
    path = tmp_path / "pruned.cubex"
    cubescale.write(cubescale.cut(blast, prune=target), path)
    pruned = cubescale.open(path)
    assert pruned.shape[0] == blast.shape[0] - sizes[target]
    for name in scalar_metrics(blast):  # the caller of a pruned call path keeps its inclusive value
        np.testing.assert_allclose(pruned.values(name, inclusive=True)[0], blast.values(name, inclusive=True)[0])
    d = cubescale.diff(blast, pruned)
    assert d.attrs["cubescale::algebra::system"] == "same" and d.shape == blast.shape
    check_diff(blast, pruned, d)
    check_mean([blast, pruned], cubescale.mean(blast, pruned))


def test_cut_reroots_at_a_region(bt8):
    c = cubescale.cut(bt8, root="adi_")  # two call paths: below MAIN__ and below ITERATION
    roots = [x for x in c.cnodes if x.parent is None]
    source = [x.index for x in bt8.cnodes if x.region.name == "adi_"]
    assert [x.region.name for x in roots] == ["adi_"] * len(source) and len(source) == 2
    for name in scalar_metrics(bt8):
        np.testing.assert_array_equal(c.values(name, inclusive=True)[[r.index for r in roots]],
                                      bt8.values(name, inclusive=True)[source])
    with pytest.raises(ValueError, match="no call path"):
        cubescale.cut(bt8, root="no such region")


def test_results_open_in_cubescale_and_pycubexr(blast, tmp_path):
    # pycubexr 2.1 reads only reports with one root call path: blast against a cut of itself
    # (bt-mz.B.8x4 and bt-mz.p2x4 have different roots, so their union has two; Cube reads those).
    pycubexr = pytest.importorskip("pycubexr")
    pruned = cubescale.cut(blast, prune=blast.cnodes[0].children[0])
    for fn, name in ((cubescale.diff, "diff"), (cubescale.mean, "mean"), (cubescale.merge, "merge")):
        out = fn(blast, pruned)
        path = tmp_path / f"{name}.cubex"
        cubescale.write(out, path, derived="values")
        again = cubescale.open(path)
        assert again.shape == out.shape
        np.testing.assert_array_equal(again.values("time"), out.values("time"))
        with pycubexr.CubexParser(str(path)) as parser:
            metric = parser.get_metric_by_name("time")
            values = parser.get_metric_values(metric)
            root = parser.get_root_cnodes()[0] if hasattr(parser, "get_root_cnodes") else parser.get_cnode(0)
            got = np.asarray(values.cnode_values(root, convert_to_exclusive=False), dtype=float)
            np.testing.assert_allclose(got, again.values("time", inclusive=True)[0], rtol=1e-12)


def test_cli(bt8, bt2, tmp_path, capsys):
    a, b = _example_path("bt-mz.B.8x4.cubex"), _example_path("bt-mz.p2x4.bad_checksums.cubex")
    out = tmp_path / "d.cubex"
    assert main(["diff", a, b, "-o", str(out)]) == 0
    assert "collapsed to processes" in capsys.readouterr().out
    np.testing.assert_array_equal(cubescale.open(out).values("time"), cubescale.diff(bt8, bt2).values("time"))
    assert main(["mean", a, a, "-o", str(tmp_path / "m.cubex")]) == 0
    assert main(["merge", a, b, "-o", str(tmp_path / "g.cubex")]) == 0
    assert main(["cut", a, "-r", "mpi_setup_", "-p", "MPI_Init_thread", "-p", "MPI_Comm_split", "-o",
                 str(tmp_path / "c.cubex")]) == 0
    assert [c.region.name for c in cubescale.open(tmp_path / "c.cubex").cnodes] == ["mpi_setup_", "MPI_Comm_size",
                                                                                    "MPI_Comm_rank"]
    assert main(["diff", a, b, "--system", "same", "-o", str(tmp_path / "x.cubex")]) == 2
    assert "different layouts" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "x.cubex")


# ---------------------------------------------------------------- unification properties

NAMES = ["main", "solve", "io", "mpi", "omp"]


@st.composite
def call_trees(draw):
    """A small call tree as (parent, region name) in preorder, siblings with distinct names."""
    nodes = [(None, "main")]
    open_path = [0]
    for _ in range(draw(st.integers(0, 12))):
        depth = draw(st.integers(1, len(open_path)))
        parent = open_path[depth - 1]
        taken = {n for p, n in nodes if p == parent}
        free = [n for n in NAMES if n not in taken]
        if not free:
            continue
        nodes.append((parent, draw(st.sampled_from(free))))
        open_path = open_path[:depth] + [len(nodes) - 1]
    return nodes


def built(tree, threads: int, seed: int) -> cubescale.Report:
    b = cubescale.ReportBuilder(SystemTree.from_shape(f"node:1 process:2 thread:{threads}"))
    b.add_metric("time")
    b.add_metric("visits", dtype="UINT64")
    regions = {n: b.add_region(n, module="app.c") for n in NAMES}
    for parent, name in tree:
        b.add_cnode(regions[name], parent=parent)
    r = b.build()
    rng = np.random.default_rng(seed)
    r.set_values("time", rng.random(r.shape))
    r.set_values("visits", rng.integers(0, 100, r.shape).astype(np.uint64))
    return r


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_trees(), call_trees(), st.integers(1, 3), st.integers(1, 3))
def test_unified_call_tree_contains_both(ta, tb, threads_a, threads_b):
    a, b = built(ta, threads_a, 1), built(tb, threads_b, 2)
    d = cubescale.diff(a, b)
    keys = path_keys(d)
    assert len(keys) == len(set(keys)) == len(set(path_keys(a)) | set(path_keys(b)))
    check_diff(a, b, d)
    maps = cubescale.algebra.alignment(a, b)
    assert [keys[i] for i in maps[0].cnodes] == path_keys(a)
    assert [keys[i] for i in maps[1].cnodes] == path_keys(b)
    assert (np.diff(maps[0].cnodes.astype(np.int64)) > 0).all()  # the first input's order is kept


@settings(max_examples=20, deadline=None)
@given(call_trees(), st.integers(1, 3))
def test_unify_with_itself_is_itself(tree, threads):
    a = built(tree, threads, 3)
    m = cubescale.merge(a, a)
    assert path_keys(m) == path_keys(a) and m.shape == a.shape
    assert [x.name for x in m.metrics] == [x.name for x in a.metrics]
    np.testing.assert_array_equal(m.values("time"), a.values("time"))
    for maps in cubescale.algebra.alignment(a, a):
        assert maps.cnodes.tolist() == list(range(a.shape[0]))


# ---------------------------------------------------------------- documentation

@pytest.mark.parametrize("name", ["cubescale.algebra", "cubescale.commands.algebra"])
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_functions_have_examples():
    for name in cubescale.algebra.__all__:
        assert "Example" in (getattr(cubescale.algebra, name).__doc__ or ""), name


def test_large_metrics_split_over_threads_equal_numpy():
    # 2 x 1024 x 4096 doubles = 64 MiB: the size from which the location axis is split over threads.
    tree = SystemTree.from_shape("node:1 process:1024 thread:4")
    reports = []
    for k in range(2):
        b = cubescale.ReportBuilder(tree)
        b.add_metric("time")
        b.add_metric("visits", dtype="UINT64")
        root = b.add_cnode(b.add_region("main"))
        for c in range(1, 2048):
            b.add_cnode(b.add_region(f"r{c}"), parent=root)
        r = b.build()
        rng = np.random.default_rng(k)
        r.set_values("time", rng.random(r.shape))
        r.set_values("visits", rng.integers(0, 1 << 40, r.shape).astype(np.uint64))
        reports.append(r)
    a, b = reports
    d = cubescale.diff(a, b)
    np.testing.assert_array_equal(d.values("time", inclusive=None), a.values("time", inclusive=None) - b.values("time", inclusive=None))
    np.testing.assert_array_equal(d.values("visits", inclusive=None),
                                  a.values("visits", inclusive=None).astype(np.int64) - b.values("visits", inclusive=None).astype(np.int64))
    np.testing.assert_array_equal(cubescale.mean(a, b).values("time", inclusive=None),
                                  (a.values("time", inclusive=None) + b.values("time", inclusive=None)) / 2)


def test_metrics_match_by_unique_name_below_any_parent_and_bad_arguments_are_clear_errors():
    reports = []
    for parent_name in ("time", "other"):
        b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:1 thread:1"))
        parent = b.add_metric(parent_name)
        b.add_metric("mpi", parent=parent)
        b.add_cnode(b.add_region("main"))
        reports.append(b.build())
    d = cubescale.diff(*reports)  # mpi below time in the first, below other in the second: one metric
    assert [m.name for m in d.metrics] == ["time", "mpi", "other"]
    assert d.metrics[1].parent is not None and d.metrics[d.metrics[1].parent].name == "time"
    with pytest.raises(ValueError, match="system="):
        cubescale.mean(reports[0], system="nodes")
    with pytest.raises(ValueError, match="at least one"):
        cubescale.merge()
