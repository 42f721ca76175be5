"""Report algebra, part 2: median, min and max against NumPy on aligned arrays of real reports,
the common call tree, Cube's -c (reduce to machines and nodes) and -C, call sites in
unification, and the command line of all of them."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_algebra import _example_path, aligned, built, call_trees, close, path_keys, scalar_metrics

import cubescale
from cubescale import algebra
from cubescale.cli import main


@pytest.fixture(scope="module")
def bt8():
    return cubescale.open(_example_path("bt-mz.B.8x4.cubex"))


@pytest.fixture(scope="module")
def bt2():
    return cubescale.open(_example_path("bt-mz.p2x4.bad_checksums.cubex"))


@pytest.fixture(scope="module")
def blast():
    return cubescale.open(_example_path("blast.p64.cubex"))


@pytest.fixture(scope="module")
def blast_pruned(blast):
    """blast with the root's first child and its subtree inlined into the root."""
    return cubescale.cut(blast, prune=blast.cnodes[0].children[0])


def subtree_sums(report, exclusive):
    """Inclusive values from exclusive ones along report's call tree (children follow parents)."""
    out = np.array(exclusive, copy=True)
    for c in reversed(report.cnodes):
        if c.parent is not None:
            out[c.parent] += out[c.index]
    return out


def check_elementwise(reports, out, reduce_over):
    """out equals reduce_over(stacked aligned arrays, axis=0) for every scalar metric: min, max and
    median are taken of the exclusive values (what each call path spent itself), the inclusive
    values are their sums along the call tree; MIN/MAXDOUBLE as stored (their aggregation is min
    and max, so the stored values already are what min, max and median of them mean)."""
    for name in scalar_metrics(*reports):
        m = out.metric(name)
        dtype = np.int64 if m.dtype == "INT64" else np.float64
        minmax = m.dtype in ("MINDOUBLE", "MAXDOUBLE")
        inclusive = None if minmax else False
        expected = reduce_over(np.stack([aligned(r, out, name, inclusive, dtype) for r in reports]), axis=0)
        for got, want in [(out.values(name, inclusive=inclusive), expected)] + (
                [] if minmax else [(out.values(name, inclusive=True), subtree_sums(out, expected))]):
            if dtype is np.int64:
                np.testing.assert_array_equal(got, want, err_msg=name)
            else:
                close(got, want, name)


@pytest.mark.parametrize("k", [2, 3])
def test_median_of_two_runs_equals_numpy(bt8, bt2, k):
    reports = [bt8, bt2, bt8][:k]
    out = cubescale.median(*reports)
    assert out.attrs["cubescale::algebra::operation"] == "median"
    assert out.metric("visits").dtype == "DOUBLE" and bt8.metric("visits").dtype == "UINT64"
    check_elementwise(reports, out, np.median)


def test_median_of_copies_is_the_input(blast):
    out = cubescale.median(blast, blast, blast, blast)
    assert path_keys(out) == path_keys(blast)
    for name in scalar_metrics(blast):
        close(out.values(name, inclusive=None), blast.values(name, inclusive=None), name)


def test_min_and_max_of_two_runs_equal_numpy(bt8, bt2, blast, blast_pruned):
    for a, b in ((bt8, bt2), (blast, blast_pruned)):
        check_elementwise([a, b], algebra.minimum(a, b), np.min)
        check_elementwise([a, b], algebra.maximum(a, b), np.max)


@pytest.fixture(scope="module")
def kripke():
    return cubescale.open(_example_path("kripke.p8.cubex"))


MODEL_1 = "MODEL_1(unsigned long, unsigned long, int, int)"


def _time_moved(delta=0.1):
    """time.p4 with `delta` seconds of every location's time moved from main's child MPI_Init to
    its child MODEL_1: main spent as much itself and in total as in time.p4."""
    r = cubescale.open(_example_path("time.p4.cubex"))
    names = [c.region.name for c in r.cnodes]
    init, model = names.index("MPI_Init"), names.index(MODEL_1)
    assert r.cnodes[init].parent == r.cnodes[model].parent == names.index("main")
    assert r.metric("time").kind == "INCLUSIVE"  # set_values takes the stored kind
    inclusive = np.array(r.values("time", inclusive=True))
    assert (inclusive[init] > delta).all()
    inclusive[init] -= delta
    inclusive[model] += delta
    r.set_values("time", inclusive)
    return r


