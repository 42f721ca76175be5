"""Figures (cubescale.plots) drawn headless (Agg) on real reports: the bars and cells hold the
values the reports give, computed here from their arrays; `--plot` of `pop` and `diff`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_DATA

import cubescale
from cubescale import plots
from cubescale.cli import main
from cubescale.pop import pop_metrics
from cubescale.views import call_paths

pytest.importorskip("matplotlib", reason="matplotlib is not installed: pip install 'cubescale[plot]'")

CUBEX = SHARED_DATA / "cubex"
PNG = b"\x89PNG\r\n\x1a\n"


def shared(name: str) -> Path:
    path = CUBEX / name
    if not path.exists():
        pytest.fail(f"shared data {path} not found")
    return path


def bars(fig, horizontal: bool) -> list[float]:
    return [float(b.get_width() if horizontal else b.get_height()) for b in fig.axes[0].patches]


def ticks(fig, axis: str = "y") -> list[str]:
    labels = fig.axes[0].get_yticklabels() if axis == "y" else fig.axes[0].get_xticklabels()
    return [t.get_text() for t in labels]


def test_metric_share_shows_the_largest_call_paths_in_percent():
    report = cubescale.open(shared("bt-mz.B.8x4.cubex"))
    exclusive = np.asarray(report.values("time", inclusive=False)).sum(axis=1)
    total = np.asarray(report.values("time", inclusive=True))[0].sum()
    largest = np.argsort(-exclusive, kind="stable")[:5]
    fig = plots.metric_share(report, "time", n=5)
    np.testing.assert_allclose(bars(fig, True)[::-1], 100 * exclusive[largest] / total, rtol=1e-12)
    paths = call_paths(report)
    shown = [t.replace("\\$", "$").lstrip("…") for t in ticks(fig)[::-1]]  # "$" escaped from mathtext
    assert shown == [paths[c][-len(t):] for c, t in zip(largest, shown)]
    assert any("!$omp do" in t for t in shown)
    assert bars(fig, True)[-1] == max(bars(fig, True))  # the largest on top


def test_distribution_over_processes():
    report = cubescale.open(shared("bt-mz.B.8x4.cubex"))
    root = np.asarray(report.values("time", inclusive=True))[0]
    ranks = np.array([loc.process_rank for loc in report.locations])
    per_process = [root[ranks == r].sum() for r in range(8)]
    fig = plots.distribution(report, "time")
    np.testing.assert_allclose(bars(fig, False), per_process, rtol=1e-12)
    assert ticks(fig, "x") == [f"MPI Rank {r}" for r in range(8)]
    mean_line = fig.axes[0].lines[0].get_ydata()[0]
    assert mean_line == pytest.approx(np.mean(per_process))


def test_diff_by_call_path_of_two_runs():
    a, b = cubescale.open(shared("bt-mz.B.8x4.cubex")), cubescale.open(shared("bt-mz.p2x4.bad_checksums.cubex"))
    d = cubescale.diff(a, b)
    change = np.asarray(d.values("time", inclusive=False)).sum(axis=1)
    largest = np.argsort(-np.abs(change), kind="stable")[:6]
    fig = plots.diff_by_call_path(a, b, "time", n=6)
    np.testing.assert_allclose(bars(fig, True)[::-1], change[largest], rtol=1e-12, atol=1e-12)
    colors = [tuple(p.get_facecolor()) for p in fig.axes[0].patches][::-1]
    assert all((c[0] > c[1]) == (v > 0) for c, v in zip(colors, change[largest]))  # red up, green down
    assert "bt-mz.B.8x4.cubex − bt-mz.p2x4.bad_checksums.cubex" in fig.axes[0].get_xlabel()


def test_topology_heatmap_of_the_process_x_thread_grid():
    report = cubescale.open(shared("bt-mz.p2x4.bad_checksums.cubex"))
    root = np.asarray(report.values("time", inclusive=True))[0]
    grid = np.zeros((2, 4))
    for loc in report.locations:  # Score-P's grid: process rank x thread rank
        grid[loc.process_rank, loc.rank] = root[loc.index]
    fig = plots.topology_heatmap(report, "time")
    np.testing.assert_allclose(np.asarray(fig.axes[0].images[0].get_array()), grid, rtol=1e-12)
    assert fig.axes[0].get_ylabel() == "Process" and fig.axes[0].get_xlabel() == "Thread"
    with pytest.raises(ValueError, match="no Cartesian topology"):
        plots.topology_heatmap(cubescale.open(shared("bt-mz.B.8x4.cubex")))


def test_pop_efficiencies_bars_and_the_pop_plot_option(tmp_path, capsys):
    report = cubescale.open(shared("bt-mz.B.8x4.cubex"))
    run = pop_metrics(report)[0]
    fig = plots.pop_efficiencies([run])
    expected = [v for v in run.efficiencies().values() if v is not None]
    np.testing.assert_allclose(bars(fig, False), [100 * v for v in expected], rtol=1e-12)
    out = tmp_path / "pop.png"
    assert main(["pop", str(shared("bt-mz.B.8x4.cubex")), "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG and f"plot: {out}" in capsys.readouterr().out
    assert main(["pop", str(shared("bt-mz.B.8x4.cubex")), "--plot", str(tmp_path / "pop.unknown")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "unknown" in captured.err
    assert not (tmp_path / "pop.unknown").exists() and len(list(tmp_path.iterdir())) == 1  # no temporary left


def test_diff_plot_option_and_its_errors(tmp_path, capsys):
    a, b = str(shared("bt-mz.B.8x4.cubex")), str(shared("bt-mz.p2x4.bad_checksums.cubex"))
    report, picture = tmp_path / "d.cubex", tmp_path / "d.svg"
    assert main(["diff", a, b, "-o", str(report), "--plot", str(picture), "--metric", "visits"]) == 0
    assert report.exists() and picture.read_text().lstrip().startswith("<?xml")
    capsys.readouterr()
    assert main(["diff", a, b, "-o", str(tmp_path / "e.cubex"), "--plot", a]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing was written" in err and not (tmp_path / "e.cubex").exists()
