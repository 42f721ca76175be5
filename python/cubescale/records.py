"""The records a report hands out: metrics, regions, call paths (cnodes) and locations.

They are frozen dataclasses built from the core's definitions on first use; indices are
positions in the report's enumerations (a call path's ``index`` is its row in
:meth:`Report.values <cubescale.Report.values>`, a location's its column).

Example
-------
>>> import cubescale
>>> r = cubescale.open(cubescale.examples.report_path())
>>> isinstance(r.metrics[0], cubescale.records.Metric)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Cnode", "Location", "Metric", "Region"]

DERIVED_KINDS = ("POSTDERIVED", "PREDERIVED_INCLUSIVE", "PREDERIVED_EXCLUSIVE")


@dataclass(frozen=True)
class Metric:
    """One metric of the metric tree.

    ``kind`` is ``"INCLUSIVE"`` or ``"EXCLUSIVE"``: how the values are stored along the call
    tree, or for a derived metric its type (``"POSTDERIVED"``, ``"PREDERIVED_INCLUSIVE"``,
    ``"PREDERIVED_EXCLUSIVE"``), whose values its CubePL ``expression`` computes (after the
    report's ``init_expression`` programs ran). ``dtype`` is the CUBE data type (``"DOUBLE"``,
    ``"UINT64"``, ``"TAU_ATOMIC"`` ...).

    Example
    -------
    >>> import cubescale
    >>> m = cubescale.open(cubescale.examples.report_path()).metric("time")
    >>> (m.name, m.kind, m.dtype, m.unit)
    ('time', 'INCLUSIVE', 'DOUBLE', 'sec')
    """

    index: int
    name: str
    display_name: str
    kind: str
    dtype: str
    unit: str
    description: str
    url: str
    parent: int | None
    children: tuple[int, ...]
    attrs: dict[str, str] = field(default_factory=dict, compare=False)
    value: str = ""
    expression: str = ""       # <cubepl> of a derived metric
    init_expression: str = ""  # <cubeplinit>

    @property
    def derived(self) -> bool:
        """Whether a CubePL expression computes the values (no data stored).

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).metric("time").derived
        False
        """
        return self.kind in DERIVED_KINDS

    @classmethod
    def from_definition(cls, index: int, d: Any, children: tuple[int, ...] = ()) -> Metric:
        """The record of a core metric definition (``_core.cube.Metric``) at ``index``.

        Example
        -------
        >>> from cubescale._core.cube import Metric
        >>> Metric.from_definition(0, Metric(name="time", unit="sec")).unit
        'sec'
        """
        return cls(index, d.name, d.display_name, d.kind, d.dtype, d.unit, d.description, d.url, d.parent,
                   children, d.attrs, d.value, d.expression, d.init_expression)

    def definition(self, parent: int | None = None) -> Any:
        """This metric as a core definition (``_core.cube.Metric``) with every field,
        under ``parent`` (default: its own parent index).

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).metric("time").definition()
        Metric(name="time")
        """
        from ._core.cube import Metric

        return Metric(name=self.name, display_name=self.display_name, unit=self.unit, dtype=self.dtype,
                                kind=self.kind, parent=self.parent if parent is None else parent,
                                description=self.description, url=self.url, value=self.value, attrs=self.attrs,
                                expression=self.expression, init_expression=self.init_expression)


@dataclass(frozen=True)
class Region:
    """A code region (function, loop, MPI call) that call paths point to.

    Example
    -------
    >>> import cubescale
    >>> cubescale.open(cubescale.examples.report_path()).regions[3].name
    'MPI_Bcast'
    """

    index: int
    name: str
    mangled_name: str
    module: str
    begin: int
    end: int
    paradigm: str
    role: str
    description: str = ""
    url: str = ""
    attrs: dict[str, str] = field(default_factory=dict, compare=False)

    @classmethod
    def from_definition(cls, index: int, d: Any) -> Region:
        """The record of a core region definition (``_core.cube.Region``) at ``index``.

        Example
        -------
        >>> from cubescale._core.cube import Region
        >>> Region.from_definition(0, Region(name="main", module="a.c")).module
        'a.c'
        """
        return cls(index, d.name, d.mangled_name, d.module, d.begin, d.end, d.paradigm, d.role, d.description,
                   d.url, d.attrs)

    def definition(self) -> Any:
        """This region as a core definition (``_core.cube.Region``) with every field.

        Example
        -------
        >>> import cubescale
        >>> cubescale.open(cubescale.examples.report_path()).regions[3].definition()
        Region(name="MPI_Bcast")
        """
        from ._core.cube import Region

        return Region(name=self.name, mangled_name=self.mangled_name, module=self.module, begin=self.begin,
                                end=self.end, paradigm=self.paradigm, role=self.role, description=self.description,
                                url=self.url, attrs=self.attrs)


@dataclass(frozen=True)
class Cnode:
    """A call path: a region called from its parent call path.

    ``index`` is the position in call-tree preorder (the row of :meth:`Report.values`);
    ``id`` the cnode id in the file it was read from.

    Example
    -------
    >>> import cubescale
    >>> c = cubescale.open(cubescale.examples.report_path()).cnodes[1]
    >>> (c.index, c.region.name, c.parent)
    (1, '<module>', 0)
    """

    index: int
    id: int
    region: Region
    parent: int | None
    children: tuple[int, ...]


@dataclass(frozen=True)
class Location:
    """A location (thread, GPU stream): a column of :meth:`Report.values`.

    Example
    -------
    >>> import cubescale
    >>> loc = cubescale.open(cubescale.examples.report_path()).locations[0]
    >>> (loc.index, loc.name, loc.type, loc.rank, loc.process_rank)
    (0, 'Master thread', 'thread', 0, 0)
    """

    index: int
    id: int
    name: str
    type: str
    rank: int
    process: str
    process_rank: int


