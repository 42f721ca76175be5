"""Long core calls with a progress line: the call runs on a thread (the core releases the GIL)
while this one asks how far it got.

Example
-------
>>> lines = []
>>> run_polled(lambda: 6 * 7, lambda: "working", lines.append)
42
>>> lines[0]
'working'
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def run_polled(work: Callable[[], T], status: Callable[[], str], report: Callable[[str], None] | None,
               every: float = 0.25) -> T:
    """``work()``; with ``report``, ``report(status())`` once at the start and then every
    ``every`` seconds until it returns. ``work`` runs on a daemon thread, with or without
    ``report``, so that Ctrl-C ends the program at once (the core holds this thread while it
    works, and Python handles a signal only on the main thread between its own steps). Its
    exception, if any, is raised here.

    Example
    -------
    >>> import time
    >>> seen = []
    >>> run_polled(lambda: time.sleep(0.05) or "done", lambda: f"{len(seen)} polls", seen.append, every=0.01)
    'done'
    >>> len(seen) > 1
    True
    """
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as e:  # noqa: BLE001 - raised on the calling thread below
            outcome["error"] = e

    thread = threading.Thread(target=run, name="cubescale-work", daemon=True)
    if report is not None:
        report(status())
    thread.start()
    while thread.is_alive():
        thread.join(every)
        if thread.is_alive() and report is not None:
            report(status())
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def reading_status(trace, total: int, what: str = "reading events") -> Callable[[], str]:
    """A status line for :func:`run_polled` while the core reads ``total`` events of ``trace``
    (a :class:`cubescale.trace.Trace`): how many it has read since this call, and the share.

    Example
    -------
    >>> import cubescale
    >>> t = cubescale.trace.open(cubescale.examples.trace_path())
    >>> status = reading_status(t, 1448)
    >>> status()
    'reading events: 0 of 1,448 (0 %)'
    >>> _ = t.local_profile()
    >>> status()
    'reading events: 1,448 of 1,448 (100 %)'
    """
    first = int(trace._core.events_read())

    def status() -> str:
        read = int(trace._core.events_read()) - first
        return f"{what}: {event_count(read)} of {event_count(total)} ({100 * read // max(total, 1)} %)"

    return status


def event_count(n: int) -> str:
    """A number of events as a status line shows it: millions past a million.

    Example
    -------
    >>> event_count(1448), event_count(50_400_008)
    ('1,448', '50.4 M')
    """
    return f"{n / 1e6:.1f} M" if n >= 1_000_000 else f"{n:,}"
