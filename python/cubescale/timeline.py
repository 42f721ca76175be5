"""Metric timelines and aggregate expressions over the system tree (the Vampir hardware-levels paper).

Energy per FLOP of a node needs the counters of all its descendant locations (cores,
packages, GPUs) resampled, summed, differentiated and divided. Timelines (``(t, value)``
samples in OTF2's metric modes) are attached to system-tree elements in a
:class:`TimelineStore`; an expression in Vampir's reverse Polish notation says what to
compute for a target element::

    "PAPI_FP_OPS" "stairstep" source-counter "sum" aggregate "0" diff-quot

``aggregate`` combines the inner expression over every element below the target (sum, min,
max, avg) on a common grid of a bounded number of points; ``diff-quot`` differentiates by
time; ``+ - * /`` work point-wise. :func:`evaluate` runs in one process;
:func:`cubescale.parallel.evaluate_staged` runs the aggregates on many workers and sends
only partial timelines of bounded size up a reduction tree. The :func:`source` builder
writes the same expressions from Python.

Example
-------
>>> import numpy as np
>>> from cubescale.timeline import Timeline, TimelineStore, evaluate, source
>>> store = TimelineStore([-1, 0, 0])              # a node with two cores
>>> for core, rate in ((1, 2.0), (2, 3.0)):          # FLOP counters: rate x t
...     store.add(core, "flops", Timeline([0.0, 10.0], [0.0, 10 * rate]))
>>> expr = source("flops", "linear").aggregate("sum").diff_quot()
>>> str(expr)
'"flops" "linear" source-counter "sum" aggregate "0" diff-quot'
>>> t, flops_per_s = evaluate(expr, store, target=0, points=5)
>>> flops_per_s.tolist()
[5.0, 5.0, 5.0, 5.0, 5.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core import timeline as _timeline
from ._core.timeline import Expression, Timeline, TimelineStore

__all__ = ["MOST_POINTS", "Expression", "Term", "Timeline", "TimelineStore", "check_points", "evaluate", "grid",
           "parse", "source"]

MOST_POINTS: int = _timeline.max_grid_points
"""The most points of a grid (100,000): a plot has a few thousand pixels across; more only costs
memory (every timeline resampled onto the grid holds 8 bytes per point)."""


def check_points(points: int) -> int:
    """``points`` as an int, or a one-line ``ValueError`` naming the bounds (1 to
    :data:`MOST_POINTS`) before anything is allocated for it.

    Example
    -------
    >>> check_points(10**11)
    Traceback (most recent call last):
    ...
    ValueError: a grid needs 1 to 100000 points, not 100000000000
    """
    n = int(points)
    if not 1 <= n <= MOST_POINTS:
        raise ValueError(f"a grid needs 1 to {MOST_POINTS} points, not {n}")
    return n


def parse(text: str) -> Expression:
    """Parses an expression in reverse Polish notation; ``ValueError`` names the position of
    the bad token.

    Example
    -------
    >>> str(parse('"2" "stairstep" source-counter "sum" aggregate'))
    '"2" "stairstep" source-counter "sum" aggregate'
    >>> parse('"2" source-counter')
    Traceback (most recent call last):
    ...
    ValueError: position 4: 'source-counter' needs a metric (name or id) (a quoted literal) before it
    """
    return Expression(text)


def grid(start: float, stop: float, points: int) -> np.ndarray:
    """The evaluation grid: ``points`` equally spaced times from ``start`` to ``stop``.

    Example
    -------
    >>> grid(0.0, 1.0, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    points = check_points(points)
    return np.linspace(start, stop, points) if points > 1 else np.array([float(start)])


def evaluate(expression: str | Expression | Term, store: TimelineStore, target: int, points: int = 1024,
             start: float | None = None, stop: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(times, values)`` of ``expression`` for the system-tree element ``target`` on a grid
    of ``points`` (1 to :data:`MOST_POINTS`) from ``start`` to ``stop`` (default: the store's
    earliest and latest sample).

    Example
    -------
    >>> store = TimelineStore([-1, 0])
    >>> store.add(1, "energy", Timeline([0.0, 2.0], [0.0, 100.0]))
    >>> evaluate('"energy" "linear" source-counter "sum" aggregate "0" diff-quot', store, 0, points=3)[1].tolist()
    [50.0, 50.0, 50.0]
    """
    points = check_points(points)
    e = _expression(expression)
    lo, hi = _range(store, start, stop)
    return grid(lo, hi, points), _timeline.evaluate_local(e, store, int(target), lo, hi, int(points))


class Term:
    """A metric expression built in Python; ``str(term)`` is its reverse Polish notation.

    Example
    -------
    >>> energy = source("energy").aggregate("sum").diff_quot()
    >>> flops = source("flops").aggregate("sum").diff_quot()
    >>> str(energy / flops)
    '"energy" "stairstep" source-counter "sum" aggregate "0" diff-quot "flops" "stairstep" source-counter "sum" aggregate "0" diff-quot /'
    """

    def __init__(self, text: str):
        self.text = text

    def aggregate(self, function: str = "sum") -> Term:
        """This expression combined over every element below the target: sum, min, max, avg.

        Example
        -------
        >>> str(source("w").aggregate("max"))
        '"w" "stairstep" source-counter "max" aggregate'
        """
        return Term(f'{self.text} "{function}" aggregate')

    def diff_quot(self, window: int = 0) -> Term:
        """The derivative by time (difference quotient over 2 x (window + 1) grid intervals).

        Example
        -------
        >>> str(source("e").diff_quot(2))
        '"e" "stairstep" source-counter "2" diff-quot'
        """
        return Term(f'{self.text} "{int(window)}" diff-quot')

    def _binary(self, other: Any, op: str, reverse: bool = False) -> Term:
        other_text = other.text if isinstance(other, Term) else f'"{float(other)!r}"'
        a, b = (other_text, self.text) if reverse else (self.text, other_text)
        return Term(f"{a} {b} {op}")

    def __add__(self, other: Any) -> Term:
        return self._binary(other, "+")

    def __radd__(self, other: Any) -> Term:
        return self._binary(other, "+", True)

    def __sub__(self, other: Any) -> Term:
        return self._binary(other, "-")

    def __rsub__(self, other: Any) -> Term:
        return self._binary(other, "-", True)

    def __mul__(self, other: Any) -> Term:
        return self._binary(other, "*")

    def __rmul__(self, other: Any) -> Term:
        return self._binary(other, "*", True)

    def __truediv__(self, other: Any) -> Term:
        return self._binary(other, "/")

    def __rtruediv__(self, other: Any) -> Term:
        return self._binary(other, "/", True)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Term({self.text!r})"


def source(metric: str | int, interpolation: str = "stairstep") -> Term:
    """The timeline of ``metric`` (name or id) on the element being evaluated.

    Example
    -------
    >>> str(source(2))
    '"2" "stairstep" source-counter'
    """
    name = str(metric).replace("\\", "\\\\").replace('"', '\\"')
    return Term(f'"{name}" "{interpolation}" source-counter')


def _expression(expression: str | Expression | Term) -> Expression:
    if isinstance(expression, Expression):
        return expression
    return Expression(str(expression))


def _range(store: TimelineStore, start: float | None, stop: float | None) -> tuple[float, float]:
    lo, hi = store.time_range()
    lo = lo if start is None else float(start)
    hi = hi if stop is None else float(stop)
    if not np.isfinite(lo) or not np.isfinite(hi):
        raise ValueError("no samples to take the time range from; pass start and stop")
    return lo, hi
