"""The viewer's page in a real browser (Debian's chromium driven by Playwright): click metric ->
call path -> process, expand and collapse, and check every number the page shows against
Report.panes for the same selection; a report removed under the server shows an error."""

from __future__ import annotations

import os
import re
import shutil
import signal

import numpy as np
import pytest

import cubescale

pytest.importorskip("aiohttp")
sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

from viewer_process import running_viewer, topology_cells, write_topology_report  # noqa: E402

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..",
                                                                           "shared", "data")), "cubex")
TIMEOUT = 15_000  # ms for any one element to appear


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 850})
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    yield p
    context.close()
    assert not errors, errors


def _open(page, url):
    """Opens the page and waits for its first panes and then the rest of the metric pane
    (metric values are fetched after the first paint)."""
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=TIMEOUT)
    page.wait_for_selector("body[data-metrics='1']", timeout=TIMEOUT)


def _search_and_select(page, text, index):
    """Finds `text` with the search box and clicks the hit of call path `index`: the call tree
    shows it selected."""
    page.fill("#search", text)
    page.press("#search", "Enter")
    page.locator(f"#search-results .hit[data-index='{index}']").click()
    page.wait_for_selector(f"#call-tree .row.selected[data-index='{index}']", timeout=TIMEOUT)


def _row(page, pane, index):
    return page.locator(f"#{pane}-tree .row[data-index='{index}']")


def _value(page, pane, index) -> float:
    row = _row(page, pane, index)
    row.wait_for(timeout=TIMEOUT)
    return float(row.get_attribute("data-value"))


def _shown(page, pane, index) -> str:
    return _row(page, pane, index).locator(".value").inner_text()


def _close(a, b):
    return bool(np.isclose(a, b, rtol=1e-12, atol=1e-9))


def _wait_value(page, pane, index, want):
    """Waits until the row shows ``want`` (the page fetches after a click) and returns it."""
    page.wait_for_function(
        "([sel, want]) => { const r = document.querySelector(sel);"
        " return r && Math.abs(Number(r.dataset.value) - want) <= 1e-9 + 1e-12 * Math.abs(want); }",
        arg=[f"#{pane}-tree .row[data-index='{index}']", float(want)], timeout=TIMEOUT)
    return _value(page, pane, index)


def _text_matches(text: str, value: float) -> bool:
    """The formatted text (1,234.567 / 1.234e+9) stands for the value to its shown precision."""
    number = float(text.replace(",", ""))
    return bool(np.isclose(number, value, rtol=2e-3, atol=1e-3 if abs(value) >= 1e-3 else 0))


def _expand_to_first_location(page):
    """Expands the system tree along its first children down to the first location."""
    element = 0
    while True:
        row = _row(page, "system", element)
        if row.get_attribute("data-location") is not None:
            return
        if row.get_attribute("data-state") == "collapsed":
            row.locator(".toggle").click()
            page.wait_for_selector(f"#system-tree .row[data-index='{element}'][data-state='expanded']",
                                   timeout=TIMEOUT)
        element = int(page.locator(f"#system-tree .row[data-index='{element}'] + .row").get_attribute("data-index"))


