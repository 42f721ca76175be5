"""The command line speaks Cube's language (issue #25 section 2): ``top`` answers which call
path on which process, ``dump`` names call paths and locations, ``info`` lists processes and
threads, ``call_tree_text`` shows percentages, sorts and hides all-zero subtrees,
``to_dataframe`` carries names. Every number is checked against the report's own arrays."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from conftest import SHARED_DATA

import cubescale
from cubescale.cli import main
from cubescale.views import format_value

CUBEX = SHARED_DATA / "cubex"


def expected_paths(r: cubescale.Report) -> list[str]:
    """Call paths from the parent array and the region of each cnode, without the views."""
    parents = r.cnode_parents.tolist()
    names = [r.regions[k].name for k in r._core.cnode_regions().tolist()]
    paths: list[str] = []
    for c, p in enumerate(parents):
        paths.append(names[c] if p < 0 else paths[p] + "/" + names[c])
    return paths


def per_process(r: cubescale.Report, values: np.ndarray) -> tuple[np.ndarray, list[str], list[np.ndarray]]:
    """values [cnode, location] summed per process (location group), in order of appearance."""
    names = list(dict.fromkeys(loc.process for loc in r.locations))
    columns = [np.array([loc.index for loc in r.locations if loc.process == n]) for n in names]
    return np.stack([values[:, c].sum(axis=1) for c in columns], axis=1), names, columns


@pytest.mark.parametrize("name,metric,inclusive", [("bt-mz.B.8x4.cubex", "time", False),
                                                    ("time.p4.cubex", "time", True),
                                                    ("bt-mz.B.8x4.cubex", "visits", False)])
def test_top_is_the_largest_call_path_and_process(name, metric, inclusive):
    r = cubescale.open(CUBEX / name)
    values = np.asarray(r.values(metric, inclusive=inclusive), dtype=np.float64)
    sums, processes, columns = per_process(r, values)
    entries = cubescale.views.top(r, metric, n=10, inclusive=inclusive)
    assert len(entries) == 10
    want = np.sort(sums.reshape(-1))[::-1][:10]
    np.testing.assert_allclose([e["value"] for e in entries], want, rtol=1e-12)
    total = values.sum() if not inclusive else np.asarray(r.values(metric, inclusive=False), dtype=np.float64).sum()
    paths = expected_paths(r)
    for e in entries:
        p = processes.index(e["process"])
        assert e["value"] == pytest.approx(sums[e["cnode"], p], rel=1e-12)
        assert e["percent"] == pytest.approx(100.0 * e["value"] / total, rel=1e-9)
        assert e["call_path"] == paths[e["cnode"]]
        row = values[e["cnode"], columns[p]]
        assert e["thread"] == r.locations[int(columns[p][np.argmax(row)])].name


@pytest.mark.parametrize("name,metric", [("bt-mz.B.8x4.cubex", "visits"), ("blast.p64.cubex", "time")])
def test_top_chosen_a_block_at_a_time_is_the_whole_ranking(name, metric, monkeypatch):
    """top looks at a block of values at a time (no copy of a huge matrix); with blocks of 7
    values its answer is the whole ranking's first 50, ties (bt-mz's visits repeat) in
    (call path, process) order."""
    r = cubescale.open(CUBEX / name)
    sums, processes, _ = per_process(r, np.asarray(r.values(metric, inclusive=False), dtype=np.float64))
    flat = sums.reshape(-1)
    order = np.lexsort((np.arange(flat.size), -flat))[:50]
    want = [(int(k) // len(processes), processes[int(k) % len(processes)]) for k in order]
    monkeypatch.setattr(cubescale.views, "_LARGEST_BLOCK", 7)
    entries = cubescale.views.top(r, metric, n=50)
    assert [(e["cnode"], e["process"]) for e in entries] == want
    np.testing.assert_allclose([e["value"] for e in entries], flat[order], rtol=1e-12)


def test_top_command_prints_the_same(capsys):
    path = CUBEX / "bt-mz.B.8x4.cubex"
    assert main(["top", str(path), "-m", "time", "-n", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    r = cubescale.open(path)
    entries = cubescale.views.top(r, "time", n=3)
    assert lines[0] == f"time (sec, exclusive) of {format_value(r.values('time', inclusive=False).sum())} sec in all: " \
                       "the 3 largest (call path, process)"
    assert len(lines) == 2 + 3
    for line, e in zip(lines[2:], entries):
        value, percent, *rest = line.split()
        assert float(value) == pytest.approx(e["value"], rel=1e-5)
        assert percent == f"{e['percent']:.1f}%"
        assert line.endswith(e["call_path"]) and e["process"] in line and e["thread"] in line


def test_dump_names_call_paths_processes_and_threads(capsys):
    path = CUBEX / "bt-mz.B.8x4.cubex"
    assert main(["dump", str(path), "-m", "time"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    r = cubescale.open(path)
    paths = expected_paths(r)
    time = r.values("time", inclusive=False)
    assert len(rows) == r.shape[0] * r.shape[1]
    for row in rows:
        c, loc = int(row["cnode"]), int(row["location"])
        location = r.locations[loc]
        assert row["call_path"] == paths[c]
        assert row["region"] == paths[c].split("/")[-1]
        assert (row["process"], int(row["process_rank"])) == (location.process, location.process_rank)
        assert (row["thread"], int(row["thread_rank"])) == (location.name, location.rank)
        assert float(row["time"]) == time[c, loc]
    # 8 processes x 4 threads, named as Score-P names them
    assert {(row["process"], row["thread"]) for row in rows} == {
        (f"MPI Rank {p}", "Master thread" if t == 0 else f"OMP thread {t}") for p in range(8) for t in range(4)}


def test_info_lists_processes_and_threads(capsys):
    path = CUBEX / "bt-mz.B.8x4.cubex"
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "processes: 8, 4 locations each (threads)" in out  # (no GPU streams in this run)
    for p in range(8):
        assert f"  rank {p}: MPI Rank {p}: Master thread, OMP thread 1, OMP thread 2, OMP thread 3\n" in out
    assert main(["info", str(CUBEX / "blast.p64.cubex")]) == 0
    out = capsys.readouterr().out
    assert "processes: 64, 1 location each" in out and "  ... 56 more processes (--verbose lists them)" in out
    assert main(["info", str(CUBEX / "blast.p64.cubex"), "--verbose"]) == 0
    assert "  rank 63: MPI Rank 63: Master thread\n" in capsys.readouterr().out


def parse_tree(text: str) -> list[tuple[int, str, str, str]]:
    """(depth, value, percent, region) per line below the header."""
    rows = []
    for line in text.splitlines()[1:]:
        depth = (len(line) - len(line.lstrip(" "))) // 2
        value, percent, region = line.strip().split(None, 2)
        rows.append((depth, value, percent, region))
    return rows


@pytest.mark.parametrize("metric,inclusive", [("time", False), ("time", True), ("visits", False),
                                              ("bytes_sent", True), ("bytes_sent", False)])
def test_call_tree_text_percent_sort_and_hidden_zeros(metric, inclusive):
    r = cubescale.open(CUBEX / "bt-mz.B.8x4.cubex")
    text = r.call_tree_text(metric, inclusive=inclusive, max_lines=10_000, percent=True, sort=True, hide_zero=True)
    exclusive = np.asarray(r.values(metric, inclusive=False), dtype=np.float64).sum(axis=1)
    shown_values = np.asarray(r.values(metric, inclusive=inclusive), dtype=np.float64).sum(axis=1)
    total = exclusive.sum()
    children: list[list[int]] = [[] for _ in exclusive]
    parents = r.cnode_parents.tolist()
    for c, p in enumerate(parents):
        if p >= 0:
            children[p].append(c)
    nonzero = exclusive != 0
    for c in range(len(parents) - 1, -1, -1):
        if nonzero[c] and parents[c] >= 0:
            nonzero[parents[c]] = True
    want = []

    def walk(c: int, depth: int) -> None:
        if not nonzero[c]:
            return
        want.append((depth, c))
        for k in sorted(children[c], key=lambda k: -shown_values[k]):
            walk(k, depth + 1)

    for root in sorted((c for c, p in enumerate(parents) if p < 0), key=lambda k: -shown_values[k]):
        walk(root, 0)
    got = parse_tree(text)
    assert text.splitlines()[0].endswith(f", % of {format_value(total)}")
    assert len(got) == len(want)
    if metric == "bytes_sent":  # only MPI calls send: most subtrees are all zero
        assert len(want) == 9 < len(parents)
    names = expected_paths(r)
    for (depth, value, percent, region), (want_depth, c) in zip(got, want):
        assert (depth, region) == (want_depth, names[c].split("/")[-1])
        assert float(value) == pytest.approx(shown_values[c], rel=1e-5, abs=1e-12)
        assert percent == f"{100 * shown_values[c] / total:.1f}%"


def test_call_tree_text_shows_rounding_negatives_as_zero():
    r = cubescale.open(CUBEX / "call_tree_test.cubex")
    inclusive = r.values("time", inclusive=True).copy()  # stored inclusive: a root with one child, main
    inclusive[0, 0] = np.nextafter(inclusive[1, 0], -np.inf)  # the root's own time: -1 ulp
    r.set_values("time", inclusive)
    assert r.cnode_values("time", inclusive=False)[0] < 0  # what the text must not show
    first = r.call_tree_text("time", inclusive=False, max_depth=0).splitlines()[1]
    assert first == "0  test.x"


def test_to_dataframe_carries_names():
    pytest.importorskip("pandas")
    r = cubescale.open(CUBEX / "time.p4.cubex")  # cnode ids are not in preorder here
    df = r.to_dataframe(["visits", "time"], inclusive=False)
    cnodes, locations = r.shape
    paths = expected_paths(r)
    assert list(df.columns) == ["region", "call_path", "process", "thread", "visits", "time"]
    assert df["call_path"].astype(str).tolist() == [paths[c] for c in range(cnodes) for _ in range(locations)]
    assert df["region"].astype(str).tolist() == [paths[c].split("/")[-1] for c in range(cnodes) for _ in range(locations)]
    assert df["process"].astype(str).tolist() == [loc.process for _ in range(cnodes) for loc in r.locations]
    assert df["thread"].astype(str).tolist() == [loc.name for _ in range(cnodes) for loc in r.locations]
    np.testing.assert_array_equal(df["time"].to_numpy(), r.values("time", inclusive=False).reshape(-1))
    by_path = df.groupby("call_path", observed=True)["visits"].sum()
    assert by_path[paths[0]] == r.values("visits", inclusive=False)[0].sum()
    assert list(r.to_dataframe(["visits"], names=False).columns) == ["visits"]
