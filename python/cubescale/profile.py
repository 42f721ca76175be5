"""Local call-path profiles: what one rank measured, with local ids (the Scalasca architecture paper, section 4.3).

A :class:`LocalProfile` holds the metrics, regions and call paths one rank saw, its locations
(threads, GPU streams) and one NumPy array ``[local cnode, local location]`` per metric.
Ranks may see different call trees, and the threads of one rank may visit different call
paths (zeros elsewhere). :func:`cubescale.parallel.write_report` unifies the definitions of
all ranks and collates their values into one ``.cubex``.

Example
-------
>>> import numpy as np
>>> from cubescale import Metric, Region
>>> from cubescale.profile import LocalProfile
>>> p = LocalProfile(
...     metrics=[Metric(name="time", unit="sec"), Metric(name="visits", dtype="UINT64")],
...     regions=[Region(name="main"), Region(name="solve")],
...     cnode_parents=[-1, 0], cnode_regions=[0, 1],
...     locations=[("Master thread", "thread"), ("OMP thread 1", "thread")],
...     values=[np.array([[1.0, 0.5], [2.0, 2.5]]), np.array([[1, 1], [10, 12]], dtype=np.uint64)])
>>> p.shape
(2, 2)
>>> p.values("visits")[1].tolist()
[10, 12]
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._core import cube as _cube
from ._core import profile as _profile
from .dtypes import numpy_type
from .records import Metric, Region
from .systree import SingleNodeTree

__all__ = ["LocalProfile", "host_of"]


def _metric_definition(m: Metric | _cube.Metric) -> _cube.Metric:
    return m.definition() if isinstance(m, Metric) else m


def _region_definition(r: Region | _cube.Region) -> _cube.Region:
    return r.definition() if isinstance(r, Region) else r


class LocalProfile:
    """One rank's call-path profile with local ids.

    Parameters
    ----------
    metrics : :class:`cubescale.Metric` records (or the core's ``_core.cube.Metric``)
        In preorder of the metric tree (``parent`` indices into this list).
    regions : :class:`cubescale.Region` records (or the core's ``_core.cube.Region``)
    cnode_parents, cnode_regions : array-like of int
        The call tree in preorder: each call path's parent (-1 for a root) and region.
    locations : sequence of (name, type)
        The rank's locations (threads ``"thread"``, GPU streams ``"gpu"`` ...), the columns.
    values : sequence of arrays
        Per metric an array ``[cnode, location]`` convertible to its data type, in its kind
        (EXCLUSIVE: without callees, INCLUSIVE: with them).
    cnode_parameters : sequence of mappings, optional
        Per call path its parameters (e.g. ``{"omp_threads": 4}``), numbers as ``numeric``.
    host, process : str, optional
        Where the rank ran (its system tree path); defaults: this host, ``"rank <r>"``.

    Example
    -------
    >>> import numpy as np
    >>> p = LocalProfile([Metric(name="time")], [Region(name="main")], [-1], [0],
    ...                  [("Master thread", "thread")], [np.ones((1, 1))])
    >>> p
    <LocalProfile: 1 metric, 1 call path, 1 location>
    """

    def __init__(self, metrics: Sequence[Metric | _cube.Metric], regions: Sequence[Region | _cube.Region],
                 cnode_parents: Any, cnode_regions: Any, locations: Sequence[tuple[str, str]],
                 values: Sequence[Any], cnode_parameters: Sequence[Any] | None = None,
                 host: str | None = None, process: str | None = None):
        definitions = [_metric_definition(m) for m in metrics]
        parents = np.asarray(cnode_parents, dtype=np.int64).reshape(-1)
        shape = (len(parents), len(locations))
        raw = []
        for d, v in zip(definitions, values):
            element, trailing = numpy_type(d.dtype)
            array = np.ascontiguousarray(v, dtype=element)
            if array.shape != shape + trailing:
                raise ValueError(f"metric {d.name}: values must have shape {shape + trailing}, not {array.shape}")
            raw.append(array.view(np.uint8).reshape(-1))
        parameters = [] if cnode_parameters is None else [_parameters(p) for p in cnode_parameters]
        self._core = _profile.LocalProfile(
            metrics=definitions, regions=[_region_definition(r) for r in regions], cnode_parents=parents,
            cnode_regions=np.asarray(cnode_regions, dtype=np.int64).reshape(-1), cnode_parameters=parameters,
            locations=[(str(n), str(t)) for n, t in locations], values=raw)
        self.host = host
        self.process = process

    @classmethod
    def _from_core(cls, core: Any, host: str | None = None, process: str | None = None) -> LocalProfile:
        """A profile around a core ``_core.profile.LocalProfile`` (e.g. one the core aggregated)."""
        profile = cls.__new__(cls)
        profile._core = core
        profile.host = host
        profile.process = process
        return profile

    @classmethod
    def from_report(cls, report, part: tuple[int, int] = (0, 1)) -> LocalProfile:
        """The processes ``i, i + n, i + 2n ...`` of a loaded report (``part=(i, n)``) with
        their threads: every metric in its stored kind, the whole call tree (call paths the
        part never visited are zero). Lets an mpirun script re-collate a report, and tests
        compare a collated report with its source. A part of several processes is one
        rank's profile (one process in :func:`~cubescale.parallel.write_report`'s machine);
        :func:`cubescale.parallel.recollate` keeps the report's processes for any number
        of ranks.

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> LocalProfile.from_report(r, part=(1, 2)).shape   # processes 1 and 3, 5 threads each
        (21, 10)
        """
        i, n = (int(x) for x in part)
        if not 0 <= i < n:
            raise ValueError(f"part {part}: need 0 <= i < n")
        groups = sorted({loc.process_rank for loc in report.locations})
        mine = set(groups[i::n])
        return cls.from_report_columns(report, [loc.index for loc in report.locations if loc.process_rank in mine])

    @classmethod
    def from_report_columns(cls, report, columns: list[int]) -> LocalProfile:
        """The locations ``columns`` (location indices) of a loaded report with every metric
        and call path; host and process are those of the first one. For a rank that takes a
        block of a report's processes (:func:`cubescale.parallel.recollate`).

        Example
        -------
        >>> import cubescale
        >>> r = cubescale.open(cubescale.examples.report_path())
        >>> p = LocalProfile.from_report_columns(r, [5, 6])
        >>> p.shape, p.process
        ((21, 2), 'MPI Rank 1')
        """
        values = [np.asarray(report.values(m, inclusive=None))[:, columns] for m in report.metrics]
        first = report.locations[columns[0]] if columns else None
        host = host_of(report, first.index) if first is not None else None
        return cls([m.definition() for m in report.metrics], [r.definition() for r in report.regions],
                   report.cnode_parents, [c.region.index for c in report.cnodes],
                   [(report.locations[c].name, report.locations[c].type) for c in columns], values,
                   [_parameters_of(report, c) for c in range(report.shape[0])],
                   host=host, process=first.process if first is not None else None)

    @classmethod
    def merge(cls, profiles: Sequence[LocalProfile]) -> LocalProfile:
        """Several profiles as one: the union of their metrics, regions and call paths in
        canonical order (the unification of :func:`cubescale.parallel.unify`, in this process)
        and their locations side by side, the first profile's columns first; zero where a
        profile never visited a call path. Host and process are the first profile's. For a
        rank that holds several processes (``cubescale collate`` with fewer ranks than reports).

        Example
        -------
        >>> import numpy as np
        >>> a = LocalProfile([Metric(name="t")], [Region(name="main"), Region(name="x")],
        ...                  [-1, 0], [0, 1], [("t0", "thread")], [np.array([[1.0], [2.0]])])
        >>> b = LocalProfile([Metric(name="t")], [Region(name="main")], [-1], [0],
        ...                  [("t0", "thread"), ("t1", "thread")], [np.array([[3.0, 4.0]])])
        >>> LocalProfile.merge([a, b]).values("t").tolist()
        [[1.0, 3.0, 4.0], [2.0, 0.0, 0.0]]
        """
        if not profiles:
            raise ValueError("no profiles to merge")
        return cls._from_core(_profile.merge_profiles([p._core for p in profiles]), host=profiles[0].host,
                              process=profiles[0].process)

    @property
    def shape(self) -> tuple[int, int]:
        """(local call paths, local locations): the shape of every values array.

        Example
        -------
        >>> import numpy as np
        >>> LocalProfile([Metric(name="t")], [Region(name="m")], [-1], [0],
        ...              [("t0", "thread"), ("t1", "thread")], [np.zeros((1, 2))]).shape
        (1, 2)
        """
        return (self._core.cnode_count, self._core.location_count)

    @property
    def metrics(self) -> list[_cube.Metric]:
        """The metric definitions (copies).

        Example
        -------
        >>> import numpy as np
        >>> LocalProfile([Metric(name="t")], [Region(name="m")], [-1], [0],
        ...              [("t0", "thread")], [np.zeros((1, 1))]).metrics[0].name
        't'
        """
        return list(self._core.metrics)

    @property
    def locations(self) -> list[tuple[str, str]]:
        """(name, type) of every location.

        Example
        -------
        >>> import numpy as np
        >>> LocalProfile([Metric(name="t")], [Region(name="m")], [-1], [0],
        ...              [("t0", "thread")], [np.zeros((1, 1))]).locations
        [('t0', 'thread')]
        """
        return list(self._core.locations)

    def values(self, metric: int | str) -> np.ndarray:
        """A copy of a metric's values ``[cnode, location]`` in its data type.

        Example
        -------
        >>> import numpy as np
        >>> LocalProfile([Metric(name="t")], [Region(name="m")], [-1], [0],
        ...              [("t0", "thread")], [np.full((1, 1), 2.5)]).values("t").tolist()
        [[2.5]]
        """
        index = metric if isinstance(metric, int) else [m.name for m in self.metrics].index(metric)
        element, trailing = numpy_type(self.metrics[index].dtype)
        return self._core.values(index).view(element).reshape(self.shape + trailing)

    def view(self, rank: int = 0) -> SingleNodeTree:
        """This rank's path in the machine: machine > host > process > its locations, for
        :func:`cubescale.parallel.build_system_tree`.

        Example
        -------
        >>> import numpy as np
        >>> p = LocalProfile([Metric(name="t")], [Region(name="m")], [-1], [0],
        ...                  [("t0", "thread")], [np.zeros((1, 1))], host="n1")
        >>> v = p.view(rank=3)
        >>> [v.name(e) for e in range(len(v))]
        ['machine', 'n1', 'rank 3', 't0']
        """
        tree = SingleNodeTree()
        machine = tree.add_root("machine")
        node = tree.add(machine, "node", self.host or socket.gethostname())
        process = tree.add(node, "process", self.process or f"rank {rank}")
        for name, kind in self.locations:
            tree.add(process, kind, name, kind="location")
        return tree

    def __repr__(self) -> str:
        m, (c, loc) = len(self.metrics), self.shape
        return (f"<LocalProfile: {m} metric{'s' if m != 1 else ''}, {c} call path{'s' if c != 1 else ''}, "
                f"{loc} location{'s' if loc != 1 else ''}>")


def host_of(report, location: int = 0) -> str | None:
    """The name of the element above a location's process in a loaded report (its host, as
    Score-P names nodes), or None for a process right under the root or no such location.

    Example
    -------
    >>> import cubescale
    >>> host_of(cubescale.open(cubescale.examples.report_path()), 4)   # the machine the demo ran on
    'vm'
    """
    if not 0 <= location < report.shape[1]:
        return None
    system = report.system
    process = system.parent(int(report._core.location_elements()[location]))
    node = system.parent(process) if process is not None else None
    return system.name(node) if node is not None else None


def _parameters(mapping: Any) -> list[dict[str, str]]:
    """A call path's parameters as CUBE ``<parameter>`` attribute dicts."""
    if isinstance(mapping, (list, tuple)):  # already attribute dicts (from a report)
        return [dict(a) for a in mapping]
    out = []
    for key, value in dict(mapping).items():
        numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
        out.append({"partype": "numeric" if numeric else "string", "parkey": str(key), "parvalue": str(value)})
    return out


def _parameters_of(report, cnode: int) -> list[dict[str, str]]:
    return report.cnode_parameters(cnode)


def _call_path_names(core) -> list[str]:
    """Call-path names ("main/solve/MPI_Recv") of a core local profile's rows: the analysis'
    instance statistics name rows of it, in one process and under mpirun."""
    parents, regions, names = core.cnode_parents(), core.cnode_regions(), [r.name for r in core.regions]
    paths: list[str | None] = [None] * len(parents)

    def path(c: int) -> str:
        chain = []
        while c >= 0 and paths[c] is None:
            chain.append(c)
            c = int(parents[c])
        prefix = paths[c] if c >= 0 else None
        for k in reversed(chain):
            own = names[int(regions[k])]
            prefix = own if prefix is None else prefix + "/" + own
            paths[k] = prefix
        return str(paths[chain[0]] if chain else paths[c])

    return [path(c) for c in range(len(parents))]