@pytest.mark.parametrize("name", ["bt-mz.B.8x4.cubex", "bt-mz.B.8x4.remapped.cubex"])
def test_click_metric_call_path_process_and_check_numbers(page, name):
    path = os.path.join(DATA, name)
    report = cubescale.open(path)
    time_metric = report.metric("time").index
    totals = report.metric_totals(inclusive=True)
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    with running_viewer(path) as v:
        _open(page, v.url)
        # metric pane: every root metric collapsed shows its stored total
        for m in report.metrics:
            if m.parent is None:
                assert _close(_value(page, "metric", m.index), totals[m.index]), m.name
                assert _text_matches(_shown(page, "metric", m.index), totals[m.index]), m.name
        # select time: the call tree shows it per call path, collapsed = inclusive
        _row(page, "metric", time_metric).click()
        p = report.panes(time_metric, cnode=root)
        assert _close(_wait_value(page, "call", root, p.call_inclusive[root]), p.call_inclusive[root])
        # expand the root call path: it shows its exclusive value, its children their inclusive ones
        _row(page, "call", root).locator(".toggle").click()
        child = max(report.cnodes[root].children, key=lambda c: p.call_inclusive[c])
        assert _close(_wait_value(page, "call", root, p.call_exclusive[root]), p.call_exclusive[root])
        for c in report.cnodes[root].children:
            assert _close(_value(page, "call", c), p.call_inclusive[c])
            assert _text_matches(_shown(page, "call", c), p.call_inclusive[c])
        # select the heaviest child: breadcrumb and region details follow, the system pane is conditioned
        _row(page, "call", child).click()
        page.wait_for_function("n => document.querySelectorAll('#breadcrumb a').length === n", arg=2,
                               timeout=TIMEOUT)
        names = page.locator("#breadcrumb a").all_inner_texts()
        assert names == [report.cnodes[root].region.name, report.cnodes[child].region.name]
        assert report.cnodes[child].region.name in page.locator("#region-details").inner_text()
        system = report.panes(time_metric, cnode=child).system
        assert _close(_wait_value(page, "system", 0, system.sum()), system.sum())
        # the distribution over all locations: min, mean, max
        page.wait_for_function("want => Math.abs(Number(document.getElementById('distribution').dataset.max)"
                               " - want) <= 1e-9", arg=float(system.max()), timeout=TIMEOUT)
        shown = page.locator("#distribution").evaluate("e => [e.dataset.min, e.dataset.mean, e.dataset.max]")
        assert np.allclose([float(x) for x in shown], [system.min(), system.mean(), system.max()], rtol=1e-12)
        # down to the threads: every shown process and thread against the pane's locations
        _expand_to_first_location(page)
        threads = page.locator("#system-tree .row[data-location]")
        assert threads.count() >= 1
        for i in range(threads.count()):
            loc = int(threads.nth(i).get_attribute("data-location"))
            assert _close(float(threads.nth(i).get_attribute("data-value")), system[loc])
        # expand the selected call path: the system pane shows it without its callees
        if report.cnodes[child].children:
            _row(page, "call", child).locator(".toggle").click()
            own = report.panes(time_metric, cnode=child, cnode_expanded=True).system
            loc = int(threads.first.get_attribute("data-location"))
            element = int(threads.first.get_attribute("data-index"))
            assert _close(_wait_value(page, "system", element, own[loc]), own[loc])
        # percent of root: the call tree's root collapsed is 100 %
        _row(page, "call", root).locator(".toggle").click()  # collapse again
        _wait_value(page, "call", root, p.call_inclusive[root])
        page.select_option("#mode", "root")
        assert _shown(page, "call", root) == "100.00 %"
        # percent of the selection: the selected call path is 100 %, the others relative to it
        page.select_option("#mode", "selection")
        chosen = p.call_exclusive[child] if report.cnodes[child].children else p.call_inclusive[child]
        assert _shown(page, "call", root) == f"{100 * p.call_inclusive[root] / chosen:.2f} %"
        _row(page, "call", root).locator(".toggle").click()  # open again: the selection is 100 %
        assert _row(page, "call", child).locator(".value").inner_text(timeout=TIMEOUT) == "100.00 %"
        page.select_option("#mode", "absolute")


EVERY_REPORT = sorted(f for f in os.listdir(DATA) if f.endswith(".cubex")) if os.path.isdir(DATA) else []


@pytest.mark.parametrize("name", EVERY_REPORT)
def test_every_shared_report_opens_with_its_panes(page, name):
    """Score-P, Scalasca remapped, CubeLib, ZCUBEX, big-endian, bad checksums, every data type:
    the page opens, shows no error, and its first panes are Report.panes' numbers."""
    path = os.path.join(DATA, name)
    report = cubescale.open(path)
    totals = report.metric_totals()
    with running_viewer(path) as v:
        _open(page, v.url)
        assert page.locator("#error").is_hidden()
        for m in report.metrics:
            if m.parent is None and np.isfinite(totals[m.index]):
                assert _close(_value(page, "metric", m.index), totals[m.index]), m.name
        selected = int(page.locator("#metric-tree .row.selected").get_attribute("data-index"))
        root = int(np.flatnonzero(report.cnode_parents < 0)[0])
        p = report.panes(selected, cnode=root)
        assert _close(_value(page, "call", root), p.call_inclusive[root])
        combine = {"MINDOUBLE": np.min, "MAXDOUBLE": np.max}.get(report.metrics[selected].dtype, np.sum)
        assert _close(_wait_value(page, "system", 0, combine(p.system)), combine(p.system))


def test_expanded_metric_conditions_the_call_tree(page):
    """Scalasca's time = execution + idle threads: expanded, time shows (and selects) the remainder."""
    path = os.path.join(DATA, "bt-mz.B.8x4.remapped.cubex")
    report = cubescale.open(path)
    time_metric = report.metric("time")
    assert time_metric.children
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    with running_viewer(path) as v:
        _open(page, v.url)
        _row(page, "metric", time_metric.index).click()
        stored = report.metric_totals(inclusive=True)[time_metric.index]
        assert _close(_value(page, "metric", time_metric.index), stored)
        _row(page, "metric", time_metric.index).locator(".toggle").click()
        p = report.panes(time_metric, cnode=root, metric_expanded=True)
        assert _close(_wait_value(page, "metric", time_metric.index, p.metric_exclusive[time_metric.index]),
                      report.metric_totals(inclusive=False)[time_metric.index])
        for c in time_metric.children:  # children collapsed: their stored totals (fetched once shown)
            want = report.metric_totals(inclusive=True)[c]
            assert _close(_wait_value(page, "metric", c, want), want)
        assert _close(_wait_value(page, "call", root, p.call_inclusive[root]), p.call_inclusive[root])
        # an expanded metric's remainder is rounding noise here: shown as 0, not -4e-14
        assert _shown(page, "call", root) == "0"
        # select the child "execution": the call tree follows it
        execution = report.metric("execution").index
        _row(page, "metric", execution).click()
        q = report.panes(execution, cnode=root)
        assert _close(_wait_value(page, "call", root, q.call_inclusive[root]), q.call_inclusive[root])
        assert report.metrics[execution].description.split()[0] in page.locator("#metric-details").inner_text()


