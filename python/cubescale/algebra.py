"""Report algebra: the difference, merge, mean, median, minimum and maximum of reports, cuts of a call
tree and the call tree common to several reports.

Reports are values to compute with (the Scalasca architecture paper, section 6; CubeLib's ``cube_diff``,
``cube_merge``, ``cube_mean``, ``cube_cut``). The inputs are first unified as CubeLib does —
metrics by unique name down the metric tree, call paths by region (name, module, lines),
call site, parameters and attributes down from the roots, system trees by structure or, when
their layouts differ, collapsed to processes and threads matched by rank (Cube's ``-C``) or
reduced to machines and nodes matched by name (Cube's ``-c``, ``system="reduce"``) — and then combined on the aligned
values. A call path or location an input does not have counts as zero there. The results are
ordinary :class:`cubescale.Report` objects whose values the C++ core computes metric by metric
on first use; write them with :func:`cubescale.write`. See ``docs/algebra.md``.

Example
-------
>>> import cubescale
>>> a = cubescale.open(cubescale.examples.report_path())
>>> d = cubescale.diff(a, a)
>>> float(abs(d.values("time")).max())
0.0
>>> d.metric("visits").dtype        # unsigned counts become signed
'INT64'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ._core import algebra as _algebra
from .report import Report

__all__ = ["Alignment", "alignment", "common", "cut", "diff", "maximum", "mean", "median", "merge", "minimum"]

SYSTEMS = ("auto", "same", "processes", "reduce")
"""How system trees are matched: ``auto`` (the same layout, else collapsed to processes),
``same`` (ValueError unless the layouts are equal), ``processes`` (always collapsed to processes
and threads matched by rank: Cube's ``-C``), ``reduce`` (machines and nodes kept and matched by
name, the levels between them dropped: Cube's ``-c``)."""


def _combine(operation: str, reports: Sequence[Report], system: str) -> Report:
    if not reports:
        raise ValueError(f"{operation} needs at least one report")
    core = _algebra.combine(operation, [r._core for r in reports], system)
    return type(reports[0])(core, "")


def diff(a: Report, b: Report, system: str = "auto") -> Report:
    """``a - b`` over the unified definitions of both reports; integer metrics become INT64.

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> cubescale.diff(a, a).values("visits").any()
    np.False_
    """
    return _combine("diff", [a, b], system)


def merge(*reports: Report, system: str = "auto") -> Report:
    """The union of the reports: every report's values written in order into the unified call paths
    and locations, a later report overwriting an earlier one where both have the call path and
    location (as CubeLib's ``cube_merge``). Data types stay (DOUBLE when the reports' differ).

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> m = cubescale.merge(a, a)
    >>> m.shape == a.shape and bool((m.values("time") == a.values("time")).all())
    True
    """
    return _combine("merge", list(reports), system)


def mean(*reports: Report, system: str = "auto") -> Report:
    """The mean of the reports' values (DOUBLE), a missing call path or location counting as zero.

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> bool(abs(cubescale.mean(a, a, a).values("time") - a.values("time")).max() < 1e-12)
    True
    """
    return _combine("mean", list(reports), system)


def median(*reports: Report, system: str = "auto") -> Report:
    """The median of the reports' values (DOUBLE), per value over the reports, a missing call path or
    location counting as zero; for an even number of reports the mean of the two middle values.

    As for :func:`minimum` and :func:`maximum`, the median is taken of the exclusive values (what
    each call path spent itself) and the inclusive values are their sums along the call tree,
    also for metrics stored inclusive (Score-P's ``time``); MIN/MAXDOUBLE as stored.
    Unlike the other operations it holds every report's matrix of one metric at a time.

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> bool(abs(cubescale.median(a, a, a).values("time") - a.values("time")).max() < 1e-12)
    True
    """
    return _combine("median", list(reports), system)


def minimum(*reports: Report, system: str = "auto") -> Report:
    """The element-wise minimum of the reports' values (integer metrics as INT64).

    Taken of the exclusive values (what each call path spent itself), whose sums along the call
    tree are the inclusive values, also for metrics stored inclusive (Score-P's ``time`` and PAPI
    counters): the minimum of the inclusive values would leave exclusive values that are not the
    minimum of anything, below zero for the maximum. MIN/MAXDOUBLE metrics as stored.

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> int(cubescale.algebra.minimum(a, a).values("visits")[0, 0])
    220
    """
    return _combine("min", list(reports), system)


def maximum(*reports: Report, system: str = "auto") -> Report:
    """The element-wise maximum of the reports' values (integer metrics as INT64), taken of the
    exclusive values as for :func:`minimum`.

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> int(cubescale.algebra.maximum(a, a).values("visits")[0, 0])
    220
    """
    return _combine("max", list(reports), system)


def _items(which: int | str | Iterable[int | str] | None) -> list[int | str]:
    """A root or prune selection as a list: an index, a region name, or a list of them."""
    if which is None:
        return []
    return [which] if isinstance(which, (int, str, np.integer)) else list(which)


def _call_paths(report: Report, which: int | str | Iterable[int | str] | None) -> list[int]:
    """Call path indices: an index, a region name (every call path of that region), or a list of them."""
    out: list[int] = []
    for item in _items(which):
        if isinstance(item, str):
            found = [c.index for c in report.cnodes if c.region.name == item]
            if not found:
                raise ValueError(f"no call path calls a region named {item!r}")
            out += found
        else:
            out.append(int(item))
    return out


def cut(report: Report, root: int | str | Iterable[int | str] | None = None,
        prune: int | str | Iterable[int | str] | None = None) -> Report:
    """The report with its call tree re-rooted at ``root`` and the call paths ``prune`` inlined.

    ``root`` and ``prune`` are call path indices or region names (every call path of that
    region). Re-rooting keeps only the subtrees of the roots; a pruned call path goes with its
    subtree, whose values its caller takes (the caller's inclusive value stays), as CubeLib's
    ``cube_cut -r / -p`` do. As there, a region both root and pruned, and pruned call paths
    inside other pruned ones (a recursive region), are a ``ValueError``; so is a name no call
    path has.

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> c = cubescale.cut(a, root="main", prune="solve")
    >>> [x.region.name for x in c.cnodes]
    ['main', 'MPI_Bcast', 'rows_of', 'rows_of.<locals>.<listcomp>']
    >>> float(c.values("time")[0, 0]) == float(a.values("time")[3, 0])   # main (call path 3) keeps its time
    True
    """
    roots, prunes = _call_paths(report, root), _call_paths(report, prune)
    both = sorted({x for x in _items(root) if isinstance(x, str)} & {x for x in _items(prune) if isinstance(x, str)})
    if both:
        raise ValueError(f"cut: {both[0]!r} is given both as root and to prune")
    core = _algebra.cut(report._core, roots, prunes)
    return type(report)(core, "")


def common(*reports: Report) -> list[Report]:
    """Each report reduced to the call tree that all of them have (CubeLib's ``cube_commoncalltree``).

    Call paths are matched as for :func:`diff`; a call path that not every report has goes, and its
    values are folded into its nearest common ancestor's exclusive value (whose inclusive value so
    stays). Each result keeps its report's metrics and system tree.

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> pruned = cubescale.cut(a, prune="solve")
    >>> ca, cp = cubescale.common(a, pruned)
    >>> ca.shape == cp.shape == pruned.shape
    True
    """
    if not reports:
        raise ValueError("common needs at least one report")
    return [type(r)(core, "") for r, core in zip(reports, _algebra.common([r._core for r in reports]))]


@dataclass(frozen=True)
class Alignment:
    """Where one input's metrics, call paths and locations are in the unified report
    (arrays indexed by the input's own indices, as :meth:`Report.values` rows and columns).

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> alignment(a, a)[1].cnodes[:3].tolist()
    [0, 1, 2]
    """

    metrics: np.ndarray
    cnodes: np.ndarray
    locations: np.ndarray


def alignment(*reports: Report, system: str = "auto") -> list[Alignment]:
    """Per report, its place in the unified definitions that :func:`diff`, :func:`merge` and
    :func:`mean` of the same reports compute on.

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> len(alignment(a, a, a))
    3
    """
    return [Alignment(*maps) for maps in _algebra.alignment([r._core for r in reports], system)]


def stream_values(report: Report) -> None:
    """Makes ``report`` load (or compute) every metric anew on each use instead of keeping it,
    so that writing a result needs memory for one metric at a time (the command line's way).

    Example
    -------
    >>> import cubescale
    >>> a = cubescale.open(cubescale.examples.report_path())
    >>> stream_values(a)
    >>> a.values("time").shape
    (21, 20)
    """
    _algebra.stream_values(report._core)
