"""Report algebra, part 3: where CubeLib's tools (cube_merge, cube_cut, cube_diff, cube_mean) define
what a result holds, on the shared real reports: merge writes every input in order, cut -p inlines
into the caller, metrics match by unique name wherever they sit, topologies are carried, and the
command line's -c / -C mean what they mean for the cube tool of the same name."""

from __future__ import annotations

import numpy as np
import pytest
from test_algebra import _example_path, check_diff, check_mean, columns

import cubescale
from cubescale.cli import main


def _name_paths(report: cubescale.Report) -> list[tuple[str, ...]]:
    """Each call path as the region names from its root."""
    keys: list[tuple[str, ...]] = []
    for c in report.cnodes:
        keys.append((keys[c.parent] if c.parent is not None else ()) + (c.region.name,))
    return keys


def _pycubexr_stored(path: str, metric: str) -> dict[tuple[str, ...], np.ndarray]:
    """pycubexr's read of a report: the stored values of `metric` per call path (region names
    from the root; call paths of one such path add up), in the file's location order."""
    pycubexr = pytest.importorskip("pycubexr")
    out: dict[tuple[str, ...], np.ndarray] = {}
    from pycubexr.utils.exceptions import MissingMetricError
    with pycubexr.CubexParser(path) as parser:
        try:
            values = parser.get_metric_values(parser.get_metric_by_name(metric))
        except MissingMetricError:  # no data member: zero everywhere
            return {}
        for c in parser.all_cnodes():
            names, x = [], c
            while x is not None:
                names.append(x.region.name)
                x = x.parent
            key = tuple(reversed(names))
            out[key] = out.get(key, 0) + np.asarray(values.cnode_values(c), dtype=np.float64)
    return out


# ---------------------------------------------------------------- merge (cube_merge)

MERGED = ("kripke.p8.cubex", "blast.p64.cubex")


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    out = tmp_path_factory.mktemp("merge") / "m.cubex"
    assert main(["merge", *(_example_path(n) for n in MERGED), "-o", str(out)]) == 0
    return cubescale.open(out)


def test_merge_writes_every_input_in_order_as_cube_merge(merged):
    # cube_merge copies every input's values into the union in input order (set_sevs), a later
    # input overwriting an earlier one where both have the call path and location. Taking each
    # metric from the first input alone gave 0 for blast's MPI_Bcast and for locations 8-63.
    inputs = [cubescale.open(_example_path(n)) for n in MERGED]
    rows = {k: i for i, k in enumerate(_name_paths(merged))}
    assert len(rows) == merged.shape[0]  # region names identify the call paths here
    shared = set.intersection(*({m.name for m in r.metrics if not m.derived} for r in inputs))
    assert {"time", "visits"} <= shared
    for metric in sorted(shared):
        kinds = {r.metric(metric).kind for r in inputs}
        if len(kinds) > 1 or merged.metric(metric).dtype not in ("DOUBLE", "UINT64", "INT64"):
            continue
        expected = np.zeros(merged.shape)
        for name, report in zip(MERGED, inputs):
            stored = _pycubexr_stored(_example_path(name), metric)
            own = _name_paths(report)
            # pycubexr's location order is the cubescale reader's here (checked on the input)
            if stored:
                np.testing.assert_array_equal(np.array([stored[k] for k in own]), report.values(metric, inclusive=None))
            cols = columns(report, merged)
            for key, values in stored.items():
                expected[rows[key], cols] = values
        np.testing.assert_array_equal(merged.values(metric, inclusive=None), expected, err_msg=metric)
    # the reviewer's cells: blast's MPI_Bcast below PARALLEL at location 0, PARALLEL on 8-63
    blast = inputs[1]
    time, blast_time = merged.values("time", inclusive=None), blast.values("time", inclusive=None)
    bcast = [k for k in rows if k[-2:] == ("PARALLEL", "MPI_Bcast")]
    assert bcast and time[rows[bcast[0]], 0] == blast_time[_name_paths(blast).index(bcast[0]), 0] > 0.2
    parallel = [k for k in rows if k[-1] == "PARALLEL"][0]
    np.testing.assert_array_equal(time[rows[parallel], 8:64], blast_time[_name_paths(blast).index(parallel), 8:64])
    assert time[rows[parallel], 8:64].min() > 40


