"""System trees: the machine, its processes and their threads, in two forms.

* :class:`SingleNodeTree` — one element per machine part, process and thread, each with its
  own name. What a process knows about itself; what Cube's anchor.xml spells out.
* :class:`SystemTree` — *sequence definitions* (the Score-P system-description paper): identical sibling subtrees are
  folded into one record with a ``copies`` count, so a regular machine has a description of
  constant size (JUQUEEN's 1,835,008 processes take a few dozen bytes). Every element still
  has a depth-first index, computed from the records without expanding them.

Kinds are given by name: ``"nodes"`` (system tree nodes: machine, rack, node, package, core
...), ``"location_groups"`` (processes, accelerators), ``"locations"`` (threads, GPU streams,
metric locations), ``"all"``, or a combination such as ``"nodes+locations"``.

Example
-------
>>> from cubescale.systree import SystemTree
>>> tree = SystemTree.from_shape("juqueen")
>>> tree.count("location_groups")
1835008
>>> len(tree.to_bytes()) < 672
True
>>> print(tree.render())
machine ×1 > rack ×28 > midplane ×2 > nodeboard ×16 > node ×32 > process ×64 > thread ×1
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ._core import systree as _tree
from .errors import FormatError

__all__ = [
    "Record",
    "SingleNodeTree",
    "SystemTree",
    "kind_mask",
]

_MASKS = {
    "nodes": _tree.MASK_NODES,
    "location_groups": _tree.MASK_LOCATION_GROUPS,
    "locations": _tree.MASK_LOCATIONS,
    "all": _tree.MASK_ALL,
}
_KIND_NAMES = {
    _tree.Kind.NODE: "node",
    _tree.Kind.LOCATION_GROUP: "location_group",
    _tree.Kind.LOCATION: "location",
}
_KINDS_BY_NAME = {v: k for k, v in _KIND_NAMES.items()}


def kind_mask(kinds: str | int) -> int:
    """The core's bit mask for a kind selection such as ``"locations"`` or ``"nodes+locations"``.

    Example
    -------
    >>> kind_mask("nodes+locations")
    5
    """
    if isinstance(kinds, int):
        if not 0 < kinds <= _tree.MASK_ALL:
            raise ValueError(f"bad kind mask {kinds}")
        return kinds
    mask = 0
    for part in kinds.split("+"):
        try:
            mask |= _MASKS[part.strip()]
        except KeyError:
            raise ValueError(f"unknown kind {part!r}; use one of {', '.join(_MASKS)}") from None
    return mask


def _kind(value: str | _tree.Kind | None, cls: str) -> _tree.Kind:
    if value is None:
        return _tree.kind_of_class(cls)
    if isinstance(value, _tree.Kind):
        return value
    try:
        return _KINDS_BY_NAME[value]
    except KeyError:
        raise ValueError(f"unknown kind {value!r}; use node, location_group or location") from None


@dataclass(frozen=True)
class Record:
    """One sequence record: ``copies`` identical siblings of one class.

    Example
    -------
    >>> tree = SystemTree.from_shape("node:4 process:2")
    >>> tree.record(1)
    Record(id=1, kind='node', cls='node', copies=4, depth=1, parent=0, children=(2,), properties={})
    """

    id: int
    kind: str
    cls: str
    copies: int
    depth: int
    parent: int | None
    children: tuple[int, ...]
    properties: dict


class SystemTree:
    """A system tree in sequence form (canonical: the same machine always gives the same records).

    Build one with :meth:`from_shape`, :meth:`from_single`, :meth:`from_json`,
    :meth:`from_bytes`, :meth:`local` or :meth:`figure4`.

    Example
    -------
    >>> tree = SystemTree.from_shape("node:16 process:8 thread:4")
    >>> tree
    <SystemTree 4 records, 512 locations: machine ×1 > node ×16 > process ×8 > thread ×4>
    >>> tree.index_of([(0, 0), (1, 3), (2, 1), (3, 2)])   # node 3, process 1, thread 2
    102
    """

    def __init__(self, core: _tree.SystemTree, names: _tree.NameMap | None = None):
        if not core.canonical:
            core.canonicalize()
        self._core = core
        self._names = names if names is not None else _tree.NameMap()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_shape(cls, spec: str) -> SystemTree:
        """A regular machine from ``"class:count"`` levels below a machine root.

        Presets: ``"juqueen"`` (28 racks × 2 midplanes × 16 nodeboards × 32 nodes × 64
        processes × 1 thread), ``"juqueen-threads"`` (4 threads each), ``"juqueen-rack"``,
        and ``"figure4"`` (the inhomogeneous machine of the Score-P system-description paper, Figure 4).
        Classes ``process``/``accelerator`` are location groups; ``thread``, ``gpu_stream``,
        ``metric`` are locations; others are system tree nodes.

        Example
        -------
        >>> SystemTree.from_shape("rack:2 node:4 process:8").count("location_groups")
        64
        """
        if spec.strip() == "figure4":
            return cls.figure4()
        try:
            levels = _tree.parse_shape(spec)
        except ValueError as e:
            raise ValueError(f"bad shape {spec!r}: {e}") from None
        return cls(_tree.regular_sequence(levels))

    @classmethod
    def figure4(cls) -> SystemTree:
        """The Score-P system-description paper, Figure 4: 16 nodes of 4 processes × 4 threads and 16 nodes of 4 processes
        with 2 threads and a GPU stream each.

        Example
        -------
        >>> SystemTree.figure4().count("locations")
        448
        """
        return cls(_tree.figure4_sequence())

    @classmethod
    def from_single(cls, tree: SingleNodeTree, names: str = "nodes") -> SystemTree:
        """Fold a single-node tree into sequence records; the names of the elements of the
        kinds in ``names`` (default: system tree nodes, e.g. host names) are kept in a
        separate name map, readable with :meth:`name`.

        Example
        -------
        >>> single = SingleNodeTree.from_shape("node:3 process:2")
        >>> SystemTree.from_single(single).render()
        'machine ×1 > node ×3 > process ×2'
        """
        core, name_map = _tree.fold(tree._core, True, kind_mask(names))
        return cls(core, name_map)

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "", names: bytes | None = None) -> SystemTree:
        """Read the binary form written by :meth:`to_bytes` (and optionally a name stream
        written by :meth:`names_to_bytes`). Bad bytes raise :class:`~cubescale.FormatError`.

        Example
        -------
        >>> tree = SystemTree.from_shape("node:2 process:4")
        >>> SystemTree.from_bytes(tree.to_bytes()) == tree
        True
        """
        core = _tree.SystemTree.deserialize(bytes(data), source)
        name_map = _tree.NameMap.deserialize(bytes(names), source) if names is not None else None
        return cls(core, name_map)

    @classmethod
    def from_json(cls, text: str | dict, source: str = "") -> SystemTree:
        """Read the JSON form written by :meth:`to_json` (a string or an already parsed dict).

        Example
        -------
        >>> tree = SystemTree.figure4()
        >>> SystemTree.from_json(tree.to_json()) == tree
        True
        """
        try:
            doc = json.loads(text) if isinstance(text, (str, bytes)) else text
        except json.JSONDecodeError as e:
            raise FormatError(f"malformed JSON: {e.msg}", source, "json", e.pos) from None
        if not isinstance(doc, dict) or doc.get("format") != "cubescale-systree":
            raise FormatError("not a cubescale-systree JSON document", source, "json", 0)
        if doc.get("version") != 1:
            raise FormatError(f"unsupported version {doc.get('version')!r}", source, "json", 0)
        core = _tree.SystemTree()
        # Iterative walk: (JSON object, parent record id, path for messages).
        stack: list[tuple[object, int | None, str]] = [(doc.get("root"), None, "root")]
        while stack:
            obj, parent, where = stack.pop()
            try:
                if not isinstance(obj, dict):
                    raise ValueError("a record must be an object")
                klass = obj["class"]
                if not isinstance(klass, str):
                    raise ValueError("class must be a string")
                kind = _kind(obj.get("kind"), klass)
                copies = obj.get("copies", 1)
                if not isinstance(copies, int) or isinstance(copies, bool) or copies < 1:
                    raise ValueError("copies must be a positive integer")
                props = obj.get("properties", {})
                if not isinstance(props, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in props.items()
                ):
                    raise ValueError("properties must map strings to strings")
                if parent is None:
                    if copies != 1:
                        raise ValueError("the root has exactly one copy")
                    rid = core.add_root(kind, klass)
                    if props:
                        core.set_root_properties(list(props.items()))
                else:
                    rid = core.add_record(parent, kind, klass, copies, list(props.items()))
                children = obj.get("children", [])
                if not isinstance(children, list):
                    raise ValueError("children must be a list")
            except (KeyError, ValueError, TypeError, OverflowError, IndexError) as e:
                raise FormatError(f"bad record: {e}", source, f"json {where}", 0) from None
            for i in reversed(range(len(children))):
                stack.append((children[i], rid, f"{where}.children[{i}]"))
        try:
            core.canonicalize()
        except (ValueError, OverflowError) as e:
            raise FormatError(str(e), source, "json", 0) from None
        return cls(core)

    @classmethod
    def local(
        cls,
        threads: int = 1,
        synthetic: str | None = None,
        xml: str | None = None,
        cpus: str | None = None,
        host: str | None = None,
        process_name: str = "process 0",
    ) -> SystemTree:
        """This process's view of the machine from hwloc: machine > node (host) > hardware
        levels > process > threads, the process placed under the hardware element covering
        its CPU binding (``cpus`` in hwloc list syntax such as ``"0-3,8"``, or hwloc's
        bitmask ``"0xf"``; default: the real binding). A list that does not parse, or names
        PUs the machine lacks, is a ValueError, as is ``threads`` below 1.

        ``synthetic`` (e.g. ``"pack:2 l3:1 core:4 pu:2"``) or ``xml`` (an lstopo export)
        replace the real machine, for tests that must not depend on the machine they run on.

        Example
        -------
        >>> tree = SystemTree.local(synthetic="pack:2 core:2 pu:2", cpus="0-1", threads=2)
        >>> print(tree.render())
        machine ×1 > node ×1 > numa ×1
        ├─ package ×1 > core ×2 > pu ×2
        └─ package ×1
           ├─ core ×1 > pu ×2
           └─ core ×1
              ├─ pu ×2
              └─ process ×1 > thread ×2
        """
        return cls.from_single(
            SingleNodeTree.local(threads, synthetic, xml, cpus, host, process_name)
        )

    # ------------------------------------------------------------------ forms
    def to_bytes(self) -> bytes:
        """The compact, versioned, little-endian binary form (names are not included).

        Example
        -------
        >>> len(SystemTree.from_shape("juqueen-threads").to_bytes())
        99
        """
        return self._core.serialize()

    def names_to_bytes(self, chunk_entries: int = 4096) -> bytes:
        """The separate name map (e.g. host names) as a stream of bounded chunks.

        Example
        -------
        >>> single = SingleNodeTree.from_shape("node:2 process:1")
        >>> tree = SystemTree.from_single(single)
        >>> [len(c) for c in _tree.NameStreamReader(tree.names_to_bytes(chunk_entries=2))]
        [2, 1]
        """
        return self._names.serialize(chunk_entries)

    def to_json(self, indent: int | None = 2) -> str:
        """The readable JSON form (`indent=None` for one line).

        Example
        -------
        >>> print(SystemTree.from_shape("node:2").to_json(indent=None))
        {"format": "cubescale-systree", "version": 1, "root": {"kind": "node", "class": "machine", "copies": 1, "children": [{"kind": "node", "class": "node", "copies": 2}]}}
        """
        return self._core.to_json(-1 if indent is None else indent)

    def expand(self) -> SingleNodeTree:
        """The single-node form, with generated names ("node 3") or the mapped real names.

        Example
        -------
        >>> single = SystemTree.from_shape("node:2 process:2").expand()
        >>> len(single), single.name(4)
        (7, 'node 1')
        """
        return SingleNodeTree(_tree.expand(self._core, self._names))

    def merge(self, other: SystemTree) -> SystemTree:
        """Union of two trees with the same root: equal subtrees add their copies, others
        are inserted in canonical order; ``a.merge(b) == b.merge(a)``.

        Example
        -------
        >>> a = SystemTree.from_shape("node:2 process:4")
        >>> a.merge(SystemTree.from_shape("node:3 process:4")).render()
        'machine ×1 > node ×5 > process ×4'
        """
        return SystemTree(_tree.merge(self._core, other._core))

    # ------------------------------------------------------------------ structure
    def __len__(self) -> int:
        return len(self._core)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SystemTree) and self._core == other._core

    __hash__ = None  # type: ignore[assignment]  # mutable wrapper: compare, do not hash

    @property
    def nbytes(self) -> int:
        """Size of the binary form in bytes."""
        return len(self.to_bytes())

    @property
    def single_nbytes(self) -> int:
        """Size the single-node binary form would have, computed without expanding.

        Example
        -------
        >>> tree = SystemTree.from_shape("node:3 process:2 thread:2")
        >>> tree.single_nbytes == tree.expand().nbytes
        True
        """
        return _tree.single_serialized_size(self._core)

    @property
    def max_depth(self) -> int:
        """Depth of the deepest record (the root has depth 0)."""
        return self._core.max_depth

    def record(self, rid: int) -> Record:
        """The record with id ``rid`` (ids are in depth-first preorder, root 0)."""
        c = self._core
        if not 0 <= rid < len(c):
            raise IndexError(f"record {rid} out of range ({len(c)} records)")
        return Record(
            rid,
            _KIND_NAMES[c.kind(rid)],
            c.class_name(rid),
            c.copies(rid),
            c.depth(rid),
            c.parent(rid),
            tuple(c.children(rid)),
            dict(c.properties(rid)),
        )

    def records(self) -> Iterator[Record]:
        """All records in depth-first preorder."""
        return (self.record(r) for r in range(len(self)))

    # ------------------------------------------------------------------ enumeration
    def count(self, kinds: str = "locations") -> int:
        """Number of elements of the given kinds in the expanded tree.

        Example
        -------
        >>> SystemTree.from_shape("juqueen-threads").count("locations")
        7340032
        """
        return self._core.total(kind_mask(kinds))

    def index_of(self, path: Sequence[tuple[int, int]], kinds: str = "locations") -> int:
        """Depth-first index, among elements of ``kinds``, of the element at the end of
        ``path`` — a list of ``(record id, copy)`` from the root ``(0, 0)``.

        Example
        -------
        >>> tree = SystemTree.from_shape("node:4 process:2")
        >>> tree.index_of([(0, 0), (1, 2), (2, 1)], "location_groups")
        5
        """
        try:
            return self._core.index_of([(int(s[0]), int(s[1])) for s in path], kind_mask(kinds))
        except IndexError as e:
            raise IndexError(str(e)) from None

    def path_of(self, index: int, kinds: str = "locations") -> list[tuple[int, int]]:
        """The ``(record, copy)`` path of the element with that index (reverse of :meth:`index_of`).

        Example
        -------
        >>> SystemTree.from_shape("node:4 process:2").path_of(5, "location_groups")
        [(0, 0), (1, 2), (2, 1)]
        """
        return self._core.path_of(int(index), kind_mask(kinds))

    def paths_of(self, indices: Iterable[int] | np.ndarray, kinds: str = "locations"):
        """Bulk :meth:`path_of`: two arrays ``records`` (uint32) and ``copies`` (uint64) of
        shape ``[n, max_depth + 1]``, padded past each path's end with the maximum value.

        Example
        -------
        >>> tree = SystemTree.from_shape("node:4 process:2")
        >>> records, copies = tree.paths_of([0, 7], "location_groups")
        >>> copies.tolist()
        [[0, 0, 0], [0, 3, 1]]
        """
        idx = np.ascontiguousarray(indices, dtype=np.uint64)
        return self._core.paths_of(idx, kind_mask(kinds))

    def ancestors(
        self,
        indices: Iterable[int] | np.ndarray,
        depth: int,
        of: str = "locations",
        to: str = "nodes",
    ) -> np.ndarray:
        """For each element (indices in the ``of`` enumeration), the index in the ``to``
        enumeration of its ancestor at ``depth`` — e.g. the node of every location.

        Example
        -------
        >>> tree = SystemTree.from_shape("node:2 process:2 thread:2")
        >>> tree.ancestors(range(8), depth=1).tolist()    # index among nodes: machine is 0
        [1, 1, 1, 1, 2, 2, 2, 2]
        """
        idx = np.ascontiguousarray(indices, dtype=np.uint64)
        return self._core.ancestors_of(idx, kind_mask(of), int(depth), kind_mask(to))

    def counts_per_class(self) -> dict[str, int]:
        """Number of expanded elements per class, in order of first appearance.

        Example
        -------
        >>> SystemTree.from_shape("juqueen").counts_per_class()["node"]
        28672
        """
        return dict(self._core.counts_per_class())

    def counts_per_depth(self) -> list[int]:
        """Number of expanded elements at each depth (root = depth 0).

        Example
        -------
        >>> SystemTree.from_shape("node:2 process:3").counts_per_depth()
        [1, 2, 6]
        """
        return list(self._core.counts_per_depth())

    def multiplicities(self) -> np.ndarray:
        """For each record, how many expanded elements it stands for."""
        return self._core.multiplicities()

    def name(self, index: int, kinds: str = "all") -> str:
        """Name of an element: its real name from the name map if there is one, otherwise
        the generated one (class and running number, as Score-P names sequence elements).

        Example
        -------
        >>> tree = SystemTree.from_shape("node:2 process:2")
        >>> [tree.name(i, "location_groups") for i in range(4)]
        ['process 0', 'process 1', 'process 2', 'process 3']
        """
        path = self.path_of(index, kinds)
        all_index = self._core.index_of(path, _tree.MASK_ALL)
        real = self._names.find(all_index)
        return real if real is not None else self._core.generated_name(path)

    @property
    def names(self) -> dict[int, str]:
        """The name map: all-kinds index → real name."""
        return dict(self._names.entries())

    # ------------------------------------------------------------------ display
    def render(self, max_children: int = 20) -> str:
        """A text rendering like Cube's system pane, one line per chain of single records:
        ``machine ×1 > node ×1024 > process ×64 > thread ×4``.

        Example
        -------
        >>> print(SystemTree.figure4().render())
        machine ×1
        ├─ node ×16 > process ×4
        │  ├─ gpu_stream ×1
        │  └─ thread ×2
        └─ node ×16 > process ×4 > thread ×4
        """
        c = self._core
        lines: list[str] = []

        def chain(rid: int) -> tuple[str, int]:
            parts = [f"{c.class_name(rid)} ×{c.copies(rid)}"]
            while len(c.children(rid)) == 1:
                rid = c.children(rid)[0]
                parts.append(f"{c.class_name(rid)} ×{c.copies(rid)}")
            return " > ".join(parts), rid

        # Iterative: (record, prefix for its children, connector for itself).
        text, last = chain(0)
        lines.append(text)
        stack = [(ch, "", i == len(c.children(last)) - 1)
                 for i, ch in reversed(list(enumerate(c.children(last))))]
        shown = 0
        while stack:
            rid, prefix, is_last = stack.pop()
            text, last = chain(rid)
            lines.append(f"{prefix}{'└─ ' if is_last else '├─ '}{text}")
            shown += 1
            kids = c.children(last)
            child_prefix = prefix + ("   " if is_last else "│  ")
            if len(kids) > max_children:
                lines.append(f"{child_prefix}… {len(kids)} different children")
                continue
            for i in reversed(range(len(kids))):
                stack.append((kids[i], child_prefix, i == len(kids) - 1))
        return "\n".join(lines)

    def summary(self) -> str:
        """Counts and sizes in both forms, as ``cubescale systree`` prints them."""
        counts = self.counts_per_class()
        width = max(len(k) for k in counts)
        lines = [self.render(), ""]
        lines += [f"  {k:<{width}}  {v:>15,}" for k, v in counts.items()]
        lines.append("")
        lines.append(
            f"nodes {self.count('nodes'):,}, location groups {self.count('location_groups'):,}, "
            f"locations {self.count('locations'):,}"
        )
        lines.append(f"sequence form:    {len(self):>15,} records  {self.nbytes:>15,} bytes")
        lines.append(
            f"single-node form: {self.count('all'):>15,} elements {self.single_nbytes:>15,} bytes"
        )
        return "\n".join(lines)

    def __repr__(self) -> str:
        first = self.render().splitlines()[0]
        more = " …" if len(self.render().splitlines()) > 1 else ""
        return f"<SystemTree {len(self)} records, {self.count('locations'):,} locations: {first}{more}>"

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.summary())}</pre>"


class SingleNodeTree:
    """A system tree with one element per machine part, process and thread.

    Example
    -------
    >>> t = SingleNodeTree()
    >>> m = t.add_root("machine", "JUWELS")
    >>> n = t.add(m, "node", "jwc001")
    >>> p = t.add(n, "process", "rank 0")
    >>> _ = [t.add(p, "thread", f"thread {i}") for i in range(4)]
    >>> SystemTree.from_single(t).render()
    'machine ×1 > node ×1 > process ×1 > thread ×4'
    """

    def __init__(self, core: _tree.SingleNodeTree | None = None):
        self._core = core if core is not None else _tree.SingleNodeTree()

    @classmethod
    def from_shape(cls, spec: str) -> SingleNodeTree:
        """The expanded form of :meth:`SystemTree.from_shape` (generated names)."""
        return SystemTree.from_shape(spec).expand()

    @classmethod
    def local(
        cls,
        threads: int = 1,
        synthetic: str | None = None,
        xml: str | None = None,
        cpus: str | None = None,
        host: str | None = None,
        process_name: str = "process 0",
    ) -> SingleNodeTree:
        """This process's single-node view with hwloc hardware levels; see :meth:`SystemTree.local`.

        Example
        -------
        >>> t = SingleNodeTree.local(synthetic="pack:1 core:2 pu:1", cpus="1", host="h1")
        >>> [t.class_name(i) for i in range(len(t))]
        ['machine', 'node', 'package', 'core', 'core', 'process', 'thread']
        """
        if synthetic and xml:
            raise ValueError("give synthetic or xml, not both")
        if threads < 1:  # CUBE and OTF2 allow no process without a location
            raise ValueError(f"threads {threads}: a process has at least 1 thread")
        if synthetic:
            topo = _tree.Topology.synthetic(synthetic)
        elif xml:
            topo = _tree.Topology.from_xml(xml)
        else:
            topo = _tree.Topology.local()
        return cls(
            _tree.local_view(topo, host or socket.gethostname(), process_name, threads, cpus or "")
        )

    def add_root(self, cls: str, name: str | None = None, kind: str | None = None) -> int:
        """Add the root element (normally class ``machine``); returns its id (0)."""
        return self._core.add_root(_kind(kind, cls), cls, name if name is not None else cls)

    def add(self, parent: int, cls: str, name: str | None = None, kind: str | None = None) -> int:
        """Add a child of ``parent``; the kind follows from the class unless given. Returns its id."""
        return self._core.add_child(parent, _kind(kind, cls), cls, name if name is not None else cls)

    def set_property(self, element: int, key: str, value: str) -> None:
        """Attach a property (part of the element's structure when folded)."""
        self._core.set_property(element, key, value)

    def __len__(self) -> int:
        return len(self._core)

    def name(self, element: int) -> str:
        """The element's name."""
        return self._core.name(element)

    def class_name(self, element: int) -> str:
        """The element's class."""
        return self._core.class_name(element)

    def kind(self, element: int) -> str:
        """The element's kind: node, location_group or location."""
        return _KIND_NAMES[self._core.kind(element)]

    def parent(self, element: int) -> int | None:
        """The parent's id, None for the root."""
        return self._core.parent(element)

    def children(self, element: int) -> list[int]:
        """Ids of the children in insertion order."""
        return self._core.children(element)

    def properties(self, element: int) -> dict[str, str]:
        """The element's properties."""
        return dict(self._core.properties(element))

    def preorder(self) -> list[int]:
        """Element ids in depth-first preorder."""
        return self._core.preorder()

    def fold(self, names: str = "nodes") -> SystemTree:
        """Shorthand for :meth:`SystemTree.from_single`."""
        return SystemTree.from_single(self, names)

    def to_bytes(self) -> bytes:
        """The compact single-node binary form (the baseline sequence definitions beat)."""
        return self._core.serialize()

    @property
    def nbytes(self) -> int:
        """Size of :meth:`to_bytes`."""
        return len(self.to_bytes())

    def __repr__(self) -> str:
        return f"<SingleNodeTree {len(self):,} elements>"
