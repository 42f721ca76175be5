"""CUBE4 reports (``.cubex``): open, explore, aggregate and write call-path profiles.

A report has three hierarchies — metrics, call paths (cnodes) and the system tree — and one
severity function ``value(metric, cnode, location)``. Every hierarchy is enumerated so that a
child has a higher index than its parent; metric values are NumPy arrays ``[cnode, location]``
indexed by those enumerations (cnodes in call-tree preorder, locations in system-tree order).
Opening a report reads only its definitions; a metric's values are read on first use.

Example
-------
>>> import cubescale
>>> report = cubescale.open(cubescale.examples.report_path())
>>> report
<Report demo.cubex: 6 metrics, 21 call paths, 20 locations>
>>> time = report.values("time")             # inclusive by default
>>> round(float(time[0].sum()), 4)
25.9828
>>> round(float(report.values("time", inclusive=False)[0, 0]), 6)
0.001722
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import numpy as np

from . import panes as _panes
from . import views as _views
from ._core import cube as _cube
from ._memory import in_gib
from .dtypes import numpy_type, page_aligned_empty
from .panes import Panes
from .records import Cnode, Location, Metric, Region
from .systree import SingleNodeTree

__all__ = ["Cnode", "Location", "Metric", "Panes", "Region", "Report", "open", "write"]


class Report:
    """A CUBE4 report: metric tree, call tree, system tree and lazily loaded values.

    Create one with :func:`cubescale.open`. Values are NumPy arrays ``[cnode, location]``;
    the stored form of a metric is returned without copying (read-only), the converted form
    (inclusive from exclusive or back) is computed in the C++ core in one loop.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> [m.name for m in r.metrics][:3]
    ['visits', 'time', 'min_time']
    >>> r.values("visits", inclusive=True)[:, 0][:3].tolist()
    [220, 219, 1]
    """

    def __init__(self, core: _cube.Report, path: str = ""):
        self._core = core
        self.path = path
        self._metrics: list[Metric] | None = None
        self._regions: list[Region] | None = None
        self._cnodes: list[Cnode] | None = None
        self._locations: list[Location] | None = None

    @property
    def metrics(self) -> list[Metric]:
        """The metric tree in document order (parents before children), built on first use.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> r.metrics[1].name, r.metrics[1].kind
        ('time', 'INCLUSIVE')
        """
        if self._metrics is None:
            definitions = self._core.metrics()
            children: list[list[int]] = [[] for _ in definitions]
            for i, d in enumerate(definitions):
                if d.parent is not None:
                    children[d.parent].append(i)
            self._metrics = [Metric.from_definition(i, d, tuple(children[i])) for i, d in enumerate(definitions)]
        return self._metrics

    @classmethod
    def from_anchor_xml(cls, xml: str | bytes) -> Report:
        """A report with the definitions of an ``anchor.xml`` text and all values zero;
        fill it with :meth:`set_values` (e.g. to generate reports).

        Example
        -------
        >>> import cubescale, numpy as np
        >>> xml = (b'<cube version="4.4"><metrics><metric id="0" type="EXCLUSIVE"><uniq_name>t</uniq_name>'
        ...        b'<dtype>DOUBLE</dtype></metric></metrics><program><region id="0" mod="" begin="0" end="0">'
        ...        b'<name>main</name></region><cnode id="0" calleeId="0"/></program><system>'
        ...        b'<systemtreenode Id="0"><name>m</name><class>machine</class><locationgroup Id="0">'
        ...        b'<name>p</name><rank>0</rank><type>process</type><location Id="0"><name>t</name>'
        ...        b'<rank>0</rank><type>thread</type></location></locationgroup></systemtreenode></system></cube>')
        >>> r = cubescale.Report.from_anchor_xml(xml)
        >>> r.set_values("t", np.array([[2.5]]))
        >>> float(r.values("t")[0, 0])
        2.5
        """
        data = xml.encode() if isinstance(xml, str) else bytes(xml)
        return cls(_cube.report_from_anchor(data), "")

    def set_values(self, metric: int | str | Metric, values: np.ndarray) -> None:
        """Replaces a metric's values (as stored: in the metric's kind) by an array of shape
        ``[cnode, location]`` (plus value fields) convertible to the metric's dtype.

        Example
        -------
        >>> import cubescale, numpy as np
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> r.set_values("visits", np.ones(r.shape, dtype=np.uint64))
        >>> int(r.values("visits", inclusive=True)[0, 0])
        21
        """
        m = self.metric(metric)
        element, trailing = numpy_type(m.dtype)
        array = np.ascontiguousarray(values, dtype=element)
        if array.shape != self.shape + trailing:
            raise ValueError(f"values must have shape {self.shape + trailing}, not {array.shape}")
        self._core.set_values(m.index, array.view(np.uint8).reshape(-1))

    # ---- definitions

    @property
    def attrs(self) -> dict[str, str]:
        """Report-level attributes (creator, CUBE version, ...)."""
        return self._core.attrs

    @property
    def mirrors(self) -> list[str]:
        """The documentation mirrors of ``<doc><mirrors>``, in order: the base URLs that Cube puts
        in place of ``@mirror@`` in metric and region URLs (Score-P and Scalasca write them).

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).mirrors
        []
        """
        return list(self._core.mirrors)

    @property
    def version(self) -> str:
        """The CUBE format version the report was read as (``"4.4"`` for built reports).

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).version
        '4.4'
        """
        return self._core.version

    @property
    def regions(self) -> list[Region]:
        """All code regions (built on first use: opening a report does not need them)."""
        if self._regions is None:
            self._regions = [Region.from_definition(i, d) for i, d in enumerate(self._core.regions())]
        return self._regions

    @property
    def cnode_parents(self) -> np.ndarray:
        """Parent index of every cnode (-1 for roots), in preorder: ``parents[i] < i``."""
        return self._core.cnode_parents()

    @property
    def cnodes(self) -> list[Cnode]:
        """All call paths in preorder (built on first use)."""
        if self._cnodes is None:
            parents = self.cnode_parents.tolist()
            regions = self._core.cnode_regions().tolist()
            ids = self._core.cnode_file_ids().tolist()
            children: list[list[int]] = [[] for _ in parents]
            for i, p in enumerate(parents):
                if p >= 0:
                    children[p].append(i)
            self._cnodes = [
                Cnode(i, ids[i], self.regions[regions[i]], None if parents[i] < 0 else parents[i], tuple(children[i]))
                for i in range(len(parents))
            ]
        return self._cnodes

    def cnode_parameters(self, cnode: int) -> list[dict[str, str]]:
        """The parameters of a call path as stored: one dict of XML attributes per
        ``<parameter>`` (``partype``, ``parkey``, ``parvalue`` in files Score-P writes).

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).cnode_parameters(0)
        []
        """
        return self._core.cnode_parameters(int(cnode))

    @property
    def system(self) -> SingleNodeTree:
        """The system tree (machine, nodes, processes, threads) as a single-node tree."""
        return SingleNodeTree(self._core.system_tree())

    @property
    def locations(self) -> list[Location]:
        """All locations in system-tree order: the columns of :meth:`values`."""
        if self._locations is None:
            tree = self._core.system_tree()
            elements = self._core.location_elements().tolist()
            ranks = self._core.location_ranks().tolist()
            ids = self._core.location_file_ids().tolist()
            group_rank = dict(zip(self._core.location_group_elements().tolist(),
                                  self._core.location_group_ranks().tolist()))
            self._locations = []
            for i, e in enumerate(elements):
                group = tree.parent(e)
                assert group is not None  # a location sits in a location group
                self._locations.append(Location(i, ids[i], tree.name(e), tree.class_name(e), ranks[i],
                                                 tree.name(group), group_rank.get(group, -1)))
        return self._locations

    @property
    def location_group_count(self) -> int:
        """The number of location groups (processes, accelerator contexts).

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).location_group_count
        4
        """
        return len(self._core.location_group_elements())

    @property
    def shape(self) -> tuple[int, int]:
        """(number of cnodes, number of locations): the shape of every values array."""
        return (self._core.cnode_count, self._core.location_count)

    def metric(self, key: int | str | Metric) -> Metric:
        """A metric by index, unique name or display name.

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).metric("Time").name
        'time'
        """
        if isinstance(key, Metric):
            return key
        if isinstance(key, (int, np.integer)):
            return self.metrics[int(key)]
        for m in self.metrics:
            if m.name == key:
                return m
        for m in self.metrics:
            if m.display_name == key:
                return m
        raise KeyError(f"no metric {key!r}; metrics are {', '.join(m.name for m in self.metrics)}")

    # ---- values

    def _view(self, raw: np.ndarray, metric: Metric) -> np.ndarray:
        element, shape = self._layout(metric)
        return raw.view(element).reshape(shape)

    def _layout(self, metric: Metric) -> tuple[np.dtype, tuple[int, ...]]:
        """NumPy dtype and shape of a metric's value array."""
        element, trailing = numpy_type(metric.dtype)
        return element, self.shape + trailing

    def values(self, metric: int | str | Metric, inclusive: bool | None = True,
               out: np.ndarray | None = None) -> np.ndarray:
        """The values of a metric as an array ``[cnode, location]`` (plus value fields).

        ``inclusive=True`` gives inclusive values along the call tree, ``False`` exclusive,
        ``None`` the values as stored in the file (never copied). The array is read-only and
        its dtype follows the metric's data type (``float64``, ``uint64``, a structured
        TAU_ATOMIC record, ``[..., n]`` for NDOUBLES(n) ...).

        ``out`` takes a writable, C-contiguous array of that dtype and shape, fills it and
        returns it. Reusing one buffer across calls saves the fresh memory of every call: for a
        matrix of gigabytes, the kernel's zeroing of new pages costs about as much as the
        conversion itself. Buffers from ``values_like`` start on a page, which is fastest;
        any other buffer aligned for the value type (8 bytes for doubles) works too. If the
        conversion fails (e.g. OverflowError for SCALE_FUNC), ``out`` holds unspecified values.
        Threads that share one ``out`` must not convert into it at the same time.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> v = r.values("min_time", inclusive=True)   # MINDOUBLE: minimum over the subtree
        >>> (v.shape, v.dtype.name, round(float(v[3, 0]) * 1e6, 2))  # main's shortest call, in µs
        ((21, 20), 'float64', 3.01)
        >>> buffer = r.values_like("time")
        >>> r.values("time", inclusive=False, out=buffer) is buffer
        True
        """
        m = self.metric(metric)
        if out is None:
            try:
                return self._view(self._core.values(m.index, inclusive), m)
            except MemoryError as e:
                raise self._out_of_memory(m) from e
        element, shape = self._layout(m)
        if not isinstance(out, np.ndarray) or out.dtype != element or out.shape != shape:
            raise ValueError(f"out= must be an array of dtype {element} and shape {shape}")
        if not out.flags.aligned:
            raise ValueError("out= must be aligned for its dtype")
        self._core.values_into(m.index, inclusive, out)
        return out

    def values_like(self, metric: int | str | Metric) -> np.ndarray:
        """An uninitialized array with the dtype and shape of ``values(metric)``: a buffer for
        ``values(..., out=)`` that one can reuse across metrics of the same type.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> r.values_like("time").shape
        (21, 20)
        """
        element, shape = self._layout(self.metric(metric))
        return page_aligned_empty(shape, element)

    def present(self, metric: int | str | Metric) -> np.ndarray:
        """Which cnode rows the file stores for a metric (the others are all zero).

        Example
        -------
        >>> import cubescale
        >>> int(cubescale.open(cubescale.examples.report_path()).present("time").sum())
        21
        """
        m = self.metric(metric)
        if self._stores_no_values(m):
            return np.zeros(self.shape[0], dtype=bool)
        return self._core.present(m.index, None)

    def cnode_values(self, metric: int | str | Metric, inclusive: bool = True) -> np.ndarray:
        """Per call path, the metric over all locations (the call-tree pane of Cube): sums,
        or minimum / maximum for MINDOUBLE / MAXDOUBLE.

        The report computes both kinds once per metric, in one pass over the stored values on
        all cores (never converting the whole matrix), and keeps them; later calls copy
        one number per call path. A metric whose file has no values for it (Score-P leaves out
        metrics without values) is zero without loading its matrix.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> r.cnode_values("visits", inclusive=True)[:3].tolist()
        [3372.0, 936.0, 4.0]
        """
        m = self.metric(metric)
        if self._stores_no_values(m):
            return np.zeros(self.shape[0])
        try:
            return np.array(_cube.cnode_totals(self._core, m.index, bool(inclusive)))
        except MemoryError as e:
            raise self._out_of_memory(m) from e

    def metric_totals(self, inclusive: bool = True) -> np.ndarray:
        """Per metric, its value over the whole program and machine (the metric pane of Cube):
        with ``inclusive=True`` as a collapsed metric shows it, its stored value (which, as
        CubeLib defines it, already includes its child metrics); with ``inclusive=False`` as
        an expanded one, the stored value minus the children's stored values.
        MINDOUBLE / MAXDOUBLE metrics give their minimum / maximum.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> int(r.metric_totals()[0])     # all visits
        3372
        """
        return _panes.metric_totals(self, inclusive)

    def panes(self, metric: int | str | Metric, cnode: int | None = None,
              metric_expanded: bool = False, cnode_expanded: bool = False) -> Panes:
        """The values Cube shows for a selection: a metric (collapsed: its stored values,
        which include its child metrics; expanded: minus its children's stored values, see
        :func:`cubescale.panes.subtracted_children`) and a call path (collapsed: with its
        callees; expanded: alone; default the first root).

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> p = r.panes("time", cnode=0, cnode_expanded=True)
        >>> bool(p.call_inclusive[0] >= p.call_exclusive[0])
        True
        """
        return _panes.select(self, self.metric(metric), cnode, metric_expanded, cnode_expanded)

    def system_values(self, metric: int | str | Metric, cnode: int, inclusive: bool = True) -> np.ndarray:
        """One call path's values of a metric per location as float64 (Cube's system pane),
        with (``inclusive=True``) or without its callees: from the stored values, reading
        only the rows of the call path's subtree (or children), never converting the matrix.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> r.system_values("visits", 0)[:5].tolist()   # process 0: the master, then 4 workers
        [220.0, 152.0, 152.0, 152.0, 152.0]
        >>> r.system_values("visits", 0, inclusive=False)[:5].tolist()
        [1.0, 0.0, 0.0, 0.0, 0.0]
        """
        m = self.metric(metric)
        if not 0 <= int(cnode) < self.shape[0]:
            raise IndexError(f"call path {cnode} out of range ({self.shape[0]} call paths)")
        if self._stores_no_values(m):  # zero everywhere: no matrix for the rows of a subtree
            return np.zeros(self.shape[1])
        try:
            return _cube.cnode_row(self._core, m.index, bool(inclusive), int(cnode))
        except MemoryError as e:
            raise self._out_of_memory(m) from e

    def metric_depth(self, metric: int | str | Metric) -> int:
        """How deep a metric sits in the metric tree (0 for a root).

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> r.metric_depth("time"), r.metric_depth("min_time")
        (0, 0)
        """
        m, depth = self.metric(metric), 0
        while m.parent is not None:
            m = self.metrics[m.parent]
            depth += 1
        return depth

    def location_values(self, metric: int | str | Metric, level: str | int = "process",
                        inclusive: bool = True) -> tuple[np.ndarray, list[str]]:
        """Values combined over system-tree subtrees: one column per element at ``level``
        (a class such as ``"process"`` or ``"node"``, or a depth). Returns the array
        ``[cnode, element]`` and the elements' names.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> values, names = r.location_values("visits", "process")
        >>> names, values[0].tolist()
        (['MPI Rank 0', 'MPI Rank 1', 'MPI Rank 2', 'MPI Rank 3'], [828, 858, 858, 828])
        """
        m = self.metric(metric)
        tree = self._core.system_tree()
        depth = level if isinstance(level, int) else self._depth_of_class(tree, level)
        ancestors = self._core.location_ancestors(depth)
        elements, group = np.unique(ancestors, return_inverse=True)
        raw = self._core.combine_locations(m.index, inclusive, group.astype(np.uint32), len(elements))
        element, trailing = numpy_type(m.dtype)
        out = raw.view(element).reshape((self.shape[0], len(elements)) + trailing)
        return out, [tree.name(int(e)) for e in elements]

    def _depth_of_class(self, tree, cls: str) -> int:
        for e in range(len(tree)):
            if tree.class_name(e) == cls:
                return tree.depth(e)
        raise KeyError(f"no system tree element of class {cls!r}")

    def load_all(self) -> None:
        """Reads the values of every metric now (otherwise each is read on first use)."""
        _cube.load_all(self._core)

    # ---- the file beyond the report (issue #19; small block, to be moved with the split)

    def ignored_bytes(self, metric: int | str | Metric) -> int:
        """Bytes of ``metric``'s data member beyond the rows its index lists, which were
        ignored when it was loaded (as Cube ignores them): trailing rows that Scalasca and
        CUBE 4.0 writers leave, or a few bytes of padding. Loads the metric if needed (not one
        without values members: 0); 0 for reports not read from a file.

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).ignored_bytes("time")
        0
        """
        m = self.metric(metric)
        if self._stores_no_values(m):
            return 0
        return _cube.report_ignored_bytes(self._core, m.index)

    def _stores_no_values(self, m: Metric) -> bool:
        """Whether ``m`` is a stored metric that its file holds no values members for and that
        nothing has given values since (it is zero everywhere): then totals, present rows and
        ignored bytes need not load its dense matrix (a hostile anchor naming 20,000 call paths
        and 20,000 locations would ask for 3.2 GB per such metric)."""
        return not m.derived and not self._core.loaded(m.index) and not self._core.stores_values(m.index)

    def _out_of_memory(self, m: Metric) -> MemoryError:
        """The MemoryError of a metric's matrix that does not fit, saying what it needs."""
        element, trailing = numpy_type(m.dtype)
        width = element.itemsize * int(np.prod(trailing, dtype=np.int64))
        cnodes, locations = self.shape
        return MemoryError(f"metric {m.name}: its values, {cnodes} call paths x {locations} locations x {width} "
                           f"bytes, need {in_gib(cnodes * locations * width)}")

    @property
    def extra_members(self) -> list[tuple[str, int]]:
        """``(name, size)`` of each member of the file that is not part of the report (text
        files, a ``remapping.spec`` ...), in file order. :func:`write` copies them.

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).extra_members
        [('README', 208)]
        """
        return [(name, int(size)) for name, size in _cube.report_extra_members(self._core)]

    def extra_member_bytes(self, name: str) -> bytes:
        """The bytes of the extra member ``name`` (``KeyError`` if there is none).

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> r.extra_member_bytes("README")[:25]
        b'This report was written b'
        """
        return _cube.report_extra_member_bytes(self._core, name)

    # ---- views

    def aggregate_threads(self, strategy: str = "sum", **options) -> Report:
        """A new report with every process's threads aggregated: ``"sum"``, ``"set"``,
        ``"key"``, ``"calltree"`` or ``"value"`` (see :mod:`cubescale.threads` for the
        strategies and :func:`cubescale.threads.aggregate` for the options).

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> r.shape, r.aggregate_threads("sum").shape   # 4 processes x 5 threads -> 4 locations
        ((21, 20), (21, 4))
        """
        from .threads import aggregate

        return aggregate(self, strategy, **options)

    def to_dataframe(self, metrics: Iterable[int | str | Metric] | None = None, inclusive: bool = True,
                     names: bool = True):
        """A pandas DataFrame with one row per (cnode, location), indexed by ``(cnode,
        location)``, with one column per metric (metrics with scalar values only) and, with
        ``names``, the categorical columns ``region``, ``call_path`` (``"main/solve"``),
        ``process`` and ``thread`` (requires pandas: ``pip install 'cubescale[pandas]'``).

        Example
        -------
        >>> import cubescale
        >>> df = cubescale.open(cubescale.examples.report_path()).to_dataframe(["visits", "time"])
        >>> int(df.loc[(0, 0), "visits"]), df.loc[(1, 0), "region"], df.loc[(1, 0), "thread"]
        (220, '<module>', 'Master thread')
        >>> df.groupby("call_path", observed=True)["visits"].sum()["stencil.py/Team._work/update_chunk"].item()
        960
        """
        return _views.to_dataframe(self, metrics, inclusive, names)

    def pop(self, scout: Report | None = None):
        """POP's efficiencies of this run as a pandas DataFrame (``scout``: its wait-state
        report); see :func:`cubescale.pop.pop`.

        Example
        -------
        >>> import cubescale
        >>> frame = cubescale.open(cubescale.examples.report_path()).pop()
        >>> bool(0 < frame.loc["Load balance", "demo.cubex"] <= 1)
        True
        """
        from .pop import pop

        return pop(self, scout)

    def to_hatchet(self, metrics: Iterable[int | str | Metric] | None = None):
        """This report as a ``hatchet.GraphFrame``; see :func:`cubescale.hatchet.to_hatchet`.

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).to_hatchet(["time"]).default_metric
        'time'
        """
        from .hatchet import to_hatchet

        return to_hatchet(self, metrics)

    def call_tree_text(self, metric: int | str | Metric | None = None, inclusive: bool = True,
                       max_depth: int | None = None, max_lines: int = 200, *, percent: bool = False,
                       sort: bool = False, hide_zero: bool = False) -> str:
        """The call tree as indented text, with each call path's value of ``metric`` over all
        locations: ``percent`` adds its share of the whole program, ``sort`` puts the largest
        sibling first, ``hide_zero`` leaves out subtrees that are zero throughout. Tiny
        negative values from rounding are shown as 0.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> print(r.call_tree_text("visits", max_depth=1))
        visits (occ, inclusive)
        3372  stencil.py
          936  <module>
          2432  Team._work
        >>> print(r.call_tree_text("time", max_depth=1, percent=True))
        time (sec, inclusive), % of 25.9828
        25.9828  100.0%  stencil.py
          5.29908   20.4%  <module>
          20.6819   79.6%  Team._work
        """
        return _views.call_tree_text(self, metric, inclusive, max_depth, max_lines, percent=percent, sort=sort,
                                     hide_zero=hide_zero)

    def view(self, height: int = 720):
        """The browser explorer (``cubescale view``) inline in a notebook: a server on a
        background thread, shown as an iframe; ``.stop()`` ends it. Needs the ``view`` extra.

        Example
        -------
        >>> import cubescale
        >>> running = cubescale.open(cubescale.examples.report_path()).view(height=400)
        >>> "<iframe" in running._repr_html_()
        True
        >>> running.stop()
        """
        from .viewer.notebook import show  # aiohttp only when asked for

        return show(self, height=height)

    def __repr__(self) -> str:
        cnodes, locations = self.shape
        name = os.path.basename(self.path) if self.path else "in memory"
        return (f"<Report {name}: {len(self.metrics)} metrics, {cnodes} call paths, "
                f"{locations} location{'s' if locations != 1 else ''}>")

    def _repr_html_(self) -> str:
        return _views.report_html(self)


