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
