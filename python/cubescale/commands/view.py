"""``cubescale view REPORT``: explore a report in the browser (Cube's three panes, issue #29).

Starts a local server (:mod:`cubescale.viewer.server`) on 127.0.0.1 with a random token,
prints the page's URL and opens a browser on it unless ``--no-browser``; Ctrl-C stops it.
Needs the optional extra ``view`` (aiohttp): ``pip install 'cubescale[view]'``.

Example
-------
>>> from cubescale.cli import build_parser
>>> args = build_parser().parse_args(["view", "profile.cubex", "--no-browser", "--port", "8765"])
>>> (args.report, args.port, args.browser, args.host)
('profile.cubex', 8765, False, '127.0.0.1')
"""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers) -> None:
    """Register the ``view`` subcommand."""
    p = subparsers.add_parser(
        "view", help="explore a .cubex report in the browser (metric, call and system trees)",
        description="Serve a page with Cube's three coupled trees for one report: select a metric, then a call "
                    "path; expand a node for its exclusive value, collapse it for its inclusive one. The server "
                    "binds 127.0.0.1 and needs the token of the URL it prints (as Jupyter does).",
        epilog="examples:\n  cubescale view profile.cubex\n  cubescale view scout.cubex --port 8800 --no-browser",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", help=".cubex report, or an experiment directory holding one")
    p.add_argument("--port", type=int, default=0, help="TCP port (default: a free one)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1; any other lets others with the URL in)")
    p.add_argument("--no-browser", dest="browser", action="store_false", help="only print the URL")
    p.set_defaults(run=run_view)


def run_view(args) -> int:
    """Serve until Ctrl-C; 2 if aiohttp is missing."""
    try:
        from ..viewer.server import serve
    except ImportError as e:
        print(f"cubescale: error: {e}", file=sys.stderr)
        return 2
    if not 0 <= args.port < 65536:
        raise ValueError(f"--port {args.port} is not a TCP port")
    from .. import report as cube
    from ._inputs import report_path

    # a Score-P / Scalasca experiment directory names its report, as for info and dump
    serve(cube.open(report_path(args.report)), host=args.host, port=args.port, open_browser=args.browser)
    return 0
