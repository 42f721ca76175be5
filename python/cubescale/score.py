"""Trace-size estimates and filter generation from a profile, as Score-P's ``scorep-score``.

A profile knows how often every region was visited on every process. A trace of the same run
writes, per visit, an Enter and a Leave record and, depending on the region, MPI, OpenMP or
parameter records, each with a timestamp. :func:`score` multiplies the visits of every call
path by the bytes of those records (from libotf2's own size estimator, which depend on how
many regions, metrics ... the trace defines) and sums them per region type (USR, COM, MPI,
OMP, SCOREP ... classified as scorep-score does) and per region:

* ``max_buf``: the bytes of the process with the most, the trace buffer that process needs;
* ``total_buf``: the estimated size of the whole trace (the sum of its event files);
* ``SCOREP_TOTAL_MEMORY``: the memory Score-P should get to trace without intermediate flushes,
  ``max(max_buf, 2 MiB) + 2 MiB x locations per process`` as scorep-score suggests.

A filter (Score-P's filter-file syntax) shows what tracing would cost without the regions it
excludes, and :meth:`Score.filter_file` writes one that excludes the USR regions that take at
least 1 % of the largest buffer with at most 1 µs per visit (scorep-score ``-g``'s defaults);
``cubescale run --filter`` reads it. Formulas and where we differ from scorep-score:
``docs/score.md``.

Example
-------
>>> import cubescale
>>> s = cubescale.score(cubescale.open(cubescale.examples.report_path()))
>>> [g.type for g in s.groups][:2]
['ALL', 'USR']
>>> s.total_buf == sum(g.total_buf for g in s.groups[1:])
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ._core import stat as _stat
from .call_tree import above_marked
from .report import Metric, Report

__all__ = ["FilterOptions", "Score", "ScoreRow", "TYPES", "score"]

# scorep-score's region types in its order (the order matters: a USR region that calls
# anything after COM in this list becomes COM) and whether a filter may remove each:
# '*' possible, '-' never, '+' the filtered group.
TYPES = ("ALL", "FLT", "USR", "SCOREP", "COM", "MPI", "OMP", "SHMEM", "PTHREAD", "CUDA", "OPENCL",
         "OPENACC", "MEMORY", "IO", "KOKKOS", "HIP", "LIB", "UNKNOWN")
_FILTERABLE = {"ALL": "*", "FLT": "+", "USR": "*", "SCOREP": "-", "COM": "*", "MPI": "-", "OMP": "-",
               "SHMEM": "-", "PTHREAD": "-", "CUDA": "*", "OPENCL": "-", "OPENACC": "-", "MEMORY": "-",
               "IO": "-", "KOKKOS": "*", "HIP": "*", "LIB": "*", "UNKNOWN": "-"}
_T = {name: i for i, name in enumerate(TYPES)}
_PARADIGM_TYPES = {"mpi": "MPI", "shmem": "SHMEM", "openmp": "OMP", "pthread": "PTHREAD", "cuda": "CUDA",
                   "opencl": "OPENCL", "openacc": "OPENACC", "memory": "MEMORY", "measurement": "SCOREP",
                   "io": "IO", "hip": "HIP"}
_PARADIGM_PREFIXES = (("libwrap:", "LIB"), ("kokkos:", "KOKKOS"), ("hip:", "HIP"))

# The regions whose visits write which records (Score-P's SCOREP_Score_EventList.hpp):
# (record, region names or None, name prefixes or None, whether the record has its own timestamp).
_MPI_SEND = ("MPI_Bsend", "MPI_Rsend", "MPI_Ssend", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Send")
_MPI_ISEND = ("MPI_Ibsend", "MPI_Irsend", "MPI_Issend", "MPI_Isend", "MPI_Bsend_init", "MPI_Rsend_init",
              "MPI_Send_init", "MPI_Ssend_init")
_MPI_IRECV = ("MPI_Irecv", "MPI_Irecv_init")
_MPI_RECV = ("MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Recv")
_MPI_COLLECTIVE = ("MPI_Allgather", "MPI_Allgatherv", "MPI_Allreduce", "MPI_Alltoall", "MPI_Alltoallv",
                   "MPI_Alltoallw", "MPI_Barrier", "MPI_Bcast", "MPI_Exscan", "MPI_Gather", "MPI_Gatherv",
                   "MPI_Reduce", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Scatter",
                   "MPI_Scatterv")
_MPI_NB_COLLECTIVE = tuple("MPI_I" + n[4].lower() + n[5:] for n in _MPI_COLLECTIVE)
_LOCK_ACQUIRE = ("omp_set_lock", "omp_set_nest_lock", "pthread_mutex_unlock", "pthread_cond_wait",
                 "pthread_cond_timedwait")
_LOCK_RELEASE = ("omp_unset_lock", "omp_unset_nest_lock", "pthread_mutex_unlock", "pthread_cond_wait",
                 "pthread_cond_timedwait")
_RECORDS: tuple[tuple[str, tuple[str, ...] | None, tuple[str, ...] | None, bool], ...] = (
    ("MpiSend", _MPI_SEND, None, True),
    ("MpiIsend", _MPI_ISEND, None, True),
    ("MpiIsendComplete", _MPI_ISEND, None, True),
    ("MpiIrecvRequest", _MPI_IRECV, None, True),
    ("MpiRecv", _MPI_RECV, None, True),
    ("MpiIrecv", _MPI_IRECV, None, True),
    ("MpiCollectiveBegin", _MPI_COLLECTIVE, None, False),
    ("MpiCollectiveEnd", _MPI_COLLECTIVE, None, True),
    ("NonBlockingCollectiveRequest", _MPI_NB_COLLECTIVE, None, False),
    ("NonBlockingCollectiveComplete", _MPI_NB_COLLECTIVE, None, True),
    ("ThreadAcquireLock", _LOCK_ACQUIRE, None, True),
    ("ThreadReleaseLock", _LOCK_RELEASE, None, True),
    ("ThreadFork", None, ("!$omp parallel",), True),
    ("ThreadJoin", None, ("!$omp parallel",), True),
    ("ThreadTeamBegin", None, ("!$omp parallel",), True),
    ("ThreadTeamEnd", None, ("!$omp parallel",), True),
    ("ThreadTaskCreate", None, ("!$omp task ",), False),
    ("ThreadTaskComplete", None, ("!$omp task ",), True),
    ("ThreadTaskSwitch", None, ("!$omp task",), True),
    ("ThreadCreate", None, ("pthread_create",), True),
    ("ThreadBegin", None, ("pthread_create",), True),
    ("ThreadWait", None, ("pthread_join",), True),
    ("ThreadEnd", None, ("pthread_create",), True),
    ("BufferFlush", None, ("TRACE BUFFER FLUSH",), True),
)
_MIB = 1024 * 1024


@dataclass(frozen=True)
class ScoreRow:
    """One line of the table: a region type (``name`` is ``type``) or a region.

    ``filter`` is scorep-score's first column: ``+`` removed by the filter, ``-`` kept (or a
    type no filter may remove), ``*`` a type a filter may remove, blank without a filter.
    ``max_buf`` and ``total_buf`` are bytes; ``time`` seconds summed over all locations;
    ``time_per_visit`` microseconds.

    Example
    -------
    >>> import cubescale
    >>> row = cubescale.score(cubescale.open(cubescale.examples.report_path())).groups[0]
    >>> row.type, row.max_buf <= row.total_buf
    ('ALL', True)
    """

    type: str
    name: str
    file: str
    filter: str
    max_buf: int
    total_buf: int
    visits: int
    time: float

    @property
    def time_per_visit(self) -> float:
        """Microseconds per visit (0 without visits, as scorep-score)."""
        return self.time / self.visits * 1e6 if self.visits else 0.0


@dataclass(frozen=True)
class FilterOptions:
    """scorep-score ``-g``'s thresholds: a region is excluded when it takes at least
    ``buffer_percent`` of the largest buffer (max_buf), at most ``time_per_visit`` µs per
    visit, at least ``visits`` visits and ``buffer_absolute`` MiB, and is of one of ``types``.

    Example
    -------
    >>> FilterOptions.parse("bufferpercent=2,type=both")
    FilterOptions(buffer_percent=2.0, time_per_visit=1.0, visits=0, buffer_absolute=0.0, types=('USR', 'COM'))
    """

    buffer_percent: float = 1.0
    time_per_visit: float = 1.0
    visits: int = 0
    buffer_absolute: float = 0.0
    types: tuple[str, ...] = ("USR",)

    @classmethod
    def parse(cls, text: str) -> FilterOptions:
        """Options as scorep-score ``-g`` takes them: ``key=value`` separated by commas
        (``bufferpercent``, ``timepervisit``, ``visits``, ``bufferabsolute``, ``type=usr|com|both``).
        ValueError names a bad option.

        Example
        -------
        >>> FilterOptions.parse("timepervisit=0.5").time_per_visit
        0.5
        """
        values: dict[str, object] = {}
        for token in text.replace(" ", "").split(","):
            if not token:
                continue
            key, sep, value = token.partition("=")
            try:
                if not sep:
                    raise ValueError
                if key == "bufferpercent":
                    values["buffer_percent"] = float(value)
                    if not 0 <= float(value) <= 100:
                        raise ValueError
                elif key == "timepervisit":
                    values["time_per_visit"] = float(value)
                    if float(value) < 0:
                        raise ValueError
                elif key == "visits":
                    values["visits"] = int(value)
                    if int(value) < 0:
                        raise ValueError
                elif key == "bufferabsolute":
                    values["buffer_absolute"] = float(value)
                    if float(value) < 0:
                        raise ValueError
                elif key == "type":
                    values["types"] = {"usr": ("USR",), "com": ("COM",), "both": ("USR", "COM")}[value]
                else:
                    raise ValueError
            except (ValueError, KeyError):
                raise ValueError(f"invalid filter generation option {token!r}; expected bufferpercent=0..100, "
                                 "timepervisit=US, visits=N, bufferabsolute=MIB or type=usr|com|both") from None
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Score:
    """The estimate of :func:`score`. ``groups``: one row per region type that writes records,
    ``ALL`` first, sorted by max_buf; ``regions``: one row per region (sorted the same way);
    ``filtered``: the groups without the regions the filter excludes (``FLT`` holds those), or
    ``None`` without a filter. ``max_buf``, ``total_buf`` and ``total_memory`` are those of the
    filtered trace when there is a filter. ``record_sizes``: bytes per OTF2 record.

    Example
    -------
    >>> import cubescale
    >>> s = cubescale.score(cubescale.open(cubescale.examples.report_path()))
    >>> s.total_memory >= 2 * 1024 * 1024
    True
    """

    groups: tuple[ScoreRow, ...]
    regions: tuple[ScoreRow, ...]
    filtered: tuple[ScoreRow, ...] | None
    max_buf: int
    total_buf: int
    total_memory: int
    total_time: float
    record_sizes: dict[str, int]
    expected_total_buf: int = 0

    def table(self, regions: bool = False) -> str:
        """The report as scorep-score prints it: the three estimates, the table per region type
        (then per filtered type) and with ``regions`` one line per region.

        Example
        -------
        >>> import cubescale
        >>> s = cubescale.score(cubescale.open(cubescale.examples.report_path()))
        >>> print(s.table().splitlines()[0])
        Estimated aggregate size of event trace:                   ...
        """
        memory = readable_bytes(self.total_memory)
        lines = [
            f"Estimated aggregate size of event trace:                   {readable_bytes(self.total_buf)}",
            f"Estimated requirements for largest trace buffer (max_buf): {readable_bytes(self.max_buf)}",
            f"Estimated memory requirements (SCOREP_TOTAL_MEMORY):       {memory}",
        ]
        if self.total_memory > 0xFFFFFFFF:
            lines += ["(warning: The memory requirements cannot be satisfied by Score-P to avoid",
                      " intermediate flushes when tracing. Set SCOREP_TOTAL_MEMORY=4G to get the",
                      " maximum supported memory or reduce requirements using USR regions filters.)"]
        else:
            lines += [f"(hint: When tracing set SCOREP_TOTAL_MEMORY={memory} to avoid intermediate flushes",
                      " or reduce requirements using USR regions filters.)"]
        widths = _widths(self.groups[0]) if self.groups else _widths(None)
        lines.append(f"Expected size with the profile's message sizes and ranks:  {readable_bytes(self.expected_total_buf)}")
        lines += ["", _header(widths)]
        lines += [_line(row, widths, self.total_time) for row in self.groups]
        if self.filtered is not None:
            lines.append("")
            lines += [_line(row, widths, self.total_time) for row in self.filtered]
        if regions:
            lines.append("")
            lines += [_line(row, widths, self.total_time) for row in self.regions if row.total_buf > 0]
        return "\n".join(lines)

    def filter_candidates(self, options: FilterOptions = FilterOptions()) -> list[ScoreRow]:
        """The regions that ``options``' thresholds exclude (scorep-score ``-g``), largest first.

        Example
        -------
        >>> import cubescale
        >>> s = cubescale.score(cubescale.open(cubescale.examples.report_path()))
        >>> all(r.type == "USR" for r in s.filter_candidates())
        True
        """
        out = []
        for r in self.regions:
            if r.filter == "+" or not r.visits or self.max_buf == 0:
                continue
            if (r.max_buf / self.max_buf * 100 >= options.buffer_percent
                    and r.time_per_visit <= options.time_per_visit and r.visits >= options.visits
                    and r.max_buf / _MIB >= options.buffer_absolute and r.type in options.types):
                out.append(r)
        return out

    def filter_file(self, options: FilterOptions = FilterOptions()) -> str:
        """A Score-P filter file excluding :meth:`filter_candidates`, each with a comment of its
        numbers; ``cubescale run --filter`` and Score-P read it. Names are matched as written
        (not MANGLED), escaped by :func:`filter_pattern` to match exactly.

        Example
        -------
        >>> import cubescale
        >>> s = cubescale.score(cubescale.open(cubescale.examples.report_path()))
        >>> s.filter_file().splitlines()[-1]
        'SCOREP_REGION_NAMES_END'
        """
        lines = ["# Initial filter file, a starting point for further adaptation (cubescale score -g).",
                 "#",
                 "# A region is excluded when",
                 f"#  - it uses at least {options.buffer_percent:g}% of the estimated trace buffer (max_buf),",
                 f"#  - it takes at most {options.time_per_visit:g} us per visit,"]
        if options.visits > 0:
            lines.append(f"#  - it has at least {options.visits} visits,")
        if options.buffer_absolute > 0:
            lines.append(f"#  - it uses at least {options.buffer_absolute:g} MiB of the buffer,")
        lines += [f"#  - it is of type {' or '.join(options.types)}.",
                  "#",
                  "# Check the selection against what you know of the application before tracing with it.",
                  "SCOREP_REGION_NAMES_BEGIN"]
        for r in self.filter_candidates(options):
            share = r.time / self.total_time * 100 if self.total_time else 0.0
            lines += [f"  # type={r.type} max_buf={_commas(r.max_buf)} visits={_commas(r.visits)}, "
                      f"time={r.time:.2f}s ({share:.1f}%), time/visit={r.time_per_visit:.2f}us",
                      f"  # name='{_comment(r.name)}' file='{_comment(r.file)}'",
                      f"  EXCLUDE {filter_pattern(r.name)}"]
        previous = [r for r in self.regions if r.filter == "+"]
        if previous:  # what the -f filter excluded stays excluded, as scorep-score keeps it
            lines += ["", "  # Regions the filter given with -f excluded:"]
            lines += [f"  EXCLUDE {filter_pattern(r.name)}" for r in previous]
        lines.append("SCOREP_REGION_NAMES_END")
        return "\n".join(lines) + "\n"


def filter_pattern(name: str) -> str:
    """A filter-file pattern that matches exactly ``name``, as Score-P reads it: a backslash
    before blanks and ``*?[]!#\\`` (scorep-score ``-g`` escapes blanks and ``*[]!``). A line
    cannot end in a backslash, so a trailing one becomes ``?``; a line break becomes ``?``.

    Example
    -------
    >>> filter_pattern("std::vector<int>::operator[](unsigned long)")
    'std::vector<int>::operator\\\\[\\\\](unsigned\\\\ long)'
    """
    body, last = (name[:-1], "?") if name.endswith("\\") else (name, "")
    return "".join("?" if c in "\n\r" else "\\" + c if c in " \t*?[]!#\\" else c for c in body) + last


def _comment(text: str) -> str:
    return text.replace("\n", " ")


def readable_bytes(n: int) -> str:
    """Bytes as scorep-score prints them: divided by 1024 while above 4 × 1024, rounded up,
    with the unit.

    Example
    -------
    >>> readable_bytes(4096), readable_bytes(5000), readable_bytes(3 * 1024**3)
    ('4097 bytes', '5kB', '3073MB')
    """
    units = (" bytes", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")
    exp = 0
    while n > 4 * 1024:
        n //= 1024
        exp += 1
    return f"{n + 1}{units[exp]}"


def _commas(n: int) -> str:
    return f"{n:,}"


@dataclass
class _Widths:
    type: int = 8
    bytes: int = 10
    visits: int = 6
    time: int = 7
    time_per_visit: int = 14


def _widths(all_row: ScoreRow | None) -> _Widths:
    w = _Widths()
    if all_row is not None and all_row.total_buf > 0:
        w.type = max(w.type, len(all_row.type))
        w.bytes = max(w.bytes, len(_commas(all_row.max_buf)))
        w.visits = max(w.visits, len(_commas(all_row.visits)))
        w.time = max(w.time, len(f"{all_row.time:.2f}"))
        w.time_per_visit = max(w.time_per_visit, len(f"{all_row.time_per_visit:.2f}"))
    return w


def _header(w: _Widths) -> str:
    return (f"flt {'type':>{w.type}} {'max_buf[B]':>{w.bytes}} {'visits':>{w.visits}} {'time[s]':>{w.time}} "
            f"time[%] {'time/visit[us]':>{w.time_per_visit}}  region")


def _line(r: ScoreRow, w: _Widths, total_time: float) -> str:
    share = 100.0 / total_time * r.time if total_time else 0.0
    return (f" {r.filter}  {r.type:>{w.type}} {_commas(r.max_buf):>{w.bytes}} {_commas(r.visits):>{w.visits}} "
            f"{r.time:>{w.time}.2f} {share:>7.1f} {r.time_per_visit:>{w.time_per_visit}.2f}  {r.name}")


# ---- classification and bytes per visit (O(regions) on definitions; no values)

def _paradigm(region) -> str:
    """CubeLib's paradigm of a region: the attribute, or the description where it is unknown."""
    paradigm = region.paradigm or "unknown"
    return region.description if paradigm == "unknown" else paradigm


