"""`cubescale run --c-calls` measures nothing of cubescale's own (the trace's profile has the
program's one root, as the recorded one), a trace's buffer flushes show in both profiles, and
`trace-profile` names a traced run's unfinished folder as such."""

from __future__ import annotations

import subprocess
import sys

import cubescale
from cubescale.views import call_paths


def _cubescale(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "cubescale", *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)


def _paths(report) -> dict[str, int]:
    visits = report.values("visits", inclusive=False)[:, 0]
    return {path: int(visits[c]) for c, path in enumerate(call_paths(report))}


def test_c_calls_record_none_of_cubescales_own(tmp_path):
    (tmp_path / "thr.py").write_text("import threading\ndef w():\n    pass\n"
                                     "t = threading.Thread(target=w)\nt.start()\nt.join()\n")
    done = _cubescale(tmp_path, "run", "-o", "thr.cubex", "--c-calls", "--trace", "--quiet", "thr.py")
    assert done.returncode == 0, done.stderr
    recorded = _paths(cubescale.open(str(tmp_path / "thr.cubex")))
    assert not [p for p in recorded if "clear" in p or "isinstance" in p], recorded
    done = _cubescale(tmp_path, "trace-profile", "thr-trace", "-o", "derived.cubex")
    assert done.returncode == 0, done.stderr
    derived = _paths(cubescale.open(str(tmp_path / "derived.cubex")))
    roots = {p.split("/")[0] for p in derived}
    assert not [p for p in derived if "clear" in p], derived
    assert "dict.clear" not in roots and "thr.py" in roots, roots


def test_buffer_flushes_show_in_the_trace_profile_as_recorded(tmp_path):
    (tmp_path / "many.py").write_text("def f():\n    pass\nfor i in range(200000):\n    f()\n")
    done = _cubescale(tmp_path, "run", "-o", "many.cubex", "--trace", "--trace-buffer", "262144", "--quiet", "many.py")
    assert done.returncode == 0, done.stderr
    assert _cubescale(tmp_path, "trace-profile", "many-trace", "-o", "derived.cubex").returncode == 0
    flush = "many.py/<module>/TRACE BUFFER FLUSH"
    recorded = _paths(cubescale.open(str(tmp_path / "many.cubex")))
    assert recorded.get(flush, 0) > 0
    assert _paths(cubescale.open(str(tmp_path / "derived.cubex"))).get(flush) == recorded[flush]


def test_trace_profile_names_an_unfinished_trace(tmp_path):
    (tmp_path / "k.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    _cubescale(tmp_path, "run", "-o", "k.cubex", "--trace", "--quiet", "k.py")
    assert (tmp_path / "k-trace.partial").is_dir()
    done = _cubescale(tmp_path, "trace-profile", "k-trace.partial", "-o", "kp.cubex")
    assert done.returncode == 2
    assert "the unfinished trace of a traced run (k-trace.partial)" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