def test_merge_of_a_metric_stored_in_two_types_is_double():
    # visits stored as UINT64 in one report and as DOUBLE in another: DOUBLE in the result, with
    # the later report's values where both have the cell (the type stays when the types agree)
    from cubescale.systree import SystemTree
    reports = []
    for dtype, scale in (("UINT64", 1), ("DOUBLE", 0.5)):
        b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:3 thread:1"))
        b.add_metric("visits", dtype=dtype)
        b.add_cnode(b.add_region("main"))
        r = b.build()
        r.set_values("visits", (np.arange(3).reshape(1, 3) * 10 + 5) * scale)
        reports.append(r)
    m = cubescale.merge(*reports)
    assert m.metric("visits").dtype == "DOUBLE"
    assert m.values("visits").tolist() == [[2.5, 7.5, 12.5]]
    assert cubescale.merge(reports[0], reports[0]).metric("visits").dtype == "UINT64"


# ---------------------------------------------------------------- cut -p (cube_cut)

def _csv(name: str, cnode_id: int, metric: str) -> float:
    """A value of shared/data/cubex/NAME.csv (CubeLib's export, one location)."""
    import csv
    with open(_example_path(name), newline="") as f:
        rows = list(csv.reader(f))
    header = [h.strip() for h in rows[0]]
    return float(next(r for r in rows[1:] if int(r[0]) == cnode_id)[header.index(metric)])


def test_cut_prune_inlines_the_call_path_into_its_caller(tmp_path):
    # cube_cut -p maps a pruned call path and its subtree to the caller (copy_tree in prune mode)
    # and adds their values there; `cut -p double` used to keep `double` with its children folded.
    path = _example_path("call_tree_test.cubex")
    a = cubescale.open(path)
    out = tmp_path / "c.cubex"
    assert main(["cut", path, "-p", "double", "-o", str(out)]) == 0
    c = cubescale.open(out)
    names = [x.region.name for x in c.cnodes]
    assert "double" not in names and not {"d1", "d2", "d3"} & set(names) and len(names) == a.shape[0] - 4
    main_in, double_in = (next(x.index for x in a.cnodes if x.region.name == n) for n in ("main", "double"))
    main_out = names.index("main")
    for m in a.metrics:
        if m.derived:
            continue
        # the caller keeps its inclusive value (the input's; CubeLib's export rounds to 6 digits) ...
        kept = c.values(m.name, inclusive=True)[main_out, 0]
        assert kept == a.values(m.name, inclusive=True)[main_in, 0], m.name
        assert kept == pytest.approx(_csv("call_tree_test.incl.csv", a.cnodes[main_in].id, m.name), rel=1e-5), m.name
        if m.dtype in ("MINDOUBLE", "MAXDOUBLE"):
            continue
        # ... and its exclusive value gains everything below and in `double`
        expected = a.values(m.name, inclusive=False)[main_in, 0] + a.values(m.name, inclusive=True)[double_in, 0]
        assert c.values(m.name, inclusive=False)[main_out, 0] == pytest.approx(expected, rel=1e-12, abs=1e-12), m.name
    assert a.values("time", inclusive=True)[double_in, 0] > 0