def _no_negative_exclusive(inputs, out, metrics):
    """No exclusive value of out is below zero where no input has one below zero."""
    for name in metrics:
        floor = min(0.0, *(float(np.min(r.values(name, inclusive=False))) for r in inputs))
        assert float(np.min(out.values(name, inclusive=False))) >= floor, name


def test_min_max_median_of_runs_with_time_moved_between_children(tmp_path):
    # Review: `max` of time.p4 and a copy with time moved between two children of main gave main
    # -0.197 s of exclusive time on all 4 ranks: the maxima of the children's inclusive times add
    # up to more than the maximum of main's.
    a, b = cubescale.open(_example_path("time.p4.cubex")), _time_moved()
    main_row = [c.region.name for c in a.cnodes].index("main")
    b_path = tmp_path / "moved.cubex"
    cubescale.write(b, b_path)
    for op, fn, reduce_over, inputs in (("max", algebra.maximum, np.max, [a, b]),
                                        ("min", algebra.minimum, np.min, [a, b]),
                                        ("median", cubescale.median, np.median, [a, b, b])):
        out = fn(*inputs)
        check_elementwise(inputs, out, reduce_over)
        _no_negative_exclusive(inputs, out, ["time"])
        # main itself spent the same in both runs
        close(out.values("time", inclusive=False)[main_row], a.values("time", inclusive=False)[main_row], op)
        path = tmp_path / f"{op}.cubex"
        args = [_example_path("time.p4.cubex")] + [str(b_path)] * (len(inputs) - 1)
        assert main([op, *args, "-o", str(path)]) == 0
        written = cubescale.open(path)
        _no_negative_exclusive(inputs, written, ["time"])
        close(written.values("time", inclusive=False), out.values("time", inclusive=False), op)


def test_max_of_two_programs_has_no_negative_exclusive_time(blast, kripke, tmp_path):
    # Review: `max blast.p64 kripke.p8` gave PARALLEL -17.74 s of exclusive time on 8 locations;
    # the PAPI counters are stored inclusive too.
    path = tmp_path / "m.cubex"
    assert main(["max", _example_path("blast.p64.cubex"), _example_path("kripke.p8.cubex"), "-o", str(path)]) == 0
    summed = [m.name for m in blast.metrics if m.kind == "INCLUSIVE" and m.dtype in ("DOUBLE", "UINT64")]
    assert "time" in summed and "PAPI_TOT_INS" in summed
    _no_negative_exclusive([blast, kripke], cubescale.open(path), summed)
    for fn, reduce_over, inputs in ((algebra.maximum, np.max, [blast, kripke]),
                                    (algebra.minimum, np.min, [blast, kripke]),
                                    (cubescale.median, np.median, [blast, kripke, kripke])):
        out = fn(*inputs)
        _no_negative_exclusive(inputs, out, summed)
        check_elementwise(inputs, out, reduce_over)


def _csv_value(name, cnode_id, thread_id, metric):
    """A value of shared/data/cubex/NAME.csv (CubeLib's export, published with pycubexr)."""
    import csv
    with open(_example_path(name), newline="") as f:
        rows = list(csv.reader(f))
    header = [h.strip() for h in rows[0]]
    for row in rows[1:]:
        if (int(row[0]), int(row[1])) == (cnode_id, thread_id):
            return float(row[header.index(metric)])
    raise KeyError((cnode_id, thread_id))


