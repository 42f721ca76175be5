"""Where calls went deeper than the depth limit in the last measurement.

As Score-P's profile (``SCOREP_PROFILING_MAX_CALLPATH_DEPTH``), the recorder
(``recorder.hpp``) puts the outermost call below the limit into a child ``COLLAPSE`` of the
call path at the limit (its visit and inclusive time; the calls inside it add nothing), and
Score-P warns at the end of a run that exceeded the limit; ``cubescale run`` does so with
:func:`depth_warning`.
"""

from __future__ import annotations

from .._core import measure as _measure

__all__ = ["collapsed_paths", "depth_warning"]


def collapsed_paths() -> list[str]:
    """The region names of the call paths (of every thread) below which calls were collapsed
    into ``COLLAPSE`` (each path once per thread that went below it).

    Example
    -------
    >>> from cubescale import measure
    >>> from cubescale.measure.depth import collapsed_paths
    >>> measure.start(depth_limit=2)
    >>> with measure.region("a"), measure.region("b"), measure.region("c"):
    ...     pass
    >>> measure.stop()
    >>> collapsed_paths()
    ['b']
    """
    core = _measure.to_profile(None)  # each thread's own call paths
    parents, regions = core.cnode_parents(), core.cnode_regions()
    names = [r.name for r in core.regions]
    return [names[regions[parent]] for c, parent in enumerate(parents.tolist())
            if parent >= 0 and names[regions[c]] == "COLLAPSE" and core.regions[regions[c]].role == "artificial"]


def depth_warning(depth_limit: int) -> str | None:
    """One line for stderr when calls of the last measurement went deeper than
    ``depth_limit``, else None.

    Example
    -------
    >>> from cubescale import measure
    >>> from cubescale.measure.depth import depth_warning
    >>> measure.start(depth_limit=1)
    >>> with measure.region("a"), measure.region("b"):
    ...     pass
    >>> measure.stop()
    >>> print(depth_warning(1))  # doctest: +ELLIPSIS
    cubescale: warning: calls deeper than the depth limit 1 are collapsed into COLLAPSE below 1 call path (a): ...
    """
    cut = collapsed_paths()
    if not cut:
        return None
    where = ", ".join(sorted(set(cut))[:3]) + (", ..." if len(set(cut)) > 3 else "")
    return (f"cubescale: warning: calls deeper than the depth limit {depth_limit} are collapsed into COLLAPSE "
            f"below {len(cut)} call path{'s' if len(cut) > 1 else ''} ({where}): their visits and time are "
            "there, not their own call paths; raise --depth to record them")


_measure.ignore_file(__file__)  # the measurement's own code is no region
