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
def running_viewer(report: str, timeout: float = 60, browser: str | None = None):
    """`python -m cubescale view REPORT --no-browser` on a free port until the block ends;
    with ``browser`` (a command, as $BROWSER) the server opens that "browser" instead."""
    command = [sys.executable, "-m", "cubescale", "view", report, "--port", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if browser is None:
        command.append("--no-browser")
    else:
        env["BROWSER"] = browser
    # Ctrl-C reaches the server as it reaches a program started from a terminal, also where the
    # tests themselves run with SIGINT ignored (a background job of a shell without job control).
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL, env=env,
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


# ---- a report with Cartesian topologies in every form CubeLib's reader takes

TOPOLOGY_NODES, TOPOLOGY_PROCESSES, TOPOLOGY_THREADS = 2, 3, 2  # 12 locations


def topology_anchor() -> str:
    """anchor.xml of a small run (2 nodes x 3 processes x 2 threads, call path main > work) with
    four Cartesian topologies: a 3-D grid of locations by ``locId`` (3 x 2 x 2, one location
    left out so one cell is empty), processes by CUBE3's ``procId`` (3 x 2), threads by
    CUBE3's ``thrdId`` (4 x 3), nodes by CUBE3's ``nodeId`` and the machine by ``machId``."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n<cube version="4.4">\n<metrics>\n'
           '<metric id="0" type="EXCLUSIVE">\n<disp_name>Time</disp_name>\n<uniq_name>time</uniq_name>\n'
           '<dtype>DOUBLE</dtype>\n<uom>sec</uom>\n<url></url>\n<descr></descr>\n</metric>\n</metrics>\n<program>\n'
           '<region id="0" mod="app.c" begin="1" end="9">\n<name>main</name>\n</region>\n'
           '<region id="1" mod="app.c" begin="10" end="19">\n<name>work</name>\n</region>\n'
           '<cnode id="0" calleeId="0">\n<cnode id="1" calleeId="1">\n</cnode>\n</cnode>\n</program>\n<system>\n'
           '<systemtreenode Id="0">\n<name>machine</name>\n<class>machine</class>\n']
    group = location = 0
    for n in range(TOPOLOGY_NODES):
        out.append(f'<systemtreenode Id="{n + 1}">\n<name>node{n}</name>\n<class>node</class>\n')
        for _ in range(TOPOLOGY_PROCESSES):
            out.append(f'<locationgroup Id="{group}">\n<name>rank {group}</name>\n<rank>{group}</rank>\n'
                       '<type>process</type>\n')
            for t in range(TOPOLOGY_THREADS):
                out.append(f'<location Id="{location}">\n<name>thread {t}</name>\n<rank>{t}</rank>\n'
                           '<type>thread</type>\n</location>\n')
                location += 1
            out.append("</locationgroup>\n")
            group += 1
        out.append("</systemtreenode>\n")
    out.append("</systemtreenode>\n<topologies>\n")
    # 3-D: location l at (x, y, z) = reversed C order of 11 - l; location 11 unmapped, cell 11 empty
    out.append('<cart name="Grid 3-D" ndims="3">\n<dim name="x" size="3" periodic="false"/>\n'
               '<dim name="y" size="2" periodic="true"/>\n<dim name="z" size="2" periodic="false"/>\n')
    for loc in range(11):
        x, y, z = (10 - loc) // 4, (10 - loc) // 2 % 2, (10 - loc) % 2
        out.append(f'<coord locId="{loc}">{x} {y} {z}</coord>\n')
    out.append("</cart>\n")
    out.append('<cart name="Processes" ndims="2">\n<dim name="a" size="3" periodic="false"/>\n'
               '<dim name="b" size="2" periodic="false"/>\n')
    out += [f'<coord procId="{p}">{p % 3} {p // 3}</coord>\n' for p in range(6)]
    out.append("</cart>\n")
    out.append('<cart name="Threads" ndims="2">\n<dim size="4" periodic="false"/>\n<dim size="3" periodic="false"/>\n')
    out += [f'<coord thrdId="{t}">{t // 3} {t % 3}</coord>\n' for t in range(12)]
    out.append("</cart>\n")
    out.append('<cart name="Nodes" ndims="1">\n<dim size="3" periodic="false"/>\n'
               '<coord nodeId="1">0</coord>\n<coord nodeId="0">1</coord>\n<coord machId="0">2</coord>\n</cart>\n')
    out.append("</topologies>\n</system>\n</cube>\n")
    return "".join(out)


def write_topology_report(path: str):
    """Writes the run of :func:`topology_anchor` with random times through cubescale's writer;
    returns the report as written."""
    import numpy as np

    import cubescale

    report = cubescale.Report.from_anchor_xml(topology_anchor())
    report.set_values("time", np.random.default_rng(7).random(report.shape) + 0.5)
    cubescale.write(report, path)
    return cubescale.open(path)


def topology_cells(report, topology: int, metric: int, cnode: int, expanded: bool = False) -> list:
    """The expected values of ``topology_anchor``'s topologies from ``Report.panes``: per cell
    (C order) the location's value, or the sum over a process's or node's locations; None for
    an empty cell."""
    system = report.panes(metric, cnode=cnode, cnode_expanded=expanded).system
    per = TOPOLOGY_THREADS
    if topology == 0:
        cells: list = [None] * 12
        for loc in range(11):
            cells[10 - loc] = float(system[loc])
        return cells
    if topology == 1:
        return [float(system[p * per:(p + 1) * per].sum()) for p in (0, 3, 1, 4, 2, 5)]
    if topology == 2:
        return [float(v) for v in system]
    node = per * TOPOLOGY_PROCESSES
    return [float(system[node:2 * node].sum()), float(system[:node].sum()), float(system.sum())]