def test_cut_and_common_keep_the_inclusive_values_of_kept_call_paths_min_and_max_too(tmp_path):
    # Review: pruning MODEL_1 of time.p4 made the inclusive min_time of bg_time and main at
    # location 0 7.65e-7 instead of 0 (time.p4.incl.csv, cnode 0, thread 0): MODEL_1's folded
    # minimum is zero everywhere, and its row was taken for absent (no values) in memory and
    # left out of the file.
    path = _example_path("time.p4.cubex")
    t = cubescale.open(path)
    cut_path = tmp_path / "cut.cubex"
    assert main(["cut", path, "-p", MODEL_1, "-o", str(cut_path)]) == 0
    cut = cubescale.cut(t, prune=MODEL_1)
    assert main(["common", path, str(cut_path), "-o", str(tmp_path / "c")]) == 0
    results = {"cut": cut, "cut written": cubescale.open(cut_path), "common": cubescale.common(t, cut)[0],
               "common written": cubescale.open(tmp_path / "c" / "time.p4.common.cubex")}
    row_of = {k: i for i, k in enumerate(path_keys(t))}
    for what, out in results.items():
        assert out.shape[0] == 6, what  # MODEL_1 and its subtree folded into its caller
        rows = [row_of[k] for k in path_keys(out)]
        for name in scalar_metrics(t):
            np.testing.assert_array_equal(out.values(name, inclusive=True), t.values(name, inclusive=True)[rows],
                                          err_msg=f"{what}: {name}")
        root = [c.id for c in t.cnodes].index(0)
        column = [loc.id for loc in out.locations].index(0)
        for name in ("min_time", "max_time"):
            expected = _csv_value("time.p4.incl.csv", 0, 0, name)
            assert out.values(name, inclusive=True)[rows.index(root), column] == pytest.approx(expected, abs=1e-12), what


def test_combining_a_cut_keeps_its_zero_minima():
    # Review: merge, min, max, median and mean of the cut above took its MODEL_1 row of zero
    # minima for absent again, and main's inclusive min_time rose from 0 to 7.65e-7.
    t = cubescale.open(_example_path("time.p4.cubex"))
    cut = cubescale.cut(t, prune=MODEL_1)
    expected = cut.values("min_time", inclusive=True)[0]
    assert not expected.any()
    for name, combined in (("merge", algebra.merge(cut)), ("merge with t", algebra.merge(cut, t)),
                           ("min", algebra.minimum(cut, cut)), ("max", algebra.maximum(cut, cut)),
                           ("median", algebra.median(cut, cut, cut)), ("mean", algebra.mean(cut, cut))):
        assert combined.values("min_time", inclusive=True)[0].tolist() == expected.tolist(), name


def _folded(report, keep_keys):
    """report's values of time/visits on the call paths in keep_keys, each other call path's
    exclusive value added to its nearest kept ancestor (computed here from the input)."""
    keys = path_keys(report)
    rows = [i for i, k in enumerate(keys) if k in keep_keys]
    target = {}
    for c in report.cnodes:
        if keys[c.index] in keep_keys:
            target[c.index] = rows.index(c.index)
        elif c.parent is not None and c.parent in target:
            target[c.index] = target[c.parent]
    return rows, target


def test_common_call_tree_of_blast_and_a_pruned_copy(blast, blast_pruned):
    ca, cp = cubescale.common(blast, blast_pruned)
    shared = set(path_keys(blast)) & set(path_keys(blast_pruned))
    assert set(path_keys(ca)) == set(path_keys(cp)) == shared
    assert path_keys(cp) == path_keys(blast_pruned)  # the pruned tree is the common one
    rows, target = _folded(blast, shared)
    for name in scalar_metrics(blast):
        if blast.metric(name).dtype in ("MINDOUBLE", "MAXDOUBLE"):
            continue
        # Inclusive values of the kept call paths stay; exclusive ones gain the folded subtrees.
        np.testing.assert_array_equal(ca.values(name, inclusive=True), blast.values(name, inclusive=True)[rows])
        expected = np.zeros(ca.shape)
        exclusive = np.asarray(blast.values(name, inclusive=False), dtype=np.float64)
        for c, t in target.items():
            expected[t] += exclusive[c]
        close(ca.values(name, inclusive=False), expected, name)
        np.testing.assert_array_equal(cp.values(name, inclusive=None), blast_pruned.values(name, inclusive=None))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_trees(), call_trees(), call_trees())
def test_common_is_the_intersection(ta, tb, tc):
    reports = [built(t, 1, s) for s, t in enumerate((ta, tb, tc))]
    out = cubescale.common(*reports)
    shared = set.intersection(*(set(path_keys(r)) for r in reports))
    for r, o in zip(reports, out):
        assert path_keys(o) == [k for k in path_keys(r) if k in shared]
        # every root is main in these trees: the total over the tree is kept
        np.testing.assert_allclose(o.values("time", inclusive=False).sum(axis=0), r.values("time", inclusive=False).sum(axis=0))


