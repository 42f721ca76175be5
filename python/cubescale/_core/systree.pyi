"""
System trees: single-node and sequence form, names, shapes, hwloc hardware levels (the Score-P system-description and Vampir hardware-levels papers).
"""

from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing

__all__: list[str] = [
    "Kind",
    "MASK_ALL",
    "MASK_LOCATIONS",
    "MASK_LOCATION_GROUPS",
    "MASK_NODES",
    "NameMap",
    "NameStreamReader",
    "SystemTree",
    "SingleNodeTree",
    "Topology",
    "expand",
    "figure4_sequence",
    "fold",
    "kind_of_class",
    "local_view",
    "merge",
    "parse_shape",
    "regular_sequence",
    "single_serialized_size",
]

class Kind:
    """
    What a system-tree element is: a node, a location group or a location.

    Members:

      NODE : machine, rack, node, hardware element ...

      LOCATION_GROUP : process, accelerator context

      LOCATION : thread, GPU stream
    """

    LOCATION: typing.ClassVar[Kind]
    LOCATION_GROUP: typing.ClassVar[Kind]
    NODE: typing.ClassVar[Kind]
    __members__: typing.ClassVar[dict[str, Kind]]
    @typing.overload
    def __eq__(self, other: Kind) -> bool: ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool: ...
    def __getstate__(self) -> int: ...
    def __hash__(self) -> int: ...
    def __index__(self) -> int: ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None: ...
    def __int__(self) -> int: ...
    @typing.overload
    def __ne__(self, other: Kind) -> bool: ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool: ...
    def __repr__(self) -> str: ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None: ...
    def __str__(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> int: ...

class SystemTree:
    """
    A system tree in sequence form: records {kind, class, copies, children}; identical sibling subtrees are one record with a copy count (the Score-P system-description paper).
    """
    @staticmethod
    def deserialize(data: bytes, source: str = "") -> SystemTree:
        """
        Reads the binary form; FormatError naming `source` and the offset for bad input.
        """
    def __eq__(self, other: typing.Any) -> typing.Any:
        """
        Structural equality (records, copies, classes, properties).
        """
    def __hash__(self) -> int:
        """
        The root's structural hash (equal trees hash equally).
        """
    def __init__(self) -> None:
        """
        An empty tree; add a root with add_root.
        """
    def __len__(self) -> int:
        """
        Number of records.
        """
    def add_record(
        self,
        parent: typing.SupportsInt | typing.SupportsIndex,
        kind: Kind,
        cls: str,
        copies: typing.SupportsInt | typing.SupportsIndex = 1,
        properties: collections.abc.Sequence[tuple[str, str]] = [],
    ) -> int:
        """
        Adds a record below `parent` standing for `copies` identical subtrees; returns its index.
        """
    def add_root(self, kind: Kind, cls: str) -> int:
        """
        Adds the root record (one copy) and returns its index.
        """
    def ancestors_of(
        self,
        indices: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64],
        from_mask: typing.SupportsInt | typing.SupportsIndex,
        depth: typing.SupportsInt | typing.SupportsIndex,
        to_mask: typing.SupportsInt | typing.SupportsIndex,
    ) -> numpy.typing.NDArray[numpy.uint64]:
        """
        For elements given by index among `from_mask`, the index among `to_mask` of their ancestor at `depth`.
        """
    def canonicalize(self) -> tuple[numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.int64]]:
        """
        Folds identical sibling subtrees into one record (bottom-up structural hashing). Returns, per old record, its new record (-1 if folded away) and the first copy it occupies there.
        """
    def children(self, record: typing.SupportsInt | typing.SupportsIndex) -> list[int]:
        """
        The child records in order.
        """
    def class_name(self, record: typing.SupportsInt | typing.SupportsIndex) -> str:
        """
        The class name of a record.
        """
    def copies(self, record: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        How many identical subtrees a record stands for.
        """
    def count(
        self, record: typing.SupportsInt | typing.SupportsIndex, mask: typing.SupportsInt | typing.SupportsIndex
    ) -> int:
        """
        Elements of the kinds in `mask` in one copy of the subtree below a record.
        """
    def counts_per_class(self) -> list[tuple[str, int]]:
        """
        Elements of the expanded tree per class name.
        """
    def counts_per_depth(self) -> list[int]:
        """
        Elements of the expanded tree per depth.
        """
    def depth(self, record: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Depth of a record (root: 0).
        """
    def generated_name(
        self,
        path: collections.abc.Sequence[
            tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]
        ],
    ) -> str:
        """
        The Score-P-style name (class and running number) of the element at `path`.
        """
    def hash(self, record: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Structural hash of the subtree below a record.
        """
    def index_of(
        self,
        path: collections.abc.Sequence[
            tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]
        ],
        mask: typing.SupportsInt | typing.SupportsIndex,
    ) -> int:
        """
        Depth-first index among the kinds in `mask` of the element at `path` ((record, copy) from the root), computed without expanding.
        """
    def kind(self, record: typing.SupportsInt | typing.SupportsIndex) -> Kind:
        """
        The kind (node, location group, location) of a record.
        """
    def multiplicities(self) -> numpy.typing.NDArray[numpy.uint64]:
        """
        Per record, how many elements of the expanded tree it stands for.
        """
    def parent(self, record: typing.SupportsInt | typing.SupportsIndex) -> int | None:
        """
        The parent record, None for the root.
        """
    def path_of(
        self, index: typing.SupportsInt | typing.SupportsIndex, mask: typing.SupportsInt | typing.SupportsIndex
    ) -> list:
        """
        The (record, copy) path from the root of the element with this index.
        """
    def paths_of(
        self,
        indices: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64],
        mask: typing.SupportsInt | typing.SupportsIndex,
    ) -> tuple[numpy.typing.NDArray[numpy.uint32], numpy.typing.NDArray[numpy.uint64]]:
        """
        Paths of many elements at once: arrays [n, max_depth + 1] of records and copies.
        """
    def properties(self, record: typing.SupportsInt | typing.SupportsIndex) -> list[tuple[str, str]]:
        """
        The key/value properties of a record.
        """
    def serialize(self) -> bytes:
        """
        The compact binary form (see deserialize).
        """
    def set_root_properties(self, properties: collections.abc.Sequence[tuple[str, str]]) -> None:
        """
        Replaces the root's properties (key/value pairs).
        """
    def to_json(self, indent: typing.SupportsInt | typing.SupportsIndex = 2) -> str:
        """
        The records as JSON text (indent < 0: one line).
        """
    def total(self, mask: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Elements of the kinds in `mask` in the expanded tree.
        """
    @property
    def canonical(self) -> bool:
        """
        True when no two sibling records are equal.
        """
    @property
    def classes(self) -> list[str]:
        """
        The class names, indexed by class id.
        """
    @property
    def max_depth(self) -> int:
        """
        Depth of the deepest record (root: 0).
        """

class SingleNodeTree:
    """
    A system tree with one element per node, process and thread.
    """
    def __init__(self) -> None:
        """
        An empty tree; add a root with add_root.
        """
    def __len__(self) -> int:
        """
        Number of elements.
        """
    def add_child(self, parent: typing.SupportsInt | typing.SupportsIndex, kind: Kind, cls: str, name: str) -> int:
        """
        Adds an element below `parent` and returns its index.
        """
    def add_root(self, kind: Kind, cls: str, name: str) -> int:
        """
        Adds the root element and returns its index.
        """
    def children(self, element: typing.SupportsInt | typing.SupportsIndex) -> list[int]:
        """
        The child elements in order.
        """
    def class_name(self, element: typing.SupportsInt | typing.SupportsIndex) -> str:
        """
        The class name of an element.
        """
    def depth(self, element: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Depth of an element (root: 0).
        """
    def kind(self, element: typing.SupportsInt | typing.SupportsIndex) -> Kind:
        """
        The kind of an element.
        """
    def name(self, element: typing.SupportsInt | typing.SupportsIndex) -> str:
        """
        The name of an element.
        """
    def parent(self, element: typing.SupportsInt | typing.SupportsIndex) -> int | None:
        """
        The parent element, None for the root.
        """
    def preorder(self) -> list[int]:
        """
        All elements in depth-first preorder.
        """
    def properties(self, element: typing.SupportsInt | typing.SupportsIndex) -> list[tuple[str, str]]:
        """
        The key/value properties of an element.
        """
    def serialize(self) -> bytes:
        """
        The binary form (its size is what the single-node form costs).
        """
    def set_property(self, element: typing.SupportsInt | typing.SupportsIndex, key: str, value: str) -> None:
        """
        Sets a key/value property of an element.
        """

class NameMap:
    """
    Real names (e.g. host names) of elements, by all-kinds depth-first index.
    """
    @staticmethod
    def deserialize(data: bytes, source: str = "") -> NameMap:
        """
        Reads the binary form; FormatError naming `source` for bad input.
        """
    def __init__(self) -> None:
        """
        An empty map.
        """
    def __len__(self) -> int:
        """
        Number of names.
        """
    def add(self, index: typing.SupportsInt | typing.SupportsIndex, name: str) -> None:
        """
        Adds the name of the element at `index`.
        """
    def add_stream(self, data: bytes, source: str = "") -> int | None:
        """
        Adds the entries of a name stream chunk; returns the last index added, or None if it was empty.
        """
    def entries(self) -> list[tuple[int, str]]:
        """
        All (index, name) pairs in index order.
        """
    def find(self, index: typing.SupportsInt | typing.SupportsIndex) -> str | None:
        """
        The name of the element at `index`, or None.
        """
    def serialize(self, chunk_entries: typing.SupportsInt | typing.SupportsIndex = 4096) -> bytes:
        """
        The streamable binary form: chunks of at most `chunk_entries` names.
        """

class NameStreamReader:
    """
    Iterates over the chunks of a name stream.
    """
    def __init__(self, data: bytes, source: str = "") -> None:
        """
        A reader over `data`; FormatError naming `source` for bad input.
        """
    def __iter__(self) -> NameStreamReader:
        """
        The reader itself.
        """
    def __next__(self) -> list[tuple[int, str]]:
        """
        The next chunk: a list of (index, name).
        """

class Topology:
    """
    An hwloc topology: this machine's, a synthetic one or one from XML.
    """
    @staticmethod
    def from_xml(xml: str) -> Topology:
        """
        A topology from hwloc's XML export.
        """
    @staticmethod
    def local() -> Topology:
        """
        This machine's topology.
        """
    @staticmethod
    def synthetic(description: str) -> Topology:
        """
        A synthetic topology such as "pack:2 l3:1 core:4 pu:2" (hwloc's syntax).
        """

def expand(tree: SystemTree, names: NameMap | None = None) -> SingleNodeTree:
    """
    Expands a sequence tree into single-node form (generated or real names).
    """

def figure4_sequence() -> SystemTree:
    """
    The inhomogeneous machine of the Score-P system-description paper, Figure 4.
    """

def fold(
    tree: SingleNodeTree, with_names: bool = True, name_kinds: typing.SupportsInt | typing.SupportsIndex = 1
) -> tuple[SystemTree, NameMap]:
    """
    Folds a single-node tree into sequence form; returns (SystemTree, NameMap of the real names of the kinds in `name_kinds`).
    """

def kind_of_class(cls: str) -> Kind:
    """
    The kind Score-P gives an element of this class (process: location group, thread: location, ...).
    """

def local_view(
    topology: Topology, host: str, process_name: str, threads: typing.SupportsInt | typing.SupportsIndex, cpus: str = ""
) -> SingleNodeTree:
    """
    One process's single-node view: machine > node `host` > hardware levels (runs of single-child levels merged, PCI bridges skipped) > process > `threads` threads, under the hardware its binding `cpus` (hwloc list syntax; empty: the current binding) covers.
    """

def merge(a: SystemTree, b: SystemTree) -> SystemTree:
    """
    Merges two sequence trees with one root: equal elements once, children of both in order.
    """

def parse_shape(spec: str) -> list[tuple[str, int]]:
    """
    Levels (class, count) of a shape such as "node:4 process:8 thread:2" or a preset name (juqueen, ...).
    """

def regular_sequence(
    levels: collections.abc.Sequence[tuple[str, typing.SupportsInt | typing.SupportsIndex]],
) -> SystemTree:
    """
    The sequence tree of a regular machine: one record per level below a machine root.
    """

def single_serialized_size(tree: SystemTree) -> int:
    """
    Bytes the single-node form of a sequence tree would take, computed without expanding.
    """

MASK_ALL: int = 7
MASK_LOCATIONS: int = 4
MASK_LOCATION_GROUPS: int = 2
MASK_NODES: int = 1
