"""The viewer's local web server (aiohttp): the page's static files and a JSON API over one report.

Safety, as Jupyter does it: the server binds 127.0.0.1 unless told otherwise, and every
request needs a random token (``secrets.token_urlsafe``), given once in the printed URL
(``?token=``) and then kept in a cookie for the page's own requests. Only the files of
``static/`` are served (by name from a fixed list: no path reaches the file system). A Host
header other than the server's own address is refused (DNS rebinding), and the browser is
opened on a private redirect file, so that the token is not on its command line. Every
refused or malformed query (also a request line or header over 8 KiB, which aiohttp refuses)
is answered with a 4xx JSON ``{"error": ...}``, and an unexpected
error with a 500 JSON answer: a query never ends the server. The report is opened once;
before each query the file is checked, so a report changed or removed under the server gives
a 409 that the page shows.

API (all ``GET``, all JSON):

``/api/report``
    definitions and the metric tree (values only of metrics some query has read)
``/api/metric?metric=M&expanded=0|1``
    one metric's values in the metric pane (collapsed; expanded when asked)
``/api/calltree?metric=M&metric_expanded=0|1&parent=C&offset=&limit=``
    a page of the children of call path C (-1: the roots) with the selected metric
``/api/system?metric=M&metric_expanded=&cnode=C&cnode_expanded=&parent=E&offset=&limit=``
    a page of the children of system-tree element E (-1: the root) for the selection
``/api/cnode?cnode=C``
    region details and the call path from the root
``/api/distribution?metric=M&metric_expanded=&cnode=C&cnode_expanded=&bins=B``
    the selection over all locations: min, mean, max (and where), a histogram
``/api/search?q=TEXT&limit=``
    call paths whose region name contains TEXT, with their paths from the root
``/api/topology?topology=T&metric=M&metric_expanded=&cnode=C&cnode_expanded=``
    the selection on Cartesian topology T: one value per grid cell
``/api/flat?metric=M&metric_expanded=&offset=&limit=``
    the flat profile: per region its value over all its call paths
``/api/sequence?metric=M&...&parent=R`` and ``/api/instances?metric=M&...&record=R``
    the machine in sequence form: folded records with min / mean / max over their instances,
    and a page of one record's instances

The system, distribution, topology, sequence and instances queries take a call path
(``cnode``, ``cnode_expanded``) or a region of the flat profile (``region``, ``region_expanded``).

Example
-------
>>> import cubescale
>>> app = make_app(cubescale.open(cubescale.examples.report_path()), token="secret")
>>> sorted({r.resource.canonical for r in app.router.routes()})  # doctest: +NORMALIZE_WHITESPACE
['/', '/api/calltree', '/api/cnode', '/api/distribution', '/api/flat', '/api/instances', '/api/metric',
 '/api/report', '/api/search', '/api/sequence', '/api/system', '/api/topology', '/static/{name}']
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import json
import logging
import os
import pathlib
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
import webbrowser
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..errors import FormatError
from .model import Explorer, QueryError

if TYPE_CHECKING:
    from ..report import Report

try:
    from aiohttp import web
    from aiohttp.http_exceptions import LineTooLong
    from aiohttp.web_protocol import RequestHandler
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError("cubescale view needs aiohttp: pip install 'cubescale[view]'") from e

__all__ = ["bound", "make_app", "runner", "serve"]

_log = logging.getLogger("cubescale.viewer")

STATIC_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
"""The only files served: those of ``static/`` with these suffixes, looked up by exact name."""

_EXPLORER = web.AppKey("explorer", Explorer)
_CONFIG = web.AppKey("config", dict)

_SECURITY_HEADERS = {
    # Everything the page loads comes from this server; no frames, no referrer (the URL has the token).
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _static_files() -> dict[str, bytes]:
    """The page's files, read once from the package (works from a wheel, a zip or a checkout)."""
    folder = resources.files("cubescale.viewer") / "static"
    return {f.name: f.read_bytes() for f in folder.iterdir()
            if f.is_file() and os.path.splitext(f.name)[1] in STATIC_TYPES}


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message, "status": status}, status=status, headers=_SECURITY_HEADERS)


