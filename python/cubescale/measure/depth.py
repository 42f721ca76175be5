"""Where the depth limit cut the call tree of the last measurement.

The recorder (``recorder.hpp``) does not record a call deeper than the depth limit: it runs
on the frame of its deepest recorded caller, whose time therefore includes it, and its visit is
counted nowhere. Score-P instead puts such calls into a region ``COLLAPSE`` below the cut
(``SCOREP_PROFILING_MAX_CALLPATH_DEPTH``), which keeps their visits; the recorder does not
count them, so what can be told afterwards is where the tree reached the limit, not how many
calls lay below. ``cubescale run`` warns with :func:`depth_warning`.
"""

from __future__ import annotations

from .._core import measure as _measure

__all__ = ["depth_warning", "paths_at_limit"]


def paths_at_limit(depth_limit: int) -> list[str]:
    """The region names of the call paths (of every thread) that reach ``depth_limit``: the
    places below which calls were not recorded, if the program went deeper.

    Example
    -------
    >>> from cubescale import measure
    >>> from cubescale.measure.depth import paths_at_limit
    >>> measure.start(depth_limit=2)
    >>> with measure.region("a"), measure.region("b"), measure.region("c"):
    ...     pass
    >>> measure.stop()
    >>> paths_at_limit(2)
    ['b']
    """
    core = _measure.to_profile(None)  # each thread's own roots: depths as the recorder counts them
    parents, regions = core.cnode_parents(), core.cnode_regions()
    depth: list[int] = []
    for parent in parents.tolist():  # preorder: a parent comes before its children
        depth.append(1 if parent < 0 else depth[parent] + 1)
    names = [core.regions[regions[i]].name for i, d in enumerate(depth) if d == depth_limit]
    return names


def depth_warning(depth_limit: int) -> str | None:
    """One line for stderr when the last measurement reached ``depth_limit``, else None.

    Example
    -------
    >>> from cubescale import measure
    >>> from cubescale.measure.depth import depth_warning
    >>> measure.start(depth_limit=1)
    >>> with measure.region("a"), measure.region("b"):
    ...     pass
    >>> measure.stop()
    >>> print(depth_warning(1))  # doctest: +ELLIPSIS
    cubescale: warning: 1 call path reaches the depth limit 1 (in a): ...
    """
    cut = paths_at_limit(depth_limit)
    if not cut:
        return None
    where = ", ".join(sorted(set(cut))[:3]) + (", ..." if len(set(cut)) > 3 else "")
    return (f"cubescale: warning: {len(cut)} call path{'s' if len(cut) > 1 else ''} reach"
            f"{'' if len(cut) > 1 else 'es'} the depth limit {depth_limit} (in {where}): calls below were "
            "not recorded on their own; their time counts in the call path at the limit, their visits "
            "are not counted (Score-P would keep them as COLLAPSE); raise --depth to record them")


_measure.ignore_file(__file__)  # the measurement's own code is no region
