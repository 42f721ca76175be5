"""`cubescale info` lists what writers that died left beside a report (issue #30: stale
temporaries are listed by `info DIR` and removed only by `clean`, never silently)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from cubescale import examples, files


def _info(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cubescale", "info", str(path)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)


def _stale_temporary(directory, target: str, size: int = 100) -> str:
    """A temporary of cubescale's naming whose writer (a finished process) is gone."""
    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    path = os.path.join(directory, files.temporary_name(target, pid=gone))
    with open(path, "wb") as f:
        f.write(b"x" * size)
    return path


def test_info_of_an_experiment_directory_lists_stale_temporaries(tmp_path):
    shutil.copy(examples.report_path(), tmp_path / "profile.cubex")
    left = _stale_temporary(tmp_path, "profile.cubex", size=1234)
    done = _info(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "profile.cubex: CUBE" in done.stdout  # the report itself is summarized
    assert "1 temporary of cubescale writers that died" in done.stdout and "1234 bytes" in done.stdout
    assert f"cubescale clean {tmp_path}" in done.stdout
    assert os.path.exists(left)  # listed, never removed by info


def test_info_of_a_report_lists_the_temporaries_beside_it(tmp_path):
    report = tmp_path / "run.cubex"
    shutil.copy(examples.report_path(), report)
    _stale_temporary(tmp_path, "run.cubex")
    _stale_temporary(tmp_path, "other.cubex")
    done = _info(report)
    assert done.returncode == 0, done.stderr
    assert "2 temporaries of cubescale writers that died" in done.stdout


def test_info_of_a_directory_with_only_temporaries(tmp_path):
    _stale_temporary(tmp_path, "run.cubex")
    done = _info(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 temporary of cubescale writers that died" in done.stdout


def test_running_writers_and_clean_directories_are_not_listed(tmp_path):
    shutil.copy(examples.report_path(), tmp_path / "profile.cubex")
    with open(tmp_path / files.temporary_name("profile.cubex", pid=os.getpid()), "wb") as f:
        f.write(b"being written")  # this test process is alive: not stale
    done = _info(tmp_path)
    assert done.returncode == 0 and "temporar" not in done.stdout


def test_info_of_an_empty_directory_is_one_line(tmp_path):
    done = _info(tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "without a report or a trace" in done.stderr
