"""Commands that run in one process (``info``, ``stat``, ``convert`` ...), started by
``mpirun -n 2``: rank 0 runs them and says so in one line on stderr, the other rank does
nothing, so the output is printed once and files are written once."""

from __future__ import annotations

import subprocess
import sys

from test_cli_errors_mpi import DATA, cubescale_mpirun

REPORT = DATA / "cubex" / "call_tree_test.cubex"


def one_process(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cubescale", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_info_prints_once(tmp_path):
    done = cubescale_mpirun("info", REPORT, cwd=tmp_path)
    alone = one_process("info", str(REPORT))
    assert done.returncode == 0, done.stderr
    assert done.stdout == alone.stdout  # once, not once per rank
    assert done.stderr.splitlines() == ["cubescale info: runs in one process; ranks 1-1 of mpirun do nothing"]


def test_convert_writes_once(tmp_path):
    done = cubescale_mpirun("convert", REPORT, "copy.cubex", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.cubex"]  # no temporaries of a second writer
    assert one_process("info", str(tmp_path / "copy.cubex")).stdout.splitlines()[1:] == \
        one_process("info", str(REPORT)).stdout.splitlines()[1:]
