"""`cubescale run` checks its options before the program runs (one line, exit status 2, the
program not run) and warns where the depth limit cut the call tree."""

from __future__ import annotations

import os
import subprocess
import sys

import cubescale
import cubescale.trace

APP = "open('ran', 'w').close()\n"  # tells whether the program ran


def _run(tmp_path, *options, source=APP):
    app = tmp_path / "app.py"
    app.write_text(source)
    done = subprocess.run([sys.executable, "-m", "cubescale", "run", *options, str(app)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    return done


def _refused(tmp_path, done, text):
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("cubescale: error: ") and text in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "ran").exists()


def test_an_output_in_a_missing_directory_is_refused_before_the_run(tmp_path):
    missing = tmp_path.parent / f"{tmp_path.name}-missing" / "x.cubex"  # outside the working directory
    done = _run(tmp_path, "-o", str(missing), "--trace", "--trace-dir", "td/tr")
    _refused(tmp_path, done, "no such directory for the output")
    assert not (tmp_path / "td").exists()


def test_an_output_directory_the_program_makes_is_still_taken(tmp_path):
    done = _run(tmp_path, "-o", "results/run.cubex", "--quiet", source="import os\nos.makedirs('results')\n")
    assert done.returncode == 0, done.stderr
    assert cubescale.open(str(tmp_path / "results" / "run.cubex")).shape[0] >= 1


def test_a_report_that_cannot_be_written_still_finishes_the_trace(tmp_path):
    done = _run(tmp_path, "-o", "results/run.cubex", "--trace-dir", "td/tr", "--quiet")  # never made
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "ran").exists()
    assert os.listdir(tmp_path / "td") == ["tr"]  # no tr.partial left
    events = cubescale.trace.open(str(tmp_path / "td" / "tr" / "traces.otf2")).events()
    assert "app.py" in set(events["Name"])


def test_a_depth_below_1_is_a_usage_error(tmp_path):
    _refused(tmp_path, _run(tmp_path, "--depth", "-1"), "--depth must be at least 1")


def test_calls_beyond_the_depth_limit_are_collapsed_and_warned_about(tmp_path):
    # Before, the 4,873 calls below the limit were counted nowhere (128 visits of r in all);
    # as in Score-P's profile they are one COLLAPSE visit below the call path at the limit.
    deep = "import sys\nsys.setrecursionlimit(10000)\ndef r(n):\n    return 0 if n == 0 else r(n - 1)\nr(5000)\n"
    done = _run(tmp_path, "-o", "deep.cubex", "--quiet", source=deep)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "depth limit 128" in line]
    assert len(warnings) == 1 and "COLLAPSE below 1 call path (r)" in warnings[0], done.stderr
    report = cubescale.open(str(tmp_path / "deep.cubex"))
    (collapse,) = [c for c in report.cnodes if c.region.name == "COLLAPSE"]
    depth, parent = 1, collapse.parent
    while parent is not None:
        depth, parent = depth + 1, report.cnodes[parent].parent
    assert depth == 128 + 1  # the limit's 128 (the program's region, <module>, 126 calls of r), then it
    visits = report.values("visits", inclusive=False)
    assert visits[collapse.index].sum() == 1
    time = report.values("time", inclusive=True)
    assert 0 < time[collapse.index].sum() <= time[collapse.parent].sum()


def test_a_shallow_program_gets_no_depth_warning(tmp_path):
    done = _run(tmp_path, "-o", "app.cubex", "--quiet")
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_a_mistyped_filter_path_is_no_such_filter_file(tmp_path):
    _refused(tmp_path, _run(tmp_path, "--filter", "nonexist.filt"), "nonexist.filt: no such filter file")


def test_filter_text_on_the_command_line_is_still_taken(tmp_path):
    text = "SCOREP_REGION_NAMES_BEGIN EXCLUDE helper SCOREP_REGION_NAMES_END"
    done = _run(tmp_path, "-o", "app.cubex", "--quiet", "--filter", text,
                source="def helper():\n    pass\nhelper()\n")
    assert done.returncode == 0, done.stderr
    assert "helper" not in {c.region.name for c in cubescale.open(str(tmp_path / "app.cubex")).cnodes}


def test_trace_dir_implies_trace(tmp_path):
    done = _run(tmp_path, "-o", "app.cubex", "--quiet", "--trace-dir", "mytrace")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "mytrace" / "traces.otf2").exists()


def test_a_trace_buffer_below_the_minimum_is_refused(tmp_path):
    _refused(tmp_path, _run(tmp_path, "--trace", "--trace-buffer", "100"), "at least 262144 bytes")
