"""
CUBE4 reports: data types, definitions, lazily loaded values, aggregation, reader and writer.
"""

from __future__ import annotations
import collections.abc
import cubescale._core.systree
import numpy
import numpy.typing
import typing

__all__: list[str] = [
    "CubexWriter",
    "DataType",
    "Metric",
    "Region",
    "Report",
    "ValueKind",
    "cnode_row",
    "cnode_totals",
    "data_type_names",
    "load_all",
    "open_cubex",
    "open_cubex_bytes",
    "report_extra_member_bytes",
    "report_extra_members",
    "report_from_anchor",
    "report_from_parts",
    "report_ignored_bytes",
    "write_cubex",
]

class ValueKind:
    """
    How one value of a CUBE data type is laid out.

    Members:

      INT8

      INT16

      INT32

      INT64

      UINT8

      UINT16

      UINT32

      UINT64

      DOUBLE

      MINDOUBLE

      MAXDOUBLE

      TAU_ATOMIC : uint32 N, f64 min, max, sum, sum2 (packed, 36 bytes)

      RATE : f64 main, f64 time

      COMPLEX : f64 real, f64 imaginary

      NDOUBLES : n x f64

      HISTOGRAM : f64 min, f64 max, n x f64 bins

      SCALE_FUNC : a scaling function in an 848-byte slot
    """

    COMPLEX: typing.ClassVar[ValueKind]
    DOUBLE: typing.ClassVar[ValueKind]
    HISTOGRAM: typing.ClassVar[ValueKind]
    INT16: typing.ClassVar[ValueKind]
    INT32: typing.ClassVar[ValueKind]
    INT64: typing.ClassVar[ValueKind]
    INT8: typing.ClassVar[ValueKind]
    MAXDOUBLE: typing.ClassVar[ValueKind]
    MINDOUBLE: typing.ClassVar[ValueKind]
    NDOUBLES: typing.ClassVar[ValueKind]
    RATE: typing.ClassVar[ValueKind]
    SCALE_FUNC: typing.ClassVar[ValueKind]
    TAU_ATOMIC: typing.ClassVar[ValueKind]
    UINT16: typing.ClassVar[ValueKind]
    UINT32: typing.ClassVar[ValueKind]
    UINT64: typing.ClassVar[ValueKind]
    UINT8: typing.ClassVar[ValueKind]
    __members__: typing.ClassVar[dict[str, ValueKind]]
    @typing.overload
    def __eq__(self, other: ValueKind) -> bool: ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool: ...
    def __getstate__(self) -> int: ...
    def __hash__(self) -> int: ...
    def __index__(self) -> int: ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None: ...
    def __int__(self) -> int: ...
    @typing.overload
    def __ne__(self, other: ValueKind) -> bool: ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool: ...
    def __repr__(self) -> str: ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None: ...
    def __str__(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> int: ...

class DataType:
    """
    A CUBE data type parsed from its name (DOUBLE, UINT64, NDOUBLES(4) ...).
    """
    def __init__(self, name: str) -> None:
        """
        Parses a data type name; ValueError if unknown.
        """
    def __repr__(self) -> str:
        """
        DataType("NAME").
        """
    @property
    def count(self) -> int:
        """
        n of NDOUBLES(n) / HISTOGRAM(n), else 1.
        """
    @property
    def is_integer(self) -> bool:
        """
        True for the integer types.
        """
    @property
    def kind(self) -> ValueKind:
        """
        The value layout.
        """
    @property
    def name(self) -> str:
        """
        The name as spelled in the file.
        """
    @property
    def width(self) -> int:
        """
        Bytes per value.
        """

class Metric:
    """
    A metric as a report defines it. Fields: name (unique name), display_name, unit, dtype, kind (INCLUSIVE / EXCLUSIVE / POSTDERIVED / PREDERIVED_INCLUSIVE / PREDERIVED_EXCLUSIVE), parent (index or None), description, url, value, attrs, expression, init_expression.
    """
    def __init__(
        self,
        *,
        name: str,
        unit: str = "",
        dtype: str = "DOUBLE",
        kind: str = "EXCLUSIVE",
        parent: typing.SupportsInt | typing.SupportsIndex | None = None,
        display_name: str | None = None,
        description: str = "",
        url: str = "",
        value: str = "",
        attrs: dict = {},
        expression: str = "",
        init_expression: str = "",
    ) -> None:
        """
        A metric definition; every field by keyword (an unknown one is a TypeError).
        """
    def __repr__(self) -> str:
        """
        Metric(name="...").
        """
    @property
    def attrs(self) -> dict:
        """
        The <attr> key/value pairs.
        """
    @attrs.setter
    def attrs(self, arg1: dict) -> None: ...
    @property
    def description(self) -> str:
        """
        The description.
        """
    @description.setter
    def description(self, arg0: str) -> None: ...
    @property
    def display_name(self) -> str:
        """
        The name Cube shows.
        """
    @display_name.setter
    def display_name(self, arg0: str) -> None: ...
    @property
    def dtype(self) -> str:
        """
        The CUBE data type name.
        """
    @dtype.setter
    def dtype(self, arg1: str) -> None: ...
    @property
    def expression(self) -> str:
        """
        The CubePL program (<cubepl>) of a derived metric.
        """
    @expression.setter
    def expression(self, arg0: str) -> None: ...
    @property
    def file_id(self) -> int:
        """
        The metric's id in the file it was read from (0 if built).
        """
    @property
    def init_expression(self) -> str:
        """
        The CubePL program run once before any derived metric is computed (<cubeplinit>).
        """
    @init_expression.setter
    def init_expression(self, arg0: str) -> None: ...
    @property
    def kind(self) -> str:
        """
        How values are stored along the call tree (INCLUSIVE, EXCLUSIVE), or the derived type whose CubePL expression computes them (POSTDERIVED, PREDERIVED_INCLUSIVE, PREDERIVED_EXCLUSIVE).
        """
    @kind.setter
    def kind(self, arg1: str) -> None: ...
    @property
    def name(self) -> str:
        """
        The unique name.
        """
    @name.setter
    def name(self, arg0: str) -> None: ...
    @property
    def parent(self) -> int | None:
        """
        Index of the parent metric, None for a root.
        """
    @parent.setter
    def parent(self, arg1: typing.SupportsInt | typing.SupportsIndex | None) -> None: ...
    @property
    def unit(self) -> str:
        """
        The unit of measurement (sec, occ, bytes ...).
        """
    @unit.setter
    def unit(self, arg0: str) -> None: ...
    @property
    def url(self) -> str:
        """
        A documentation URL.
        """
    @url.setter
    def url(self, arg0: str) -> None: ...
    @property
    def value(self) -> str:
        """
        CUBE's <val> text (rarely used).
        """
    @value.setter
    def value(self, arg0: str) -> None: ...

class Region:
    """
    A code region as a report defines it. Fields: name, mangled_name, module, begin, end, paradigm, role, description, url, attrs.
    """
    def __init__(
        self,
        *,
        name: str,
        mangled_name: str | None = None,
        module: str = "",
        begin: typing.SupportsInt | typing.SupportsIndex = -1,
        end: typing.SupportsInt | typing.SupportsIndex = -1,
        paradigm: str = "user",
        role: str = "function",
        description: str = "",
        url: str = "",
        attrs: dict = {},
    ) -> None:
        """
        A region definition; every field by keyword (an unknown one is a TypeError).
        """
    def __repr__(self) -> str:
        """
        Region(name="...").
        """
    @property
    def attrs(self) -> dict:
        """
        The <attr> key/value pairs.
        """
    @attrs.setter
    def attrs(self, arg1: dict) -> None: ...
    @property
    def begin(self) -> int:
        """
        First source line (-1: unknown).
        """
    @begin.setter
    def begin(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None: ...
    @property
    def description(self) -> str:
        """
        The description.
        """
    @description.setter
    def description(self, arg0: str) -> None: ...
    @property
    def end(self) -> int:
        """
        Last source line (-1: unknown).
        """
    @end.setter
    def end(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None: ...
    @property
    def file_id(self) -> int:
        """
        The region's id in the file it was read from (0 if built).
        """
    @property
    def mangled_name(self) -> str:
        """
        The mangled (linker) name.
        """
    @mangled_name.setter
    def mangled_name(self, arg0: str) -> None: ...
    @property
    def module(self) -> str:
        """
        The source file or module.
        """
    @module.setter
    def module(self, arg0: str) -> None: ...
    @property
    def name(self) -> str:
        """
        The region's name.
        """
    @name.setter
    def name(self, arg0: str) -> None: ...
    @property
    def paradigm(self) -> str:
        """
        mpi, openmp, user, cuda ...
        """
    @paradigm.setter
    def paradigm(self, arg0: str) -> None: ...
    @property
    def role(self) -> str:
        """
        function, loop, barrier, wrapper ...
        """
    @role.setter
    def role(self, arg0: str) -> None: ...
    @property
    def url(self) -> str:
        """
        A documentation URL.
        """
    @url.setter
    def url(self, arg0: str) -> None: ...

class Report:
    """
    A CUBE4 report: definitions (metric tree, regions, call tree, system tree, all in preorder) and per-metric value matrices [cnode, location] loaded on first use.
    """
    def cnode_file_ids(self) -> numpy.typing.NDArray[numpy.uint64]:
        """
        The id every call path has in the file it was read from, uint64.
        """
    def cnode_parameters(self, cnode: typing.SupportsInt | typing.SupportsIndex) -> list:
        """
        The <parameter> attribute dicts of one call path.
        """
    def cnode_parents(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        Parent index of every call path (-1 for roots), int64.
        """
    def cnode_regions(self) -> numpy.typing.NDArray[numpy.uint32]:
        """
        Region index of every call path, uint32.
        """
    def combine_locations(
        self,
        metric: typing.SupportsInt | typing.SupportsIndex,
        inclusive: typing.Any,
        group: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32],
        groups: typing.SupportsInt | typing.SupportsIndex,
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        Combines the location columns into `groups` columns (location l into column group[l]): uint8 view.
        """
    def loaded(self, metric: typing.SupportsInt | typing.SupportsIndex) -> bool:
        """
        True once a metric's values are in memory.
        """
    def location_ancestors(
        self, depth: typing.SupportsInt | typing.SupportsIndex
    ) -> numpy.typing.NDArray[numpy.uint32]:
        """
        For every location, its system-tree ancestor at `depth` (itself if shallower).
        """
    def location_elements(self) -> numpy.typing.NDArray[numpy.uint32]:
        """
        System-tree element of every location, uint32.
        """
    def location_file_ids(self) -> numpy.typing.NDArray[numpy.uint64]:
        """
        <location Id> of every location (its data column in the file), uint64.
        """
    def location_group_elements(self) -> numpy.typing.NDArray[numpy.uint32]:
        """
        System-tree element of every location group, uint32.
        """
    def location_group_ranks(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        <rank> of every location group, int64.
        """
    def location_ranks(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        <rank> of every location, int64.
        """
    def metrics(self) -> list[Metric]:
        """
        The metric definitions in preorder (copies).
        """
    def present(
        self, metric: typing.SupportsInt | typing.SupportsIndex, inclusive: typing.Any = None
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        Which rows of a metric are stored (bool per cnode).
        """
    def regions(self) -> list[Region]:
        """
        The region definitions (copies); parses deferred regions first.
        """
    def sequence_form(self) -> dict:
        """
        The system tree in sequence form with each element's record: a dict of record_of (per element, -1 without a location below), elements (those with a record, by depth) and depth_start (where each depth's begin in elements), and per record parent (-1 for the root), depth, instances, copies, cls.
        """
    def set_values(
        self,
        metric: typing.SupportsInt | typing.SupportsIndex,
        data: typing.Annotated[numpy.typing.ArrayLike, numpy.uint8],
    ) -> None:
        """
        Replaces a metric's values (in its stored kind) by the bytes of a [cnode, location] array.
        """
    def stores_values(self, metric: typing.SupportsInt | typing.SupportsIndex) -> bool:
        """
        Whether the file the report was read from holds the metric's values (its N.index and N.data members; without them it reads as zero); True for reports built in memory.
        """
    def system_tree(self) -> cubescale._core.systree.SingleNodeTree:
        """
        The system tree (a copy) as a SingleNodeTree.
        """
    def values(
        self, metric: typing.SupportsInt | typing.SupportsIndex, inclusive: typing.Any = None
    ) -> numpy.ndarray[typing.Any, numpy.dtype[typing.Any]]:
        """
        A read-only uint8 view [cnodes, locations * width] of a metric's values: as stored (None), inclusive (True) or exclusive (False) along the call tree.
        """
    def values_into(
        self,
        metric: typing.SupportsInt | typing.SupportsIndex,
        inclusive: typing.Any,
        out: numpy.ndarray[typing.Any, numpy.dtype[typing.Any]],
    ) -> None:
        """
        Writes a metric's values (stored kind if `inclusive` is None) into the writable C-contiguous array `out`.
        """
    @property
    def attrs(self) -> dict:
        """
        Report-level <attr>s as a dict.
        """
    @property
    def cnode_count(self) -> int:
        """
        Number of call paths (rows).
        """
    @property
    def location_count(self) -> int:
        """
        Number of locations (columns).
        """
    @property
    def metric_count(self) -> int:
        """
        Number of metrics.
        """
    @property
    def mirrors(self) -> list[str]:
        """
        Documentation mirror URLs.
        """
    @property
    def topologies_xml(self) -> str:
        """
        The inner text of <topologies>, verbatim.
        """
    @property
    def version(self) -> str:
        """
        The CUBE format version read.
        """

class CubexWriter:
    """
    Streams a .cubex: per metric, blocks of rows in the metric's row order; the file appears under its name only when finish() completes.
    """
    def __init__(self, definitions_from: Report, path: str, compress: bool = False, system_member: bool = True) -> None:
        """
        A writer of the definitions of `definitions_from` to `path` (zlib rows if `compress`; our compact system tree member if `system_member`).
        """
    def begin_metric(self, metric: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Starts writing a metric's rows.
        """
    def begin_row(self) -> None:
        """
        Starts a non-zero row given in pieces (write_row_piece).
        """
    def end_metric(self) -> None:
        """
        Ends the metric: writes its index.
        """
    def end_row(self) -> None:
        """
        Ends the row given in pieces (all its bytes written).
        """
    def finish(self) -> None:
        """
        Writes anchor.xml and renames the file into place.
        """
    def row_order(self, metric: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.uint32]:
        """
        The cnode of each row position of a metric, in the order rows are written.
        """
    def skip_rows(self, rows: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        The next rows are zero everywhere: left out.
        """
    def write_rows(self, rows: typing.Annotated[numpy.typing.ArrayLike, numpy.uint8]) -> None:
        """
        Writes the next rows (uint8 [rows, row bytes]); all-zero rows are left out.
        """

def cnode_row(
    report: Report,
    metric: typing.SupportsInt | typing.SupportsIndex,
    inclusive: bool,
    cnode: typing.SupportsInt | typing.SupportsIndex,
) -> numpy.typing.NDArray[numpy.float64]:
    """
    One call path's values per location as float64, with or without callees, computed from the
    stored values without converting the whole matrix.
    """

def cnode_totals(
    report: Report, metric: typing.SupportsInt | typing.SupportsIndex, inclusive: bool
) -> numpy.typing.NDArray[numpy.float64]:
    """
    Per call path, a metric over all locations (sum, or min / max for MIN/MAXDOUBLE) with or without
    callees: a read-only float64 view of totals the report computes once per metric, in one pass
    over the stored values on all cores.
    """

def data_type_names() -> list[str]:
    """
    Every plain data type name the reader accepts (aliases included; NDOUBLES(n) and HISTOGRAM(n) besides).
    """

def load_all(report: Report) -> None:
    """
    Loads every metric's values now.
    """

def open_cubex(path: str) -> Report:
    """
    Opens a .cubex (reads anchor.xml only); FormatError for malformed input, OSError if unreadable.
    """

def open_cubex_bytes(data: bytes, name: str = "<bytes>") -> Report:
    """
    The same over the bytes of a .cubex (tests, fuzzing).
    """

def report_extra_member_bytes(report: Report, name: str) -> bytes:
    """
    The bytes of the extra member `name` (KeyError if there is none).
    """

def report_extra_members(report: Report) -> list[tuple[str, int]]:
    """
    (name, size) of every member of the report's file that is not part of the report (not anchor.xml, N.index, N.data or cubescale.systree), in file order; written again by write_cubex.
    """

def report_from_anchor(xml: bytes, name: str = "<anchor.xml>") -> Report:
    """
    A report with the definitions of an anchor.xml text (gzipped or not) and all values zero.
    """

def report_from_parts(
    metrics: collections.abc.Sequence[Metric],
    regions: collections.abc.Sequence[Region],
    cnode_parents: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    cnode_regions: typing.Annotated[numpy.typing.ArrayLike, numpy.int64],
    cnode_parameters: list,
    system: cubescale._core.systree.SingleNodeTree,
) -> Report:
    """
    A report with all values zero from metric and region definitions, a call tree in preorder (parent indices, -1 for roots, and region indices; per cnode a list of <parameter> attribute dicts, or an empty list) and a system tree; ValueError naming the bad element.
    """

def report_ignored_bytes(report: Report, metric: typing.SupportsInt | typing.SupportsIndex) -> int:
    """
    Bytes of the metric's data member beyond the rows its index lists (trailing rows, padding), ignored when it was loaded; loads the metric first unless it was loaded before (also when released since). 0 for reports not read from a file.
    """

def write_cubex(
    report: Report, path: str, compress: bool = False, system_member: bool = True, derived_as_values: bool = False
) -> None:
    """
    Writes a report as .cubex through a temporary file renamed when complete; derived metrics as CubePL expressions without data, or with derived_as_values as ordinary metrics holding their values.
    """