def _definition_type(name: str, paradigm: str) -> int:
    if paradigm in _PARADIGM_TYPES:
        return _T[_PARADIGM_TYPES[paradigm]]
    for prefix, kind in _PARADIGM_PREFIXES:
        if paradigm.startswith(prefix):
            return _T[kind]
    if paradigm == "unknown":
        if name.startswith("MPI_"):
            return _T["MPI"]
        if name.startswith("shmem_"):
            return _T["SHMEM"]
        if name.startswith(("!$omp ", "omp_")):
            return _T["OMP"]
        if name.startswith("pthread_"):
            return _T["PTHREAD"]
        for prefix, kind in (("cuda", "CUDA"), ("cu", "CUDA"), ("cl", "OPENCL")):
            if len(name) > len(prefix) and name.startswith(prefix) and name[len(prefix)].isupper():
                return _T[kind]
    return _T["USR"]


def region_types(report: Report) -> np.ndarray:
    """scorep-score's type of every region (an index into :data:`TYPES`): by paradigm (or
    name, where the paradigm is unknown), then USR regions on a call path that leads to an
    MPI, OpenMP ... region become COM.

    Example
    -------
    >>> import cubescale
    >>> r = cubescale.open(cubescale.examples.report_path())
    >>> t = region_types(r)
    >>> TYPES[t[3]], r.regions[3].name
    ('MPI', 'MPI_Bcast')
    """
    regions = report.regions
    types = np.array([_definition_type(r.name, _paradigm(r)) for r in regions], dtype=np.int64)
    parents = np.asarray(report.cnode_parents, dtype=np.int64)
    cnode_region = np.asarray(report._core.cnode_regions(), dtype=np.int64)
    own = types[cnode_region] > _T["COM"]  # a cnode of MPI, OMP ... starts a path
    below = above_marked(parents, own)     # some call path below is such a cnode
    com = np.zeros(len(regions), dtype=bool)
    np.logical_or.at(com, cnode_region, below)
    types[com & (types == _T["USR"])] = _T["COM"]
    return types


