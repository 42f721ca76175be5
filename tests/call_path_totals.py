"""Test helper: a report's visits and inclusive time per call path, keyed by the region
names from the root (so reports with different cnode numbering compare)."""

from __future__ import annotations


def visits_and_time(report) -> dict[tuple, tuple[int, float]]:
    """Call path (region names from the root) -> (visits, inclusive time), summed over locations."""
    visits = report.values("visits", inclusive=False).sum(axis=1)
    time = report.values("time", inclusive=True).sum(axis=1)
    paths: dict[tuple, tuple[int, float]] = {}
    for c in report.cnodes:
        path, node = [], c
        while True:
            path.append(node.region.name)
            if node.parent is None:
                break
            node = report.cnodes[node.parent]
        key = tuple(reversed(path))
        v, t = paths.get(key, (0, 0.0))
        paths[key] = (v + int(visits[c.index]), t + float(time[c.index]))
    return paths
