"""``cubescale stat`` on real reports: the flat profile and the statistics across locations equal
NumPy computations this test makes itself from the report's call-path values, with
cube_stat's definitions (regions sum over all their call paths; sorted by exclusive value; the
list ends at the first region without visits; sample variance)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_DATA

import cubescale
from cubescale.cli import main

REPORTS = ["bt-mz.B.8x4.cubex", "time.p4.cubex", "blast.p64.cubex", "bt-mz.p2x4.bad_checksums.cubex"]


def by_region(report: cubescale.Report, metric: str, inclusive: bool) -> np.ndarray:
    """[region, location] sums of the call paths' values, with np.add.at."""
    values = np.asarray(report.values(metric, inclusive=inclusive), dtype=np.float64)
    out = np.zeros((len(report.regions), report.shape[1]))
    np.add.at(out, np.array([c.region.index for c in report.cnodes]), values)
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