def _bytes_per_visit(report: Report, sizes: dict[str, int], program_arguments: int) -> np.ndarray:
    """Per region, the bytes its visit writes (scorep-score's bytesPerVisit)."""
    stamp = sizes["Timestamp"]
    roots = {int(report._core.cnode_regions()[c]) for c in np.nonzero(np.asarray(report.cnode_parents) < 0)[0]}
    out = np.zeros(len(report.regions), dtype=np.float64)
    for i, region in enumerate(report.regions):
        paradigm, name = _paradigm(region), region.name
        if paradigm == "sampling":
            continue
        omitted = paradigm == "measurement" or (paradigm == "user" and (
            name == "MEASUREMENT OFF" or name.startswith(("instance=", "iteration="))))
        total = 0
        if not omitted:
            total += 2 * (sizes["Enter"] + stamp)  # Enter and Leave
        if program_arguments >= 0 and i in roots and paradigm not in ("cuda", "opencl"):
            total += sizes["ProgramBegin"] + sizes["ProgramEnd"] + 2 * stamp
        for record, names, prefixes, stamped in _RECORDS:
            if (names is not None and name in names) or (prefixes is not None and name.startswith(prefixes)):
                total += sizes[record] + (stamp if stamped else 0)
        if "Metric" in sizes and not (paradigm == "user" and name.startswith(("instance=", "iteration="))):
            total += 2 * sizes["Metric"] + stamp  # counter values at Enter and at Leave
        if name.startswith("MEASUREMENT OFF"):  # one visit: an off and an on record
            total += 2 * (sizes["MeasurementOnOff"] + stamp)
        out[i] = total
    return out


