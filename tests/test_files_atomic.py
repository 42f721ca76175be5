"""Writers that racing, symlinks, SIGKILL and full disks cannot corrupt (issue #30).

Every file cubescale writes goes to an exclusive temporary with a unique name beside the
target and is renamed over it when complete (cpp/include/cubescale/common/atomic_file.hpp,
cubescale.files). These tests race real writers of real reports on one output, plant
symlinks, kill a writer mid-write and fill a tiny tmpfs.
"""

from __future__ import annotations

import contextlib
import doctest
import errno
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import cubescale
import cubescale.commands.clean
from cubescale import files
from cubescale.cli import main

DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                         "..", "..", "shared", "data")), "cubex")
# Small real reports of different shapes, metrics and data types: a mix of any two is visible.
INPUTS = [os.path.join(DATA, name) for name in (
    "time.p4.cubex", "call_tree_test.cubex", "kripke.p8.cubex", "all_dtypes.cubex", "blast.p64.cubex",
    "bt-mz.B.8x4.cubex", "bt-mz.p2x4.bad_checksums.cubex", "mm.zcubex.cubex")]
WRITERS = 16
# 100 rounds of 16 in-process writers by default (~15 s); CUBESCALE_RACE_ROUNDS asks for more.
ROUNDS = int(os.environ.get("CUBESCALE_RACE_ROUNDS", "100"))
CLI = [sys.executable, "-m", "cubescale"]


def _contents(report: cubescale.Report) -> tuple:
    """Everything a reader sees: definitions and every stored value, as bytes."""
    stored = [m for m in report.metrics if not m.derived]
    return ([(m.name, m.dtype, m.kind, m.parent) for m in report.metrics],
            [(c.region.name, c.parent) for c in report.cnodes],
            [(loc.name, loc.type, loc.rank) for loc in report.locations],
            [np.ascontiguousarray(report.values(m.name, None)).tobytes() for m in stored])


@pytest.fixture(scope="module")
def expected():
    return {path: _contents(cubescale.open(path)) for path in INPUTS}


def _which_input(out: str, expected: dict) -> str:
    """The one input whose report `out` is, whole; fails on a mix or a broken file."""
    got = _contents(cubescale.open(out))
    matches = [path for path, contents in expected.items() if contents == got]
    assert len(matches) == 1, f"{out} is none of the inputs (a mix of writers?)"
    return matches[0]


def _race_writer(barrier, errors, path: str, out: str, compress: bool, rounds: int) -> None:
    """One of the racing processes: the same report to `out` once per round, all at once."""
    report = cubescale.open(path)
    for m in report.metrics:  # read before the race: the race is about writing
        if not m.derived:
            report.values(m.name, None)
    for _ in range(rounds):
        barrier.wait(timeout=120)
        try:
            cubescale.write(report, out, compress=compress)
        except Exception as e:  # reported, and the barrier still reached: no hang
            errors.put(repr(e))
        barrier.wait(timeout=120)


