"""The viewer's server (`cubescale view`, issue #29) as a real subprocess: the token, hostile
queries (each a 4xx JSON answer, the server stays up), concurrent clients answered correctly
against Report.panes, a report changed under the server, Ctrl-C."""

from __future__ import annotations

import doctest
import importlib
import os
import shutil
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import cubescale

pytest.importorskip("aiohttp")

from viewer_process import running_viewer  # noqa: E402

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..",
                                                                           "shared", "data")), "cubex")
SCOREP = os.path.join(DATA, "bt-mz.B.8x4.cubex")
SCALASCA = os.path.join(DATA, "bt-mz.B.8x4.remapped.cubex")


@pytest.fixture(scope="module")
def viewer():
    with running_viewer(SCALASCA) as v:
        yield v


def test_docstring_examples():
    for name in ("cubescale.viewer", "cubescale.viewer.model", "cubescale.viewer.server", "cubescale.viewer.notebook",
                 "cubescale.commands.view"):
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, name


def test_token_is_required(viewer):
    assert viewer.get("/api/report", token=None)[0] == 403
    assert viewer.get("/", token=None)[0] == 403
    status, body = viewer.get("/api/report", token="x" * 43)
    assert status == 403 and "token" in body["error"]
    assert viewer.get("/static/viewer.js", token=None)[0] == 200  # the page's files hold no data
    cookie = f"cubescale_token_{viewer.base.rsplit(':', 1)[1]}={viewer.token}"
    assert viewer.get("/api/report", token=None, cookie=cookie)[0] == 200
    assert viewer.get("/api/report", token=None, cookie=f"{cookie}x")[0] == 403


HOSTILE = [
    ("/api/calltree?metric=999&parent=-1", 400),
    ("/api/calltree?metric=-1&parent=-1", 400),
    ("/api/calltree?metric=abc&parent=-1", 400),
    ("/api/calltree?metric=1e3&parent=-1", 400),
    ("/api/calltree?metric=0x1&parent=-1", 400),
    ("/api/calltree?metric=%200&parent=-1", 400),
    ("/api/calltree?metric=" + "9" * 400 + "&parent=-1", 400),
    ("/api/calltree?metric=0", 400),                                     # no parent
    ("/api/calltree?metric=0&parent=1000000", 400),
    ("/api/calltree?metric=0&parent=-1&limit=100000000", 400),           # huge range
    ("/api/calltree?metric=0&parent=-1&offset=-5", 400),
    ("/api/calltree?metric=0&parent=-1&metric_expanded=2", 400),
    ("/api/system?metric=0&cnode=99999&parent=-1", 400),
    ("/api/system?metric=0&cnode=0&parent=4294967296", 400),
    ("/api/system?metric=0&cnode=0&parent=0&limit=0", 400),
    ("/api/cnode?cnode=-1", 400),
    ("/api/distribution?metric=0&cnode=0&bins=100000", 400),
    ("/api/distribution?metric=0&cnode=0&bins=0", 400),
    ("/api/search?q=", 400),
    ("/api/search?q=" + "a" * 201, 400),
    ("/api/search?q=solve&limit=5000", 400),
    ("/api/topology?topology=0&metric=0&cnode=0", 404),                  # this report has none
    ("/api/cnode", 400),
    ("/api/nothing", 404),
    ("/static/..%2fserver.py", 404),
    ("/static/%2e%2e%2f%2e%2e%2fetc%2fpasswd", 404),
    ("/static/../../../../etc/passwd", 404),
    ("/../../etc/passwd", 404),
    ("/static/", 404),
    ("/static/model.py", 404),
]


@pytest.mark.parametrize("path,status", HOSTILE)
def test_hostile_query_gets_4xx_json(viewer, path, status):
    got, body = viewer.get(path)
    assert got == status, (path, body)
    assert isinstance(body, dict) and body["error"], path
    assert viewer.process.poll() is None


def test_other_methods_are_refused_with_json(viewer):
    import json
    import urllib.error
    import urllib.request

    for method in ("POST", "PUT", "DELETE"):
        request = urllib.request.Request(f"{viewer.base}/api/report?token={viewer.token}", data=b"x" * 100,
                                         method=method)
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(request, timeout=10)
        assert e.value.code == 405 and json.loads(e.value.read())["status"] == 405
    assert viewer.get("/api/report")[0] == 200


def test_server_stays_up_after_hostile_queries(viewer):
    for path, _ in HOSTILE:
        viewer.get(path)
    status, _ = viewer.get("/api/calltree?metric=0&parent=-1&" + "x=1&" * 4000)  # a 16 kB query line
    assert 400 <= status < 500
    assert viewer.get("/api/report")[0] == 200 and viewer.process.poll() is None