def _size32(value: float) -> int:
    """Bytes of a uint32 in OTF2's compressed encoding (0 and all ones: 1 byte)."""
    v = int(value)
    if v <= 0 or v >= 0xFFFFFFFF:
        return 1
    return 1 + (v.bit_length() + 7) // 8


def _size64(value: float) -> int:
    """Bytes of a uint64 in OTF2's compressed encoding."""
    v = int(value)
    if v <= 0 or v >= 0xFFFFFFFFFFFFFFFF:
        return 1
    return 1 + (v.bit_length() + 7) // 8


_ROOTED = ("MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv")


def _expected_per_visit(report: Report, sizes: dict[str, int], per_visit: np.ndarray, processes: int,
                        counts: dict[str, int]) -> np.ndarray:
    """Bytes per visit with the MPI records' integer fields sized as the profile suggests instead
    of OTF2's upper bounds: peer ranks and roots below the number of processes, the mean message
    size of the region (bytes_sent / bytes_received per visit), communicator references below the
    Comm count Score-P stored (else 1), tags below 256. Everything else as scorep-score."""
    names = [r.name for r in report.regions]
    visits = np.maximum(_region_totals(report, ("visits", "Visits")), 1)
    sent = _region_totals(report, ("bytes_sent",)) / visits
    received = _region_totals(report, ("bytes_received",)) / visits
    have_bytes = any(m.name in ("bytes_sent", "bytes_received") for m in report.metrics)
    rank, comm, tag = _size32(processes - 1), _size32(counts.get("Comm", 1) - 1), 2
    out = per_visit.copy()
    for i, name in enumerate(names):
        if not name.startswith("MPI_"):
            continue
        length_sent = _size64(sent[i]) if have_bytes else 9
        length_received = _size64(received[i]) if have_bytes else 9
        p2p = {"MpiSend": _MPI_SEND, "MpiIsend": _MPI_ISEND, "MpiRecv": _MPI_RECV, "MpiIrecv": _MPI_IRECV}
        for record, members in p2p.items():
            if name in members:
                length = length_received if record in ("MpiRecv", "MpiIrecv") else length_sent
                out[i] += 2 + rank + comm + tag + length - sizes[record]
        if name in _MPI_COLLECTIVE:
            root = rank if name in _ROOTED else 1
            out[i] += 3 + comm + root + length_sent + length_received - sizes["MpiCollectiveEnd"]
    return out


