"""``cubescale analyze`` checks its input and output before it reads any event: an experiment
directory names its trace, and an output it would fail on (no such directory, a directory)
or destroy (the trace itself, one of its event files, a device or FIFO: whole files are renamed
into place, which as root replaces ``/dev/null``) is refused at once with one line and exit
status 2. The writers refuse a device or FIFO as well, for the API; and the API functions that
read for long before they write (``cubescale.analyze`` also with ``comm``, ``trace.profile``,
the collective writers) refuse an output that is one of their inputs, or that could not be
written, before any reading. ``min_latency`` must be a number of at least 0 and below 2^62
clock ticks."""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import cubescale
from cubescale import examples, files
from cubescale._polled import run_polled
from cubescale.report import write as write_report

DATA = Path(os.environ.get("CUBESCALE_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


def _cli(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cubescale", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)


def _writable_copy(tmp_path: Path, name: str = "ping-pong") -> Path:
    copy = tmp_path / name
    shutil.copytree(DATA / "otf2" / name, copy)
    for path in copy.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)  # the shared copy is read-only
    return copy


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize("output", ["traces.otf2", "traces.def", "traces/0.evt", "traces/1.def"])
def test_an_output_that_is_part_of_the_trace_is_refused_and_the_trace_kept(tmp_path, output):
    trace = _writable_copy(tmp_path)
    before = _digests(trace)
    done = _cli("analyze", "traces.otf2", "-o", output, cwd=trace)
    _refused(done, output, "nothing was written")
    assert _digests(trace) == before


def test_a_fifo_or_device_as_output_is_refused_and_kept(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    done = _cli("analyze", examples.trace_path(), "-o", fifo, cwd=tmp_path)
    _refused(done, "out.fifo", "not a regular file")
    assert fifo.is_fifo()
    done = _cli("analyze", examples.trace_path(), "-o", os.devnull, cwd=tmp_path)
    _refused(done, os.devnull, "not a regular file")
    assert Path(os.devnull).is_char_device()


@pytest.mark.parametrize("output, words", [("missing/out.cubex", ("missing", "no such directory for the output")),
                                           ("folder", ("folder", "a directory"))])
def test_an_output_that_cannot_be_written_is_refused_before_reading(tmp_path, output, words):
    (tmp_path / "folder").mkdir()
    # an unreadable trace would fail later: the output's error comes first, before any reading
    trace = _writable_copy(tmp_path)
    (trace / "traces" / "0.evt").write_bytes(b"")
    done = _cli("analyze", trace / "traces.otf2", "-o", output, cwd=tmp_path)
    _refused(done, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "ping-pong"]


def test_an_experiment_directory_names_its_trace(tmp_path):
    trace = _writable_copy(tmp_path)
    by_directory = _cli("analyze", trace, "-o", "a.cubex", cwd=tmp_path)
    by_anchor = _cli("analyze", trace / "traces.otf2", "-o", "b.cubex", cwd=tmp_path)
    assert by_directory.returncode == 0 and by_anchor.returncode == 0, by_directory.stderr
    assert (tmp_path / "a.cubex").read_bytes() == (tmp_path / "b.cubex").read_bytes()
    done = _cli("analyze", examples.report_path(), "-o", "c.cubex", cwd=tmp_path)
    _refused(done, "a CUBE4 report", "not an OTF2 trace")


def test_the_writers_refuse_a_fifo_and_keep_it(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    report = cubescale.open(examples.report_path())
    with pytest.raises(FileExistsError, match="not a regular file"):
        write_report(report, fifo)  # the C++ writer (common/atomic_file.hpp)
    with pytest.raises(FileExistsError, match="not a regular file"):
        files.write_bytes(fifo, b"x")  # the Python one
    assert fifo.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]  # no temporaries left
    with pytest.raises(IsADirectoryError):
        write_report(report, tmp_path)


@pytest.mark.parametrize("latency", [math.nan, -1.0, math.inf, 1e300])
def test_min_latency_must_be_a_number_of_at_least_zero(tmp_path, latency):
    with pytest.raises(ValueError, match="min_latency"):
        cubescale.analyze(examples.trace_path(), tmp_path / "x.cubex", time_correct=True, min_latency=latency)
    assert not (tmp_path / "x.cubex").exists()


def test_min_latency_on_the_command_line(tmp_path):
    done = _cli("analyze", examples.trace_path(), "-o", "a.cubex", "--time-correct", "--min-latency", "1e-6",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    api = cubescale.analyze(examples.trace_path(), tmp_path / "b.cubex", time_correct=True, min_latency=1e-6)
    assert api is not None
    assert (tmp_path / "a.cubex").read_bytes() == (tmp_path / "b.cubex").read_bytes()
    plain = cubescale.analyze(examples.trace_path(), tmp_path / "c.cubex", time_correct=True)
    assert (tmp_path / "c.cubex").read_bytes() != (tmp_path / "b.cubex").read_bytes()  # the latency moved events
    assert plain is not None
    _refused(_cli("analyze", examples.trace_path(), "-o", "d.cubex", "--min-latency", "-1", cwd=tmp_path),
             "--min-latency", "at least 0")


def test_long_core_work_runs_off_the_main_thread_without_a_progress_line():
    # So that Ctrl-C ends `cubescale analyze` at once also when stderr is a log file (the core
    # holds its thread while it works; Python handles signals on the main thread only).
    where = run_polled(lambda: threading.current_thread() is threading.main_thread(), lambda: "", None)
    assert where is False


def test_the_api_checks_its_output_before_reading(tmp_path):
    broken = _writable_copy(tmp_path)
    (broken / "traces" / "0.evt").write_bytes(b"")  # reading it would fail: the output's error comes first
    with pytest.raises(FileNotFoundError):
        cubescale.analyze(broken / "traces.otf2", tmp_path / "missing" / "x.cubex")
    with pytest.raises(IsADirectoryError):
        cubescale.analyze(broken / "traces.otf2", tmp_path)
    with pytest.raises(cubescale.FormatError):  # and with a good output, the trace's
        cubescale.analyze(broken / "traces.otf2", tmp_path / "x.cubex")


def test_a_symlink_to_a_fifo_is_refused_and_a_dangling_one_replaced(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "fifo")  # as /dev/stdout links to a descriptor
    done = _cli("analyze", examples.trace_path(), "-o", "link", cwd=tmp_path)
    _refused(done, "link", "not a regular file")
    with pytest.raises(FileExistsError, match="not a regular file"):
        files.write_bytes(tmp_path / "link", b"x")
    assert (tmp_path / "link").is_symlink() and (tmp_path / "fifo").is_fifo()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    done = _cli("analyze", examples.trace_path(), "-o", "dangling", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "dangling").is_file() and not (tmp_path / "dangling").is_symlink()


def test_a_huge_min_latency_is_refused_before_reading(tmp_path):
    broken = _writable_copy(tmp_path)
    (broken / "traces" / "0.evt").write_bytes(b"")  # reading would fail with a FormatError
    with pytest.raises(ValueError, match="2\\^62"):
        cubescale.analyze(broken / "traces.otf2", tmp_path / "x.cubex", min_latency=1e12)


def test_run_may_make_its_output_directory(tmp_path):
    # `cubescale run` runs a program first, which may make the output's directory.
    app = tmp_path / "app.py"
    app.write_text("import os\nos.makedirs('results', exist_ok=True)\nprint(sum(range(1000)))\n")
    done = _cli("run", "-o", "results/app.cubex", app, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "results" / "app.cubex").exists()


@pytest.mark.parametrize("output", ["traces.otf2", "traces.def", "traces/0.evt"])
def test_the_api_never_writes_over_the_trace_it_reads(tmp_path, output):
    # As the command line: the report would replace the anchor or an event file by rename.
    trace = _writable_copy(tmp_path)
    before = _digests(trace)
    with pytest.raises(ValueError, match="nothing was written"):
        cubescale.analyze(trace / "traces.otf2", trace / output)
    with pytest.raises(ValueError, match="nothing was written"):
        cubescale.trace.profile(trace / "traces.otf2", trace / output)
    assert _digests(trace) == before


def test_the_api_takes_an_experiment_directory(tmp_path):
    trace = _writable_copy(tmp_path)
    cubescale.analyze(trace, tmp_path / "a.cubex")
    cubescale.analyze(trace / "traces.otf2", tmp_path / "b.cubex")
    assert (tmp_path / "a.cubex").read_bytes() == (tmp_path / "b.cubex").read_bytes()


@pytest.mark.parametrize("output, error, words", [
    ("", FileNotFoundError, "an empty path for the output"),
    ("a.txt/x.cubex", NotADirectoryError, "not a directory, where the output would go"),
])
def test_outputs_no_file_can_be_made_at_are_named_at_once(tmp_path, output, error, words):
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(error, match=words):
        files.check_target(str(tmp_path / output) if output else output)
    done = _cli("analyze", examples.trace_path(), "-o", output, cwd=tmp_path)
    _refused(done, words)


def test_a_read_only_directory_is_refused_before_reading(tmp_path):
    # A read-only mount (root passes every permission check but this one): the command says so
    # before it reads the trace, not after. Needs a mount namespace of its own (unshare -m).
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("no mount namespace for a read-only bind mount here")
    (tmp_path / "ro").mkdir()
    script = (f"mount --bind {tmp_path / 'ro'} {tmp_path / 'ro'} && mount -o remount,ro,bind {tmp_path / 'ro'} && "
              f"{sys.executable} -m cubescale analyze {examples.trace_path()} -o {tmp_path / 'ro' / 'x.cubex'}")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    _refused(done, "a read-only file system, where the output would go", str(tmp_path / "ro"))
    assert "reading" not in done.stderr and not (tmp_path / "ro" / "x.cubex").exists()


MPI_API = """
import sys
from mpi4py import MPI
import cubescale
try:
    cubescale.analyze(sys.argv[1], sys.argv[2], comm=MPI.COMM_WORLD)
except Exception as e:
    print(f"rank {MPI.COMM_WORLD.rank}: {type(e).__name__}: {e}", flush=True)
else:
    print(f"rank {MPI.COMM_WORLD.rank}: written", flush=True)
"""


def test_the_api_under_mpirun_refuses_the_trace_as_output_on_every_rank(tmp_path):
    from cubescale.mpirun import local_environment

    trace = _writable_copy(tmp_path)
    (tmp_path / "api.py").write_text(MPI_API)
    before = _digests(trace)
    for output in (trace / "traces.otf2", tmp_path / "missing" / "x.cubex"):
        command = ["timeout", "-k", "5", "200", "mpirun", "-q", "-n", "2", sys.executable, str(tmp_path / "api.py"),
                   str(trace), str(output)]
        done = subprocess.run(command, env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=250)
        assert done.returncode == 0, done.stderr
        words = "nothing was written" if output.name == "traces.otf2" else "no such directory for the output"
        # (mpirun may join the ranks' lines: each is found on its own)
        said = re.findall(r"rank (\d): CollectiveError: rank 0: \w+: [^\n]*?" + re.escape(words), done.stdout)
        assert sorted(said) == ["0", "1"], done.stdout
    assert _digests(trace) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["api.py", "ping-pong"]


def test_the_collective_writers_refuse_an_input_as_output_before_reading(tmp_path):
    # recollate, collate_reports and profile_trace write on rank 0 after reading for long: an
    # output that is one of their inputs is refused first, on every rank, the input kept.
    from mpi4py import MPI

    from cubescale.parallel.collate_reports import collate_reports
    from cubescale.parallel.collective import CollectiveError
    from cubescale.parallel.recollate import recollate
    from cubescale.parallel.trace import profile_trace

    report = tmp_path / "bt.cubex"
    shutil.copyfile(DATA / "cubex" / "bt-mz.B.8x4.cubex", report)
    trace = _writable_copy(tmp_path)
    before = _digests(tmp_path)
    with pytest.raises(CollectiveError, match="is the input .*nothing was written"):
        recollate(MPI.COMM_SELF, report, report)
    with pytest.raises(CollectiveError, match="is the input .*nothing was written"):
        collate_reports(MPI.COMM_SELF, [report], report)
    with pytest.raises(CollectiveError, match="is the input .*nothing was written"):
        profile_trace(MPI.COMM_SELF, trace, trace / "traces.def")
    with pytest.raises(CollectiveError, match="no such directory for the output"):
        recollate(MPI.COMM_SELF, report, tmp_path / "missing" / "x.cubex")
    assert _digests(tmp_path) == before


@pytest.mark.parametrize("given", ["traces/0.evt", "traces/0.def", "traces.def"])
def test_one_of_the_traces_other_files_is_refused_naming_its_anchor(tmp_path, given):
    trace = _writable_copy(tmp_path)
    done = _cli("analyze", trace / given, "-o", "x.cubex", cwd=tmp_path)
    _refused(done, "not the trace's anchor", f"give its anchor {trace / 'traces.otf2'}")
    with pytest.raises(cubescale.FormatError, match="not the trace's anchor"):
        cubescale.analyze(trace / given)


@pytest.mark.parametrize("command", ["info", "dump", "top"])
@pytest.mark.parametrize("given", ["traces/0.evt", "traces.def"])
def test_info_and_the_report_commands_name_a_trace_file_and_its_anchor(tmp_path, command, given):
    # Before, these read the OTF2 file as a tar archive: "not a ustar tar header".
    trace = _writable_copy(tmp_path)
    done = _cli(command, trace / given, cwd=tmp_path)
    what = "event" if given.endswith(".evt") else "definition"
    _refused(done, f"an OTF2 {what} file", f"give its anchor {trace / 'traces.otf2'}")
    assert "tar header" not in done.stderr


def test_a_fifo_given_as_the_trace_is_refused_without_reading_it(tmp_path):
    # Telling what a file is reads its first bytes: a FIFO would wait for a writer forever.
    fifo = tmp_path / "traces.otf2"
    os.mkfifo(fifo)
    _refused(_cli("analyze", fifo, "-o", "x.cubex", cwd=tmp_path), "not a regular file")
    with pytest.raises(cubescale.FormatError, match="not a regular file"):
        cubescale.trace.open(fifo)
