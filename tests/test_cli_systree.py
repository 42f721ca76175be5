"""The ``cubescale systree`` command, run as a real subprocess."""

import json
import shutil
import subprocess
import sys

import pytest

from cubescale.systree import SingleNodeTree, SystemTree


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "cubescale.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_help():
    out = run("--help")
    assert out.returncode == 0 and "systree" in out.stdout
    out = run("systree", "--help")
    assert out.returncode == 0 and "--shape" in out.stdout and "juqueen" in out.stdout


def test_juqueen_sizes(tmp_path):
    out = run("systree", "--shape", "juqueen", "--json-out", str(tmp_path / "j.json"),
              "--bytes-out", str(tmp_path / "j.bin"))
    assert out.returncode == 0, out.stderr
    assert "machine ×1 > rack ×28 > midplane ×2 > nodeboard ×16 > node ×32 > process ×64" in out.stdout
    assert "1,835,008" in out.stdout
    tree = SystemTree.from_shape("juqueen")
    assert f"{tree.nbytes:,} bytes" in out.stdout
    assert f"{tree.single_nbytes:,} bytes" in out.stdout
    assert SystemTree.from_json((tmp_path / "j.json").read_text()) == tree
    out2 = run("systree", "--input", str(tmp_path / "j.bin"), "--quiet")
    assert out2.returncode == 0 and out2.stdout.strip() == tree.render()


def test_local_synthetic():
    out = run("systree", "--local", "--synthetic", "pack:2 core:2 pu:2", "--cpus", "0", "--threads", "4")
    assert out.returncode == 0, out.stderr
    assert "process ×1 > thread ×4" in out.stdout


def test_bad_input_exits_2(tmp_path):
    out = run("systree", "--shape", "node:zero")
    assert out.returncode == 2 and "bad shape" in out.stderr
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"CSSEQTRE\x01\x00\x05")
    out = run("systree", "--input", str(bad))
    assert out.returncode == 2 and "bad.bin" in out.stderr and "offset" in out.stderr
    (tmp_path / "bad.json").write_text(json.dumps({"format": "cubescale-systree", "version": 1}))
    out = run("systree", "--json", str(tmp_path / "bad.json"))
    assert out.returncode == 2 and "bad record" in out.stderr



SYNTHETIC = "pack:2 l3:1 core:4 pu:2"


def _hwloc_calc_pus(*locations):
    """PUs (physical = logical on a synthetic machine) as hwloc-calc reads `locations`."""
    out = subprocess.run(["hwloc-calc", "-i", SYNTHETIC, "--pi", *locations, "--intersect", "pu"],
                         capture_output=True, text=True, timeout=60)
    return out.stdout.strip()


@pytest.mark.skipif(shutil.which("hwloc-calc") is None, reason="hwloc-calc is not installed")
@pytest.mark.parametrize("cpus, locations", [
    ("0x3", ["0x3"]),  # hwloc's bitmask: PUs 0 and 1, not PU 3
    ("0xf0", ["0xf0"]),
    ("0-1,5", ["pu:0-1", "pu:5"]),
    ("6-7", ["pu:6-7"]),
])
def test_cpus_are_the_pus_hwloc_calc_names(cpus, locations):
    ours = SingleNodeTree.local(synthetic=SYNTHETIC, cpus=cpus, host="h")
    process = next(i for i in range(len(ours)) if ours.class_name(i) == "process")
    parent = ours.parent(process)
    expected = SingleNodeTree.local(synthetic=SYNTHETIC, cpus=_hwloc_calc_pus(*locations), host="h")
    assert expected.parent(process) == parent


@pytest.mark.parametrize("cpus, message", [
    ("100", "PU 100 is not in this machine (PUs 0-15)"),
    ("0-1,100", "PU 100 is not in this machine (PUs 0-15)"),
    ("5-3", "range '5-3' is reversed (PUs 0-15)"),
    ("0-1,x", "'x' is no PU or range (PUs 0-15)"),
    ("0x10000", "PU 16 is not in this machine (PUs 0-15)"),
    ("", "--cpus needs a list"),
])
def test_cpus_outside_the_machine_are_one_line_errors(cpus, message):
    out = run("systree", "--local", "--synthetic", SYNTHETIC, "--cpus", cpus)
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    if cpus:
        assert f"'{cpus}'" in out.stderr  # names the list


@pytest.mark.parametrize("threads", ["0", "-1", "4294967296", str((1 << 20) + 1)])
def test_threads_out_of_range_is_a_usage_error(threads):
    out = run("systree", "--local", "--synthetic", SYNTHETIC, "--threads", threads)
    assert out.returncode == 2 and f"--threads {threads}: a process has 1 to 1048576 threads" in out.stderr
    assert "Traceback" not in out.stderr


def test_local_options_without_local_are_refused():
    out = run("systree", "--shape", "juqueen", "--threads", "4")
    assert out.returncode == 2 and "--threads goes with --local" in out.stderr
    out = run("systree", "--shape", "juqueen", "--cpus", "0", "--synthetic", SYNTHETIC)
    assert out.returncode == 2 and "--synthetic, --cpus go with --local" in out.stderr


def test_library_refuses_a_process_without_threads():
    with pytest.raises(ValueError, match="at least 1 thread"):
        SingleNodeTree.local(synthetic=SYNTHETIC, threads=0)