def _region_totals(report: Report, names: Sequence[str]) -> np.ndarray:
    """A metric's exclusive sum per region over all locations (zeros when the report lacks it)."""
    for name in names:
        if any(m.name == name for m in report.metrics):
            values = _scalar(report.values(name, inclusive=False))
            rows = np.asarray(report._core.cnode_regions(), dtype=np.uint32)
            sums = _stat.group_sums(values, rows, len(report.regions), np.zeros(report.shape[1], dtype=np.uint32), 1)
            return sums[:, 0]
    return np.zeros(len(report.regions))


def _definition_counts(report: Report) -> dict[str, int]:
    """What OTF2's estimator needs: regions and metrics as scorep-score counts them, and the
    counters Score-P stores as attributes (Score-P::DefinitionCounters::<name>)."""
    counts = {"Region": len(report.regions), "Metric": len(report.metrics)}
    prefix = "Score-P::DefinitionCounters::"
    for key, value in report.attrs.items():
        if key.startswith(prefix) and value.strip().isdigit():
            counts[key[len(prefix):]] = int(value)
    return counts


def _program_arguments(report: Report) -> int:
    found = -1
    for region in report.regions:
        value = region.attrs.get("Score-P::ProgramArguments::numberOfArguments", "")
        if value.strip().isdigit():
            found = max(found, int(value))
    return found


