"""How a program measured by `cubescale run` ends: a child it forks writes nothing (the
parent's report and trace stay the parent's), `sys.exit("message")` prints the message, an
exception's traceback starts at the program's own frame, and a program that starts a
measurement of its own is refused instead of resetting the run's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import cubescale
import cubescale.trace


def _run(tmp_path, source, *options):
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent(source))
    out = tmp_path / "app.cubex"
    done = subprocess.run([sys.executable, "-m", "cubescale", "run", "-o", str(out), *options, str(app)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    return done, out


def _names(report) -> set[str]:
    return {c.region.name for c in report.cnodes}


FORK = """
    import os, sys

    def work(n):
        return sum(range(n))

    def in_child():
        work(100)

    def in_parent():
        work(100)

    pid = os.fork()
    if pid == 0:
        in_child()
        sys.exit(0)
    os.waitpid(pid, 0)
    in_parent()
"""


def test_a_forked_child_writes_neither_report_nor_wrote_line(tmp_path):
    done, out = _run(tmp_path, FORK)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("wrote") == 1, done.stderr
    names = _names(cubescale.open(str(out)))
    assert "in_parent" in names and "in_child" not in names


def test_a_forked_child_leaves_the_parents_trace_whole(tmp_path):
    done, _ = _run(tmp_path, FORK, "--trace", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "OTF2" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    events = cubescale.trace.open(str(tmp_path / "app-trace" / "traces.otf2")).events()
    assert "in_parent" in set(events["Name"]) and "in_child" not in set(events["Name"])


def test_sys_exit_with_a_message_prints_it_and_exits_1(tmp_path):
    done, out = _run(tmp_path, "import sys\nsys.exit('fatal: bad config')\n", "--quiet")
    assert done.returncode == 1
    assert done.stderr.strip() == "fatal: bad config"
    assert os.path.exists(out)


def test_the_programs_traceback_starts_at_its_own_frame(tmp_path):
    done, out = _run(tmp_path, "def fail():\n    raise ValueError('boom')\nfail()\n", "--quiet")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1].strip().startswith(f'File "{tmp_path / "app.py"}", line 3, in <module>'), done.stderr
    assert "cubescale" not in done.stderr and "runpy" not in done.stderr
    assert lines[-1] == "ValueError: boom"
    assert "fail" in _names(cubescale.open(str(out)))  # the report of what ran, as before


def test_a_program_starting_its_own_measurement_is_refused(tmp_path):
    done, out = _run(tmp_path, """
        from cubescale import measure

        def before():
            return 1

        before()
        measure.start()
    """, "--quiet")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("RuntimeError: a measurement is already running")
    report = cubescale.open(str(out))
    assert "before" in _names(report)  # not reset: what ran before the call is kept
    assert int(report.values("visits", inclusive=False)[0, 0]) == 1  # the program's root
