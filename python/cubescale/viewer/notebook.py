"""The explorer inside a notebook (issue #29, item 3): the viewer's server on a background
thread of the kernel, shown inline as an iframe.

``show(report)`` serves the report (read from a file; its values are shared with the
notebook, which reads nothing twice) on 127.0.0.1 with a fresh token and returns a
:class:`RunningViewer` whose HTML is the iframe; ``stop()`` ends the server. JupyterLab and
the classic notebook display it alike (plain HTML, no widget extension).

Example
-------
>>> import cubescale
>>> from cubescale.viewer.notebook import show
>>> running = show(cubescale.open(cubescale.examples.report_path()), height=400)
>>> running.url.startswith("http://127.0.0.1:") and "?token=" in running.url
True
>>> "<iframe" in running._repr_html_()
True
>>> running.stop()
"""

from __future__ import annotations

import asyncio
import html
import secrets
import threading
from typing import TYPE_CHECKING

from .server import _url, bound, make_app, runner, web  # server's import of aiohttp names the extra if missing

if TYPE_CHECKING:
    from ..report import Report

__all__ = ["RunningViewer", "show"]


class RunningViewer:
    """A viewer server running on a background thread; shown in a notebook as an iframe.

    Example
    -------
    >>> import cubescale
    >>> running = show(cubescale.open(cubescale.examples.report_path()))
    >>> running.running
    True
    >>> running.stop(); running.running
    False
    """

    def __init__(self, report: Report, host: str, port: int, width: str, height: int):
        self.width, self.height = width, height
        token = secrets.token_urlsafe(32)
        self._app = make_app(report, token=token, embeddable=True)
        self._loop = asyncio.new_event_loop()
        self._runner = runner(self._app)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, args=(host, port), name="cubescale-view", daemon=True)
        self._thread.start()
        self._ready.wait(60)
        if self._error is not None:
            raise self._error
        self.url = _url(host, self._runner.addresses[0][1], token)

    def _serve(self, host: str, port: int) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._runner.setup())
            self._loop.run_until_complete(web.TCPSite(self._runner, host, port).start())
            bound(self._app, host, self._runner.addresses[0][1])
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    @property
    def running(self) -> bool:
        """Whether the server still runs."""
        return self._thread.is_alive()

    def stop(self) -> None:
        """Ends the server (idempotent)."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)

    def _repr_html_(self) -> str:
        return (f'<iframe src="{html.escape(self.url)}" width="{html.escape(str(self.width))}" '
                f'height="{int(self.height)}" style="border:1px solid #ccc"></iframe>')

    def __repr__(self) -> str:
        return f"<RunningViewer {self.url.split('?')[0]} {'running' if self.running else 'stopped'}>"


def show(report: Report, host: str = "127.0.0.1", port: int = 0, width: str = "100%", height: int = 720) -> RunningViewer:
    """The explorer for a report (a :class:`cubescale.Report` read from a file) in a
    notebook: starts a server on a background thread and returns it; as a cell's result it
    shows the page inline.

    Example
    -------
    >>> import cubescale
    >>> running = show(cubescale.open(cubescale.examples.report_path()))
    >>> running.url.split(":")[0]
    'http'
    >>> running.stop()
    """
    if not getattr(report, "path", ""):
        raise ValueError("show() needs a report read from a file (cubescale.open)")
    return RunningViewer(report, host, port, width, height)