def _combine(metric):
    return {"MINDOUBLE": np.min, "MAXDOUBLE": np.max}.get(metric.dtype, np.sum)


def _locations_under(report, element):
    """The locations below a system-tree element, by walking parents (the test's own oracle)."""
    tree, out = report.system, []
    elements = report._core.location_elements().tolist()
    for location, e in enumerate(elements):
        while e is not None and e != element:
            e = tree.parent(e)
        if e == element:
            out.append(location)
    return np.array(out, dtype=int)


def test_concurrent_clients_are_answered_correctly(viewer):
    """8 clients x 25 queries (200 at once) over metrics, call paths and expansion states."""
    report = cubescale.open(SCALASCA)
    scalar = [m.index for m in report.metrics]
    rng = np.random.default_rng(29)
    queries = []
    for _ in range(200):
        m, expanded = int(rng.choice(scalar)), bool(rng.integers(2))
        c, c_expanded = int(rng.integers(report.shape[0])), bool(rng.integers(2))
        queries.append((m, expanded, c, c_expanded, bool(rng.integers(2))))
    errors: list[str] = []
    lock = threading.Lock()
    tree = report.system
    under = {e: _locations_under(report, e) for e in tree.children(0)}

    def client(chunk):
        for m, expanded, c, c_expanded, call in chunk:
            if call:
                status, body = viewer.get(f"/api/calltree?metric={m}&metric_expanded={int(expanded)}&parent={c}")
                p = report.panes(m, cnode=c, metric_expanded=expanded)
                want = [(i, p.call_inclusive[i], p.call_exclusive[i]) for i in report.cnodes[c].children]
                got = [(x["index"], x["inclusive"], x["exclusive"]) for x in body["children"]]
            else:
                status, body = viewer.get(f"/api/system?metric={m}&metric_expanded={int(expanded)}&cnode={c}"
                                          f"&cnode_expanded={int(c_expanded)}&parent=0&limit=1000")
                system = report.panes(m, cnode=c, metric_expanded=expanded, cnode_expanded=c_expanded).system
                combine = _combine(report.metrics[m])
                want = [(e, combine(system[under[e]]), 0.0) for e in tree.children(0)]
                got = [(e["index"], e["inclusive"], e["exclusive"]) for e in body["children"]]
                if not np.isclose(body["total"], combine(system), rtol=1e-12, atol=1e-9):
                    with lock:
                        errors.append(f"system total {m} {c}: {body['total']} != {combine(system)}")
            if status != 200 or len(got) != len(want) or not all(
                    g[0] == w[0] and np.isclose(g[1] or 0.0, w[1] or 0.0, rtol=1e-12, atol=1e-9)
                    and np.isclose(g[2] or 0.0, w[2] or 0.0, rtol=1e-12, atol=1e-9) for g, w in zip(got, want)):
                with lock:
                    errors.append(f"{'call' if call else 'system'} m={m} c={c}: {status} {body!r:.200}")

    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(client, [queries[i::8] for i in range(8)]))
    assert not errors, errors[:3]
    assert time.monotonic() - started < 60
    assert viewer.process.poll() is None


def test_system_pane_pages_and_matches_panes(viewer):
    """The machine > node > process > thread levels against Report.panes, paged."""
    report = cubescale.open(SCALASCA)
    m, c = report.metric("time").index, 3
    system = report.panes(m, cnode=c).system
    status, root = viewer.get(f"/api/system?metric={m}&cnode={c}&parent=-1")
    assert status == 200 and np.isclose(root["children"][0]["inclusive"], system.sum(), rtol=1e-12)
    # walk down to the threads of the first process, in pages of 1
    element = root["children"][0]
    while element["location"] is None:
        status, page = viewer.get(f"/api/system?metric={m}&cnode={c}&parent={element['index']}&limit=1&offset=0")
        assert status == 200 and len(page["children"]) == 1 and page["count"] >= 1
        element = page["children"][0]
    assert element["kind"] == "location"
    assert np.isclose(element["inclusive"], system[element["location"]], rtol=1e-12)
    assert np.isclose(element["exclusive"], system[element["location"]], rtol=1e-12)


def test_distribution_matches_panes(viewer):
    report = cubescale.open(SCALASCA)
    m, c = report.metric("time").index, 7
    system = report.panes(m, cnode=c, cnode_expanded=True).system
    status, d = viewer.get(f"/api/distribution?metric={m}&cnode={c}&cnode_expanded=1&bins=7")
    assert status == 200 and d["locations"] == report.shape[1] == 32
    assert (d["min"], d["max"]) == (system.min(), system.max()) and np.isclose(d["mean"], system.mean(), rtol=1e-12)
    assert d["counts"] == np.histogram(system, bins=7)[0].tolist()
    assert report.locations[d["max_at"]["location"]].name == d["max_at"]["name"]
    assert system[d["max_at"]["location"]] == system.max()


