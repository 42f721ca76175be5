"""What a pip user gets: the wheel, built from this checkout, installed in a fresh virtual
environment without the system's packages and with nothing but NumPy: the command line starts,
``info`` reads the shipped report, the docstring examples run (those that need an extra are
named), ``cubescale notebooks DIR`` copies the notebooks and names the extra Jupyter needs.
Then, in a second environment with the ``pandas``, ``plot`` and ``view`` extras, every example that does
not need MPI runs, and the notebooks run headless through nbclient.

It installs from the package index (PyPI): ``-m "not network"`` or ``CUBESCALE_OFFLINE=1``
skips it. The wheel is built with ``--no-build-isolation`` into the scikit-build directory
that ``pip install .`` used (seconds when nothing changed: scripts/setup.sh builds without
isolation too, and the ``SKBUILD_*`` settings of scripts/test.sh reach this build, so under
test.sh both use build/release), and both environments are kept in ``build/fresh-venv/``
between runs (the wheel is reinstalled every time).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "build" / "fresh-venv"
CHILD = Path(__file__).resolve().parent / "fresh_venv_child.py"
NOTEBOOKS = {"explore_demo.ipynb", "report.ipynb", "systree.ipynb", "threads.ipynb"}

pytestmark = [
    pytest.mark.network,
    pytest.mark.skipif(bool(os.environ.get("CUBESCALE_OFFLINE")), reason="CUBESCALE_OFFLINE: no package index"),
    pytest.mark.skipif(not (REPO / "pyproject.toml").exists(), reason="needs the source checkout to build the wheel"),
]


def clean_env() -> dict[str, str]:
    """This process's environment without what would point the venv at the checkout or data."""
    drop = ("PYTHONPATH", "PYTHONHOME", "CUBESCALE_DEV_BUILD", "CUBESCALE_SHARED_DATA", "CUBESCALE_REPORT",
            "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")
    return {k: v for k, v in os.environ.items() if k not in drop}


