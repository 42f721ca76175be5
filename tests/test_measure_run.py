"""`cubescale run` in one process (no mpirun): the program runs as ``__main__`` right below
its own region (no frames of the launcher or of the measurement in the report), with its
arguments, and an exception in it still writes the report of what ran before the program ends
as under ``python`` (its traceback, exit status 1); its exit status is kept. Without mpi4py (or MPI) a program that does not use MPI is
measured all the same; one that imports mpi4py has its MPI calls recorded."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import cubescale
from cubescale.views import call_paths

APP = textwrap.dedent("""
    import pickle, sys

    class Point:
        def __init__(self, x):
            self.x = x

    def work(n):
        return sum(range(n))

    def fail():
        raise ValueError("the program failed")

    for _ in range(int(sys.argv[1])):
        work(100)
    assert pickle.loads(pickle.dumps(Point(3))).x == 3  # classes of __main__ pickle
    if sys.argv[2] == "raise":
        fail()
    sys.exit(int(sys.argv[2]))
""")


def _run(tmp_path, *args, source=APP, env=None):
    app = tmp_path / "app.py"
    app.write_text(source)
    out = tmp_path / "app.cubex"
    done = subprocess.run([sys.executable, "-m", "cubescale", "run", "-o", str(out), "--quiet", str(app), *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env=env if env is not None else dict(os.environ))
    return done, out


def _tree(report) -> dict[str, int]:
    visits = report.values("visits", inclusive=False)[:, 0]
    return {path: int(visits[c]) for c, path in enumerate(call_paths(report))}


def test_the_program_runs_right_below_its_region_with_its_arguments(tmp_path):
    done, out = _run(tmp_path, "7", "0")
    assert done.returncode == 0, done.stderr
    report = cubescale.open(out)
    tree = _tree(report)
    assert tree["app.py"] == 1 and tree["app.py/<module>"] == 1
    assert tree["app.py/<module>/work"] == 7
    assert [p for p in tree if p.count("/") == 1] == ["app.py/<module>"]  # nothing beside the program
    package = os.path.dirname(cubescale.__file__)
    assert not [r.name for r in report.regions if r.module.startswith(package) or r.module.endswith("runpy.py")]


def test_an_exception_writes_the_report_then_is_raised(tmp_path):
    done, out = _run(tmp_path, "3", "raise")
    assert done.returncode == 1
    assert "ValueError: the program failed" in done.stderr  # its traceback, not a cubescale error line
    assert "cubescale: error" not in done.stderr
    tree = _tree(cubescale.open(out))
    assert tree["app.py/<module>/work"] == 3 and tree["app.py/<module>/fail"] == 1


def test_the_programs_exit_status_is_kept(tmp_path):
    done, out = _run(tmp_path, "2", "5")
    assert done.returncode == 5
    assert _tree(cubescale.open(out))["app.py/<module>/work"] == 2


def test_without_mpi4py_a_program_without_mpi_is_measured(tmp_path):
    blocker = tmp_path / "blocked" / "mpi4py"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('mpi4py is not installed here')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")]))
    done, out = _run(tmp_path, "4", "0", env=env)
    assert done.returncode == 0, done.stderr
    report = cubescale.open(out)
    assert _tree(report)["app.py/<module>/work"] == 4
    assert [loc.process for loc in report.locations] == ["Process 0"]


def test_a_program_importing_mpi4py_has_its_calls_recorded(tmp_path):
    source = "from mpi4py import MPI\n\ndef total():\n    return MPI.COMM_WORLD.allreduce(5)\n\nassert total() == 5\n"
    done, out = _run(tmp_path, source=source)
    assert done.returncode == 0, done.stderr
    report = cubescale.open(out)
    assert _tree(report)["app.py/<module>/total/MPI_Allreduce"] == 1
    assert [loc.process for loc in report.locations] == ["MPI Rank 0"]
