"""`cubescale info` holds one metric's matrix at a time, and none for metrics whose file has no
values: the metrics without values members of the shared reports (Score-P leaves them out)
stay unloaded, a report of 8 metrics peaks at about one matrix over a small report, and an
anchor naming 20,000 call paths and 20,000 locations (3.2 GB per matrix) without values is
summed up under a 1 GiB address-space limit; with values, the error is one line that says what
the matrix needs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import SHARED_DATA
from tar_members import archive, read_members

import cubescale
from cubescale import report as cube
from cubescale.systree import SystemTree

CUBEX = SHARED_DATA / "cubex"
REPORTS = sorted(p.name for p in CUBEX.glob("*.cubex"))

# The command line in a child whose address space may grow by LIMIT bytes once cubescale is imported.
LIMITED = """
import resource, sys
from cubescale.cli import main
def size():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size() + int(sys.argv[1]), resource.RLIM_INFINITY))
sys.exit(main(sys.argv[2:]))
"""


def without_values(path) -> set[int]:
    """Indices of the stored metrics that have no N.data member, by the tests' own tar reader."""
    members = read_members(str(path))
    r = cubescale.open(path)
    return {i for i, d in enumerate(r._core.metrics())
            if not r.metrics[i].derived and f"{d.file_id}.data" not in members}


@pytest.mark.parametrize("name", REPORTS)
def test_metrics_without_values_are_found_as_the_core_reads_them(name):
    """The metrics the report takes as having no values are exactly those without members
    (tests/tar_members.py reads the archive independently), and the core reads them as zero."""
    path = CUBEX / name
    r = cubescale.open(path)
    found = {m.index for m in r.metrics if r._stores_no_values(m)}
    assert found == without_values(path)
    for i in found:
        assert not np.asarray(r.values(i, inclusive=None)).any() and not r._core.present(i, None).any()


@pytest.mark.parametrize("name", ["call_tree_test.cubex", "mm.zcubex.cubex"])
def test_metrics_without_values_need_no_matrix(name):
    """Totals, call tree, present rows and ignored bytes of a metric without values members
    are zero without loading a matrix; values given later count."""
    r = cubescale.open(CUBEX / name)
    empty = sorted(without_values(CUBEX / name))
    assert empty  # Score-P left out bytes_put, bytes_get ... (mm.zcubex: two of them)
    totals = r.metric_totals()
    for i in empty:
        assert totals[i] == 0 and not r.cnode_values(i, inclusive=False).any() and not r.present(i).any()
        assert r.ignored_bytes(i) == 0
        assert "(zero everywhere)" in r.call_tree_text(i, hide_zero=True)
        assert not r._core.loaded(i), r.metrics[i].name
    m = r.metrics[empty[0]]
    r.set_values(m, np.ones(r.shape, dtype=cubescale.dtypes.numpy_type(m.dtype)[0]))
    assert r.cnode_values(m, inclusive=False).tolist() == [float(r.shape[1])] * r.shape[0]


# The command line in a child that reports its peak resident memory (VmHWM: of this program
# alone, unlike the rusage of a forked child, which starts from its parent's peak) on stderr.
PEAK = """
import contextlib, os, sys
from cubescale.cli import main
with open(os.devnull, "w") as out, contextlib.redirect_stdout(out):
    status = main(sys.argv[1:])
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")), file=sys.stderr)
sys.exit(status)
"""


def peak_kib(*args: str) -> int:
    """Peak resident memory (KiB) of the command line ``ARGS`` in a child; it must succeed."""
    done = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stderr
    return int(done.stderr.split()[-1])


def test_info_holds_one_metric_at_a_time(tmp_path):
    """8 metrics of 16 MB (1000 call paths x 2000 locations) written by cubescale's writer: info
    peaks below 3 matrices over info of a small shared report (it held all 8: about 128 MB)."""
    b = cubescale.ReportBuilder(SystemTree.from_shape("node:10 process:50 thread:4"))
    for i in range(8):
        b.add_metric(f"m{i}", unit="sec", kind="INCLUSIVE" if i == 1 else "EXCLUSIVE")
    regions = [b.add_region(f"r{i}") for i in range(50)]
    root = b.add_cnode(regions[0])
    for i in range(1, 1000):
        b.add_cnode(regions[i % 50], parent=root)
    r = b.build()
    rng = np.random.default_rng(1)
    for i in range(8):
        r.set_values(f"m{i}", rng.random(r.shape) + 0.5)
    path = tmp_path / "large.cubex"
    cubescale.write(r, path)
    del r
    matrix = 1000 * 2000 * 8 // 1024
    base = peak_kib("info", str(CUBEX / "time.p4.cubex"))
    large = peak_kib("info", str(path))
    assert large - base < 3 * matrix, (base, large, matrix)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """anchor.xml naming 20,000 call paths and 20,000 locations: with one row of values per
    metric (as our writer writes zeros), and without any values members."""
    folder = tmp_path_factory.mktemp("hostile")
    b = cubescale.ReportBuilder(SystemTree.from_shape("node:100 process:50 thread:4"))
    for name in ("visits", "time", "min_time", "bytes"):
        b.add_metric(name, unit="x", dtype="MINDOUBLE" if name == "min_time" else "DOUBLE")
    regions = [b.add_region(f"r{i}") for i in range(100)]
    root = b.add_cnode(regions[0])
    for i in range(1, 20000):
        b.add_cnode(regions[i % 100], parent=root)
    full = folder / "rows.cubex"
    cubescale.write(b.build(), full)
    members = read_members(str(full))
    empty = folder / "empty.cubex"
    empty.write_bytes(archive({k: v for k, v in members.items() if not k.endswith((".index", ".data"))}))
    return full, empty


def limited(limit: int, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LIMITED, str(limit), *map(str, args)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)


def test_info_of_a_huge_anchor_without_values_needs_no_matrix(hostile):
    """It ended in 'out of memory: std::bad_alloc' after half its output."""
    _, empty = hostile
    assert cube.open(empty).shape == (20000, 20000)
    done = limited(1 << 30, "info", empty)
    assert done.returncode == 0, done.stderr
    assert "  visits [exclusive, DOUBLE]  0 x" in done.stdout and "(zero everywhere)" in done.stdout


def test_info_of_a_huge_anchor_with_values_says_what_a_matrix_needs(hostile):
    full, _ = hostile
    done = limited(1 << 30, "info", full)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == ["cubescale: error: out of memory: metric visits: its values, 20000 call paths "
                                        "x 20000 locations x 8 bytes, need 3.0 GiB"]