@web.middleware
async def _guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
    """Token check, JSON errors for everything refused, and nothing that escapes to kill the server."""
    config = request.app[_CONFIG]
    if config["hosts"] is not None and request.host.lower() not in config["hosts"]:
        # a page of another site whose name was rebound to 127.0.0.1 (DNS rebinding) sends its own name
        return _error(403, f"unexpected Host header {request.host[:60]!r}: open the URL that `cubescale view` printed")
    given = request.query.get("token") or request.cookies.get(config["cookie"], "")
    # The page's own files hold no data: served without the token, so that the page also loads
    # inside a notebook's iframe, where the browser may withhold the cookie (another site).
    public = request.path.startswith("/static/") and request.method in ("GET", "HEAD")
    if not public and not secrets.compare_digest(given.encode(), config["token"].encode()):
        return _error(403, "missing or wrong token: open the URL that `cubescale view` printed")
    try:
        response = await handler(request)
    except QueryError as e:
        return _error(e.status, str(e))
    except FormatError as e:  # the report's content, read lazily, is broken
        return _error(422, str(e))
    except web.HTTPException as e:  # unknown path, wrong method ...
        return _error(e.status, e.reason)
    except (ValueError, KeyError, IndexError, OverflowError) as e:  # e.g. a derived metric Cube cannot compute
        return _error(422, str(e.args[0]) if e.args else type(e).__name__)
    except Exception:  # noqa: BLE001 - the server must stay up; the traceback goes to the log
        _log.exception("query %s failed", request.path_qs[:200])
        return _error(500, "internal error (see the server's log)")
    if request.query.get("token"):  # the first visit: the page's own requests then carry the cookie
        response.set_cookie(config["cookie"], config["token"], httponly=True, samesite="Strict", path="/")
    response.headers.update(_SECURITY_HEADERS)
    if config["embeddable"]:  # show(): inside a notebook, whose origin is not known here
        response.headers["Content-Security-Policy"] = "default-src 'self'; img-src 'self' data:"
    return response


def _api(method: Callable[[Explorer, dict[str, str]], dict[str, Any]]):
    """A route answering ``method``'s dict as JSON. The answer is computed on a worker thread
    (the C++ pane calls release the GIL), so that a slow query (the first read of a metric)
    does not hold back the others: the event loop only moves bytes."""
    def answer(explorer: Explorer, query: dict[str, str]) -> tuple[str, float]:
        start = time.perf_counter()
        explorer.check_file()
        body = json.dumps(method(explorer, query), allow_nan=False, separators=(",", ":"))
        return body, time.perf_counter() - start

    async def handler(request: web.Request) -> web.Response:
        body, seconds = await asyncio.to_thread(answer, request.app[_EXPLORER], dict(request.query))
        # the time spent answering (not waiting for a thread), for the browser's timing API
        return web.Response(text=body, content_type="application/json",
                            headers={"Server-Timing": f"answer;dur={seconds * 1e3:.2f}"})
    return handler


def make_app(report: Report, token: str | None = None, embeddable: bool = False) -> web.Application:
    """The aiohttp application for one report (a :class:`cubescale.Report` read from a file).
    ``embeddable`` lets other sites frame the page (a notebook's iframe); the token still guards
    every query.

    Example
    -------
    >>> import cubescale
    >>> app = make_app(cubescale.open(cubescale.examples.report_path()), token="t")
    >>> app[_CONFIG]["token"]
    't'
    """
    explorer = Explorer(report)
    files = _static_files()
    app = web.Application(middlewares=[_guard], client_max_size=4096)
    app[_EXPLORER] = explorer
    app[_CONFIG] = {"token": token or secrets.token_urlsafe(32), "cookie": "cubescale_token",
                    "embeddable": embeddable, "hosts": None}

    async def index(request: web.Request) -> web.Response:
        return web.Response(body=files["index.html"], content_type="text/html")

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in files:  # exact names only: "../x", "%2e%2e", absolute paths never match
            raise QueryError(f"no static file {name[:60]!r}", status=404)
        return web.Response(body=files[name], content_type=STATIC_TYPES[os.path.splitext(name)[1]])

    app.router.add_get("/", index)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/api/report", _api(lambda ex, q: ex.report_summary()))
    app.router.add_get("/api/calltree", _api(Explorer.call_children))
    app.router.add_get("/api/system", _api(Explorer.system_children))
    app.router.add_get("/api/cnode", _api(Explorer.cnode_details))
    app.router.add_get("/api/distribution", _api(Explorer.distribution))
    app.router.add_get("/api/search", _api(Explorer.search))
    app.router.add_get("/api/topology", _api(Explorer.topology))
    app.router.add_get("/api/metric", _api(Explorer.metric_values))
    app.router.add_get("/api/flat", _api(Explorer.flat_profile))
    app.router.add_get("/api/sequence", _api(Explorer.sequence))
    app.router.add_get("/api/instances", _api(Explorer.instances))
    return app


def _netloc(host: str, port: int) -> str:
    try:
        bracket = ipaddress.ip_address(host).version == 6
    except ValueError:
        bracket = False
    return f"{'[' + host + ']' if bracket else host}:{port}"


def _url(host: str, port: int, token: str) -> str:
    return f"http://{_netloc(host, port)}/?token={token}"


WILDCARDS = ("", "0.0.0.0", "::")
"""Bound to every interface: the Host header may be any of the machine's names (not checked)."""


