"""Trace-derived profiles present each call path's children in order of first visit, as
Score-P's profiles do (it sorts every subtree by first enter time), and the order is the
same whatever share of the trace each rank reads (the earliest visit is kept through
unification)."""

from __future__ import annotations

import os

import pytest
from otf2_oracle import SHARED_OTF2

import cubescale
import cubescale.trace

# Pure MPI traces (no worker threads grafted below parallel regions) and the shipped one.
TRACES = [os.path.join(SHARED_OTF2, name, "traces.otf2") for name in ("late-sender-barrier", "ping-pong", "bcast-scorep8")]


def first_visits(anchor: str) -> dict[tuple[str, ...], int]:
    """Call path (region names from the root) -> earliest Enter, walked from the event table."""
    events = cubescale.trace.events(anchor)
    first: dict[tuple[str, ...], int] = {}
    for _, rows in events.groupby("Location", sort=False):
        stack: list[str] = []
        for kind, name, time in zip(rows["Event Type"], rows["Name"], rows["Timestamp (ns)"]):
            # PROGRAM_BEGIN/END open and close the program's region (its Name where defined)
            if kind == "ENTER" or (kind == "PROGRAM_BEGIN" and name != "PROGRAM_BEGIN"):
                stack.append(name)
                path = tuple(stack)
                first[path] = min(first.get(path, time), time)
            elif kind == "LEAVE" or (kind == "PROGRAM_END" and name != "PROGRAM_END"):
                stack.pop()
    return first


def paths(report) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for c in report.cnodes:
        out.append((out[c.parent] if c.parent is not None else ()) + (c.region.name,))
    return out


def sibling_orders(report) -> dict[int | None, list[int]]:
    children: dict[int | None, list[int]] = {}
    for c in report.cnodes:
        children.setdefault(c.parent, []).append(c.index)
    return children


@pytest.mark.parametrize("anchor", [*TRACES, cubescale.examples.trace_path()], ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_children_come_in_order_of_first_visit(tmp_path, anchor):
    if not os.path.exists(anchor):
        pytest.skip(f"{anchor} not present")
    report = cubescale.trace.profile(anchor, tmp_path / "p.cubex")
    first = first_visits(anchor)
    names = paths(report)
    assert set(names) == set(first)
    for parent, kids in sibling_orders(report).items():
        times = [first[names[k]] for k in kids]
        assert times == sorted(times), (parent, [names[k][-1] for k in kids], times)


def test_order_differs_from_sorting_by_region():
    """The check above can fail: on late-sender-barrier, sorting siblings by region (the
    canonical order unification uses internally) gives another order than first visit."""
    anchor = TRACES[0]
    if not os.path.exists(anchor):
        pytest.skip(f"{anchor} not present")
    first = first_visits(anchor)
    by_parent: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for path in first:
        by_parent.setdefault(path[:-1], []).append(path)
    differs = [p for p, kids in by_parent.items()
               if sorted(kids, key=lambda k: first[k]) != sorted(kids, key=lambda k: k[-1])]
    assert differs