def _parameter_counts(report: Report) -> tuple[np.ndarray, np.ndarray]:
    cnodes = report.shape[0]
    numeric, strings = np.zeros(cnodes), np.zeros(cnodes)
    for c in range(cnodes):
        for p in report.cnode_parameters(c):
            if p.get("partype", "") == "numeric":
                numeric[c] += 1
            else:
                strings[c] += 1
    return numeric, strings


def _metric(report: Report, names: Sequence[str]) -> Metric:
    for name in names:
        try:
            return report.metric(name)
        except KeyError:
            continue
    raise ValueError(f"score needs a {names[0]} metric; the report has {', '.join(m.name for m in report.metrics)}")


def _processes(report: Report) -> tuple[np.ndarray, int, int]:
    """The process (location group) of every location, how many, and the most locations of one."""
    groups = np.asarray(report._core.location_group_elements())
    group = np.full(report.shape[1], -1, dtype=np.int64)
    depth = 0
    while (group < 0).any() and depth < 1 << 16:  # a location's group is its nearest group ancestor
        above = np.asarray(report._core.location_ancestors(depth), dtype=np.int64)
        hit = (group < 0) & np.isin(above, groups)
        group[hit] = above[hit]
        depth += 1
    _, of = np.unique(group, return_inverse=True)
    of = of.astype(np.uint32)
    most = int(np.bincount(of).max(initial=0)) if len(of) else 0
    return of, int(of.max(initial=0)) + 1 if len(of) else 0, most


