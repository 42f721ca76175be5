"""The ``cubescale systree`` command, run as a real subprocess."""

import json
import subprocess
import sys

from cubescale.systree import SystemTree


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