def test_racing_writers_leave_exactly_one_complete_report(tmp_path, expected):
    out = str(tmp_path / "out.cubex")
    ctx = multiprocessing.get_context("spawn")  # no fork of a process with the core's threads
    barrier, errors = ctx.Barrier(WRITERS + 1), ctx.Queue()
    writers = [ctx.Process(target=_race_writer, args=(barrier, errors, INPUTS[i % len(INPUTS)], out,
                                                      bool(i // len(INPUTS) % 2), ROUNDS)) for i in range(WRITERS)]
    for w in writers:
        w.start()
    winners = set()
    try:
        for _ in range(ROUNDS):
            barrier.wait(timeout=120)  # go
            barrier.wait(timeout=120)  # all written
            assert errors.empty(), errors.get()
            winners.add(_which_input(out, expected))
            assert os.listdir(tmp_path) == ["out.cubex"]
    except BaseException:
        barrier.abort()  # the writers stop at once instead of waiting for the next round
        raise
    finally:
        for w in writers:
            w.join(timeout=30)
            if w.is_alive():
                w.kill()
    assert all(w.exitcode == 0 for w in writers)
    print(f"{ROUNDS} rounds of {WRITERS} writers: last writer was each of {len(winners)} inputs at least once")


def _race_python_writer(barrier, errors, out: str, fill: int, rounds: int) -> None:
    """One of the racing processes of the Python twin: 256 KiB of one byte value per round."""
    data = bytes([fill]) * (1 << 18)
    for _ in range(rounds):
        barrier.wait(timeout=120)
        try:
            files.write_bytes(out, data)
        except Exception as e:
            errors.put(repr(e))
        barrier.wait(timeout=120)


def test_racing_python_writers_leave_exactly_one_complete_file(tmp_path):
    out, writers, rounds = str(tmp_path / "tree.bin"), 16, 100
    # fork: the children only run Python's os calls (no core threads to inherit), and spawning
    # 16 interpreters would cost more than the 100 rounds.
    ctx = multiprocessing.get_context("fork")
    barrier, errors = ctx.Barrier(writers + 1), ctx.Queue()
    procs = [ctx.Process(target=_race_python_writer, args=(barrier, errors, out, i + 1, rounds)) for i in range(writers)]
    for p in procs:
        p.start()
    try:
        for _ in range(rounds):
            barrier.wait(timeout=120)
            barrier.wait(timeout=120)
            assert errors.empty(), errors.get()
            with open(out, "rb") as f:
                data = f.read()
            assert len(data) == 1 << 18 and data == bytes([data[0]]) * len(data), "a mix of writers"
            assert os.listdir(tmp_path) == ["tree.bin"]
    except BaseException:
        barrier.abort()
        raise
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    assert all(p.exitcode == 0 for p in procs)


def test_racing_convert_commands_leave_exactly_one_complete_report(tmp_path, expected):
    # The reproducer: `cubescale convert` processes on one output. One round by
    # default (each process costs 0.3 s of start-up; the 100 rounds above race the same
    # writer); CUBESCALE_CONVERT_ROUNDS=82 runs the count.
    out = str(tmp_path / "out.cubex")
    for _ in range(int(os.environ.get("CUBESCALE_CONVERT_ROUNDS", "1"))):
        procs = [subprocess.Popen(CLI + ["convert", INPUTS[i % len(INPUTS)], out]
                                  + (["--compress"] if i // len(INPUTS) % 2 else []),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for i in range(WRITERS)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        _which_input(out, expected)
        assert os.listdir(tmp_path) == ["out.cubex"]


def test_symlinks_beside_the_output_are_never_followed(tmp_path, expected):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    out = tmp_path / "out.cubex"
    # The old fixed temporary name, names of the present scheme, and the output itself.
    planted = [tmp_path / "out.cubex.tmp-cubescale"]
    planted += [tmp_path / files.temporary_name("out.cubex") for _ in range(100)]
    planted += [tmp_path / files.temporary_name("out.cubex", pid=1) for _ in range(10)]
    for link in planted + [out]:
        link.symlink_to(victim)
    report = cubescale.open(INPUTS[0])
    cubescale.write(report, out)
    assert victim.read_bytes() == b"precious"
    assert not out.is_symlink()  # replaced as mv replaces it: the link, not its target
    assert _which_input(str(out), expected) == INPUTS[0]
    assert all(link.is_symlink() for link in planted)
    # The Python writer, through a link at its target, and `clean`: the same.
    out.unlink()
    out.symlink_to(victim)
    files.write_text(out, "text")
    assert victim.read_bytes() == b"precious" and out.read_text() == "text" and not out.is_symlink()
    assert files.temporaries(tmp_path) == []  # links are never ours
    assert main(["clean", str(tmp_path)]) == 0
    assert all(link.is_symlink() for link in planted) and victim.read_bytes() == b"precious"


# A child that writes a report big enough (8 metrics x 1000 call paths x 1024 locations,
# 64 MB) to be killed while writing.
_BIG_WRITER = """
import sys, numpy as np, cubescale
from cubescale.systree import SystemTree
b = cubescale.ReportBuilder(SystemTree.from_shape("node:8 process:16 thread:8"))
for k in range(8):
    b.add_metric(f"m{k}", unit="sec")
root = b.add_cnode(b.add_region("main"))
for i in range(999):
    b.add_cnode(b.add_region(f"r{i}"), parent=root)
report = b.build()
rng = np.random.default_rng(1)
for k in range(8):
    report.set_values(f"m{k}", rng.random(report.shape))
print("built", flush=True)
cubescale.write(report, sys.argv[1])
"""


def test_writer_killed_mid_write_leaves_the_old_report_and_clean_removes_its_temporary(tmp_path, expected, capsys):
    out = tmp_path / "out.cubex"
    cubescale.write(cubescale.open(INPUTS[0]), out)
    child = subprocess.Popen([sys.executable, "-c", _BIG_WRITER, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "built\n"
        temporary = _wait_for_growing_temporary(tmp_path, child)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert _which_input(str(out), expected) == INPUTS[0]  # the old report, whole
    left = files.temporaries(tmp_path)
    assert [t.path for t in left] == [temporary] and left[0].pid == child.pid
    assert files.stale_temporaries(tmp_path) == left  # the writer is gone
    assert main(["clean", "--dry-run", str(tmp_path)]) == 0
    assert os.path.exists(temporary)
    capsys.readouterr()
    assert main(["clean", str(tmp_path)]) == 0
    said = capsys.readouterr().out
    assert f"removed {temporary}: {left[0].size} bytes" in said and "removed 1 stale temporary" in said
    assert os.listdir(tmp_path) == ["out.cubex"]


def _wait_for_growing_temporary(directory, child: subprocess.Popen, timeout: float = 60.0) -> str:
    """The writer's temporary once it holds some MB but the writer has not finished."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert child.poll() is None, "the writer finished before it could be killed"
        for t in files.temporaries(directory):
            if t.size > (4 << 20):
                return t.path
        time.sleep(0.001)
    raise AssertionError("no temporary appeared")


@contextlib.contextmanager
def _tiny_tmpfs(directory, size: str = "1m"):
    os.makedirs(directory)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", str(directory)], check=True)


@pytest.fixture
def big_input():
    """A real report bigger than the tiny tmpfs, also compressed (2.9 MB, 1.5 MB)."""
    return os.path.join(DATA, "l2dcm.p128.cubex")


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "zlib"])
def test_full_disk_is_one_line_exit_2_and_nothing_left(tmp_path, big_input, compress):
    with _tiny_tmpfs(tmp_path / "tiny") as tiny:
        (tiny / "out.cubex").write_bytes(b"old")
        run = subprocess.run(CLI + ["convert", str(big_input), str(tiny / "out.cubex")]
                             + (["--compress"] if compress else []), capture_output=True, text=True, timeout=120)
        assert run.returncode == 2, run.stderr
        lines = run.stderr.splitlines()
        assert len(lines) == 1 and "No space left on device" in lines[0] and str(tiny / "out.cubex") in lines[0], lines
        assert os.listdir(tiny) == ["out.cubex"] and (tiny / "out.cubex").read_bytes() == b"old"


def test_full_disk_raises_oserror_enospc_naming_the_output(tmp_path, big_input):
    report = cubescale.open(big_input)
    with _tiny_tmpfs(tmp_path / "tiny") as tiny:
        target = tiny / "out.cubex"
        for compress in (False, True):
            with pytest.raises(OSError) as caught:
                cubescale.write(report, target, compress=compress)
            assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(target)
            assert os.listdir(tiny) == []
        with pytest.raises(OSError) as caught:  # the Python writer the same
            files.write_bytes(target, bytes(2 << 20))
        assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(target)
        assert os.listdir(tiny) == []


def test_stale_means_gone_reused_or_zombie_never_running_or_foreign(tmp_path):
    def plant(pid: int, host: str | None = None, age: float = 0.0) -> str:
        path = tmp_path / files.temporary_name("r.cubex", pid=pid, host=host)
        path.write_bytes(b"x")
        if age:
            os.utime(path, (time.time() - age, time.time() - age))
        return str(path)

    running = plant(os.getpid())
    foreign = plant(12345, host="another-host")
    reused = plant(os.getpid(), age=10 * 365 * 86400)  # older than this process: its pid was reused
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    while open(f"/proc/{zombie.pid}/stat").read().split(")")[1].split()[0] != "Z":
        time.sleep(0.01)  # exited, not yet reaped
    of_zombie = plant(zombie.pid)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    of_gone = plant(int(gone.stdout))
    (tmp_path / "unrelated.cubex").write_bytes(b"y")
    (tmp_path / ".r.cubex.cubescale-tmp.h.1.nothex").write_bytes(b"z")  # not our naming
    try:
        assert [t.path for t in files.temporaries(tmp_path)] == sorted([running, foreign, reused, of_zombie, of_gone])
        assert [t.path for t in files.stale_temporaries(tmp_path)] == sorted([reused, of_zombie, of_gone])
    finally:
        zombie.wait()
    assert main(["clean", str(tmp_path)]) == 0
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(running), os.path.basename(foreign),
                                                   ".r.cubex.cubescale-tmp.h.1.nothex", "unrelated.cubex"])


def test_python_writer_replaces_whole_or_not_at_all(tmp_path):
    target = tmp_path / "tree.json"
    files.write_text(target, "old")
    with pytest.raises(RuntimeError), files.atomic_write(target, "w") as f:
        f.write("new, half")
        raise RuntimeError("the producer failed")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["tree.json"]
    with files.atomic_write(target, "w") as f:
        f.write("new")
        assert target.read_text() == "old"  # not before it is complete
    assert target.read_text() == "new" and os.listdir(tmp_path) == ["tree.json"]
    assert target.stat().st_mode & 0o777 == 0o644 & ~_umask()
    with pytest.raises(FileNotFoundError) as caught:
        files.write_bytes(tmp_path / "missing" / "x.bin", b"")
    assert caught.value.filename == str(tmp_path / "missing" / "x.bin")


def test_names_are_cut_at_characters_and_any_name_is_printed(tmp_path, capsys):
    assert files.parse_temporary_name(files.temporary_name("x" * 149 + "\u00e9.cubex"))[0] == "x" * 149
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    not_utf8 = os.fsdecode(b"\xffreport.cubex")  # file names are bytes; this one is no UTF-8
    (tmp_path / files.temporary_name(not_utf8, pid=int(gone.stdout))).write_bytes(b"x")
    assert main(["clean", str(tmp_path)]) == 0
    assert "temporary of \\xffreport.cubex" in capsys.readouterr().out
    assert os.listdir(tmp_path) == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("module", [files, cubescale.commands.clean], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE).failed == 0