@pytest.mark.parametrize("name", ["blast.p64.cubex", "l2dcm.p128.cubex", "time.p4.cubex", "bt-mz.B.8x4.remapped.cubex"])
def test_collapsed_system_values_by_ranges_and_by_ancestors_agree(name):
    """The page path (each element's locations as one range, ufunc.reduceat) against the
    general path (np.bincount / ufunc.at over every location's ancestor) at every depth."""
    from cubescale.viewer.model import Explorer

    ex = Explorer(cubescale.open(os.path.join(DATA, name)))
    tree = ex.report.system
    for metric in {ex.report.metrics[0], ex.report.metric("time")} | {m for m in ex.report.metrics
                                                                    if m.dtype in ("MINDOUBLE", "MAXDOUBLE")}:
        _, key, padded = ex._selection({"metric": str(metric.index), "cnode": "0"})
        frontier, depth = [0], 0
        while frontier:
            assert ex._ranges_at(depth) is not None  # real reports: locations in system-tree order
            by_range = ex._page_collapsed(key, padded, metric.dtype, depth, frontier)
            general = ex._collapsed(key, padded[:-1], metric.dtype, depth)[frontier]
            general[~np.isfinite(general)] = np.nan  # no locations below: inf in the general path
            assert np.allclose(by_range, general, rtol=1e-12, equal_nan=True), (name, metric.name, depth)
            frontier = [c for e in frontier for c in tree.children(e)]
            depth += 1


def test_search_finds_call_paths_by_region_name(viewer):
    report = cubescale.open(SCALASCA)
    want = [c.index for c in report.cnodes if "solve" in c.region.name.lower()]
    status, found = viewer.get("/api/search?q=SOLVE&limit=1000")
    assert status == 200 and found["count"] == len(want) > 0
    assert [m["index"] for m in found["matches"]] == want
    first = found["matches"][0]
    assert first["path"][-1]["index"] == first["index"] and report.cnodes[first["path"][-2]["index"]].children
    status, found = viewer.get("/api/search?q=%3Cscript%3E")
    assert status == 200 and found["count"] == 0


def test_topology_matches_panes():
    """call_tree_test.cubex's Cartesian topology (Process x Thread, 1 x 1): the one cell is the
    selection's value at its location."""
    path = os.path.join(DATA, "call_tree_test.cubex")
    report = cubescale.open(path)
    with running_viewer(path) as v:
        status, summary = v.get("/api/report")
        assert summary["topologies"] == [{"name": "Process x Thread", "dims": [
            {"name": "Process", "size": 1, "periodic": False}, {"name": "Thread", "size": 1, "periodic": False}]}]
        for m in (report.metric("time"), report.metric("min_time")):
            for c, expanded in ((0, False), (3, True)):
                status, t = v.get(f"/api/topology?topology=0&metric={m.index}&cnode={c}&cnode_expanded={int(expanded)}")
                assert status == 200 and t["values"] == [report.panes(m, cnode=c, cnode_expanded=expanded).system[0]]
        assert v.get("/api/topology?topology=1&metric=0&cnode=0")[0] == 400


def test_every_data_type_answers_as_panes_does():
    """all_dtypes.cubex: integers, MIN/MAX, RATE, TAU_ATOMIC, HISTOGRAM, NDOUBLES, SCALE_FUNC, COMPLEX."""
    path = os.path.join(DATA, "all_dtypes.cubex")
    report = cubescale.open(path)
    with running_viewer(path) as v:
        for m in report.metrics:
            p = report.panes(m, cnode=0)
            status, body = v.get(f"/api/calltree?metric={m.index}&parent=-1")
            assert status == 200, (m.dtype, body)
            assert [x["inclusive"] for x in body["children"]] == [p.call_inclusive[c] for c in (0,)]
            status, body = v.get(f"/api/system?metric={m.index}&cnode=0&parent=-1")
            assert status == 200 and np.isclose(body["total"], _combine(m)(p.system), rtol=1e-12), m.dtype


def test_report_changed_or_removed_under_the_server(tmp_path):
    path = tmp_path / "copy.cubex"
    shutil.copyfile(os.path.join(DATA, "call_tree_test.cubex"), path)
    with running_viewer(str(path)) as v:
        assert v.get("/api/calltree?metric=0&parent=-1")[0] == 200
        with open(path, "ab") as f:
            f.write(b"\0" * 512)
        status, body = v.get("/api/calltree?metric=0&parent=-1")
        assert status == 409 and "changed" in body["error"]
        path.unlink()
        status, body = v.get("/api/report")
        assert status == 409 and "no longer be read" in body["error"]
        assert v.process.poll() is None


