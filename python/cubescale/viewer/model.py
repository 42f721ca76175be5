"""What the viewer's JSON API answers: Cube's three panes for one open report, as plain dicts.

Every number comes from the report's pane API (:meth:`Report.panes <cubescale.Report.panes>`,
:meth:`Report.metric_totals <cubescale.Report.metric_totals>`): this module only selects,
pages and labels. The one thing it adds is the system tree's collapsed values (a machine,
node or process shows the selected metric summed, or min/max'ed, over the locations below
it), done in NumPy over the pane's location vector, never in a Python loop.

A :class:`Explorer` knows nothing of HTTP: the server (:mod:`cubescale.viewer.server`) turns
its :class:`QueryError` into a 4xx answer. Ids arrive as strings from a query and are checked
here (``parse_int``), so a hostile query never reaches the core with a bad index.

Example
-------
>>> import cubescale
>>> from cubescale.viewer.model import Explorer
>>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
>>> [m["name"] for m in ex.report_summary()["metrics"]][:3]
['visits', 'time', 'min_time']
>>> ex.call_children({"metric": "0", "parent": "-1"})["children"][0]["inclusive"]
3372.0
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

import numpy as np

from .. import panes as _panes
from ..call_tree import outermost_calls
from ..dtypes import numpy_type
from ..records import Metric

if TYPE_CHECKING:  # the viewer is given reports: report.py's Report.view() imports the viewer
    from ..report import Report

__all__ = ["MAX_PAGE", "SEARCH_PATH_BUDGET", "Explorer", "QueryError", "ReportChanged", "parse_int"]

MAX_PAGE = 1000
"""The most children one query returns: a million-location tree is paged, never shipped."""
SEARCH_PATH_BUDGET = 100_000
"""Path entries one search answer holds at most (a match's path is its depth long: 1000
matches 20,000 levels deep were 856 MB of JSON)."""

_CACHE = 16  # selections whose location vectors / element aggregates stay in memory


class QueryError(ValueError):
    """A query the viewer refuses (a bad or out-of-range id, a page too large): a 4xx answer.

    Example
    -------
    >>> QueryError("no metric 99", status=404).status
    404
    """

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class ReportChanged(QueryError):
    """The report file was changed or removed after the viewer opened it (409 Conflict).

    Example
    -------
    >>> ReportChanged("gone").status
    409
    """

    def __init__(self, message: str):
        super().__init__(message, status=409)


def parse_int(query: dict[str, str], key: str, low: int, high: int, default: int | None = None) -> int:
    """The integer ``query[key]`` if it lies in ``[low, high)``, else a :class:`QueryError`.

    Only plain decimal digits with an optional minus sign are taken (no ``1e9``, ``0x10``,
    spaces or 300-digit numbers).

    Example
    -------
    >>> parse_int({"cnode": "3"}, "cnode", 0, 10)
    3
    >>> parse_int({"cnode": "99"}, "cnode", 0, 10)
    Traceback (most recent call last):
    ...
    cubescale.viewer.model.QueryError: cnode=99 is out of range [0, 10)
    """
    text = query.get(key)
    if text is None:
        if default is None:
            raise QueryError(f"missing query parameter {key!r}")
        return default
    body = text[1:] if text.startswith("-") else text
    if not body or len(body) > 19 or not (body.isascii() and body.isdigit()):
        raise QueryError(f"{key} must be an integer, not {text[:40]!r}")
    value = int(text)
    if not low <= value < high:
        raise QueryError(f"{key}={value} is out of range [{low}, {high})")
    return value


def _flag(query: dict[str, str], key: str) -> bool:
    text = query.get(key, "0")
    if text not in ("0", "1", "true", "false"):
        raise QueryError(f"{key} must be 0 or 1, not {text[:40]!r}")
    return text in ("1", "true")


def _number(x: float) -> float | None:
    """A JSON number; NaN / infinities (no value: a derived metric Cube cannot compute,
    an element without locations under a MIN metric) become null."""
    x = float(x)
    return x if math.isfinite(x) else None


_FIRST_LOOK_ROWS = 16  # rows a first look reads one by one before it loads the whole metric
_WARM_ROOTS = 4  # roots whose costly location row is computed ahead, per metric (see _warm_root_rows)


def _combine(m: Metric) -> Callable[[np.ndarray], Any]:
    """How a metric's values combine over locations and roots (as Cube's panes combine them)."""
    return np.min if m.dtype == "MINDOUBLE" else np.max if m.dtype == "MAXDOUBLE" else np.sum


def _signature(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Explorer:
    """One open report and the answers to the viewer's queries.

    Example
    -------
    >>> import cubescale
    >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
    >>> ex.system_children({"metric": "0", "cnode": "0", "parent": "-1"})["children"][0]["class"]
    'machine'
    """

    def __init__(self, report: Report):
        if not report.path:
            raise ValueError("the explorer needs a report read from a file (cubescale.open)")
        self.path = os.fspath(report.path)
        self._signature = _signature(self.path)
        self.report = report
        self._tree = self.report.system
        # element -> location (column), -1 for machines, nodes, processes: one NumPy scatter
        self._location_of_element = np.full(len(self._tree), -1, dtype=np.int64)
        elements = np.asarray(self.report._core.location_elements(), dtype=np.int64)
        self._location_of_element[elements] = np.arange(len(elements))
        self._element_of_location = elements
        self._call_roots = np.flatnonzero(self.report.cnode_parents < 0).tolist()
        self._calls: OrderedDict[tuple, tuple[np.ndarray, np.ndarray, float]] = OrderedDict()
        self._ancestors: dict[int, np.ndarray] = {}
        self._children_cache: OrderedDict[int, list[int]] = OrderedDict()
        self._systems: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._aggregates: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._ranges: dict[int, tuple[np.ndarray, np.ndarray] | None] = {}
        self._cnode_children: list[list[int]] | None = None
        self._topologies: list[dict[str, Any]] | None = None
        # Queries run on worker threads (the server's executor): the caches are guarded by one
        # lock, and each metric by its own, so that two queries never read one metric twice.
        self._lock = threading.Lock()
        self._reading_locks: dict[int, threading.Lock] = {}
        self._flights: dict[tuple[int, Any], threading.Lock] = {}  # entries being computed
        self._filters: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._groups: tuple[np.ndarray, np.ndarray | None, np.ndarray] | None = None
        self._peers: OrderedDict[tuple, dict[str, float | None]] = OrderedDict()
        self._stored: dict[int, float] = {}  # per metric: its stored total (the metric pane, collapsed)
        self._warmed: set[int] = set()  # metrics whose roots' rows _warm_root_rows has started
        self._shown: set[int] = set()  # metrics whose call pane (or flat profile) some query asked for
        self._flat: tuple[np.ndarray, np.ndarray] | None = None
        self._sequence: _Sequence | None = None
        self._sequence_values: OrderedDict[tuple, dict[int, dict[str, Any]]] = OrderedDict()
        self._layouts: dict[int, tuple[str, np.ndarray | None]] = {}  # per depth: how its elements' values are found

    def _cached(self, cache: OrderedDict, key: Any, compute: Callable[[], Any], keep: int = _CACHE) -> Any:
        """``cache[key]``, computed (outside the cache lock: other queries go on) if missing,
        once: the page asks for one selection's system tree, distribution and sequence at
        the same moment, and those queries wait for the first one's answer instead of
        computing it again each (a 1M-location row read twice took twice the time)."""
        with self._lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
            flight = self._flights.setdefault((id(cache), key), threading.Lock())
        with flight:
            with self._lock:
                if key in cache:
                    return cache[key]
            value = None
            try:
                value = compute()
            finally:
                # Stored and the flight ended at once (a query in between would compute again),
                # and only this flight: after a failure a waiter may have started a new one.
                with self._lock:
                    if value is not None:
                        _remember(cache, key, value, keep)
                    if self._flights.get((id(cache), key)) is flight:
                        del self._flights[(id(cache), key)]
        return value

    def _reading(self, metric: int) -> threading.Lock:
        with self._lock:
            return self._reading_locks.setdefault(metric, threading.Lock())

    def _per_metric(self, m: Metric, fn: Callable[[Metric], Any]) -> Any:
        """``fn(m)`` while no other query reads metric ``m`` (its first use loads it)."""
        with self._reading(m.index):
            return fn(m)

    # ---- guards

    def check_file(self) -> None:
        """Raises :class:`ReportChanged` if the file was changed or removed since it was opened
        (values are read lazily, so a changed file would mix two reports).

        Example
        -------
        >>> import cubescale
        >>> Explorer(cubescale.open(cubescale.examples.report_path())).check_file()
        """
        try:
            now = _signature(self.path)
        except OSError as e:
            raise ReportChanged(f"the report {self.path} can no longer be read ({e.strerror}): "
                                "restart `cubescale view` to look at it again") from None
        if now != self._signature:
            raise ReportChanged(f"the report {self.path} was changed after the viewer opened it: "
                                "restart `cubescale view` to see the new one")

    def _metric(self, query: dict[str, str]) -> Metric:
        return self.report.metrics[parse_int(query, "metric", 0, len(self.report.metrics))]

    # ---- metric pane

    def report_summary(self) -> dict[str, Any]:
        """The report's definitions and its metric tree, without reading any metric's values:
        a metric's collapsed (``inclusive``) and expanded (``exclusive``) totals are there only
        once some query computed them (else null: :meth:`metric_values` computes them).
        Opening a 1M-location report thus costs its definitions, not every metric.

        Example
        -------
        >>> import cubescale
        >>> s = Explorer(cubescale.open(cubescale.examples.report_path())).report_summary()
        >>> s["shape"], s["metrics"][1]["unit"], s["metrics"][1]["inclusive"]
        ([21, 20], 'sec', None)
        """
        r = self.report
        metrics = [{
            "index": m.index, "name": m.name, "display_name": m.display_name or m.name, "unit": m.unit,
            "dtype": m.dtype, "kind": m.kind, "description": m.description, "url": m.url,
            "expression": m.expression, "parent": m.parent, "children": list(m.children),
            **self._known_values(m),
        } for m in r.metrics]
        topologies = [{"name": t["name"], "dims": t["dims"]} for t in self._cartesian()]
        return {"file": os.path.basename(self.path), "path": self.path, "version": r.version, "mirrors": r.mirrors,
                "shape": list(r.shape), "locations": r.shape[1], "metrics": metrics, "topologies": topologies}

    def _known_values(self, m: Metric) -> dict[str, float | None]:
        """A metric's pane values if already computed, else nulls (nothing is read here)."""
        inclusive = self._stored.get(m.index)
        minus = _panes.subtracted_children(self.report, m)
        if inclusive is None or any(c not in self._stored for c in minus):
            return {"inclusive": None if inclusive is None else _number(inclusive), "exclusive": None}
        return {"inclusive": _number(inclusive),
                "exclusive": _number(inclusive - sum(self._stored[c] for c in minus))}

    def _root_rows(self, m: Metric) -> np.ndarray | None:
        """Per call-tree root, the metric over all locations from the roots' stored rows alone,
        for a metric stored INCLUSIVE and not loaded yet: the first look at a report reads one
        row per root (``Report.system_values`` reads a row of such a metric from the file)
        instead of the whole matrix. None when the whole metric is needed or already there."""
        if (m.derived or m.kind != "INCLUSIVE" or numpy_type(m.dtype)[1] or m.dtype == "SCALE_FUNC"
                or len(self._call_roots) > _FIRST_LOOK_ROWS or self.report._core.loaded(m.index)):
            return None
        combine = _combine(m)
        return np.array([combine(self.report.system_values(m, r)) for r in self._call_roots], dtype=np.float64)

    def _stored_total(self, m: Metric) -> float:
        """A metric's value over the whole program and machine as stored (the metric pane,
        collapsed), computed as :func:`cubescale.panes.metric_totals` does, for this metric only."""
        if m.index not in self._stored:
            roots = np.asarray(self._call_roots, dtype=np.int64)
            rows = self._root_rows(m)
            total = (float(_combine(m)(rows)) if rows is not None and len(rows)
                     else self._per_metric(m, lambda x: _panes._total(self.report, x, roots)))
            with self._lock:
                self._stored[m.index] = total
            self._warm_root_rows(m)
        return self._stored[m.index]

    def _warm_root_rows(self, m: Metric) -> None:
        """Once a metric whose call pane was asked for is loaded (not every metric the metric
        pane loads: their rows would take the selection cache's places and cores for nothing),
        computes on a background thread the location rows that a
        click on a root costs a pass over the whole metric for: a root's inclusive row of a
        metric stored EXCLUSIVE (every row of its subtree combined: 0.84 GB at a million
        locations; selecting the call tree's root, or the flat profile's largest region, the
        root's) and the expanded root's exclusive row of one stored INCLUSIVE (its row minus its
        children's). They go into the selection cache as a query's would; a query for one that
        comes while it is computed computes it itself at its own priority (never waits for this
        low-priority thread), and the thread then drops its copy. Not the metric's
        reading lock (it is loaded): the queries of the click that loaded it do not wait.
        Folding these rows into the pass that computes the call pane's totals was measured
        slower (docs/benchmarks.md, "root rows")."""
        if m.derived or m.dtype == "SCALE_FUNC" or not self.report._core.loaded(m.index):
            return
        with self._lock:
            if m.index in self._warmed or m.index not in self._shown:
                return
            self._warmed.add(m.index)
        own = m.kind == "INCLUSIVE"  # the kind not stored: exclusive (expanded) rows of INCLUSIVE metrics
        roots = [r for r in self._call_roots if self._children_of_cnodes()[r]][:_WARM_ROOTS]

        def warm() -> None:
            # Lowest priority (Linux: per thread, inherited by the core's worker threads it starts),
            # so that the queries of the next clicks are not slowed down by it.
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
            except (AttributeError, OSError):
                pass
            for r in roots:
                # Not through _cached: a click's query must never wait for this low-priority
                # thread; if it comes first it computes the row itself, and this one is dropped.
                key = (m.index, False, "cnode", r, own)
                with self._lock:
                    if key in self._systems or (id(self._systems), key) in self._flights:
                        continue
                try:
                    row = np.append(np.asarray(self.report.system_values(m, r, inclusive=not own), dtype=float), 0.0)
                except Exception:  # noqa: BLE001 -- a query for the row computes it again and reports its error
                    return
                with self._lock:
                    if key not in self._systems:
                        _remember(self._systems, key, row, _CACHE)
        # Not a daemon: Python waits for it at exit. A daemon thread still inside the core's
        # parallel loops when the interpreter ends made the process abort ("terminate called
        # without an active exception", exit 134) after a script's last query.
        threading.Thread(target=warm, name=f"cubescale-view-roots-{m.index}").start()

    def metric_values(self, query: dict[str, str]) -> dict[str, Any]:
        """One metric's values in the metric pane: ``inclusive`` (collapsed: its stored total)
        and, with ``expanded=1`` or when nothing is subtracted, ``exclusive`` (expanded: minus its
        children's stored totals, which reads the children too). Reads only these metrics;
        each total is kept.

        Example
        -------
        >>> import cubescale
        >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
        >>> ex.metric_values({"metric": "0"})
        {'index': 0, 'inclusive': 3372.0, 'exclusive': 3372.0}
        >>> ex.report_summary()["metrics"][0]["inclusive"]   # now known
        3372.0
        """
        m = self._metric(query)
        minus = _panes.subtracted_children(self.report, m)
        self._stored_total(m)
        if _flag(query, "expanded") or not minus:
            for c in minus:
                self._stored_total(self.report.metrics[c])
        return {"index": m.index, **self._known_values(m)}

    # ---- call pane

    def _children_of_cnodes(self) -> list[list[int]]:
        if self._cnode_children is None:
            self._cnode_children = [list(c.children) for c in self.report.cnodes]
        return self._cnode_children

    def call_children(self, query: dict[str, str]) -> dict[str, Any]:
        """The call paths under ``parent`` (-1: the roots), a page of them, with the selected
        metric's collapsed (``inclusive``) and expanded (``exclusive``) values from
        :meth:`Report.panes` and the pane's root total (``total``) for percentages.

        Example
        -------
        >>> import cubescale
        >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
        >>> page = ex.call_children({"metric": "0", "parent": "0"})
        >>> [(c["name"], c["inclusive"]) for c in page["children"]]
        [('<module>', 936.0), ('Team._work', 2432.0)]
        """
        m = self._metric(query)
        expanded = _flag(query, "metric_expanded")
        cnodes = self.report.cnodes
        parent = parse_int(query, "parent", -1, len(cnodes))
        ids = self._call_roots if parent < 0 else self._children_of_cnodes()[parent]
        shown = self._name_filter(query)
        if shown is not None:
            match, below = shown
            ids = [c for c in ids if match[c] or below[c]]
        offset, limit = self._page(query, len(ids))
        with self._lock:
            self._shown.add(m.index)  # a call pane of m is shown: its roots' rows are warmed once loaded
        first_look = None if parent >= 0 or expanded else self._first_look_roots(m)
        inclusive, exclusive, total = first_look or self._call_pane(m, expanded)
        children = [{
            "index": c, "name": cnodes[c].region.name, "region": cnodes[c].region.index,
            "has_children": bool(cnodes[c].children) if shown is None else bool(shown[1][c]),
            "inclusive": _number(inclusive[c]), "exclusive": _number(exclusive[c]),
            **({} if shown is None else {"match": bool(shown[0][c])}),
        } for c in ids[offset:offset + limit]]
        return {"parent": parent, "count": len(ids), "offset": offset, "children": children,
                "total": _number(total), "roots": self._call_roots[:MAX_PAGE]}

    def _name_filter(self, query: dict[str, str]) -> tuple[np.ndarray, np.ndarray] | None:
        """For ``filter`` (1..200 characters; none: None) per call path whether its region's
        name contains it (case-insensitive: ``match``) and whether a call path below it does
        (``below``): the filtered call tree shows the call paths with either, so every match
        keeps its path from the root. Values stay those of the whole tree (as Cube's
        filters hide call paths, they do not change the others' values). Cached per text."""
        text = query.get("filter")
        if text is None:
            return None
        if not 0 < len(text) <= 200:
            raise QueryError("filter must have 1 to 200 characters")
        return self._cached(self._filters, text.casefold(), lambda: self._filter_masks(text.casefold()), keep=8)

    def _filter_masks(self, needle: str) -> tuple[np.ndarray, np.ndarray]:
        regions = [r.index for r in self.report.regions if needle in r.name.casefold()]
        match = np.isin(np.asarray(self.report._core.cnode_regions(), dtype=np.int64), regions)
        parents = np.asarray(self.report.cnode_parents, dtype=np.int64)
        below = np.zeros(len(match), dtype=bool)
        up = parents[match]
        while len(up):  # one NumPy step per call-tree level, each call path marked once
            up = np.unique(up[up >= 0])
            up = up[~below[up]]
            below[up] = True
            up = parents[up]
        return match, below

    def _first_look_roots(self, m: Metric) -> tuple[dict, dict, float] | None:
        """The roots of the call pane (collapsed metric) from stored rows alone: inclusive
        values from the roots' rows, exclusive ones minus their children's rows; None when the
        metric is loaded already, not stored INCLUSIVE, or the roots have many children."""
        children = [c for r in self._call_roots for c in self._children_of_cnodes()[r]]
        rows = self._root_rows(m) if len(children) <= _FIRST_LOOK_ROWS else None
        if rows is None or m.dtype not in ("DOUBLE", "FLOAT"):  # integers' exclusive values wrap as stored
            return None
        inclusive = dict(zip(self._call_roots, rows.tolist()))
        exclusive = dict(inclusive)
        for r in self._call_roots:
            for c in self._children_of_cnodes()[r]:
                exclusive[r] -= float(self.report.system_values(m, c).sum())
        total = self.metric_values({"metric": str(m.index)})["inclusive"]
        return inclusive, exclusive, float("nan") if total is None else float(total)

    def _call_pane(self, m: Metric, expanded: bool) -> tuple[np.ndarray, np.ndarray, float]:
        """Cube's call pane for a metric selection and its root total (the metric pane's value
        of the selected metric), kept for the next pages."""
        with self._lock:
            self._shown.add(m.index)

        def compute() -> tuple[np.ndarray, np.ndarray, float]:
            inclusive = self._selected(m, expanded, lambda x: self.report.cnode_values(x, inclusive=True))
            exclusive = self._selected(m, expanded, lambda x: self.report.cnode_values(x, inclusive=False))
            self._warm_root_rows(m)
            known = self.metric_values({"metric": str(m.index), "expanded": "1" if expanded else "0"})
            total = known["exclusive" if expanded else "inclusive"]
            return inclusive, exclusive, float("nan") if total is None else float(total)
        return self._cached(self._calls, (m.index, expanded), compute)

    def _selected(self, m: Metric, expanded: bool, fn: Callable[[Metric], np.ndarray]) -> np.ndarray:
        """``fn`` (a per-metric array of the report: call-path totals, a call path's row) of
        the selected metric as :meth:`Report.panes` selects it: the stored values, minus the
        subtracted children's (:func:`cubescale.panes.subtracted_children`) when expanded.
        The same rule as ``panes.select``, applied here to the one array a query needs, since
        ``Report.panes`` also computes the whole metric pane (reading every metric)."""
        value = self._per_metric(m, fn)
        if expanded:
            for child in _panes.subtracted_children(self.report, m):
                value = value - self._per_metric(self.report.metrics[child], fn)
        return value

    def cnode_details(self, query: dict[str, str]) -> dict[str, Any]:
        """A call path's region (name, file, lines, description, URL), parameters and its
        path from the root (the breadcrumb).

        Example
        -------
        >>> import cubescale
        >>> d = Explorer(cubescale.open(cubescale.examples.report_path())).cnode_details({"cnode": "1"})
        >>> [p["name"] for p in d["path"]]
        ['stencil.py', '<module>']
        """
        cnodes = self.report.cnodes
        c = cnodes[parse_int(query, "cnode", 0, len(cnodes))]
        path, walk = [], c
        while True:
            path.append({"index": walk.index, "name": walk.region.name})
            if walk.parent is None:
                break
            walk = cnodes[walk.parent]
        region = c.region
        return {"index": c.index, "id": c.id, "path": path[::-1],
                "parameters": self.report.cnode_parameters(c.index),
                "region": {"name": region.name, "mangled_name": region.mangled_name, "module": region.module,
                           "begin": region.begin, "end": region.end, "paradigm": region.paradigm,
                           "role": region.role, "description": region.description, "url": region.url}}

    def search(self, query: dict[str, str]) -> dict[str, Any]:
        """Call paths whose region name contains ``q`` (case-insensitive, 1..200 characters),
        the first ``limit`` (<= 1000, default 50) in call-tree order, each with its path from
        the root (fewer where their paths would exceed :data:`SEARCH_PATH_BUDGET` entries), and
        how many matched in all.

        Example
        -------
        >>> import cubescale
        >>> found = Explorer(cubescale.open(cubescale.examples.report_path())).search({"q": "MAIN"})
        >>> found["count"], [p["name"] for p in found["matches"][0]["path"]]
        (1, ['stencil.py', '<module>', 'main'])
        """
        text = query.get("q", "")
        if not 0 < len(text) <= 200:
            raise QueryError("q must have 1 to 200 characters")
        limit = parse_int(query, "limit", 1, MAX_PAGE + 1, default=50)
        needle = text.casefold()
        regions = [r.index for r in self.report.regions if needle in r.name.casefold()]
        hits = np.flatnonzero(np.isin(self.report._core.cnode_regions(), regions))
        matches: list[dict[str, Any]] = []
        sent = 0
        for c in hits[:limit]:  # paths of deep trees: a budget of path entries, not 10^8 of them
            path = self.cnode_details({"cnode": str(int(c))})["path"]
            if matches and sent + len(path) > SEARCH_PATH_BUDGET:
                break
            matches.append({"index": int(c), "path": path})
            sent += len(path)
        return {"q": text, "count": len(hits), "matches": matches}

    # ---- flat profile (the call pane's other view)

    def _flat_structure(self) -> tuple[np.ndarray, np.ndarray]:
        """Per call path its region, and whether no caller up to the root has the same region
        (CubeLib's ``Region::incl_cnodev``: only those count towards a region's inclusive
        value, so recursion is not counted twice), in one pass over the preorder."""
        if self._flat is None:
            regions = np.asarray(self.report._core.cnode_regions(), dtype=np.int64)
            self._flat = (regions, outermost_calls(np.asarray(self.report.cnode_parents), regions))
        return self._flat

    def flat_profile(self, query: dict[str, str]) -> dict[str, Any]:
        """Cube's flat view: per region (with at least one call path) the selected metric
        over all its call paths, collapsed (``inclusive``: the inclusive values of its call
        paths that have no caller of the same region) and expanded (``exclusive``: the
        exclusive values of all its call paths); sums, or min / max for MIN/MAXDOUBLE. Sorted
        by the collapsed value (largest first), a page of them; ``calls``: its call paths.

        Example
        -------
        >>> import cubescale
        >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
        >>> top = ex.flat_profile({"metric": "1", "limit": "2"})["children"]
        >>> [(r["name"], r["calls"]) for r in top]
        [('stencil.py', 1), ('Team._work', 1)]
        """
        m = self._metric(query)
        inclusive, exclusive, total = self._call_pane(m, _flag(query, "metric_expanded"))
        regions, outermost = self._flat_structure()
        n = len(self.report.regions)
        calls = np.bincount(regions, minlength=n)
        if m.dtype in ("MINDOUBLE", "MAXDOUBLE"):
            ufunc = np.fmin if m.dtype == "MINDOUBLE" else np.fmax
            own, whole = np.full(n, np.nan), np.full(n, np.nan)
            ufunc.at(own, regions, exclusive)
            ufunc.at(whole, regions[outermost], inclusive[outermost])
        else:
            own = np.bincount(regions, weights=exclusive, minlength=n)
            whole = np.bincount(regions[outermost], weights=inclusive[outermost], minlength=n)
        used = np.flatnonzero(calls > 0)
        ranked = used[np.argsort(-np.nan_to_num(whole[used], nan=-np.inf), kind="stable")]
        offset, limit = self._page(query, len(ranked))
        names = self.report.regions
        children = [{"index": int(r), "name": names[r].name, "has_children": True, "calls": int(calls[r]),
                     "inclusive": _number(whole[r]), "exclusive": _number(own[r])}
                    for r in ranked[offset:offset + limit].tolist()]
        return {"count": len(ranked), "offset": offset, "children": children, "total": _number(total)}

    # ---- system pane

    def _selection(self, query: dict[str, str]) -> tuple[Metric, tuple, np.ndarray]:
        """The selected metric, the selection's key and its system pane per location (plus one
        trailing 0, so that ``ufunc.reduceat`` may take the end of every range). The selection
        is a call path (``cnode``, ``cnode_expanded``) or, from the flat profile, a region
        (``region``, ``region_expanded``: all its call paths, as Cube's flat view selects)."""
        m = self._metric(query)
        expanded = _flag(query, "metric_expanded")
        calls = None
        if "region" in query:
            region = parse_int(query, "region", 0, len(self.report.regions))
            own = _flag(query, "region_expanded")
            calls = self._region_calls(region, own)
        if calls is not None and len(calls) != 1:
            key: tuple = (m.index, expanded, "region", region, own)

            def row(x: Metric) -> np.ndarray:
                return self._region_row(x, calls, own)
        else:  # a call path, or a region of one call path: the same values (and cache entry)
            cnode = parse_int(query, "cnode", 0, self.report.shape[0]) if calls is None else int(calls[0])
            own = _flag(query, "cnode_expanded") if calls is None else own
            key = (m.index, expanded, "cnode", cnode, own)

            def row(x: Metric) -> np.ndarray:
                return self.report.system_values(x, cnode, inclusive=not own)

        def compute() -> np.ndarray:
            return np.append(np.asarray(self._selected(m, expanded, row), dtype=float), 0.0)
        return m, key, self._cached(self._systems, key, compute)

    def _region_calls(self, region: int, own: bool) -> np.ndarray:
        """The call paths whose rows make a region's values: expanded (``own``) all its call
        paths, collapsed those without a caller of the same region."""
        regions, outermost = self._flat_structure()
        return np.flatnonzero((regions == region) & (True if own else outermost))

    def _region_row(self, m: Metric, calls: np.ndarray, own: bool) -> np.ndarray:
        """A region's values per location (Cube's flat view selected): collapsed, the
        inclusive rows of its call paths that have no caller of the same region; expanded, the
        exclusive rows of all its call paths; summed (min / max for MIN/MAXDOUBLE)."""
        combine = {"MINDOUBLE": np.fmin, "MAXDOUBLE": np.fmax}.get(m.dtype, np.add)
        out = np.zeros(self.report.shape[1]) if combine is np.add else np.full(self.report.shape[1], np.nan)
        for c in calls.tolist():  # one C++ row per call path of the region
            combine(out, self.report.system_values(m, c, inclusive=not own), out=out)
        return out

    def _ranges_at(self, depth: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Locations are in system-tree order, so the locations below an element are one range:
        per element at ``depth`` its run (or -1), and the runs' starts (plus the end). None if
        some element's locations are not one range (then ``_collapsed`` takes over)."""
        if depth not in self._ranges:
            owner = self._ancestors_at(depth)
            starts = np.concatenate(([0], np.flatnonzero(np.diff(owner)) + 1, [len(owner)]))
            run_element = owner[starts[:-1]]
            ranges = None
            if np.bincount(run_element, minlength=len(self._tree)).max(initial=0) <= 1:  # each element: one run
                run_of = np.full(len(self._tree), -1, dtype=np.int64)
                run_of[run_element] = np.arange(len(run_element))
                ranges = (run_of, starts)
            self._ranges[depth] = ranges
        return self._ranges[depth]

    def _page_collapsed(self, key: tuple, padded: np.ndarray, dtype: str, depth: int, page: list[int]) -> np.ndarray:
        """The collapsed values of a page of elements at ``depth``: each element's range of
        locations combined as the metric combines (sum; min / max for MINDOUBLE / MAXDOUBLE),
        reading only the page's locations (one ``ufunc.reduceat``)."""
        ranges = self._ranges_at(depth)
        if ranges is None:
            return self._collapsed(key, padded[:-1], dtype, depth)[page]
        run_of, starts = ranges
        run = run_of[np.asarray(page, dtype=np.int64)]
        lo = np.where(run >= 0, starts[np.maximum(run, 0)], 0)
        hi = np.where(run >= 0, starts[np.maximum(run, 0) + 1], 0)
        bounds = np.empty(2 * len(page), dtype=np.int64)
        bounds[0::2], bounds[1::2] = lo, hi
        ufunc = {"MINDOUBLE": np.minimum, "MAXDOUBLE": np.maximum}.get(dtype, np.add)
        out = ufunc.reduceat(padded, bounds)[0::2] if len(page) else np.zeros(0)
        out[hi <= lo] = 0.0 if ufunc is np.add else np.nan  # no locations below
        return out

    def _ancestors_at(self, depth: int) -> np.ndarray:
        if depth not in self._ancestors:
            self._ancestors[depth] = np.asarray(self.report._core.location_ancestors(depth), dtype=np.int64)
        return self._ancestors[depth]

    def _collapsed(self, key: tuple, values: np.ndarray, dtype: str, depth: int) -> np.ndarray:
        """Per system-tree element at ``depth``: the locations below it combined as the
        metric combines, for trees whose elements' locations are not one range each.
        One NumPy pass over all locations, cached."""
        def compute() -> np.ndarray:
            owner = self._ancestors_at(depth)
            if dtype == "MINDOUBLE":
                out = np.full(len(self._tree), np.inf)
                np.minimum.at(out, owner, values)
            elif dtype == "MAXDOUBLE":
                out = np.full(len(self._tree), -np.inf)
                np.maximum.at(out, owner, values)
            else:
                out = np.bincount(owner, weights=values, minlength=len(self._tree))
            return out
        return self._cached(self._aggregates, key + (depth,), compute)

    def _element_children(self, element: int) -> list[int]:
        return self._cached(self._children_cache, element, lambda: self._tree.children(element), keep=64)

    def system_children(self, query: dict[str, str]) -> dict[str, Any]:
        """A page of the system-tree elements under ``parent`` (-1: the root) with the selected
        metric at the selected call path: ``inclusive`` (collapsed: over the element's
        locations) and ``exclusive`` (expanded: its own value, which only a location has).

        Example
        -------
        >>> import cubescale
        >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
        >>> page = ex.system_children({"metric": "0", "cnode": "0", "parent": "-1"})
        >>> page["count"], page["children"][0]["inclusive"], page["total"]
        (1, 3372.0, 3372.0)
        """
        m, key, padded = self._selection(query)
        parent = parse_int(query, "parent", -1, len(self._tree))
        ids = [0] if parent < 0 else self._element_children(parent)
        offset, limit = self._page(query, len(ids))
        values = padded[:-1]
        page = ids[offset:offset + limit]
        depth = 0 if parent < 0 else self._tree._core.depth(parent) + 1
        collapsed = self._page_collapsed(key, padded, m.dtype, depth, page)
        children = []
        for e, inclusive in zip(page, collapsed.tolist()):  # one page (<= MAX_PAGE elements): labels, not data
            location = self._location_index(e)
            children.append({
                "index": e, "name": self._tree.name(e), "class": self._tree.class_name(e),
                "kind": self._tree.kind(e), "has_children": bool(self._tree._core.children(e)) if location is None
                else False, "location": location,
                "inclusive": _number(inclusive),
                "exclusive": _number(values[location]) if location is not None else 0.0,
            })
        combine = {"MINDOUBLE": np.min, "MAXDOUBLE": np.max}.get(m.dtype, np.sum)
        total = combine(values) if len(values) else 0.0  # the root collapsed: every location
        return {"parent": parent, "count": len(ids), "offset": offset, "children": children,
                "total": _number(total), "peers": self._cached(self._peers, key, lambda: _peers(values))}

    def distribution(self, query: dict[str, str]) -> dict[str, Any]:
        """The selection's values over all locations (Cube's system pane as a distribution), or
        with ``over=processes`` over all processes (location groups: each its locations
        combined as the metric combines, as the system tree shows a collapsed process): min,
        mean, max, where the min and max are, and a histogram of ``bins`` (1..200, default 20)
        equal bins, from one NumPy pass over ``Report.panes(...).system``.

        Example
        -------
        >>> import cubescale
        >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
        >>> d = ex.distribution({"metric": "0", "cnode": "0", "bins": "4"})
        >>> d["min"], d["max"], d["counts"]
        (152.0, 250.0, [16, 0, 2, 2])
        >>> d = ex.distribution({"metric": "0", "cnode": "0", "bins": "4", "over": "processes"})
        >>> d["count"], d["max"], d["max_at"]["name"]
        (4, 858.0, 'MPI Rank 1')
        """
        bins = parse_int(query, "bins", 1, 201, default=20)
        over = query.get("over", "locations")
        if over not in ("locations", "processes"):
            raise QueryError(f"over must be locations or processes, not {over[:40]!r}")
        m, _, padded = self._selection(query)
        if over == "locations":
            values, elements = padded[:-1], self._element_of_location
        else:
            values, elements = self._group_values(padded, m.dtype)
        answer: dict[str, Any] = {"over": over, "locations": len(padded) - 1, "count": len(values)}
        finite = values[np.isfinite(values)]
        if not len(finite):
            return {**answer, "min": None, "mean": None, "max": None, "counts": [], "edges": []}
        counts, edges = _histogram(finite.astype(np.float64), bins)
        low, high = int(np.nanargmin(values)), int(np.nanargmax(values))

        def where(at: int) -> dict[str, Any]:
            element = int(elements[at])
            up = self._tree.parent(element)
            parent = self._tree.name(up) if up is not None else ""
            if over == "processes":
                return {"element": element, "name": self._tree.name(element), "parent": parent}
            return {"location": at, "name": self._tree.name(element), "process": parent, "parent": parent}

        return {**answer, "min": _number(finite.min()), "mean": _number(finite.mean()),
                "max": _number(finite.max()), "min_at": where(low), "max_at": where(high),
                "counts": counts.tolist(), "edges": [float(e) for e in edges]}

    def _group_values(self, padded: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
        """Per process (location group) with locations, its locations combined as the metric
        combines, and the processes' elements. A process's locations are one run (system-tree
        order): one ``reduceat`` over the runs; else one ``bincount`` / ``ufunc.at``."""
        group_of, starts, groups = self._group_layout()
        values = padded[:-1]
        ufunc = {"MINDOUBLE": np.minimum, "MAXDOUBLE": np.maximum}.get(dtype, np.add)
        if starts is not None:
            return ufunc.reduceat(values, starts), groups
        if ufunc is np.add:
            return np.bincount(group_of, weights=values, minlength=len(groups)), groups
        out = np.full(len(groups), np.inf if ufunc is np.minimum else -np.inf)
        ufunc.at(out, group_of, values)
        return out, groups

    def _group_layout(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """Once per report: per location its process (an index into the processes with
        locations), the runs' starts if each process's locations are one run in order, and the
        processes' elements. A location's process is its nearest location-group ancestor,
        found one tree depth at a time over all locations."""
        if self._groups is None:
            kind = np.zeros(len(self._tree), dtype=np.int8)
            kind[np.asarray(self.report._core.location_group_elements(), dtype=np.int64)] = 1
            group = np.full(len(self._element_of_location), -1, dtype=np.int64)
            depth = 0
            while (group < 0).any() and depth < 256:
                ancestors = self._ancestors_at(depth)
                found = kind[ancestors] == 1
                group[found] = ancestors[found]
                depth += 1
            group[group < 0] = self._element_of_location[group < 0]  # a location outside any group: its own
            elements, group_of = np.unique(group, return_inverse=True)
            group_of = group_of.reshape(-1)
            starts = np.concatenate(([0], np.flatnonzero(np.diff(group_of)) + 1)) if len(group_of) else group_of
            runs_in_order = len(starts) == len(elements) and bool(np.all(group_of[starts] == np.arange(len(starts))))
            self._groups = (group_of, starts if runs_in_order else None, elements)
        return self._groups

    # ---- topology pane

    def _cartesian(self) -> list[dict[str, Any]]:
        """The report's Cartesian topologies (``<cart>``), parsed once: dims and, per
        coordinate of a location (``<coord locId>``), its grid cell and location index."""
        if self._topologies is None:
            self._topologies = []
            text = self.report._core.topologies_xml
            if "<cart" in text:
                ids = np.asarray(self.report._core.location_file_ids(), dtype=np.int64)
                order = np.argsort(ids)
                try:
                    carts = list(ElementTree.fromstring(f"<topologies>{text}</topologies>").iter("cart"))
                except ElementTree.ParseError:
                    carts = []  # the rest of the report is still worth showing
                elements = self._coord_elements(text, ids)
                for cart in carts:
                    try:
                        self._topologies.append(_cart(cart, ids, order, elements))
                    except ValueError:  # a size or coordinate that is no integer: that topology is left out
                        continue
        return self._topologies

    def _coord_elements(self, text: str, ids: np.ndarray) -> dict[str, np.ndarray]:
        """Per attribute of ``_ELEMENT_COORDS`` used in the topologies, the system-tree element
        of each of its ids. ``nodeId`` / ``machId`` count non-root / root system-tree nodes in
        definition order, as CubeLib does. ``lgId`` / ``procId`` / ``stnId`` name a
        ``<locationgroup Id>`` / ``<systemtreenode Id>``, which the core does not keep: they
        are taken as positions in definition order (as Score-P and CubeLib number them) only
        where the locations' Ids are too (0, 1, 2 ... in order), else left out."""
        if not any(f'{name}="' in text for name in _ELEMENT_COORDS):
            return {}
        kind = np.zeros(len(self._tree), dtype=np.int8)
        groups = np.asarray(self.report._core.location_group_elements(), dtype=np.int64)
        kind[groups] = 1
        kind[self._element_of_location] = 2
        stns = np.flatnonzero(kind == 0)
        roots = np.asarray([e for e in stns[:64].tolist() if self._tree.parent(e) is None], dtype=np.int64)
        out = {"nodeId": np.setdiff1d(stns, roots), "machId": roots}
        if np.array_equal(ids, np.arange(len(ids))):
            out.update(lgId=groups, procId=groups, stnId=stns)
        return out

    def topology(self, query: dict[str, str]) -> dict[str, Any]:
        """The selection on Cartesian topology ``topology``: per grid cell (C order) the
        locations mapped to it combined as the metric combines (null: no location). Grids
        of at most 262,144 cells (a 512 x 512 heatmap).

        Example
        -------
        >>> import cubescale
        >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))   # the demo's report has no topology
        >>> try:
        ...     ex.topology({"metric": "0", "cnode": "0", "topology": "0"})
        ... except QueryError as e:
        ...     e.status, str(e)
        (404, 'the report has no Cartesian topology')

        On a report with one (Score-P's ``call_tree_test.cubex``: 1 x 1 process x thread grid)
        the answer is ``{"name": "Process x Thread", "dims": [{"size": 1, ...}, ...], "values":
        [72.0], ...}``.
        """
        carts = self._cartesian()
        t = carts[parse_int(query, "topology", 0, max(len(carts), 1))] if carts else None
        if t is None:
            raise QueryError("the report has no Cartesian topology", status=404)
        cells = int(np.prod([d["size"] for d in t["dims"]]))
        if cells > 1 << 18:
            raise QueryError(f"topology {t['name']!r} has {cells} cells; at most {1 << 18} are shown", status=422)
        m, key, padded = self._selection(query)
        values = padded[:-1]
        ufunc = {"MINDOUBLE": np.fmin, "MAXDOUBLE": np.fmax}.get(m.dtype, np.add)
        grid = np.full(cells, np.nan)
        hit = np.zeros(cells, dtype=bool)
        hit[t["cells"]] = True
        hit[t["element_cells"]] = True
        grid[hit] = 0.0 if ufunc is np.add else np.nan
        ufunc.at(grid, t["cells"], values[t["locations"]])
        if len(t["elements"]):  # coordinates of processes or nodes: their collapsed values
            if "element_depths" not in t:  # once per topology
                t["element_depths"] = np.asarray([self._tree._core.depth(int(e)) for e in t["elements"].tolist()],
                                                 dtype=np.int64)
            depths = t["element_depths"]
            for depth in np.unique(depths).tolist():
                here = depths == depth
                collapsed = self._page_collapsed(key, padded, m.dtype, depth, t["elements"][here].tolist())
                ufunc.at(grid, t["element_cells"][here], collapsed)
        return {"name": t["name"], "dims": t["dims"], "values": [_number(v) for v in grid.tolist()]}

    # ---- the machine in sequence form

    def _folded(self) -> _Sequence:
        """The sequence form, folded once per report by the core (``sequence_form``: exact,
        by kind and class, with each element's record; 45 ms for 1.3M elements)."""
        with self._reading(-1):  # one fold per report, however many queries ask at once
            if self._sequence is None:
                self._sequence = _sequence(self.report._core.sequence_form())
        return self._sequence

    def sequence(self, query: dict[str, str]) -> dict[str, Any]:
        """The system tree in sequence form (the Score-P system-description paper): identical
        sibling subtrees folded into one record with ``copies``; the child records of record
        ``parent`` (-1: the root record), each with the selection (as :meth:`system_children`
        takes it) over every instance of the record: ``min``, ``mean``, ``max`` of the
        instances' collapsed values, and ``sum`` over all of them.

        Example
        -------
        >>> import cubescale
        >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
        >>> machine = ex.sequence({"metric": "0", "cnode": "0", "parent": "-1"})["records"][0]
        >>> machine["class"], machine["copies"], machine["sum"]
        ('machine', 1, 3372.0)
        >>> [(r["class"], r["copies"], r["instances"]) for r in
        ...  ex.sequence({"metric": "0", "cnode": "0", "parent": "0"})["records"]]
        [('node', 1, 1)]
        """
        seq = self._folded()
        parent = parse_int(query, "parent", -1, len(seq.records))
        m, key, padded = self._selection(query)
        ids = [0] if parent < 0 else seq.records[parent]["children"]
        depth = seq.records[ids[0]]["depth"] if ids else 0
        stats = self._cached(self._sequence_values, key + (depth,), lambda: self._record_values(m, key, padded, depth))
        root = self._cached(self._sequence_values, key + (0,), lambda: self._record_values(m, key, padded, 0))
        records = [{**{k: v for k, v in seq.records[r].items() if k != "children"},
                    "index": r, "has_children": bool(seq.records[r]["children"]), **stats[r]} for r in ids[:MAX_PAGE]]
        return {"parent": parent, "count": len(ids), "records": records, "total": root[0]["sum"]}

    def _record_values(self, m: Metric, key: tuple, padded: np.ndarray, depth: int) -> dict[int, dict[str, Any]]:
        """Per record at ``depth``, min / mean / max / sum of its instances' collapsed values:
        the values of all elements there (one ``reduceat`` over the locations, or the
        locations themselves), then per record (a regular machine has one) its instances'
        share. Per depth, when a record of that depth is shown: the first sequence view of a
        selection reads depth 0 only, opening a record the depth below it."""
        seq = self._folded()
        if depth >= len(seq.elements):
            return {}
        records = [r for r, record in enumerate(seq.records) if record["depth"] == depth]
        values = self._element_values(key, padded, m.dtype, depth, seq.elements[depth])
        return {r: _statistics(mine, m.dtype) for r, mine in _groups(records, seq.record_of[depth], values)}

    def _element_values(self, key: tuple, padded: np.ndarray, dtype: str, depth: int,
                        elements: np.ndarray) -> np.ndarray:
        """The collapsed values of all ``elements`` at ``depth`` (ascending), by the layout
        found once per depth: locations (their own values), one run of locations each in
        element order (one ``reduceat``), else as a page of the system tree."""
        with self._lock:
            layout = self._layouts.get(depth)
        if layout is None:
            layout = self._layout(depth, elements)
            with self._lock:
                self._layouts[depth] = layout
        how, where = layout
        if how == "locations":
            return padded[:-1] if where is None else padded[where]
        if how == "runs" and where is not None:
            ufunc = {"MINDOUBLE": np.minimum, "MAXDOUBLE": np.maximum}.get(dtype, np.add)
            return ufunc.reduceat(padded[:-1], where)
        return self._page_collapsed(key, padded, dtype, depth, elements.tolist())

    def _layout(self, depth: int, elements: np.ndarray) -> tuple[str, np.ndarray | None]:
        locations = self._location_of_element[elements]
        if len(elements) and bool((locations >= 0).all()):
            whole = len(locations) == self.report.shape[1] and bool((locations == np.arange(len(locations))).all())
            return "locations", None if whole else locations
        ranges = self._ranges_at(depth)
        if ranges is not None:
            starts = ranges[1][:-1]
            if len(starts) == len(elements) and np.array_equal(self._ancestors_at(depth)[starts], elements):
                return "runs", starts
        return "page", None

    def instances(self, query: dict[str, str]) -> dict[str, Any]:
        """A page of the instances (system-tree elements) of sequence record ``record``, in
        tree order, each with its collapsed value for the selection.

        Example
        -------
        >>> import cubescale
        >>> ex = Explorer(cubescale.open(cubescale.examples.report_path()))
        >>> processes = ex.sequence({"metric": "0", "cnode": "0", "parent": "1"})["records"][0]
        >>> page = ex.instances({"metric": "0", "cnode": "0", "record": str(processes["index"])})
        >>> page["count"], [e["name"] for e in page["children"]]
        (4, ['MPI Rank 0', 'MPI Rank 1', 'MPI Rank 2', 'MPI Rank 3'])
        """
        seq = self._folded()
        record = parse_int(query, "record", 0, len(seq.records))
        depth = seq.records[record]["depth"]
        elements = seq.elements[depth][seq.record_of[depth] == record]
        offset, limit = self._page(query, len(elements))
        m, key, padded = self._selection(query)
        page = elements[offset:offset + limit]
        values = self._page_collapsed(key, padded, m.dtype, depth, page.tolist())
        children = [{"index": int(e), "name": self._tree.name(int(e)), "class": self._tree.class_name(int(e)),
                     "location": self._location_index(int(e)), "inclusive": _number(v)}
                    for e, v in zip(page.tolist(), values.tolist())]
        return {"record": record, "count": len(elements), "offset": offset, "children": children}

    def _location_index(self, element: int) -> int | None:
        """The location (column) an element is, None for machines, nodes and processes."""
        location = int(self._location_of_element[element])
        return None if location < 0 else location

    def _page(self, query: dict[str, str], count: int) -> tuple[int, int]:
        offset = parse_int(query, "offset", 0, max(count, 1), default=0)
        limit = parse_int(query, "limit", 1, MAX_PAGE + 1, default=200)
        return offset, limit


# CubeLib's reader (Cube4Parser.yy) takes a <coord> of a location (locId, or CUBE3's thrdId:
# both the <location Id>), a location group (lgId, or CUBE3's procId: the <locationgroup Id>)
# or a system-tree node (stnId: the <systemtreenode Id>; CUBE3's nodeId and machId: the n-th
# non-root / root system-tree node in definition order).
_ELEMENT_COORDS = ("lgId", "procId", "stnId", "nodeId", "machId")


def _cart(cart: ElementTree.Element, ids: np.ndarray, order: np.ndarray,
          elements: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    """One ``<cart>``: its dims and, per ``<coord locId>`` (or ``thrdId``) naming a location, its
    grid cell (C order) and location index; with ``elements`` (per attribute of
    ``_ELEMENT_COORDS``, the system-tree element of each id), per coordinate of a process or
    node its cell and element (``element_cells``, ``elements``). Coordinates outside the grid or
    of unknown locations are left out (CubeLib refuses the file)."""
    sizes = [max(int(d.get("size", "0")), 0) for d in cart.iter("dim")]
    dims = [{"name": d.get("name", ""), "size": n, "periodic": d.get("periodic") == "true"}
            for d, n in zip(cart.iter("dim"), sizes)]
    cells, locations, element_cells, element_ids = [], [], [], []
    for coord in cart.iter("coord"):
        point = [int(x) for x in (coord.text or "").split()]
        if len(point) != len(sizes) or not all(0 <= x < n for x, n in zip(point, sizes)):
            continue
        cell = int(np.ravel_multi_index(point, sizes))
        loc_id = coord.get("locId", coord.get("thrdId"))
        if loc_id is not None:
            at = int(np.searchsorted(ids, int(loc_id), sorter=order))
            if at < len(ids) and ids[order[at]] == int(loc_id):
                cells.append(cell)
                locations.append(int(order[at]))
            continue
        for name in _ELEMENT_COORDS:
            known = (elements or {}).get(name)
            if coord.get(name) is not None and known is not None and 0 <= int(coord.get(name, "-1")) < len(known):
                element_cells.append(cell)
                element_ids.append(int(known[int(coord.get(name, "-1"))]))
                break
    return {"name": cart.get("name", ""), "dims": dims, "cells": np.asarray(cells, dtype=np.int64),
            "locations": np.asarray(locations, dtype=np.int64),
            "element_cells": np.asarray(element_cells, dtype=np.int64),
            "elements": np.asarray(element_ids, dtype=np.int64)}


def _groups(records: list[int], record_of: np.ndarray, values: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The values of each record's instances (``record_of``: per value its record). One record:
    all values; a few: a mask each; many (an irregular machine): one stable sort."""
    if len(records) == 1:
        return [(records[0], values)]
    if len(records) <= 8:
        return [(r, values[record_of == r]) for r in records]
    order = np.argsort(record_of, kind="stable")
    ids, starts = np.unique(record_of[order], return_index=True)
    ends = np.append(starts[1:], len(order))
    return [(int(r), values[order[lo:hi]]) for r, lo, hi in zip(ids.tolist(), starts.tolist(), ends.tolist())]


def _statistics(values: np.ndarray, dtype: str) -> dict[str, Any]:
    """min / mean / max over a record's instances' values (those that are numbers), their sum
    (min / max for MINDOUBLE / MAXDOUBLE: the metric's own combination) and the count."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return {"min": None, "max": None, "mean": None, "sum": None if dtype in ("MINDOUBLE", "MAXDOUBLE") else 0.0,
                "instances": len(values)}
    low, high, total = finite.min(), finite.max(), finite.sum()
    whole = low if dtype == "MINDOUBLE" else high if dtype == "MAXDOUBLE" else total
    return {"min": _number(low), "max": _number(high), "mean": _number(total / len(finite)), "sum": _number(whole),
            "instances": len(values)}


def _histogram(values: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """``bins`` equal bins from the values' min to max, or one bin where their span is zero or
    too small (or too large) for that many distinct finite float64 edges: large nearly equal
    counts such as UINT64 values near 2**64, for which ``np.histogram`` raises.

    Example
    -------
    >>> counts, edges = _histogram(np.array([2.0**64, 2.0**64 + 4096]), 40)
    >>> counts.tolist(), len(edges)
    ([2], 2)
    """
    low, high = float(values.min()), float(values.max())
    with np.errstate(over="ignore", invalid="ignore"):  # a span beyond float64: caught below
        edges = np.linspace(low, high, bins + 1)
    if not (np.all(np.isfinite(edges)) and np.all(np.diff(edges) > 0)):  # also all values equal
        return np.array([len(values)]), np.array([low, high])
    return np.histogram(values, bins=edges)


def _peers(values: np.ndarray) -> dict[str, float | None]:
    """What Cube's peer modes refer the system tree's leaves (the locations) to: the largest
    location value (peer percent: a value in percent of it) and the smallest one that is not
    0 (peer distribution: (value - that) / (largest - that)), as Scalasca's quick reference
    defines the modes. Nulls without locations or numbers."""
    finite = values[np.isfinite(values)]
    nonzero = finite[finite != 0]
    return {"max": _number(finite.max()) if len(finite) else None,
            "min_nonzero": _number(nonzero.min()) if len(nonzero) else None}


def _remember(cache: OrderedDict, key: Any, value: Any, keep: int = _CACHE) -> None:
    cache[key] = value
    while len(cache) > keep:
        cache.popitem(last=False)


class _Sequence:
    """The report's system tree folded into sequence records, with the map back to its
    elements: per depth, the elements there (those with locations below them) and their records."""

    def __init__(self, records: list[dict[str, Any]], elements: list[np.ndarray], record_of: list[np.ndarray]):
        self.records = records
        self.elements = elements
        self.record_of = record_of


def _sequence(form: dict[str, Any]) -> _Sequence:
    """The core's sequence form (``Report.sequence_form``: per element its record, the elements
    with a record by depth, per record parent, depth, instances, copies, class) as the viewer
    keeps it: record dicts with their children, and per depth the elements there (ascending)
    and their records."""
    parent, depth = form["parent"].tolist(), form["depth"].tolist()
    records: list[dict[str, Any]] = [
        {"class": c, "copies": int(k), "depth": d, "parent": int(p), "instances": int(i), "children": []}
        for c, k, d, p, i in zip(form["cls"], form["copies"].tolist(), depth, parent, form["instances"].tolist())]
    for r, p in enumerate(parent):
        if p >= 0:
            records[p]["children"].append(r)
    record_of = np.asarray(form["record_of"], dtype=np.int64)
    shown = np.asarray(form["elements"], dtype=np.int64)
    bounds = form["depth_start"].tolist()
    elements = [shown[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
    return _Sequence(records, elements, [record_of[e] for e in elements])
