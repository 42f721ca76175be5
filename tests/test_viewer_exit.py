"""A script that asks the viewer's model one question and ends: the rows the model computes
ahead on a thread of its own (the roots' location rows) must not make the process abort at
exit. With a daemon thread still inside the core's parallel loops when the interpreter ended,
Python printed "terminate called without an active exception" and exited 134 (every time on
this report, whose flat view answers before the rows are done)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

import cubescale
from cubescale.systree import SystemTree

SCRIPT = """
import sys, cubescale
from cubescale.viewer.model import Explorer
top = Explorer(cubescale.open(sys.argv[1])).flat_profile({"metric": "0", "limit": "3"})
print(top["children"][0]["name"])
"""


def _deep_report(path, cnodes: int = 200_000, depth: int = 2000) -> None:
    b = cubescale.ReportBuilder(SystemTree.from_shape("node:1 process:16 thread:1"))
    b.add_metric("time", unit="sec")
    main, solve = b.add_region("main"), b.add_region("solve")
    root = parent = b.add_cnode(main)
    for k in range(1, cnodes):
        parent = b.add_cnode(solve, parent=root if k % depth == 0 else parent)
    r = b.build()
    r.set_values("time", np.random.default_rng(0).random(r.shape))
    cubescale.write(r, path)


def test_a_script_ends_cleanly_while_the_model_computes_ahead(tmp_path):
    report = tmp_path / "deep.cubex"
    _deep_report(report)
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(report)], capture_output=True, text=True,
                              timeout=300, stdin=subprocess.DEVNULL)
        assert done.returncode == 0 and "terminate" not in done.stderr, (done.returncode, done.stderr[-2000:])
        assert done.stdout.split() == ["main"]