def bound(app: web.Application, host: str, port: int) -> None:
    """Tells the app the address it listens on: the Host headers it accepts (the loopback
    names and ``host`` on ``port``) and its cookie's name.

    Example
    -------
    >>> import cubescale
    >>> app = make_app(cubescale.open(cubescale.examples.report_path()), token="t")
    >>> bound(app, "127.0.0.1", 8765); sorted(app[_CONFIG]["hosts"])
    ['127.0.0.1:8765', '[::1]:8765', 'localhost:8765']
    """
    config = app[_CONFIG]
    config["cookie"] = f"cubescale_token_{port}"  # cookies ignore ports: one name per server
    if host not in WILDCARDS:
        config["hosts"] = {_netloc(name, port).lower() for name in ("127.0.0.1", "localhost", "::1", host)}


class _Handler(RequestHandler):
    """aiohttp's connection handler, answering a request it cannot parse (a line or header
    over 8 KiB, a broken request line) as every refusal here: JSON, with one short log line
    instead of a traceback that would also print the request's URL (and its token)."""

    def handle_error(self, request, status=500, exc=None, message=None):  # type: ignore[no-untyped-def]
        if status >= 500:  # a bug: keep aiohttp's traceback in the log
            return super().handle_error(request, status, exc, message)
        if request.writer.output_size > 0:  # as aiohttp: an answer is on its way already
            raise ConnectionError("response already sent")
        what = "a request line or header too long" if isinstance(exc, LineTooLong) else "a malformed request"
        _log.warning("cubescale view: refused %s (%d)", what, status)
        response = _error(status, f"refused {what}")
        response.force_close()
        return response


class _Server(web.Server):
    def __call__(self) -> RequestHandler:
        return _Handler(self, loop=self._loop, **self._kwargs)


class _Runner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Server  # the same server, making _Handler connections
        return server


def runner(app: web.Application) -> web.AppRunner:
    """An app runner whose malformed requests get JSON 4xx answers and a one-line log entry.

    Example
    -------
    >>> import cubescale
    >>> isinstance(runner(make_app(cubescale.open(cubescale.examples.report_path()))), web.AppRunner)
    True
    """
    return _Runner(app, access_log=None, shutdown_timeout=2.0)


_REDIRECT = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={url}">
<title>cubescale view</title></head>
<body><p>Opening <a href="{url}">cubescale view</a>…</p></body></html>
"""


def _open_browser(url: str, folder: str) -> None:
    """Opens a browser on ``url`` through a redirect file only the user can read (as Jupyter
    does): the browser's command line, which every local user sees in ``ps``, names the file,
    not the token."""
    path = os.path.join(folder, "open.html")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(_REDIRECT.format(url=html.escape(url, quote=True)))
    webbrowser.open(pathlib.Path(path).as_uri())


def serve(report: Report, host: str = "127.0.0.1", port: int = 0, open_browser: bool = True,
          token: str | None = None) -> None:
    """Serve the explorer for ``report`` (read from a file) until Ctrl-C (port 0: a free one).
    Prints the URL with its token when the server is ready, then opens a browser on it.

    Example
    -------
    >>> import cubescale
    >>> callable(serve)   # serve(cubescale.open(cubescale.examples.report_path())) runs until Ctrl-C
    True
    """
    app = make_app(report, token)
    try:
        asyncio.run(_run(app, host, port, open_browser))
    except KeyboardInterrupt:
        pass
    print("cubescale view: stopped", file=sys.stderr)


async def _run(app: web.Application, host: str, port: int, open_browser: bool) -> None:
    serving = runner(app)
    await serving.setup()
    stop = _stop_on_sigterm()
    folder = tempfile.mkdtemp(prefix="cubescale-view-") if open_browser else None  # 0700
    try:
        site = web.TCPSite(serving, host, port)
        await site.start()
        port = serving.addresses[0][1]
        bound(app, host, port)
        url = _url(host, port, app[_CONFIG]["token"])
        name = os.path.basename(app[_EXPLORER].path)
        print(f"cubescale view: serving {name} at\n    {url}\n(Ctrl-C to stop)", flush=True)
        if not ipaddress.ip_address(host).is_loopback if _is_ip(host) else host != "localhost":
            print("cubescale view: warning: not bound to loopback; anyone who has the URL can read the report",
                  file=sys.stderr, flush=True)
        if folder is not None:
            await asyncio.get_running_loop().run_in_executor(None, _open_browser, url, folder)
        await stop.wait()  # until SIGTERM sets it or Ctrl-C cancels this task
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        await serving.cleanup()


def _stop_on_sigterm() -> asyncio.Event:
    """An event that SIGTERM sets: ``kill`` or a service manager then stops the server as
    Ctrl-C does (the redirect folder removed, "stopped" said), not by dying mid-way.
    Outside the main thread no signal handler can be set; there the event is never set."""
    stop = asyncio.Event()
    if threading.current_thread() is threading.main_thread():
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    return stop


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False
