"""Reports built by a program instead of read from a file.

A converter from another tool's profile format, or a generator of test data, describes the
metrics, the regions, the call tree and the machine, gets a :class:`~cubescale.Report` whose
values are all zero, fills it with :meth:`~cubescale.Report.set_values` and writes it with
:func:`cubescale.write`: a ``.cubex`` that Cube, pycubexr and cubescale read.

Example
-------
>>> import cubescale, numpy as np
>>> from cubescale.systree import SystemTree
>>> b = cubescale.ReportBuilder(SystemTree.from_shape("node:2 process:2 thread:2"))
>>> time = b.add_metric("time", unit="sec")
>>> main = b.add_cnode(b.add_region("main", module="app.c", begin=1, end=40))
>>> solve = b.add_cnode(b.add_region("solve"), parent=main)
>>> report = b.build()
>>> report.shape
(2, 8)
>>> report.set_values("time", np.full(report.shape, 0.5))
>>> float(report.values("time", inclusive=True)[main].sum())
8.0
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real

import numpy as np

from ._core import cube as _cube
from .records import Metric, Region
from .report import Report
from .systree import SingleNodeTree, SystemTree

__all__ = ["ReportBuilder"]


class ReportBuilder:
    """Collects the definitions of a report: metric tree, regions, call tree, system tree.

    ``system`` is the machine: a :class:`~cubescale.systree.SystemTree` (e.g.
    ``SystemTree.from_shape("node:4 process:8 thread:2")``, expanded here) or a
    :class:`~cubescale.systree.SingleNodeTree`. Its locations (threads, GPU streams) are the
    columns of the values, in depth-first order.

    Trees are given in depth-first preorder: a new metric or call path's parent is the one
    added just before it or one of that one's ancestors (``None`` starts a new root). Indices
    returned by the ``add_`` methods are positions: a call path's index is its row in
    :meth:`Report.values`.

    Example
    -------
    >>> import cubescale
    >>> from cubescale.systree import SystemTree
    >>> b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:1 thread:1"))
    >>> b.add_metric("visits", dtype="UINT64", unit="occ")
    0
    >>> b.add_cnode(b.add_region("main"))
    0
    >>> b.build().metric("visits").dtype
    'UINT64'
    """

    def __init__(self, system: SystemTree | SingleNodeTree):
        if isinstance(system, SystemTree):
            system = system.expand()
        if not isinstance(system, SingleNodeTree):
            raise TypeError("system must be a SystemTree or a SingleNodeTree")
        self._system = system
        self._metrics: list[_cube.Metric] = []
        self._regions: list[_cube.Region] = []
        self._parents: list[int] = []
        self._cnode_regions: list[int] = []
        self._parameters: list[list[dict]] = []

    def add_metric(self, name: str | Metric, unit: str = "", dtype: str = "DOUBLE", kind: str = "EXCLUSIVE",
                   parent: int | None = None, display_name: str | None = None, description: str = "",
                   url: str = "", attrs: Mapping[str, str] | None = None, expression: str = "",
                   init_expression: str = "") -> int:
        """Adds a metric and returns its index.

        ``dtype`` is a CUBE data type (``DOUBLE``, ``UINT64``, ``INT64``, ``MINDOUBLE``,
        ``MAXDOUBLE``, ``TAU_ATOMIC``, ...); ``kind`` says how values will be given along the
        call tree: ``EXCLUSIVE`` (a call path without its callees) or ``INCLUSIVE``. A
        :class:`~cubescale.report.Metric` of another report may be passed instead of a name:
        every field is kept (``parent`` still chooses the parent here). An unknown data type
        or kind raises ``ValueError`` at once. A derived metric (``kind`` ``POSTDERIVED``,
        ``PREDERIVED_INCLUSIVE`` or ``PREDERIVED_EXCLUSIVE``) takes its CubePL program in
        ``expression`` (and optionally ``init_expression``) and no values.

        Example
        -------
        >>> import cubescale
        >>> from cubescale.systree import SystemTree
        >>> b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:1 thread:1"))
        >>> t = b.add_metric("time", unit="sec")
        >>> b.add_metric("mpi", unit="sec", parent=t, display_name="MPI time")
        1
        >>> b.add_metric(cubescale.open(cubescale.examples.report_path()).metric("visits"))
        2
        >>> b.add_metric("twice", unit="sec", kind="POSTDERIVED", expression="2 * metric::time()")
        3
        """
        if isinstance(name, Metric):
            definition = name.definition(parent=parent)
            definition.parent = parent
        else:
            try:
                definition = _cube.Metric(
                    name=name, unit=unit, dtype=dtype, kind=kind, parent=parent, display_name=display_name,
                    description=description, url=url, attrs=dict(attrs or {}), expression=expression,
                    init_expression=init_expression)
            except ValueError as e:
                raise ValueError(f"metric {name}: {e}") from None
        self._metrics.append(definition)
        return len(self._metrics) - 1

    def add_region(self, name: str | Region, module: str = "", begin: int = -1, end: int = -1,
                   paradigm: str = "user", role: str = "function", mangled_name: str | None = None,
                   description: str = "", url: str = "") -> int:
        """Adds a code region (function, loop, MPI call) and returns its index. A
        :class:`~cubescale.report.Region` of another report may be passed instead of a name:
        every field is kept.

        Example
        -------
        >>> import cubescale
        >>> from cubescale.systree import SystemTree
        >>> b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:1 thread:1"))
        >>> b.add_region("MPI_Send", paradigm="mpi")
        0
        """
        if isinstance(name, Region):
            definition = name.definition()
        else:
            definition = _cube.Region(
                name=name, mangled_name=mangled_name, module=module, begin=int(begin), end=int(end),
                paradigm=paradigm, role=role, description=description, url=url)
        self._regions.append(definition)
        return len(self._regions) - 1

    def add_cnode(self, region: int, parent: int | None = None,
                  parameters: Mapping[str, float | int | str] | None = None) -> int:
        """Adds a call path: ``region`` called from the call path ``parent`` (``None``: a
        root). ``parameters`` become CUBE cnode parameters: numbers as ``numeric``, anything
        else as ``string``. Returns the call path's index (its row in the values).

        Example
        -------
        >>> import cubescale
        >>> from cubescale.systree import SystemTree
        >>> b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:1 thread:1"))
        >>> main = b.add_cnode(b.add_region("main"))
        >>> b.add_cnode(b.add_region("loop", role="loop"), parent=main, parameters={"n": 64})
        1
        """
        self._parents.append(-1 if parent is None else int(parent))
        self._cnode_regions.append(int(region))
        self._parameters.append([_parameter(k, v) for k, v in (parameters or {}).items()])
        return len(self._parents) - 1

    def build(self) -> Report:
        """The report, every value zero. Raises ``ValueError`` when a tree is not in preorder,
        an index is out of range, a data type is unknown or the system tree cannot be
        expressed in CUBE (a location outside a location group).

        Example
        -------
        >>> import cubescale
        >>> from cubescale.systree import SystemTree
        >>> b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:2 thread:2"))
        >>> b.add_metric("time")
        0
        >>> b.add_cnode(b.add_region("main"))
        0
        >>> b.build().shape
        (1, 4)
        """
        parameters = self._parameters if any(self._parameters) else []
        core = _cube.report_from_parts(
            self._metrics, self._regions, np.asarray(self._parents, dtype=np.int64),
            np.asarray(self._cnode_regions, dtype=np.int64), parameters, self._system._core)
        return Report(core, "")


def _parameter(key: str, value: float | int | str) -> dict:
    numeric = isinstance(value, Real) and not isinstance(value, bool)
    return {"partype": "numeric" if numeric else "string", "parkey": str(key), "parvalue": str(value)}