def _scalar(values: np.ndarray) -> np.ndarray:
    if values.dtype.names:
        # TAU_ATOMIC: its sum, the visits (or time) over the samples it aggregates. scorep-score
        # takes a visits tuple's count N, equal to the sum in Score-P's per-location tuples but the
        # number of threads in thread-aggregated ones (cubescale threads --strategy set): docs/score.md.
        return np.ascontiguousarray(values["sum"], dtype=np.float64)
    return values if values.dtype in (np.float64, np.uint64) else values.astype(np.float64)


def _filter_excludes(report: Report, text: str, types: np.ndarray) -> np.ndarray:
    regions = report.regions
    # as scorep-score: MANGLED rules see the mangled name (Region.mangled_name "" is the name)
    excluded = np.array(_stat.filter_excludes(text, [r.name for r in regions], [r.module for r in regions],
                                              [r.mangled_name for r in regions]), dtype=bool)
    removable = np.array([_FILTERABLE[TYPES[t]] != "-" for t in types], dtype=bool)
    sampling = np.array([_paradigm(r) == "sampling" for r in regions], dtype=bool)
    return excluded & removable & ~sampling


def _filter_text(filter: str | os.PathLike | None) -> str | None:  # noqa: A002
    """The filter-file text that ``filter`` gives: itself, or the file it names."""
    if filter is None:
        return None
    text = os.fspath(filter)
    if "SCOREP_" not in text or os.path.exists(text):
        with open(text) as f:
            return f.read()
    return text