def test_common_of_different_roots_is_a_clear_error(bt8, bt2):
    with pytest.raises(ValueError, match="no call path in common"):
        cubescale.common(bt8, bt2)


def _node_of(report):
    """Per location, the name of the node (class node or nodecard) above it."""
    tree = report.system
    out = []
    for e in report._core.location_elements().tolist():
        while tree.class_name(e) not in ("node", "nodecard"):
            e = tree.parent(e)
        out.append(tree.name(e))
    return out


def test_reduce_keeps_nodes_of_two_machines(bt8, bt2):
    # bt-mz.B.8x4 (Score-P 1.4) and bt-mz.p2x4 (9.4) ran on different machines and nodes.
    d = cubescale.diff(bt8, bt2, system="reduce")
    assert d.attrs["cubescale::algebra::system"] == "reduce"
    places = {}
    for r in (bt8, bt2):
        for loc, node in zip(r.locations, _node_of(r)):
            places.setdefault((node, loc.process_rank, loc.process, loc.rank), len(places))
    assert d.shape[1] == len(places)
    got = {(node, loc.process_rank, loc.process, loc.rank) for loc, node in zip(d.locations, _node_of(d))}
    assert got == set(places)
    # Values against NumPy with columns matched by (node, process, thread).
    where = {(node, loc.process_rank, loc.process, loc.rank): loc.index for loc, node in zip(d.locations, _node_of(d))}
    for name in ("time", "visits"):
        expected = np.zeros(d.shape)
        row_of = {k: i for i, k in enumerate(path_keys(d))}
        for sign, r in ((1, bt8), (-1, bt2)):
            rows = np.array([row_of[k] for k in path_keys(r)])
            cols = np.array([where[(node, loc.process_rank, loc.process, loc.rank)]
                             for loc, node in zip(r.locations, _node_of(r))])
            np.add.at(expected, (rows[:, None], cols[None, :]), sign * np.asarray(r.values(name, inclusive=False), float))
        close(d.values(name, inclusive=False), expected, name)


def test_reduce_of_a_five_level_machine_keeps_machine_and_nodecards(blast):
    out = cubescale.mean(blast, blast, system="reduce")
    classes = {out.system.class_name(e) for e in range(len(out.system))}
    assert set(_node_of(out)) == set(_node_of(blast)) and out.shape == blast.shape
    assert "machine" in classes and not classes & {"rack", "midplane", "nodeboard"}
    close(out.values("time", inclusive=None), blast.values("time", inclusive=None), "time")


def test_call_sites_are_read_written_and_unified(tmp_path):
    # all_dtypes.cubex records call sites (<cnode line= mod=>); a copy keeps them, so the report
    # unifies with its copy call path by call path.
    a = cubescale.open(_example_path("all_dtypes.cubex"))
    path = tmp_path / "copy.cubex"
    cubescale.write(a, path)
    text = path.read_bytes()
    assert b'line="21" mod="/ICL/CUBE/example.c"' in text
    b = cubescale.open(path)
    d = cubescale.diff(a, b)
    assert d.shape == a.shape
    for maps in algebra.alignment(a, b):
        assert maps.cnodes.tolist() == list(range(a.shape[0]))


