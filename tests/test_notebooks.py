"""The notebooks that ship in the package run top to bottom (code cells executed in order, as
a kernel would), on the report that ships with them; ``cubescale notebooks DIR`` copies them
out and never overwrites a file unless told to."""

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cubescale.commands.notebooks import copy_notebooks, shipped_notebooks

NOTEBOOKS = [Path(p) for p in shipped_notebooks()]


def test_the_notebooks_ship_in_the_installed_package():
    import cubescale

    assert {p.name for p in NOTEBOOKS} == {"explore_demo.ipynb", "report.ipynb", "systree.ipynb", "threads.ipynb"}
    assert all(Path(cubescale.__file__).parent in p.parents for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch, tmp_path):
    monkeypatch.delenv("CUBESCALE_REPORT", raising=False)  # the shipped report, as after a pip install
    monkeypatch.chdir(tmp_path)  # whatever a notebook writes lands here
    cells = json.loads(path.read_text())["cells"]
    namespace: dict = {}
    ran = 0
    for cell in cells:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{path.name}[{ran}]", "exec"), namespace)
            ran += 1
    assert ran > 0
    assert not any(tmp_path.iterdir()), "a notebook left files in the working directory"
    if "report" in namespace:  # the report notebooks open the shipped report by default
        import cubescale

        assert os.path.samefile(namespace["report"].path, cubescale.examples.report_path())


def test_a_notebook_opens_the_report_cubescale_report_names(monkeypatch, shared_data):
    other = shared_data / "cubex" / "bt-mz.B.8x4.cubex"
    monkeypatch.setenv("CUBESCALE_REPORT", str(other))
    cells = json.loads((Path(shipped_notebooks()[0]).parent / "report.ipynb").read_text())["cells"]
    namespace: dict = {}
    exec(compile("".join(next(c for c in cells if c["cell_type"] == "code")["source"]), "report.ipynb", "exec"),
         namespace)
    assert os.path.samefile(namespace["report"].path, other) and namespace["report"].shape[1] == 32


def test_copying_the_notebooks_refuses_to_overwrite_unless_forced(tmp_path):
    target = tmp_path / "nb"
    copied = copy_notebooks(target)
    assert [Path(p).name for p in copied] == [p.name for p in NOTEBOOKS]
    assert all(filecmp.cmp(a, b, shallow=False) for a, b in zip(copied, NOTEBOOKS))
    mine = target / "report.ipynb"
    mine.write_text("my edits")
    cli = [sys.executable, "-m", "cubescale", "notebooks", str(target)]
    done = subprocess.run(cli, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "--force" in done.stderr and "Traceback" not in done.stderr
    assert mine.read_text() == "my edits"
    done = subprocess.run(cli + ["--force"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "jupyter notebook" in done.stdout
    assert filecmp.cmp(mine, NOTEBOOKS[1], shallow=False)
    assert sorted(os.listdir(target)) == sorted(p.name for p in NOTEBOOKS)  # no temporaries left


def test_copying_into_a_file_is_an_os_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OSError):
        copy_notebooks(blocker / "nb")