def _call_path_bytes(report: Report, sizes: dict[str, int],
                     per_visit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per call path: its region, the region whose row it counts for, whether it is a dynamic
    region's (``instance=``, ``iteration=``) and the bytes one visit writes, parameters included."""
    numeric, strings = _parameter_counts(report)
    parents = np.asarray(report.cnode_parents, dtype=np.int64)
    cnode_region = np.asarray(report._core.cnode_regions(), dtype=np.int64)
    dynamic = np.array([_paradigm(r) == "user" and r.name.startswith(("instance=", "iteration="))
                        for r in report.regions], dtype=bool)[cnode_region] & (parents >= 0)
    # a dynamic region's visits write its parent's records and count for the parent region
    row_region = np.where(dynamic, cnode_region[np.maximum(parents, 0)], cnode_region)
    stamp = sizes["Timestamp"]
    weight = np.where(dynamic, per_visit[row_region],
                      per_visit[cnode_region] + numeric * (sizes["ParameterInt"] + stamp)
                      + strings * (sizes["ParameterString"] + stamp))
    return cnode_region, row_region, dynamic, weight


def score(report: Report, filter: str | os.PathLike | None = None, counters: int = 0) -> Score:  # noqa: A002
    """The trace-size estimate of a profile, per region type and per region; ``filter``: the
    text of a Score-P filter file or its path, whose effect the ``filtered`` rows show;
    ``counters``: how many hardware counters the trace records at every Enter and Leave
    (scorep-score ``-c``).

    Example
    -------
    >>> import cubescale
    >>> s = cubescale.score(cubescale.open(cubescale.examples.report_path()))
    >>> s.groups[0].visits == int(cubescale.open(cubescale.examples.report_path()).values("visits", inclusive=False).sum())
    True
    """
    text = _filter_text(filter)
    visits = _scalar(report.values(_metric(report, ("visits", "Visits")), inclusive=False))
    time = _scalar(report.values(_metric(report, ("time", "Time")), inclusive=False))
    arguments = _program_arguments(report)
    counts = _definition_counts(report)
    sizes = dict(_stat.otf2_record_sizes(counts, counters, max(arguments, 0)))
    per_visit = _bytes_per_visit(report, sizes, arguments)
    types = region_types(report)
    cnode_region, row_region, dynamic, weight = _call_path_bytes(report, sizes, per_visit)
    excluded = _filter_excludes(report, text, types) if text is not None else np.zeros(len(types), dtype=bool)
    # one row per (region row, type, dynamic, filtered) combination, summed per process in C++
    cnode_type = types[cnode_region]
    cut = excluded[cnode_region] & ~dynamic
    key = (row_region * len(TYPES) + cnode_type) * 4 + dynamic * 2 + cut
    keys, rows = np.unique(key, return_inverse=True)
    process, n_processes, most = _processes(report)
    rows32 = rows.astype(np.uint32)
    buf = _stat.group_sums(visits, rows32, len(keys), process, n_processes, weight)
    expected = _expected_per_visit(report, sizes, per_visit, n_processes, counts)
    expected_weight = weight + np.where(dynamic, expected[row_region] - per_visit[row_region],
                                        expected[cnode_region] - per_visit[cnode_region])
    # the filtered trace (scorep-score's filtered ALL): without excluded regions and dynamic ones
    dropped = (excluded[cnode_region] | dynamic) if text is not None else np.zeros(len(dynamic), dtype=bool)
    kept_rows = np.where(dropped, _stat.SKIP, 0).astype(np.uint32)
    expected_total = _stat.group_sums(visits, kept_rows, 1, np.zeros(len(process), dtype=np.uint32), 1,
                                      expected_weight)
    vis = _stat.group_sums(visits, rows32, len(keys), process, n_processes).sum(axis=1)
    tim = _stat.group_sums(time, rows32, len(keys), process, n_processes).sum(axis=1)
    k_region, k_type = keys // 4 // len(TYPES), keys // 4 % len(TYPES)
    k_dynamic, k_cut = (keys // 2) % 2 == 1, keys % 2 == 1
    groups = _sum_groups(TYPES, k_type, np.ones(len(keys), dtype=bool), buf, vis, tim,
                         " " if text is None else "-")
    region_rows = _region_rows(report, types, k_region, buf, vis, tim, excluded if text is not None else None)
    filtered = None
    if text is not None:
        target = np.where(k_cut, _T["FLT"], k_type)
        filtered = _sum_groups(TYPES, target, ~k_dynamic, buf, vis, tim, None)
        filtered = tuple(r if r.type in ("ALL", "FLT") else _renamed(r, f"{r.type}-FLT") for r in filtered)
    reference = filtered if filtered is not None else groups
    all_row = next(r for r in reference if r.type == "ALL")
    memory = max(all_row.max_buf, 2 * _MIB) + 2 * _MIB * most
    return Score(groups=_all_first(groups), regions=_sorted(region_rows),
                 filtered=None if filtered is None else _all_first(filtered),
                 max_buf=all_row.max_buf, total_buf=all_row.total_buf, total_memory=memory,
                 total_time=next(r for r in groups if r.type == "ALL").time, record_sizes=sizes,
                 expected_total_buf=int(round(float(expected_total.sum()))))


def _all_first(rows: Sequence[ScoreRow]) -> tuple[ScoreRow, ...]:
    # ALL, then the types that write records by max_buf (scorep-score prints only those)
    return (rows[_T["ALL"]],) + _sorted(r for r in rows if r.total_buf > 0 and r.type != "ALL")


def _renamed(r: ScoreRow, name: str) -> ScoreRow:
    return ScoreRow(r.type, name, r.file, r.filter, r.max_buf, r.total_buf, r.visits, r.time)


def _sum_groups(types: Sequence[str], of: np.ndarray, use: np.ndarray, buf: np.ndarray, vis: np.ndarray,
                tim: np.ndarray, symbol: str | None) -> tuple[ScoreRow, ...]:
    """Rows per type plus ALL (the sum of every type but FLT), in :data:`TYPES` order."""
    per_type = np.zeros((len(types), buf.shape[1]))
    np.add.at(per_type, of[use], buf[use])
    visits, time = np.zeros(len(types)), np.zeros(len(types))
    np.add.at(visits, of[use], vis[use])
    np.add.at(time, of[use], tim[use])
    not_flt = np.arange(len(types)) != _T["FLT"]
    per_type[_T["ALL"]] = per_type[not_flt].sum(axis=0)
    visits[_T["ALL"]], time[_T["ALL"]] = visits[not_flt].sum(), time[not_flt].sum()
    rows = []
    for i, name in enumerate(types):
        flt = symbol if symbol is not None else _FILTERABLE[name]
        rows.append(ScoreRow(name, name, "", flt, int(round(per_type[i].max(initial=0))), int(round(per_type[i].sum())),
                             int(round(visits[i])), float(time[i])))
    return tuple(rows)


def _region_rows(report: Report, types: np.ndarray, of: np.ndarray, buf: np.ndarray, vis: np.ndarray,
                 tim: np.ndarray, excluded: np.ndarray | None) -> list[ScoreRow]:
    n = len(report.regions)
    per_region = np.zeros((n, buf.shape[1]))
    np.add.at(per_region, of, buf)
    visits, time = np.zeros(n), np.zeros(n)
    np.add.at(visits, of, vis)
    np.add.at(time, of, tim)
    rows = []
    for i, region in enumerate(report.regions):
        flt = " " if excluded is None else ("+" if excluded[i] else "-")
        rows.append(ScoreRow(TYPES[types[i]], region.name, region.module, flt,
                             int(round(per_region[i].max(initial=0))), int(round(per_region[i].sum())),
                             int(round(visits[i])), float(time[i])))
    return rows


def _sorted(rows: Iterable[ScoreRow]) -> tuple[ScoreRow, ...]:
    """By max_buf, largest first, stable (scorep-score's default order); rows without bytes
    are not printed by scorep-score and go last."""
    return tuple(sorted(rows, key=lambda r: -r.max_buf))