def test_bad_report_fails_at_start_with_a_message(tmp_path):
    bad = tmp_path / "bad.cubex"
    bad.write_bytes(b"not a tar file" * 100)
    from cubescale.cli import main

    assert main(["view", str(bad), "--no-browser"]) == 2
    assert main(["view", str(tmp_path / "missing.cubex"), "--no-browser"]) == 2


def test_ctrl_c_ends_cleanly():
    with running_viewer(os.path.join(DATA, "call_tree_test.cubex")) as v:
        v.process.send_signal(signal.SIGINT)
        assert v.process.wait(20) == 0
        assert "stopped" in v.process.stderr.read()


def test_sigterm_ends_cleanly_and_removes_the_redirect_folder(tmp_path):
    """``kill`` (SIGTERM, as a service manager or a test fixture stops it) ends the server as
    Ctrl-C does: exit 0, "stopped", and the private folder of the browser's redirect file gone
    (it stayed in /tmp on every SIGTERM before)."""
    record = tmp_path / "argv.txt"
    script = tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    script.chmod(0o700)
    with running_viewer(os.path.join(DATA, "call_tree_test.cubex"), browser=str(script)) as v:
        deadline = time.monotonic() + 20
        while not (record.exists() and record.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        folder = os.path.dirname(record.read_text().split()[0].removeprefix("file://"))
        assert os.path.isdir(folder)
        v.process.send_signal(signal.SIGTERM)
        assert v.process.wait(20) == 0
        assert "stopped" in v.process.stderr.read()
    assert not os.path.exists(folder)


def test_no_redirect_folder_without_a_browser():
    """``--no-browser`` makes no folder in the temporary directory at all."""
    import tempfile

    before = set(os.listdir(tempfile.gettempdir()))
    with running_viewer(os.path.join(DATA, "call_tree_test.cubex")) as v:
        assert v.get("/api/report")[0] == 200
        made = {name for name in set(os.listdir(tempfile.gettempdir())) - before
                if name.startswith("cubescale-view-")}
    assert made == set()


def _raw_get(viewer, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET sent with exactly these headers (Host included)."""
    import http.client

    host, port = viewer.base.split("//")[1].rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest("GET", path, skip_host=True)
        for key, value in headers.items():
            connection.putheader(key, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        connection.close()


def test_an_oversized_request_gets_json_and_one_quiet_log_line():
    """A request line or header over aiohttp's 8 KiB limit: a JSON 400 like every refusal, and
    on the user's terminal one short line, no traceback and never the token."""
    with running_viewer(os.path.join(DATA, "call_tree_test.cubex")) as v:
        host = {"Host": v.base.split("//")[1]}
        status, kind, body = _raw_get(v, f"/api/report?token={v.token}&x=" + "a" * 9000, host)
        assert status == 400 and kind.startswith("application/json") and v.token.encode() not in body
        status, kind, _ = _raw_get(v, "/api/report", {**host, "X-Big": "b" * 9000})
        assert status == 400 and kind.startswith("application/json")
        assert v.get("/api/report")[0] == 200
        v.process.send_signal(signal.SIGINT)
        v.process.wait(20)
        log = v.process.stderr.read()
    assert "Traceback" not in log and v.token not in log
    assert [line for line in log.splitlines() if "refused" in line] == [
        "cubescale view: refused a request line or header too long (400)"] * 2


def test_a_foreign_host_header_is_refused(viewer):
    """A page of another site rebound to 127.0.0.1 (DNS rebinding) names its own host: 403
    JSON even with the token; the loopback names of the server's port are answered."""
    port = viewer.base.rsplit(":", 1)[1]
    path = f"/api/report?token={viewer.token}"
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert _raw_get(viewer, path, {"Host": host})[0] == 200, host
    for host in (f"evil.example:{port}", "127.0.0.1:1", f"127.0.0.1.evil.example:{port}"):
        status, kind, body = _raw_get(viewer, path, {"Host": host})
        assert status == 403 and kind.startswith("application/json") and b"Host" in body, host


def test_an_experiment_directory_is_viewed_as_info_reads_it(tmp_path):
    """`cubescale view DIR` serves the profile.cubex of a Score-P experiment directory."""
    shutil.copyfile(os.path.join(DATA, "call_tree_test.cubex"), tmp_path / "profile.cubex")
    with running_viewer(str(tmp_path)) as v:
        status, body = v.get("/api/report")
        assert status == 200 and body["file"] == "profile.cubex"
