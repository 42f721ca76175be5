"""Every error a user can make on the command line ends in one line on stderr and exit status
2: no traceback, no file written, every input as it was (issue #25 section 2, issue #30 part
4). Each case runs the real command line in a fresh process, on the shared data."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from no_pandas import NO_PANDAS

DATA = SHARED_DATA
CUBEX = DATA / "cubex"
OTF2 = DATA / "otf2"


# `info` with hardly any memory left once cubescale is imported: the C++ reader's allocation fails.
LOW_MEMORY = """
import resource, sys
from cubescale.cli import main
def size():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size() + (2 << 20), resource.RLIM_INFINITY))
sys.exit(main(sys.argv[1:]))
"""


def cubescale(*args: str | os.PathLike, cwd=None, program: str | None = None) -> subprocess.CompletedProcess:
    """The command line in a new process (``python -m cubescale``, or ``program`` as ``-c``)."""
    launcher = ["-c", program] if program else ["-m", "cubescale"]
    return subprocess.run([sys.executable, *launcher, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, stdin=subprocess.DEVNULL, timeout=120)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def work(tmp_path):
    """A scratch folder with a text file, an empty file, a one-process report, and a trace's
    anchor whose event folder is missing (copies of shared files)."""
    (tmp_path / "notes.txt").write_text("time spent: 12 s\nnothing else\n")
    (tmp_path / "empty.cubex").write_bytes(b"")
    shutil.copy(CUBEX / "call_tree_test.cubex", tmp_path / "a.cubex")
    (tmp_path / "lonely").mkdir()
    for name in ("traces.otf2", "traces.def"):
        shutil.copy(OTF2 / "ping-pong" / name, tmp_path / "lonely" / name)
    (tmp_path / "nothing").mkdir()
    os.symlink(tmp_path / "a.cubex", tmp_path / "alias.cubex")
    from cubescale.systree import SystemTree

    (tmp_path / "machine.json").write_text(SystemTree.from_shape("node:2 process:4").to_json())
    return tmp_path


# (arguments, inputs that must stay untouched, outputs that must not appear, words the line must hold)
CASES = {
    "otf2 anchor given to dump": (["dump", "{otf2}/ping-pong/traces.otf2"], ["{otf2}/ping-pong/traces.otf2"], [],
                                  ["traces.otf2", "OTF2 trace's anchor, not a .cubex report", "trace-profile"]),
    "cubex given to trace-profile": (["trace-profile", "{cubex}/time.p4.cubex", "-o", "{tmp}/p.cubex"],
                                     ["{cubex}/time.p4.cubex"], ["{tmp}/p.cubex"],
                                     ["time.p4.cubex", "a CUBE4 report (.cubex), not an OTF2 trace", "traces.otf2"]),
    "text file given to info": (["info", "{tmp}/notes.txt"], ["{tmp}/notes.txt"], [],
                                ["notes.txt", "a text file, not a .cubex report"]),
    "text file given to dump": (["dump", "{tmp}/notes.txt"], ["{tmp}/notes.txt"], [],
                                ["notes.txt", "a text file, not a .cubex report"]),
    "text file given to trace-profile": (["trace-profile", "{tmp}/notes.txt", "-o", "{tmp}/p.cubex"],
                                         ["{tmp}/notes.txt"], ["{tmp}/p.cubex"],
                                         ["notes.txt", "a text file, not an OTF2 trace's anchor"]),
    "empty file given to info": (["info", "{tmp}/empty.cubex"], ["{tmp}/empty.cubex"], [],
                                 ["empty.cubex", "an empty file, not a .cubex report"]),
    "experiment directory without a report given to dump": (
        ["dump", "{otf2}/ping-pong"], ["{otf2}/ping-pong/traces.otf2"], [],
        ["ping-pong", "experiment directory with a trace (traces.otf2) but no report"]),
    "directory without report or trace given to info": (
        ["info", "{tmp}/nothing"], [], [], ["nothing", "a directory without a report or a trace"]),
    "directory of reports given to trace-profile": (
        ["trace-profile", "{cubex}", "-o", "{tmp}/p.cubex"], ["{cubex}/time.p4.cubex"], ["{tmp}/p.cubex"],
        ["cubex", "a directory without an OTF2 trace"]),
    "missing traces/ in info": (["info", "{tmp}/lonely/traces.otf2"], ["{tmp}/lonely/traces.otf2"], [],
                                ["event folder traces/ is missing beside traces.otf2"]),
    "missing traces/ in trace-profile": (["trace-profile", "{tmp}/lonely", "-o", "{tmp}/p.cubex"],
                                         ["{tmp}/lonely/traces.otf2"], ["{tmp}/p.cubex"],
                                         ["event folder traces/ is missing beside traces.otf2"]),
    "multi-process report given to collate": (["collate", "{cubex}/time.p4.cubex", "-o", "{tmp}/all.cubex"],
                                              ["{cubex}/time.p4.cubex"], ["{tmp}/all.cubex"],
                                              ["time.p4.cubex", "4 processes; collate takes one-process reports"]),
    "convert A A": (["convert", "{tmp}/a.cubex", "{tmp}/a.cubex"], ["{tmp}/a.cubex"], [],
                    ["the output", "is the input", "nothing was written"]),
    "convert A A under another name": (["convert", "{tmp}/a.cubex", "{tmp}/alias.cubex"], ["{tmp}/a.cubex"], [],
                                       ["alias.cubex is the input"]),
    "threads A A": (["threads", "{tmp}/a.cubex", "{tmp}/a.cubex", "--strategy", "key"], ["{tmp}/a.cubex"], [],
                    ["is the input"]),
    "collate onto one of its inputs": (["collate", "{tmp}/a.cubex", "-o", "{tmp}/a.cubex"], ["{tmp}/a.cubex"], [],
                                       ["is the input"]),
    "trace-profile onto its anchor": (["trace-profile", "{otf2}/ping-pong", "-o", "{otf2}/ping-pong/traces.otf2"],
                                      ["{otf2}/ping-pong/traces.otf2"], [], ["traces.otf2 is the input"]),
    "trace-profile onto its definitions": (["trace-profile", "{otf2}/ping-pong", "-o", "{otf2}/ping-pong/traces.def"],
                                           ["{otf2}/ping-pong/traces.def"], [], ["traces.def is the input"]),
    "systree onto its own JSON": (["systree", "--json", "{tmp}/machine.json", "--json-out", "{tmp}/machine.json"],
                                  ["{tmp}/machine.json"], [], ["machine.json is the input"]),
    "no such file": (["info", "{tmp}/missing.cubex"], [], [], ["missing.cubex", "no such file"]),
    "no such metric": (["top", "{cubex}/bt-mz.B.8x4.cubex", "-m", "tiem"], ["{cubex}/bt-mz.B.8x4.cubex"], [],
                       ["no metric 'tiem'; metrics are visits, time"]),
    "call path out of range": (["dump", "{tmp}/a.cubex", "--cnode", "99"], ["{tmp}/a.cubex"], [],
                               ["cnode 99 out of range (report has 18)"]),
    "truncated report": (["info", "{tmp}/truncated.cubex"], ["{tmp}/truncated.cubex"], [], ["truncated.cubex"]),
    "missing argument": (["info"], [], [], ["the following arguments are required: file", "cubescale info --help"]),
    "unknown command": (["inof", "{tmp}/a.cubex"], [], [], ["invalid choice: 'inof'"]),
}


def _fill(text: str, tmp: Path) -> str:
    return text.format(tmp=tmp, cubex=CUBEX, otf2=OTF2)


def check_one_line(done: subprocess.CompletedProcess, words: list[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert line.startswith("cubescale"), line
    for word in words:
        assert word in line, (word, line)
    return line


@pytest.mark.parametrize("case", list(CASES))
def test_error_is_one_line_and_touches_nothing(case, work):
    args, inputs, outputs, words = CASES[case]
    (work / "truncated.cubex").write_bytes((CUBEX / "time.p4.cubex").read_bytes()[:70000])
    inputs = [Path(_fill(p, work)) for p in inputs]
    before = {p: digest(p) for p in inputs}
    done = cubescale(*[_fill(a, work) for a in args], cwd=work)
    check_one_line(done, words)
    assert {p: digest(p) for p in inputs} == before
    for out in outputs:
        assert not Path(_fill(out, work)).exists()
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(".")) == []  # no temporaries left


@pytest.mark.parametrize("args, words", [
    (["info", "-m", "nosuch", "{cubex}/time.p4.cubex"], ["no metric 'nosuch'; metrics are visits, time"]),
    (["info", "--depth", "-1", "{cubex}/time.p4.cubex"], ["argument --depth: takes a whole number >= 0, not -1"]),
    (["info", "--depth", "two", "{cubex}/time.p4.cubex"], ["argument --depth: takes a whole number >= 0, not 'two'"]),
    (["top", "-n", "-1", "{cubex}/time.p4.cubex"], ["argument -n: takes a whole number >= 0, not -1"]),
], ids=["info unknown metric", "info negative depth", "info depth not a number", "top negative count"])
def test_bad_arguments_fail_first_in_one_line(args, words, work):
    """A bad argument is refused before anything is printed: nothing on stdout (info printed
    its metrics and processes, 20 lines, before an unknown -m), one line on stderr, exit 2;
    negative counts and depths are refused, not taken as 'none'."""
    done = cubescale(*[_fill(a, work) for a in args], cwd=work)
    check_one_line(done, words)
    assert done.stdout == ""


def test_out_of_memory_in_info_is_one_line(work):
    done = cubescale("info", CUBEX / "cubelib_example.p64.cubex", program=LOW_MEMORY)
    check_one_line(done, ["out of memory"])


def test_without_pandas_the_command_line_starts_and_reads_reports(work):
    done = cubescale("info", CUBEX / "bt-mz.B.8x4.cubex", program=NO_PANDAS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bt-mz.B.8x4.cubex: CUBE 4.4, 8 metrics, 169 call paths, 32 locations")
    for args in (["--help"], ["top", CUBEX / "time.p4.cubex", "-n", "1"], ["dump", CUBEX / "call_tree_test.cubex"]):
        done = cubescale(*args, program=NO_PANDAS)
        assert done.returncode == 0 and done.stderr == "", (args, done.stderr)
    # A trace's summary, its profile and its wait-state analysis need no DataFrame (its tables
    # and events as DataFrames do: the Python API names the extra then).
    done = cubescale("info", OTF2 / "ping-pong" / "traces.otf2", program=NO_PANDAS)
    assert done.returncode == 0 and done.stderr == "" and "OTF2 trace, 2 locations" in done.stdout, done.stderr
    for command in ("trace-profile", "analyze"):
        done = cubescale(command, OTF2 / "ping-pong" / "traces.otf2", "-o", work / f"{command}.cubex", program=NO_PANDAS)
        assert done.returncode == 0 and done.stderr == "", (command, done.stderr)
        assert (work / f"{command}.cubex").exists()


def test_the_blocker_does_block_pandas():
    # The test above must be able to fail: the same process does not get pandas.
    done = cubescale("-c", "x", program=NO_PANDAS.replace("from cubescale.cli import main", "import pandas"))
    assert done.returncode != 0 and "No module named 'pandas'" in done.stderr


def test_cubescale_alone_prints_help_and_version_prints_the_version():
    import cubescale as package

    done = cubescale()
    assert done.returncode == 0 and done.stdout.startswith("usage: cubescale")
    assert "trace-profile" in done.stdout and "top" in done.stdout
    done = cubescale("--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"cubescale {package.__version__}")


def test_experiment_directories_are_read_through_their_files(tmp_path):
    # A Score-P experiment directory with a profile and a trace: info reads the profile,
    # trace-profile the trace; one with only a trace gives the trace to info.
    done = cubescale("info", OTF2 / "late-sender-barrier")
    assert done.returncode == 0 and done.stdout.startswith("profile.cubex: CUBE"), done.stderr
    done = cubescale("info", OTF2 / "ping-pong")
    assert done.returncode == 0 and "traces.otf2" in done.stdout.splitlines()[0], done.stderr
    out = tmp_path / "p.cubex"
    done = cubescale("trace-profile", OTF2 / "late-sender-barrier", "-o", out)
    assert done.returncode == 0 and out.exists(), done.stderr