def test_cli_median_min_max_common_and_system_flags(bt8, bt2, blast, tmp_path, capsys):
    a, b = _example_path("bt-mz.B.8x4.cubex"), _example_path("bt-mz.p2x4.bad_checksums.cubex")
    for op, fn in (("median", cubescale.median), ("min", algebra.minimum), ("max", algebra.maximum)):
        out = tmp_path / f"{op}.cubex"
        assert main([op, a, b, a, "-o", str(out)]) == 0
        np.testing.assert_array_equal(cubescale.open(out).values("time"), fn(bt8, bt2, bt8).values("time"))
    assert main(["diff", a, b, "-c", "-o", str(tmp_path / "r.cubex")]) == 0
    assert "reduced to machines and nodes" in capsys.readouterr().out
    assert cubescale.open(tmp_path / "r.cubex").attrs["cubescale::algebra::system"] == "reduce"
    assert main(["mean", a, a, "-C", "-o", str(tmp_path / "p.cubex")]) == 0
    assert "collapsed to processes" in capsys.readouterr().out
    p = _example_path("blast.p64.cubex")
    assert main(["common", p, p, "-o", str(tmp_path / "c")]) == 2  # one name twice
    assert "same file name" in capsys.readouterr().err
    assert main(["common", a, b, "-o", str(tmp_path / "c")]) == 2
    assert "no call path in common" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "c")
    pruned = tmp_path / "pruned.cubex"
    cubescale.write(cubescale.cut(blast, prune=blast.cnodes[0].children[0]), pruned)
    assert main(["common", p, str(pruned), "-o", str(tmp_path / "c")]) == 0
    assert sorted(os.listdir(tmp_path / "c")) == ["blast.p64.common.cubex", "pruned.common.cubex"]
    assert cubescale.open(tmp_path / "c" / "blast.p64.common.cubex").shape == cubescale.open(pruned).shape


def test_median_min_max_and_common_results_open_in_pycubexr(blast, blast_pruned, tmp_path):
    # blast and its pruned copy share one root, which pycubexr 2.1 needs.
    pycubexr = pytest.importorskip("pycubexr")
    results = {"median": cubescale.median(blast, blast_pruned, blast),
               "min": algebra.minimum(blast, blast_pruned),
               "max": algebra.maximum(blast, blast_pruned),
               "common": cubescale.common(blast, blast_pruned)[0]}
    for name, out in results.items():
        path = tmp_path / f"{name}.cubex"
        cubescale.write(out, path, derived="values")
        again = cubescale.open(path)
        np.testing.assert_array_equal(again.values("time"), out.values("time"))
        with pycubexr.CubexParser(str(path)) as parser:
            values = parser.get_metric_values(parser.get_metric_by_name("time"))
            root = parser.get_root_cnodes()[0] if hasattr(parser, "get_root_cnodes") else parser.get_cnode(0)
            got = np.asarray(values.cnode_values(root, convert_to_exclusive=False), dtype=float)
            np.testing.assert_allclose(got, again.values("time", inclusive=True)[0], rtol=1e-12, err_msg=name)


def test_reduce_without_nodes_is_a_one_line_cli_error(tmp_path, capsys):
    from cubescale.systree import SystemTree
    b = cubescale.ReportBuilder(SystemTree.from_shape("rack:1 process:2 thread:1"))  # machine > rack > processes
    b.add_metric("time")
    b.add_cnode(b.add_region("main"))
    path = tmp_path / "racks.cubex"
    cubescale.write(b.build(), path)
    out = tmp_path / "r.cubex"
    assert main(["diff", str(path), str(path), "-c", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "below no node" in err and "Traceback" not in err
    assert not out.exists()
    assert main(["mean", str(path), str(path), "-o", str(out)]) == 2  # mean reduces by default, as cube_mean
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "below no node" in err and "-c keeps them" in err
    assert main(["mean", str(path), str(path), "-c", "-o", str(out)]) == 0  # cube_mean's -c: not reduced
    assert cubescale.open(out).attrs["cubescale::algebra::system"] == "same"
    assert main(["mean", str(path), str(path), "-C", "-o", str(out)]) == 0  # collapsing needs no nodes
    before = path.read_bytes()
    assert main(["max", str(path), str(out), "-o", str(path)]) == 2  # never over an input
    assert "is the input" in capsys.readouterr().err and path.read_bytes() == before


def test_a_call_site_line_that_is_no_number_is_a_format_error(tmp_path):
    from tar_members import archive, read_members
    members = read_members(_example_path("all_dtypes.cubex"))
    assert b'line="60"' in members["anchor.xml"]
    members["anchor.xml"] = members["anchor.xml"].replace(b'line="60"', b'line="6x"')
    path = tmp_path / "bad_line.cubex"
    path.write_bytes(archive(members))
    with pytest.raises(cubescale.FormatError, match="anchor.xml.*line"):
        cubescale.open(path).cnodes  # noqa: B018 (the call tree is read on first use, if not at open)