def test_search_reveals_and_selects_a_call_path(page):
    path = os.path.join(DATA, "bt-mz.B.8x4.cubex")
    report = cubescale.open(path)
    target = next(c for c in report.cnodes if c.region.name == "z_solve_")
    with running_viewer(path) as v:
        _open(page, v.url)
        _search_and_select(page, "z_sol", target.index)
        page.wait_for_function("n => document.querySelectorAll('#breadcrumb a').length === n",
                               arg=len(page.locator(f"#search-results .hit[data-index='{target.index}']")
                                       .inner_text().split(" › ")), timeout=TIMEOUT)
        assert page.locator("#breadcrumb a").all_inner_texts()[-1] == "z_solve_"
        m = report.metric("time").index
        p = report.panes(m, cnode=target.index)
        assert _close(_value(page, "call", target.index), p.call_inclusive[target.index])
        assert _close(_wait_value(page, "system", 0, p.system.sum()), p.system.sum())


def test_notebook_iframe_on_another_origin(page):
    """show(): the explorer inline, as a notebook shows it: an iframe in a page of another
    origin (where the browser may withhold the server's cookie); stop() ends the server."""
    import urllib.error
    import urllib.request

    from cubescale.viewer.notebook import show

    path = os.path.join(DATA, "bt-mz.B.8x4.remapped.cubex")
    report = cubescale.open(path)
    running = show(report, height=600)
    try:
        page.set_content(f"<html><body><h1>notebook</h1>{running._repr_html_()}</body></html>")
        frame = page.frame_locator("iframe")
        frame.locator("body[data-ready='1']").wait_for(timeout=TIMEOUT)
        time_metric = report.metric("time").index
        row = frame.locator(f"#metric-tree .row[data-index='{time_metric}']")
        assert _close(float(row.get_attribute("data-value")), report.metric_totals()[time_metric])
        root = int(np.flatnonzero(report.cnode_parents < 0)[0])
        p = report.panes(time_metric, cnode=root)
        assert _close(float(frame.locator(f"#call-tree .row[data-index='{root}']").get_attribute("data-value")),
                      p.call_inclusive[root])
    finally:
        running.stop()
    assert not running.running
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(running.url, timeout=5)


def test_topology_view_paints_the_selection(page):
    path = os.path.join(DATA, "call_tree_test.cubex")
    with running_viewer(path) as v:
        _open(page, v.url)
        page.select_option("#system-view", "0")
        page.locator("#topology canvas").wait_for(timeout=TIMEOUT)
        assert page.locator("#system-tree").is_hidden()
        assert "Process x Thread" in page.locator("#topology .caption").inner_text()
        # one cell holding the whole value: painted as Cube's 100 % colour (red)
        pixel = page.locator("#topology canvas").evaluate("c => Array.from(c.getContext('2d').getImageData(1, 1, 1, 1).data)")
        assert pixel == [225, 30, 30, 255]
        page.select_option("#system-view", "tree")
        assert page.locator("#system-tree").is_visible() and page.locator("#topology").is_hidden()