@pytest.mark.parametrize("flags, message", [
    (["-r", "double", "-p", "double"], "both as root and to prune"),  # cube_cut: "Can't both reroot and prune"
    (["-p", "double", "-p", "d1"], "inside another pruned"),          # cube_cut: "have common root"
    (["-p", "test.x"], "no caller"),                                  # the root has nowhere to go
    (["-p", "no such region"], "no call path calls"),                 # cube_cut warns; we refuse
])
def test_cut_refuses_what_cube_cut_refuses_in_one_line(flags, message, tmp_path, capsys):
    out = tmp_path / "c.cubex"
    assert main(["cut", _example_path("call_tree_test.cubex"), *flags, "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err and "Traceback" not in err
    assert not out.exists()


# ---------------------------------------------------------------- metrics by unique name

def test_a_score_p_profile_and_a_scalasca_summary_combine(tmp_path):
    # bytes_put and bytes_get are roots in the Score-P profile and below bytes_rma in Scalasca's
    # remapped summary: "cannot be unified" before; now one metric each, placed as in the first
    # input (CubeLib matches by unique name too, but keeps both placements: two metrics of one
    # unique name in its result).
    a = cubescale.open(_example_path("bt-mz.B.8x4.cubex"))
    b = cubescale.open(_example_path("bt-mz.B.8x4.remapped.cubex"))
    out = tmp_path / "x.cubex"
    assert main(["diff", _example_path("bt-mz.B.8x4.cubex"), _example_path("bt-mz.B.8x4.remapped.cubex"),
                 "-o", str(out)]) == 0
    for d, first in ((cubescale.open(out), a), (cubescale.diff(b, a), b)):
        names = [m.name for m in d.metrics]
        assert len(names) == len(set(names)) == len({m.name for m in a.metrics} | {m.name for m in b.metrics})
        for name in ("bytes_put", "bytes_get"):
            parent, own = d.metric(name).parent, first.metric(name).parent
            assert (None if parent is None else d.metrics[parent].name) == (
                None if own is None else first.metrics[own].name), name
    check_diff(a, b, cubescale.diff(a, b))
    check_mean([a, b], cubescale.mean(a, b))


# ---------------------------------------------------------------- topologies

def _topologies(report: cubescale.Report) -> dict[str, dict[tuple[int, int], str]]:
    """Per Cartesian topology name, each coordinate's location as (process rank, rank): its cell."""
    from xml.etree import ElementTree
    where = {loc.id: (loc.process_rank, loc.rank) for loc in report.locations}
    root = ElementTree.fromstring(f"<topologies>{report._core.topologies_xml}</topologies>")
    return {cart.get("name"): {where[int(c.get("locId"))]: (c.text or "").strip() for c in cart.iter("coord")}
            for cart in root.iter("cart")}


@pytest.mark.parametrize("operation", ["diff", "mean", "merge"])
def test_topologies_are_carried_to_the_result_locations(operation, tmp_path):
    # CubeLib carries them (merge_top for diff and merge, add_top for mean); they were dropped.
    same = _example_path("call_tree_test.cubex")
    out = tmp_path / "same.cubex"
    assert main([operation, same, same, "-o", str(out)]) == 0
    assert _topologies(cubescale.open(out)) == _topologies(cubescale.open(same)) == {"Process x Thread": {(0, 0): "0 0"}}
    # Collapsed system trees: coordinates follow their locations; of two topologies of one name
    # the first input's stays; a topology only a later input has comes too.
    p2x4, p4, kripke = (_example_path(n) for n in ("bt-mz.p2x4.bad_checksums.cubex", "time.p4.cubex", "kripke.p8.cubex"))
    for inputs, expected in (((p2x4, p4), p2x4), ((p4, p2x4), p4), ((kripke, p4), p4)):
        out = tmp_path / "collapsed.cubex"
        assert main([operation, *inputs, "-C", "-o", str(out)]) == 0
        result = cubescale.open(out)
        assert result.attrs["cubescale::algebra::system"] == "processes"
        assert _topologies(result) == _topologies(cubescale.open(expected)), inputs


# ---------------------------------------------------------------- -c / -C as the cube tools

@pytest.mark.parametrize("operation, flags, system", [
    ("mean", [], "reduce"),            # cube_mean reduces by default ...
    ("mean", ["-c"], "same"),          # ... and -c keeps the system trees
    ("mean", ["-C"], "processes"),
    ("diff", [], "same"),              # cube_diff and cube_merge: -c reduces, -C collapses
    ("diff", ["-c"], "reduce"),
    ("merge", ["-c"], "reduce"),
    ("merge", ["-C"], "processes"),
    ("diff", ["-c", "-C"], "processes"),  # -C wins over -c
])
def test_c_and_capital_c_mean_what_the_cube_tools_mean(operation, flags, system, tmp_path):
    a = _example_path("bt-mz.B.8x4.cubex")
    out = tmp_path / "o.cubex"
    assert main([operation, a, a, *flags, "-o", str(out)]) == 0
    assert cubescale.open(out).attrs["cubescale::algebra::system"] == system


def test_system_and_c_together_are_a_one_line_error(tmp_path, capsys):
    a = _example_path("call_tree_test.cubex")
    assert main(["mean", a, a, "--system", "same", "-c", "-o", str(tmp_path / "o.cubex")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "either --system or -c" in err


def test_merge_of_one_report_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "m.cubex"
    assert main(["merge", _example_path("kripke.p8.cubex"), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "at least two" in err and not out.exists()
