"""``cubescale stat`` on real reports: the flat profile and the statistics across locations equal
NumPy computations this test makes itself from the report's call-path values, with
cube_stat's definitions (regions sum over all their call paths, inclusive values over the
outermost ones; sorted by exclusive value; the list ends at the first region without visits;
sample variance)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_DATA

import cubescale
from cubescale.cli import main

REPORTS = ["bt-mz.B.8x4.cubex", "time.p4.cubex", "blast.p64.cubex", "bt-mz.p2x4.bad_checksums.cubex"]


def by_region(report: cubescale.Report, metric: str, inclusive: bool) -> np.ndarray:
    """[region, location] sums of the call paths' values (inclusive: of the call paths with no
    caller of the same region, found by walking up), with np.add.at."""
    values = np.asarray(report.values(metric, inclusive=inclusive), dtype=np.float64)
    out = np.zeros((len(report.regions), report.shape[1]))

    parents = report.cnode_parents

    def nested(c) -> bool:
        caller = int(parents[c.index])
        while caller >= 0 and report.cnodes[caller].region.index != c.region.index:
            caller = int(parents[caller])
        return caller >= 0

    counted = [c.index for c in report.cnodes if not (inclusive and nested(c))]
    np.add.at(out, np.array([report.cnodes[i].region.index for i in counted]), values[counted])
    return out


@pytest.mark.parametrize("name", REPORTS)
def test_flat_profile_and_statistics_equal_numpy(name):
    report = cubescale.open(SHARED_DATA / "cubex" / name)
    result = cubescale.stat(report, "time", top=None)
    excl, incl = by_region(report, "time", False), by_region(report, "time", True)
    visits = by_region(report, "visits", False).sum(axis=1)
    order = sorted(range(len(report.regions)), key=lambda r: -excl[r].sum())  # stable, as cube_stat
    first_unvisited = next((i for i, r in enumerate(order) if visits[r] == 0), len(order))
    order = order[:first_unvisited]
    assert [row.region for row in result.flat] == [report.regions[r].name for r in order]
    for row, r in zip(result.flat, order):
        assert row.visits == visits[r]
        assert row.exclusive == pytest.approx(excl[r].sum(), rel=1e-12, abs=1e-12)
        assert row.inclusive == pytest.approx(incl[r].sum(), rel=1e-12, abs=1e-12)
    assert len(result.statistics) == 2 * len(order)
    for i, r in enumerate(order):
        for s, values in zip(result.statistics[2 * i: 2 * i + 2], (incl[r], excl[r])):
            assert s.count == report.shape[1]
            assert s.sum == pytest.approx(values.sum(), rel=1e-12, abs=1e-12)
            assert s.mean == pytest.approx(values.mean(), rel=1e-12, abs=1e-12)
            assert s.variance == pytest.approx(((values - values.mean()) ** 2).sum() / (len(values) - 1),
                                               rel=1e-9, abs=1e-15)
            assert (s.minimum, s.maximum) == (values.min(), values.max())
            np.testing.assert_allclose([s.q1, s.median, s.q3], np.quantile(values, [0.25, 0.5, 0.75]), rtol=1e-12)


def test_top_n_and_other_metrics():
    report = cubescale.open(SHARED_DATA / "cubex" / "bt-mz.B.8x4.cubex")
    every = cubescale.stat(report, "visits", top=None)
    top = cubescale.stat(report, "visits", top=5)
    assert top.flat == every.flat[:5] and len(top.statistics) == 10
    assert all(a.exclusive >= b.exclusive for a, b in zip(every.flat, every.flat[1:]))
    # visits by visits: the exclusive column is the visits column
    assert all(row.exclusive == row.visits for row in every.flat)
    assert cubescale.stat(report, top=0).flat == ()


def test_metrics_without_one_number_are_refused():
    report = cubescale.open(SHARED_DATA / "cubex" / "all_dtypes.cubex")
    tau = next(m.name for m in report.metrics if m.dtype == "TAU_ATOMIC")
    with pytest.raises(ValueError, match="TAU_ATOMIC"):
        cubescale.stat(report, tau)


def test_cli_prints_both_tables(capsys):
    path = str(SHARED_DATA / "cubex" / "bt-mz.B.8x4.cubex")
    assert main(["stat", path, "-t", "3", "-p"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["Region", "Visits", "Exclusive", "time", "Inclusive", "time"]
    assert len(out) == 1 + 3 + 1 + 1 + 6
    first = cubescale.stat(cubescale.open(path), top=1).flat[0]
    assert out[1].startswith(first.region + " ") and out[6].startswith(f"INCL({first.region})")


@pytest.mark.parametrize("argv, words", [
    (["-t", "many"], "-t takes a number"),
    (["-m", "no_such_metric"], "no metric 'no_such_metric'"),
])
def test_cli_errors_are_one_line(argv, words, capsys):
    assert main(["stat", str(SHARED_DATA / "cubex" / "time.p4.cubex")] + argv) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_cli_plot_draws_the_largest_call_paths(tmp_path, capsys):
    """`stat --plot`: the figure has one bar per requested call path, in % of the program's
    exclusive time, as plots.metric_share draws them; the input stays the only other file."""
    pytest.importorskip("matplotlib")
    report = cubescale.examples.report_path()
    png = tmp_path / "time.png"
    assert main(["stat", report, "-t", "3", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot: {png}" in capsys.readouterr().out
    from cubescale import plots

    r = cubescale.open(report)
    widths = [b.get_width() for b in plots.metric_share(r, "time", n=3).axes[0].patches]
    exclusive = np.sort(r.cnode_values("time", inclusive=False))[::-1][:3]
    total = r.values("time", inclusive=False).sum()
    assert np.allclose(sorted(widths, reverse=True), 100 * exclusive / total)
    assert main(["stat", report, "--plot", report]) == 2  # never over its input


def csv_by_region(report: cubescale.Report, name: str, metric: str, inclusive: bool, combine) -> dict[str, float]:
    """Per region name, ``combine`` (min or max) over the CubeLib-exported values of all its
    call paths and locations in the shared CSV (not cubescale's values)."""
    import csv

    path = SHARED_DATA / "cubex" / f"{name.removesuffix('.cubex')}.{'incl' if inclusive else 'excl'}.csv"
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    column = [h.strip() for h in rows[0]].index(metric)
    region_of_id = {int(c.id): c.region.name for c in report.cnodes}
    out: dict[str, float] = {}
    for row in rows[1:]:
        region, value = region_of_id[int(row[0])], float(row[column])
        out[region] = combine(out[region], value) if region in out else value
    return out


@pytest.mark.parametrize("name", ["time.p4.cubex", "blast.p64.cubex"])
@pytest.mark.parametrize("metric, combine", [("min_time", min), ("max_time", max)])
def test_min_and_max_metrics_are_the_minimum_and_maximum_not_sums(name, metric, combine):
    """MINDOUBLE / MAXDOUBLE: a region's value is the minimum (maximum) over its call paths and
    locations, as CubeLib aggregates them (the published CSVs), and regions rank by it."""
    report = cubescale.open(SHARED_DATA / "cubex" / name)
    result = cubescale.stat(report, metric, top=None)
    excl = csv_by_region(report, name, metric, False, combine)
    incl = csv_by_region(report, name, metric, True, combine)
    assert result.flat
    for row in result.flat:
        assert row.exclusive == pytest.approx(excl[row.region], rel=1e-9, abs=1e-12), row
        assert row.inclusive == pytest.approx(incl[row.region], rel=1e-9, abs=1e-12), row
    assert all(a.exclusive >= b.exclusive for a, b in zip(result.flat, result.flat[1:]))
    for s in result.statistics:  # per location: the region's minimum (maximum) there
        assert combine(s.minimum, s.maximum) == pytest.approx((incl if s.kind == "inclusive" else excl)[s.region],
                                                              rel=1e-9, abs=1e-12)
    if name == "time.p4.cubex" and metric == "min_time":  # the reviewer's case: 4 minima were added
        first = result.flat[0]
        assert first.region == "bg_time" and first.exclusive == pytest.approx(0.842709, abs=1e-6)


def test_min_metrics_leave_out_rows_the_report_does_not_store(tmp_path):
    """An absent row has no values (docs/cube.md, Aggregation): our writer leaves out all-zero
    rows, and such a row of one call path must not make its region's minimum 0; a region
    without any stored row is 0, as the call tree shows it."""
    from cubescale.stat import region_values

    report = cubescale.open(SHARED_DATA / "cubex" / "time.p4.cubex")
    values = np.array(report.values("min_time", inclusive=None))
    calls = [c.index for c in report.cnodes if c.region.name == "MPI_Bcast"]
    lonely = next(c for c in report.cnodes if c.region.name == "MPI_Comm_rank")
    assert len(calls) >= 2 and values[calls].min() > 0
    values[calls[0]] = 0.0  # written as absent rows
    values[lonely.index] = 0.0
    report.set_values("min_time", values)
    path = tmp_path / "absent.cubex"
    cubescale.write(report, path)
    again = cubescale.open(path)
    assert not again.present("min_time")[calls[0]] and again.present("min_time")[calls[1]]
    per_location = region_values(again, "min_time", inclusive=False)
    np.testing.assert_array_equal(per_location[lonely.region.index], 0.0)
    np.testing.assert_array_equal(per_location[report.cnodes[calls[0]].region.index], values[calls[1:]].min(axis=0))
    row = next(r for r in cubescale.stat(again, "min_time", top=None).flat if r.region == "MPI_Bcast")
    assert row.exclusive == values[calls[1:]].min() > 0


@pytest.mark.parametrize("command", [["stat", "-p"], ["top"]], ids=["stat", "top"])
def test_every_data_type_is_computed_or_refused_in_one_line(command, capsys):
    """stat and top on every metric of all_dtypes.cubex: real numbers are computed, every other
    type (HISTOGRAM(5), COMPLEX ...) is one line and exit status 2, the same for both commands:
    no traceback, no warning (top ranked COMPLEX values by their real part)."""
    import warnings

    path = str(SHARED_DATA / "cubex" / "all_dtypes.cubex")
    report = cubescale.open(path)
    assert {m.dtype for m in report.metrics} >= {"HISTOGRAM(5)", "COMPLEX", "NDOUBLES(10)", "RATE", "SCALE_FUNC"}
    for m in report.metrics:
        real = m.dtype not in ("TAU_ATOMIC", "HISTOGRAM(5)", "NDOUBLES(10)", "SCALE_FUNC", "COMPLEX", "RATE")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a ComplexWarning fails the test
            status = main([command[0], path, "-m", m.name] + command[1:])
        out, err = capsys.readouterr()
        if real:
            assert status == 0 and not err, (m.dtype, err)
        else:
            assert status == 2 and not out, (m.dtype, out)
            assert err.strip().splitlines() == [f"cubescale: error: metric {m.name} holds {m.dtype} values; "
                                                 f"{command[0]} needs one real number per value"]


def test_cli_plot_of_a_min_metric_draws_values_not_shares(tmp_path):
    """`stat --plot` of a MINDOUBLE metric: bars are the call paths' minima in seconds (a share
    of a sum of minima means nothing)."""
    pytest.importorskip("matplotlib")
    from cubescale import plots

    r = cubescale.open(SHARED_DATA / "cubex" / "time.p4.cubex")
    fig = plots.metric_share(r, "min_time", n=3)
    widths = sorted((b.get_width() for b in fig.axes[0].patches), reverse=True)
    np.testing.assert_allclose(widths, np.sort(r.cnode_values("min_time", inclusive=False))[::-1][:3])
    assert fig.axes[0].get_xlabel() == "min_time (sec, exclusive)"
    assert main(["stat", str(SHARED_DATA / "cubex" / "time.p4.cubex"), "-m", "min_time", "--plot",
                 str(tmp_path / "m.png")]) == 0


def test_cube_stat_habits_statistics_as_percent_option_and_metric_lists_refused(capsys):
    # cube_stat's -% is the statistics (here also -p); its -m takes a comma list, which stat
    # (one metric) refuses in one line instead of "no metric 'time,visits'".
    report = str(SHARED_DATA / "cubex" / "time.p4.cubex")
    assert main(["stat", report, "-%", "-t", "1"]) == 0
    assert "INCL(MPI_Init)" in capsys.readouterr().out
    assert main(["stat", report, "-m", "time,visits"]) == 2
    assert "stat shows one metric (cube_stat's comma-separated list is not supported)" in capsys.readouterr().err


def test_a_recursive_region_counts_its_nested_calls_once_as_cube_stat(tmp_path, capsys):
    """cube_stat's inclusive column takes a region's outermost call paths only (CubeLib's
    AggrCube::get_vrsev over Region::get_incl_cnodev): main > fib > fib > fib with exclusive
    times 1, 2, 3, 4 on each of 2 processes gives fib 2 * (2 + 3 + 4) = 18 inclusive, not 40
    (every call path's inclusive value added, more than the program's 20). Written and read
    back, as a user's report is."""
    from cubescale.systree import SystemTree

    b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:2 thread:1"))
    b.add_metric("visits", dtype="UINT64", unit="occ")
    b.add_metric("time", unit="sec", kind="EXCLUSIVE")
    main_path = b.add_cnode(b.add_region("main"))
    fib = b.add_region("fib")
    outer = b.add_cnode(fib, parent=main_path)
    b.add_cnode(fib, parent=b.add_cnode(fib, parent=outer))
    built = b.build()
    built.set_values("time", np.array([[1, 1], [2, 2], [3, 3], [4, 4]], dtype=float))
    built.set_values("visits", np.array([[1, 1], [1, 1], [2, 2], [4, 4]], dtype=np.uint64))
    cubescale.write(built, tmp_path / "rec.cubex")
    report = cubescale.open(tmp_path / "rec.cubex")
    rows = {row.region: row for row in cubescale.stat(report, "time", top=None).flat}
    assert (rows["fib"].exclusive, rows["fib"].inclusive) == (18.0, 18.0)
    assert (rows["main"].exclusive, rows["main"].inclusive) == (2.0, 20.0)
    inclusive = next(s for s in cubescale.stat(report, "time", top=None).statistics
                     if s.region == "fib" and s.kind == "inclusive")
    assert (inclusive.minimum, inclusive.maximum, inclusive.sum) == (9.0, 9.0, 18.0)
    assert main(["stat", str(tmp_path / "rec.cubex"), "-t", "all"]) == 0
    fib_line = next(line for line in capsys.readouterr().out.splitlines() if line.split()[:1] == ["fib"])
    assert fib_line.split()[1:] == ["14", "18.000000", "18.000000"]