def _cell_readouts(page, nx: int, ny: int, nz: int) -> tuple[list, list]:
    """Points at every cell of every slice of the shown topology: (the value the readout
    gives, the painted colour) per cell in C order (value None: an empty cell)."""
    cell = max(2, min(24, 280 // max(nx, ny)))  # as viewer.js sizes a cell
    values: list = [None] * (nx * ny * nz)
    colours: list = [None] * (nx * ny * nz)
    for z in range(nz):
        canvas = page.locator(f"#topology canvas[data-slice='{z}']")
        for x in range(nx):
            for y in range(ny):
                at = (x * ny + y) * nz + z
                canvas.hover(position={"x": x * cell + cell / 2, "y": y * cell + cell / 2})
                page.wait_for_function("c => document.querySelector('#topology .readout').dataset.cell === c",
                                       arg=str(at), timeout=TIMEOUT)
                text = page.locator("#topology .readout").get_attribute("data-value")
                values[at] = float(text) if text else None
                colours[at] = canvas.evaluate(f"c => Array.from(c.getContext('2d').getImageData("
                                              f"{x * cell + 1}, {y * cell + 1}, 1, 1).data)")
    return values, colours


def test_topology_3d_slices_and_older_coordinate_forms(page, tmp_path):
    """A 3-D Cartesian topology written by cubescale's writer: one canvas per slice of the
    third dimension; every cell's value (pointed at) and colour against Report.panes for the
    selected call path, collapsed and expanded; an empty cell is grey. The processes' grid by
    CUBE3's procId shows each process's sum over its threads."""
    path = str(tmp_path / "topology.cubex")
    report = write_topology_report(path)
    with running_viewer(path) as v:
        _open(page, v.url)
        for cnode, expanded in ((1, False), (0, True), (0, False)):
            if cnode == 1:
                _row(page, "call", 0).locator(".toggle").click()
                _row(page, "call", 1).click()
            elif expanded:
                _row(page, "call", 0).click()  # the open root: its exclusive value conditions
            else:
                _row(page, "call", 0).locator(".toggle").click()  # collapsed: its inclusive value
            page.wait_for_function("() => document.body.dataset.pending === '0'", timeout=TIMEOUT)
            for topology, shape in ((0, (3, 2, 2)), (1, (3, 2, 1))):
                # forget the last drawing, so that the wait below sees this selection's
                page.evaluate("() => { const b = document.getElementById('topology'); b.replaceChildren();"
                              " delete b.dataset.cells; }")
                page.select_option("#system-view", str(topology))
                page.wait_for_function(f"() => document.querySelectorAll('#topology canvas').length === {shape[2]}"
                                       f" && document.querySelector('#topology').dataset.cells === '{np.prod(shape)}'"
                                       " && document.body.dataset.pending === '0'", timeout=TIMEOUT)
                caption = page.locator("#topology .caption").inner_text()
                assert caption.startswith("Grid 3-D: x 3 × y 2 × z 2 (2 slices)" if topology == 0 else "Processes: a 3 × b 2")
                values, colours = _cell_readouts(page, *shape)
                want = topology_cells(report, topology, 0, cnode, expanded)
                assert [w is None for w in want] == [g is None for g in values]
                assert all(_close(g, w) for g, w in zip(values, want) if w is not None), (cnode, expanded, topology)
                top = max(abs(w) for w in want if w is not None)
                painted = page.evaluate("([vs, top]) => vs.map((v) => v === null ? 'rgb(245,245,245)' : colour(v, top, null))",
                                        [want, top])
                assert [f"rgb({c[0]},{c[1]},{c[2]})" for c in colours] == painted
                if (cnode, topology) == (1, 0):
                    _screenshot(page, "viewer_topology.png")
            page.select_option("#system-view", "tree")


def test_call_tree_filtered_by_name(page):
    """Find "MPI_" and filter the call tree by it: every row shown is a match or on a path to
    one, matches are marked, the paths leading to them open, every value is Report.panes';
    the filter's button shows the whole tree again."""
    path = os.path.join(DATA, "bt-mz.B.8x4.cubex")
    report = cubescale.open(path)
    m = report.metric("time").index
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    p = report.panes(m, cnode=root)
    match = {c.index for c in report.cnodes if "mpi_" in c.region.name.casefold()}
    keep = set()
    for c in match:
        walk = c
        while walk is not None and walk not in keep:
            keep.add(walk)
            walk = report.cnodes[walk].parent
    with running_viewer(path) as v:
        _open(page, v.url)
        page.fill("#search", "MPI_")
        page.press("#search", "Enter")
        page.locator("#search-results .filter-action").click()
        page.wait_for_selector("body[data-filtered='1'][data-pending='0']", timeout=TIMEOUT)
        assert page.locator("#call-filter").inner_text().startswith("filter: MPI_")
        rows = page.locator("#call-tree .row[data-index]")
        shown = [int(i) for i in rows.evaluate_all("rs => rs.map(r => r.dataset.index)")]
        assert shown and set(shown) <= keep and len(set(shown)) == len(shown)
        marked = {int(i) for i in page.locator("#call-tree .row.match").evaluate_all("rs => rs.map(r => r.dataset.index)")}
        assert marked == set(shown) & match and marked  # the opened paths lead to matches
        for c in shown:
            row = _row(page, "call", c)
            open_ = row.get_attribute("data-state") == "expanded"
            want = p.call_exclusive[c] if open_ else p.call_inclusive[c]
            assert _close(float(row.get_attribute("data-value")), want), c
            if open_:  # an open call path lists exactly its kept children
                kids = {k for k in report.cnodes[c].children if k in keep}
                assert {s for s in shown if report.cnodes[s].parent == c} == kids, c
        _screenshot(page, "viewer_filter.png")
        page.locator("#call-filter").click()
        page.wait_for_selector("body[data-filtered='0'][data-pending='0']", timeout=TIMEOUT)
        assert page.locator("#call-filter").is_hidden()
        assert page.locator("#call-tree .row.match").count() == 0
        assert _row(page, "call", root).is_visible()


def test_distribution_over_processes(page):
    """The distribution switched to processes: min / mean / max of the processes' sums over
    their threads (Report.panes grouped by process) for the selected call path."""
    path = os.path.join(DATA, "bt-mz.B.8x4.cubex")
    report = cubescale.open(path)
    m = report.metric("time").index
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    system = report.panes(m, cnode=root).system
    tree = report.system
    per: dict[int, float] = {}
    for e, v in zip(report._core.location_elements().tolist(), system.tolist()):
        group = tree.parent(int(e))
        per[group] = per.get(group, 0.0) + v
    values = np.array(list(per.values()))
    with running_viewer(path) as v:
        _open(page, v.url)
        page.select_option("#distribution-over", "processes")
        page.wait_for_selector("#distribution[data-over='processes']", timeout=TIMEOUT)
        page.wait_for_function("() => document.body.dataset.pending === '0'", timeout=TIMEOUT)
        shown = page.locator("#distribution").evaluate("e => [e.dataset.min, e.dataset.mean, e.dataset.max]")
        assert np.allclose([float(x) for x in shown], [values.min(), values.mean(), values.max()], rtol=1e-12)
        title = page.locator("#distribution h3").inner_text()
        assert title == f"Distribution over {len(per)} processes"
        _screenshot(page, "viewer_distribution.png")
        page.select_option("#distribution-over", "locations")
        page.wait_for_selector("#distribution[data-over='locations']", timeout=TIMEOUT)
        assert page.locator("#distribution h3").inner_text() == f"Distribution over {len(system)} locations"


def test_peer_modes_of_the_system_tree(page):
    """Cube's peer modes (Scalasca's quick reference): each location shown in percent of the
    largest location value, or of the span from the smallest non-zero one to the largest,
    against Report.panes; machine, node and process rows show "–"."""
    path = os.path.join(DATA, "bt-mz.B.8x4.cubex")
    report = cubescale.open(path)
    m = report.metric("time").index
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    system = report.panes(m, cnode=root).system
    top, low = system.max(), system[system != 0].min()
    with running_viewer(path) as v:
        _open(page, v.url)
        _expand_to_first_location(page)
        page.wait_for_function("() => document.body.dataset.pending === '0'", timeout=TIMEOUT)
        for mode, want in (("percent", 100 * system / top), ("distribution", 100 * (system - low) / (top - low))):
            page.select_option("#peer-mode", mode)
            rows = page.locator("#system-tree .row[data-index]")
            checked = 0
            for i in range(rows.count()):
                r = rows.nth(i)
                location = r.get_attribute("data-location")
                text = r.locator(".value").inner_text()
                if location is None:
                    assert text == "–" and r.get_attribute("data-peer") == ""
                    continue
                assert _close(float(r.get_attribute("data-peer")), want[int(location)]), (mode, location)
                assert text == f"{want[int(location)]:.2f} %"
                checked += 1
            assert checked >= 2
        page.select_option("#peer-mode", "")
        first = page.locator("#system-tree .row[data-location]").first
        assert _close(float(first.get_attribute("data-value")), system[int(first.get_attribute("data-location"))])


def test_find_reveals_a_call_path_beyond_the_first_pages(page, tmp_path):
    """A call path with 2,500 children: finding the last one opens its parent, loads the pages
    up to it (1000 children each), selects it and shows its value (Report.panes)."""
    from cubescale.systree import SingleNodeTree

    tree = SingleNodeTree()
    process = tree.add(tree.add_root("machine", "m"), "process", "rank 0")
    tree.add(process, "thread", "thread 0")
    b = cubescale.ReportBuilder(tree)
    b.add_metric("time", unit="sec")
    main = b.add_cnode(b.add_region("main"))
    for i in range(2500):
        b.add_cnode(b.add_region(f"leaf_{i:04d}"), parent=main)
    report = b.build()
    report.set_values("time", np.arange(1, report.shape[0] + 1, dtype=float)[:, None])
    path = str(tmp_path / "wide.cubex")
    cubescale.write(report, path)
    report = cubescale.open(path)
    target = next(c.index for c in report.cnodes if c.region.name == "leaf_2499")
    with running_viewer(path) as v:
        _open(page, v.url)
        _search_and_select(page, "leaf_2499", target)
        p = report.panes(0, cnode=target)
        assert _close(_value(page, "call", target), p.call_inclusive[target])
        assert page.locator("#breadcrumb a").all_inner_texts() == ["main", "leaf_2499"]


def test_report_removed_under_the_server_shows_an_error(page, tmp_path):
    path = tmp_path / "copy.cubex"
    shutil.copyfile(os.path.join(DATA, "call_tree_test.cubex"), path)
    with running_viewer(str(path)) as v:
        _open(page, v.url)
        path.unlink()
        _row(page, "metric", 0).click()
        error = page.locator("#error")
        error.wait_for(state="visible", timeout=TIMEOUT)
        assert re.search("no longer be read", error.inner_text())
        assert v.process.poll() is None


def test_wrong_token_is_refused_in_the_browser(page):
    with running_viewer(os.path.join(DATA, "call_tree_test.cubex")) as v:
        response = page.goto(f"{v.base}/?token=wrong")
        assert response.status == 403
        assert "token" in page.inner_text("body")


IMAGES = os.path.join(os.path.dirname(__file__), "..", "docs", "images")


def _screenshot(page, name):
    """A screenshot for docs/ when CUBESCALE_SCREENSHOTS is set (the docs' images come from here)."""
    if os.environ.get("CUBESCALE_SCREENSHOTS"):
        page.screenshot(path=os.path.join(IMAGES, name))


def test_flat_profile_in_the_browser(page):
    """The call pane as a flat region profile: every shown number is Cube's flat view (from
    Report.panes and a walk up the call paths); a region conditions the system pane."""
    from test_viewer_views import _flat_reference

    path = os.path.join(DATA, "bt-mz.B.8x4.cubex")
    report = cubescale.open(path)
    m = report.metric("time").index
    own, whole = _flat_reference(report, m, False)
    with running_viewer(path) as v:
        _open(page, v.url)
        page.select_option("#call-view", "flat")
        rows = page.locator("#flat-tree .row[data-kind='flat']")
        rows.first.wait_for(timeout=TIMEOUT)
        assert page.locator("#call-tree").is_hidden()
        shown = [(int(rows.nth(i).get_attribute("data-index")), float(rows.nth(i).get_attribute("data-value")))
                 for i in range(rows.count())]
        assert len(shown) == len(own)
        for region, value in shown:  # collapsed: inclusive over the call paths without a recursive caller
            assert _close(value, whole[region]), report.regions[region].name
        # sorted by the shown (collapsed) value, largest first
        assert [r for r, _ in shown] == sorted(whole, key=lambda r: -whole[r])[:len(shown)]
        solve = next(r for r, _ in shown if report.regions[r].name == "z_solve_")
        calls = [c.index for c in report.cnodes if c.region.index == solve]
        _row(page, "flat", solve).click()
        want = sum(report.panes(m, cnode=c).system for c in calls)
        assert _close(_wait_value(page, "system", 0, want.sum()), want.sum())
        assert "z_solve_" in page.locator("#region-details").inner_text()
        # expanded: the region's exclusive value, and the system pane without the callees
        _row(page, "flat", solve).locator(".toggle").click()
        assert _close(_wait_value(page, "flat", solve, own[solve]), own[solve])
        mine = sum(report.panes(m, cnode=c, cnode_expanded=True).system for c in calls)
        assert _close(_wait_value(page, "system", 0, mine.sum()), mine.sum())
        page.wait_for_function("want => Math.abs(Number(document.getElementById('distribution').dataset.max)"
                               " - want) <= 1e-9", arg=float(mine.max()), timeout=TIMEOUT)
        _row(page, "system", 0).locator(".toggle").click()  # the machine's nodes, for the picture
        page.wait_for_selector("#system-tree .row[data-index='0'][data-state='expanded']", timeout=TIMEOUT)
        _screenshot(page, "viewer_flat.png")
        page.select_option("#call-view", "tree")
        _row(page, "call", int(np.flatnonzero(report.cnode_parents < 0)[0])).wait_for(timeout=TIMEOUT)


def test_sequence_view_in_the_browser(page):
    """The machine in sequence form on blast.p64 (machine > rack > midplane > nodeboard >
    nodecard > process > thread): each record shows the selection's sum over its instances and
    min / mean / max per instance (against Report.location_values); a record opens into its
    sub-records and instances."""
    path = os.path.join(DATA, "blast.p64.cubex")
    report = cubescale.open(path)
    m = report.metric("time")
    root = int(np.flatnonzero(report.cnode_parents < 0)[0])
    total = report.panes(m, cnode=root).system.sum()
    with running_viewer(path) as v:
        _open(page, v.url)
        page.select_option("#system-view", "sequence")
        machine = page.locator("#sequence .row[data-kind='record'][data-index='0']")
        machine.wait_for(timeout=TIMEOUT)
        assert page.locator("#system-tree").is_hidden()
        assert _close(float(machine.get_attribute("data-value")), total)
        # open records down to the processes: one record per level on this regular machine
        record, depth = 0, 0
        while True:
            row = page.locator(f"#sequence .row[data-kind='record'][data-index='{record}']")
            name = row.locator(".name").inner_text()
            values, _ = report.location_values(m, depth)
            per_instance = values[root]
            assert _close(float(row.get_attribute("data-min")), per_instance.min()), name
            assert _close(float(row.get_attribute("data-max")), per_instance.max()), name
            assert _close(float(row.get_attribute("data-mean")), per_instance.mean()), name
            assert _close(float(row.get_attribute("data-value")), per_instance.sum()), name
            if name.startswith("process"):
                break
            row.locator(".toggle").click()
            following = page.locator(f"#sequence .row[data-kind='record'][data-index='{record}'][data-state='expanded']"
                                     " + .row[data-kind='record']")
            following.wait_for(timeout=TIMEOUT)
            record, depth = int(following.get_attribute("data-index")), depth + 1
        assert "×" in name
        row.locator(".toggle").click()  # the processes' instances, each with its value
        page.wait_for_selector(f"#sequence .row[data-kind='record'][data-index='{record}'][data-state='expanded']",
                               timeout=TIMEOUT)
        values, names = report.location_values(m, depth)
        instances = page.locator("#sequence .row.instance").filter(has_text="MPI Rank")
        assert instances.count() >= min(50, len(names))
        for i in range(min(5, instances.count())):
            assert instances.nth(i).locator(".name").inner_text() == names[i]
            assert _close(float(instances.nth(i).get_attribute("data-value")), values[root][i])
        _screenshot(page, "viewer_sequence.png")
        # another call path: the records follow the selection
        child = report.cnodes[root].children[0]
        page.select_option("#system-view", "tree")
        _row(page, "call", root).locator(".toggle").click()
        _row(page, "call", child).click()
        page.select_option("#system-view", "sequence")
        want = report.panes(m, cnode=child).system.sum()
        page.wait_for_function("want => { const r = document.querySelector(\"#sequence .row[data-kind='record']"
                               "[data-index='0']\"); return r && Math.abs(Number(r.dataset.value) - want)"
                               " <= 1e-9 + 1e-12 * Math.abs(want); }", arg=float(want), timeout=TIMEOUT)


def test_report_view_in_a_notebook_cell(page):
    """``report.view()`` as a notebook cell's result: IPython's display formatter gives the
    iframe (what JupyterLab and the classic notebook render), the server behind it answers,
    and the framed page shows Report.panes' numbers."""
    import urllib.request

    from IPython.core.formatters import DisplayFormatter

    path = os.path.join(DATA, "bt-mz.B.8x4.cubex")
    namespace: dict = {}
    exec(compile(f"import cubescale\nreport = cubescale.open({path!r})\nrunning = report.view(height=500)",
                 "cell", "exec"), namespace)
    running, report = namespace["running"], namespace["report"]
    try:
        data, _ = DisplayFormatter().format(running)
        html = data["text/html"]
        assert html.startswith("<iframe") and 'height="500"' in html and running.url.replace("&", "&amp;") in html
        with urllib.request.urlopen(running.url.replace("/?", "/api/report?"), timeout=10) as response:
            assert response.status == 200 and b"bt-mz.B.8x4.cubex" in response.read()
        page.set_content(f"<html><body><h1>notebook</h1>{html}</body></html>")
        frame = page.frame_locator("iframe")
        frame.locator("body[data-ready='1']").wait_for(timeout=TIMEOUT)
        time_metric = report.metric("time").index
        root = int(np.flatnonzero(report.cnode_parents < 0)[0])
        p = report.panes(time_metric, cnode=root)
        assert _close(float(frame.locator(f"#call-tree .row[data-index='{root}']").get_attribute("data-value")),
                      p.call_inclusive[root])
        assert _close(float(frame.locator(f"#metric-tree .row[data-index='{time_metric}']").get_attribute("data-value")),
                      report.metric_totals()[time_metric])
    finally:
        running.stop()
    assert not running.running


# ---- review fixes: layout, percentages, numbers, distribution, browser launch, doc links

LONG_NAME = "std::vector<" * 12 + "very_long_templated_kernel_name_" * 4 + ">" * 12 + "::operator()(int)"


def _small_report(path: str, mirrors: str = "") -> cubescale.Report:
    """Two processes; main > LONG_NAME; time (sec), visits (a UINT64 count of 744343200 at main)
    and a metric documented at "@mirror@doc.html#time" with ``mirrors`` (a <doc> block)."""
    anchor = ('<?xml version="1.0" encoding="UTF-8"?>\n<cube version="4.4">\n' + mirrors +
              '<metrics>\n<metric id="0" type="EXCLUSIVE">\n<disp_name>Time</disp_name>\n<uniq_name>time</uniq_name>\n'
              '<dtype>DOUBLE</dtype>\n<uom>sec</uom>\n<url>@mirror@doc.html#time</url>\n<descr></descr>\n</metric>\n'
              '<metric id="1" type="EXCLUSIVE">\n<disp_name>Visits</disp_name>\n<uniq_name>visits</uniq_name>\n'
              '<dtype>UINT64</dtype>\n<uom>occ</uom>\n<url></url>\n<descr></descr>\n</metric>\n</metrics>\n<program>\n'
              '<region id="0" mod="a.c" begin="1" end="9">\n<name>main</name>\n</region>\n'
              f'<region id="1" mod="a.c" begin="10" end="19">\n<name>{html_escape(LONG_NAME)}</name>\n</region>\n'
              '<cnode id="0" calleeId="0">\n<cnode id="1" calleeId="1">\n</cnode>\n</cnode>\n</program>\n<system>\n'
              '<systemtreenode Id="0">\n<name>machine</name>\n<class>machine</class>\n'
              '<systemtreenode Id="1">\n<name>node0</name>\n<class>node</class>\n')
    for p in range(2):
        anchor += (f'<locationgroup Id="{p}">\n<name>rank {p}</name>\n<rank>{p}</rank>\n<type>process</type>\n'
                   f'<location Id="{p}">\n<name>thread 0</name>\n<rank>0</rank>\n<type>thread</type>\n</location>\n'
                   '</locationgroup>\n')
    anchor += "</systemtreenode>\n</systemtreenode>\n</system>\n</cube>\n"
    report = cubescale.Report.from_anchor_xml(anchor)
    report.set_values("time", np.array([[1.5, 2.25], [3.0, 4.125]]))
    report.set_values("visits", np.array([[372171600, 372171600], [1, 2]], dtype=np.uint64))
    cubescale.write(report, path)
    return cubescale.open(path)


def html_escape(text: str) -> str:
    import html

    return html.escape(text)


def test_a_long_region_name_is_cut_and_the_panes_stay_in_the_window(page, tmp_path):
    """A 300-character C++ name neither widens the call pane nor pushes the system pane out of
    the window: it is cut with an ellipsis, and the whole name is its title."""
    path = str(tmp_path / "long.cubex")
    _small_report(path)
    page.set_viewport_size({"width": 1500, "height": 850})
    with running_viewer(path) as v:
        _open(page, v.url)
        _row(page, "call", 0).locator(".toggle").click()
        name = _row(page, "call", 1).locator(".name")
        name.wait_for(timeout=TIMEOUT)
        pane = page.locator("#system-pane").bounding_box()
        assert pane["x"] + pane["width"] <= 1500 + 1, pane
        assert page.locator("#call-pane").bounding_box()["width"] < 700
        assert name.get_attribute("title") == LONG_NAME
        assert name.evaluate("e => e.scrollWidth > e.clientWidth")  # cut (text-overflow: ellipsis)


def test_percent_of_selection_compares_only_metrics_of_one_tree(page, tmp_path):
    """With Time selected, "percent of selection" shows Time as 100 % and Visits (another unit)
    in percent of its own root, never visits over seconds."""
    path = str(tmp_path / "small.cubex")
    _small_report(path)
    with running_viewer(path) as v:
        _open(page, v.url)
        page.select_option("#mode", "selection")
        assert _row(page, "metric", 0).locator(".value").inner_text() == "100.00 %"
        assert _row(page, "metric", 1).locator(".value").inner_text() == "100.00 %"


def test_counts_are_shown_exactly_and_floats_exact_on_hover(page, tmp_path):
    """Visits of 744343203 read "744,343,203" (as `cubescale info` prints them), not 7.443e+8;
    a float's full value is the title of its cell."""
    path = str(tmp_path / "small.cubex")
    report = _small_report(path)
    with running_viewer(path) as v:
        _open(page, v.url)
        _row(page, "metric", 1).locator(".name").click()
        page.wait_for_function("() => document.body.dataset.pending === '0'", timeout=TIMEOUT)
        _wait_value(page, "call", 0, 744343203)
        assert _shown(page, "call", 0) == "744,343,203"
        _row(page, "metric", 0).locator(".name").click()
        want = float(report.panes(0, cnode=0).call_inclusive[0])
        _wait_value(page, "call", 0, want)
        assert float(_row(page, "call", 0).locator(".value").get_attribute("title")) == want


def test_distribution_of_large_nearly_equal_values_and_a_failed_one(page, tmp_path):
    """UINT64 values near 2**64 (all_dtypes.cubex, main expanded) get a distribution (one bin)
    instead of an error; a failing distribution query clears the panel."""
    path = os.path.join(DATA, "all_dtypes.cubex")
    with running_viewer(path) as v:
        _open(page, v.url)
        uint64 = cubescale.open(path).metric("UINT64").index
        _row(page, "metric", uint64).locator(".name").click()
        page.wait_for_function("() => document.body.dataset.pending === '0'", timeout=TIMEOUT)
        _row(page, "call", 0).locator(".toggle").click()
        page.wait_for_function("() => document.body.dataset.pending === '0'", timeout=TIMEOUT)
        assert page.locator("#error").is_hidden(), page.inner_text("#error")
        assert float(page.locator("#distribution").get_attribute("data-max")) > 1.8e19
        # a distribution query that fails must not leave the previous selection's numbers
        page.route("**/api/distribution?*", lambda route: route.fulfill(status=422, json={"error": "refused"}))
        _row(page, "call", 1).locator(".name").click()
        page.locator("#error").wait_for(state="visible", timeout=TIMEOUT)
        page.wait_for_function("() => document.body.dataset.pending === '0'", timeout=TIMEOUT)
        assert page.locator("#distribution").get_attribute("data-max") is None
        assert "no distribution" in page.inner_text("#distribution")


def test_metric_documentation_links_resolve_mirrors(page, tmp_path):
    """"@mirror@doc.html#time" becomes the report's first web mirror + "doc.html#time", a link
    (a file:// mirror, the measuring machine's, is passed over)."""
    path = str(tmp_path / "small.cubex")
    _small_report(path, '<doc>\n<mirrors>\n<murl>file:///opt/scorep/doc/</murl>\n'
                        '<murl>https://example.org/scorep/</murl>\n</mirrors>\n</doc>\n')
    with running_viewer(path) as v:
        _open(page, v.url)
        link = page.locator("#metric-details a")
        link.wait_for(timeout=TIMEOUT)
        assert link.get_attribute("href") == "https://example.org/scorep/doc.html#time"


def test_the_browser_is_given_a_private_redirect_file_not_the_token(page, tmp_path):
    """The browser's command line (visible to every local user) holds no token: it names a
    0600 file in a private folder that leads to the viewer with the token."""
    record = tmp_path / "argv.txt"
    script = tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    script.chmod(0o700)
    with running_viewer(os.path.join(DATA, "call_tree_test.cubex"), browser=str(script)) as v:
        for _ in range(200):
            if record.exists() and record.read_text():
                break
            page.wait_for_timeout(50)
        argv = record.read_text().split()
        assert len(argv) == 1 and v.token not in argv[0], argv
        target = argv[0].removeprefix("file://")
        assert os.stat(target).st_mode & 0o777 == 0o600
        assert os.stat(os.path.dirname(target)).st_mode & 0o777 == 0o700
        assert v.token in open(target).read()
        page.goto(argv[0])
        page.wait_for_selector("body[data-ready='1']", timeout=TIMEOUT)
        assert page.url.startswith(v.base)
        v.process.send_signal(signal.SIGINT)
        assert v.process.wait(20) == 0
    assert not os.path.exists(os.path.dirname(target))  # removed when the server ends
