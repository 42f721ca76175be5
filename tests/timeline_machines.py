"""Synthetic machines with energy and FLOP counters whose rates are known, for the timeline
tests: machine > 2 nodes > 2 packages > 4 cores (+ 1 GPU per node). Packages and GPUs carry
energy counters (metric instances scoped to hardware, paper 004); cores carry FLOP counters.
Counters are integers sampled at integer seconds, so that stair-step grids on those seconds
see exact values and sums are exact in any order (the worker count cannot change a bit)."""

from __future__ import annotations

import numpy as np

from cubescale.timeline import Timeline, TimelineStore

SECONDS = 60


def machine() -> tuple[list[int], dict[str, list[int]]]:
    """(parents, elements by kind) of the machine, in preorder."""
    parents: list[int] = [-1]
    kinds: dict[str, list[int]] = {"node": [], "package": [], "core": [], "gpu": []}

    def add(parent: int, kind: str) -> int:
        parents.append(parent)
        kinds[kind].append(len(parents) - 1)
        return len(parents) - 1

    for _ in range(2):
        node = add(0, "node")
        for _ in range(2):
            package = add(node, "package")
            for _ in range(4):
                add(package, "core")
        add(node, "gpu")
    return parents, kinds


def rates() -> dict[int, tuple[str, int]]:
    """Element -> (metric, integer rate per second)."""
    parents, kinds = machine()
    out = {}
    for i, p in enumerate(kinds["package"]):
        out[p] = ("energy", 40 + 5 * i)       # joules per second (watts)
    for i, g in enumerate(kinds["gpu"]):
        out[g] = ("energy", 200 + 50 * i)
    for i, c in enumerate(kinds["core"]):
        out[c] = ("flops", 1000 * (i + 1))   # FLOP per second
    return out


def store(rank: int = 0, size: int = 1, samples_per_second: int = 1) -> TimelineStore:
    """The timelines round-robin over ranks: this rank's share. Counters grow linearly in
    steps of one sample (integers); `samples_per_second` more samples between the seconds
    (rounded down) make longer traces with the same values on every whole second."""
    parents, _ = machine()
    s = TimelineStore(parents)
    for k, (element, (metric, rate)) in enumerate(sorted(rates().items())):
        if k % size != rank:
            continue
        t = np.arange(SECONDS * samples_per_second + 1, dtype=np.float64) / samples_per_second
        s.add(element, metric, Timeline(t, np.floor(rate * t)))
    return s
