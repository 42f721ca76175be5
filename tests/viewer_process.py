"""Runs `cubescale view` as a real subprocess for the viewer tests and hands back its URL."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass


@dataclass
class Viewer:
    process: subprocess.Popen
    url: str      # the printed URL with ?token=
    base: str     # http://127.0.0.1:PORT
    token: str

    def get(self, path: str, token: str | None = "", cookie: str | None = None, timeout: float = 30):
        """(status, JSON body or text) of a GET; token "" means the viewer's own, None none."""
        token = self.token if token == "" else token
        if token is not None:
            path += ("&" if "?" in path else "?") + "token=" + urllib.parse.quote(token)
        request = urllib.request.Request(self.base + path)
        if cookie is not None:
            request.add_header("Cookie", cookie)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, body, kind = response.status, response.read(), response.headers.get_content_type()
        except urllib.error.HTTPError as e:
            status, body, kind = e.code, e.read(), e.headers.get_content_type()
        return status, json.loads(body) if kind == "application/json" else body.decode(errors="replace")


@contextlib.contextmanager
def running_viewer(report: str, timeout: float = 60):
    """`python -m cubescale view REPORT --no-browser` on a free port until the block ends."""
    # Ctrl-C reaches the server as it reaches a program started from a terminal, also where the
    # tests themselves run with SIGINT ignored (a background job of a shell without job control).
    process = subprocess.Popen([sys.executable, "-m", "cubescale", "view", report, "--no-browser", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline, url = time.monotonic() + timeout, ""
        assert process.stdout is not None
        while not url:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"cubescale view ended: {process.wait(5)} {process.stderr.read()}")
            if "?token=" in line:
                url = line.strip()
            if time.monotonic() > deadline:
                raise TimeoutError("cubescale view printed no URL")
        parts = urllib.parse.urlsplit(url)
        yield Viewer(process, url, f"{parts.scheme}://{parts.netloc}", urllib.parse.parse_qs(parts.query)["token"][0])
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()