def run(cmd: list, cwd: Path, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    """Run ``cmd`` with the clean environment; fail with its output if it fails."""
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=clean_env(), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stdout[-3000:]}\n" \
                                 f"{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of this checkout (pip wheel --no-build-isolation --no-deps)."""
    pytest.importorskip("scikit_build_core", reason="pip wheel --no-build-isolation needs scikit-build-core")
    pytest.importorskip("pybind11", reason="pip wheel --no-build-isolation needs pybind11")
    out = tmp_path_factory.mktemp("wheel")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w", out, REPO], REPO,
        timeout=900)
    (built,) = out.glob("cubescale-*.whl")
    return built


def fresh_venv(name: str, wheel: Path, extras: str = "", more: tuple[str, ...] = ()) -> Path:
    """``build/fresh-venv/<name>``: a venv without system site packages holding the wheel with
    what its metadata asks for (``extras`` too) and ``more``; made once and kept between runs,
    the wheel reinstalled every time."""
    venv = CACHE / name
    python = venv / "bin" / "python"
    stamp, wanted = venv / "made-with.json", {"extras": extras, "more": list(more)}
    if not python.exists() or not stamp.exists() or json.loads(stamp.read_text()) != wanted:
        shutil.rmtree(venv, ignore_errors=True)
        run([sys.executable, "-m", "venv", venv], REPO, timeout=300)
        with_extras = f"{wheel}[{extras}]" if extras else wheel  # pip resolves the wheel's own requirements
        run([python, "-m", "pip", "install", "-q", with_extras, *more], REPO, timeout=900)
        stamp.write_text(json.dumps(wanted))
    # A fresh copy of the package: files an earlier wheel had and this one lacks must not stay.
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], REPO).stdout.strip()
    run([python, "-m", "pip", "uninstall", "-q", "-y", "cubescale"], REPO)
    shutil.rmtree(Path(purelib) / "cubescale", ignore_errors=True)
    run([python, "-m", "pip", "install", "-q", "--no-deps", wheel], REPO)
    return venv


def examples(venv: Path, cwd: Path, *args: str) -> dict:
    """The child script's verdict on the installed package's examples (see fresh_venv_child.py)."""
    return json.loads(run([venv / "bin" / "python", CHILD, *args], cwd, timeout=600).stdout)


def needing(results: dict) -> dict[str, dict]:
    """{module or README block: {extra: examples that need it}} of the results."""
    return {name: r["needs"] for name, r in results.items() if r["needs"]}


def assert_no_failures(results: dict) -> None:
    failed = {name: r["failed"] for name, r in results.items() if r["failed"]}
    assert not failed, json.dumps(failed, indent=1)


@pytest.fixture(scope="module")
def numpy_only(wheel) -> Path:
    """The venv with the wheel and what it requires (numpy), and nothing else."""
    return fresh_venv("numpy-only", wheel)


@pytest.fixture(scope="module")
def with_extras(wheel) -> Path:
    """The venv with the wheel, its pandas, plot and view extras, and what runs notebooks headless."""
    return fresh_venv("extras", wheel, "pandas,plot,view", ("nbclient", "nbformat", "ipykernel"))


@pytest.fixture(scope="module")
def with_mpi(wheel) -> Path:
    """The venv with the wheel and its mpi extra: mpi4py from PyPI, whose wheel carries one MPI
    extension per MPI ABI (``MPI.openmpi.*.so``, ``MPI.mpich.*.so``) found by its own finder."""
    return fresh_venv("mpi", wheel, "mpi")


MPI_PROGRAM = """
from mpi4py import MPI
import numpy as np
comm = MPI.COMM_WORLD
comm.Allreduce(np.ones(1024), np.empty(1024))
print("rank", comm.rank, comm.allreduce(comm.rank), flush=True)
"""


def test_mpi_calls_are_measured_with_mpi4py_from_pypi(with_mpi, tmp_path):
    # Before, the import hook asked only the path finder for mpi4py.MPI: with PyPI's wheel it
    # found nothing, mpi4py's own finder loaded the module untraced, and no MPI call was recorded.
    import cubescale
    from cubescale.mpirun import local_environment

    (tmp_path / "app.py").write_text(MPI_PROGRAM)
    env = {k: v for k, v in local_environment().items() if k in clean_env() or k.startswith("OMPI_")}
    done = subprocess.run(["timeout", "-k", "5", "120", "mpirun", "-n", "2", with_mpi / "bin" / "python", "-m",
                           "cubescale", "run", "-o", "run.cubex", "--quiet", "app.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=150, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    report = cubescale.open(tmp_path / "run.cubex")
    allreduce = [c.index for c in report.cnodes if c.region.name == "MPI_Allreduce"]
    assert allreduce, sorted({c.region.name for c in report.cnodes})
    assert report.values("bytes_sent", inclusive=False)[allreduce].sum() > 0


def test_only_numpy_is_installed(numpy_only, tmp_path):
    listed = json.loads(run([numpy_only / "bin" / "python", "-m", "pip", "list", "--format=json"], tmp_path).stdout)
    assert {p["name"].lower() for p in listed} <= {"cubescale", "numpy", "pip", "setuptools"}


def test_the_cli_starts_and_reads_the_shipped_report_with_only_numpy(numpy_only, tmp_path):
    bin_ = numpy_only / "bin"
    assert "usage: cubescale" in run([bin_ / "cubescale", "--help"], tmp_path).stdout
    report = run([bin_ / "python", "-c", "import cubescale; print(cubescale.examples.report_path())"], tmp_path)
    report_path = report.stdout.strip()
    assert Path(report_path).is_relative_to(numpy_only)  # the installed copy, not the checkout's
    assert "demo.cubex: CUBE 4.4" in run([bin_ / "cubescale", "info", report_path], tmp_path).stdout


def test_the_cli_analyzes_and_profiles_the_shipped_trace_with_only_numpy(numpy_only, tmp_path):
    # The definitions of a trace stay lists until a DataFrame is asked for: the wait-state
    # analysis and the trace's profile need no pandas.
    bin_ = numpy_only / "bin"
    trace = run([bin_ / "python", "-c", "import cubescale; print(cubescale.examples.trace_path())"], tmp_path).stdout
    analyzed = run([bin_ / "cubescale", "analyze", trace.strip(), "-o", tmp_path / "scout.cubex"], tmp_path).stdout
    assert "scout.cubex: " in analyzed and "mpi_latesender" in analyzed
    profiled = run([bin_ / "cubescale", "trace-profile", trace.strip(), "-o", tmp_path / "profile.cubex"], tmp_path).stdout
    assert "profile.cubex: 8 metrics" in profiled
    assert "mpi_latesender" in run([bin_ / "cubescale", "info", tmp_path / "scout.cubex"], tmp_path).stdout
    # The trace's summary too (it said "a trace's event or definition table needs pandas").
    assert "traces.otf2: OTF2 trace, 4 locations" in run([bin_ / "cubescale", "info", trace.strip()], tmp_path).stdout


def test_docstring_examples_with_only_numpy(numpy_only, tmp_path):
    doc = examples(numpy_only, tmp_path, "doctests")
    assert_no_failures(doc)
    needs = needing(doc)
    print("docstring examples that need more than numpy:", json.dumps(needs, indent=1))
    assert sum(r["attempted"] for r in doc.values()) > 500
    assert not {name for name, n in needs.items() if "shared data" in n}  # every example opens what ships
    # What works without extras imports without them, and its examples run (a DataFrame aside).
    for core in ("cubescale.report", "cubescale.systree", "cubescale.examples", "cubescale.threads",
                 "cubescale.records", "cubescale.builder", "cubescale.profile", "cubescale.cli",
                 "cubescale.commands.info", "cubescale.commands.dump", "cubescale.commands.convert",
                 "cubescale.commands.notebooks", "cubescale.commands.demo"):
        assert core in doc and "import" not in needs.get(core, {}).values(), (core, needs.get(core))
        assert set(needs.get(core, {})) <= {"pandas", "hatchet", "view"} and doc[core]["attempted"] > 0, (core, needs.get(core))


def test_readme_examples_with_only_numpy(numpy_only, tmp_path):
    readme = examples(numpy_only, tmp_path, "readme", REPO / "README.md")
    assert_no_failures(readme)
    print("README examples that need more than numpy:", json.dumps(needing(readme), indent=1))
    assert sum(r["attempted"] for r in readme.values()) > 10


def test_notebooks_are_copied_out_and_the_missing_extra_is_named(numpy_only, tmp_path):
    copied = run([numpy_only / "bin" / "cubescale", "notebooks", tmp_path / "nb"], tmp_path).stdout
    assert {p.name for p in (tmp_path / "nb").iterdir()} == NOTEBOOKS
    assert "pip install 'cubescale[notebook]'" in copied  # Jupyter, pandas, matplotlib are missing here


def test_every_example_runs_with_the_extras(with_extras, tmp_path):
    doc = examples(with_extras, tmp_path, "doctests")
    assert_no_failures(doc)
    print("docstring examples that need more than the pandas, plot and view extras:", json.dumps(needing(doc), indent=1))
    # Hatchet and Thicket (the hatchet extra) install for a minute more: their examples run in test_docstrings.py.
    assert {extra for n in needing(doc).values() for extra in n} <= {"mpi", "hatchet"}
    readme = examples(with_extras, tmp_path, "readme", REPO / "README.md")
    assert_no_failures(readme)
    assert {extra for n in needing(readme).values() for extra in n} <= {"mpi"}


def test_the_notebooks_run_headless_with_the_extras(with_extras, tmp_path):
    run([with_extras / "bin" / "cubescale", "notebooks", tmp_path / "nb"], tmp_path)
    executed = run([with_extras / "bin" / "python", "-c", RUN_NOTEBOOKS, tmp_path / "nb"], tmp_path / "nb",
                   timeout=600).stdout
    assert {line.split()[0] for line in executed.splitlines()} == NOTEBOOKS
    assert {p.name for p in (tmp_path / "nb").iterdir()} == NOTEBOOKS  # they wrote nothing beside them


# Executes every notebook in a folder with a fresh python3 kernel of this venv, as Jupyter would.
RUN_NOTEBOOKS = """
import sys, pathlib, nbformat
from nbclient import NotebookClient
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.ipynb")):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = sum(len(c.get("outputs", [])) for c in nb.cells if c.cell_type == "code")
    print(path.name, "ran with", outputs, "outputs")
"""