# ---------------------------------------------------------------------------------- entry points

def open(path: str | os.PathLike) -> Report:  # noqa: A001 (mirrors builtins.open on purpose)
    """Opens a CUBE4 report (``.cubex``), or the report of a Score-P / Scalasca experiment
    directory (``profile.cubex``, ``summary.cubex``, ``trace.cubex``). Reads the definitions
    only; values load on use.

    Raises :class:`cubescale.FormatError` (with ``file``, ``member`` and ``offset``) for
    malformed input and for a file that is no report (an OTF2 trace's files, text: said so),
    and ``OSError`` when the file cannot be read (``FileNotFoundError``, ``IsADirectoryError``
    for a directory without a report).

    Example
    -------
    >>> import cubescale
    >>> cubescale.open(cubescale.examples.report_path()).shape
    (21, 20)
    """
    from .commands._inputs import report_path

    path = report_path(os.fspath(path))  # what the command line says of a wrong file, too
    return Report(_cube.open_cubex(path), path)


def write(report: Report, path: str | os.PathLike, compress: bool = False, derived: str = "expressions") -> None:
    """Writes a report as ``.cubex`` that Cube, pycubexr and cubescale read.

    Rows are streamed in blocks (bounded memory), all-zero rows are left out, ``compress``
    stores zlib-compressed rows (ZCUBEX); the file appears only when complete.
    Derived metrics are written as CubePL expressions without data (``derived="expressions"``,
    as CubeW does; Cube and cubescale compute them, pycubexr 2.1 rejects such files) or with
    their computed values as ordinary metrics (``derived="values"``, readable everywhere).
    Members of the file a report was read from that are not part of the report
    (:attr:`Report.extra_members`) are copied first.

    Example
    -------
    >>> import cubescale, tempfile, os
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> out = os.path.join(tempfile.mkdtemp(), "copy.cubex")
    >>> cubescale.write(r, out)
    >>> bool((cubescale.open(out).values("time") == r.values("time")).all())
    True
    """
    if derived not in ("expressions", "values"):
        raise ValueError(f"derived= must be 'expressions' or 'values', not {derived!r}")
    _cube.write_cubex(report._core, os.fspath(path), compress, derived_as_values=derived == "values")
