"""The command line: cubescale info / dump / convert."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

import cubescale
from cubescale.cli import main

# ../shared/data beside the checkout, unless CUBESCALE_SHARED_DATA says otherwise.
DATA = os.path.join(os.environ.get("CUBESCALE_SHARED_DATA", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")), "cubex")


def test_info(capsys):
    assert main(["info", os.path.join(DATA, "blast.p64.cubex")]) == 0
    out = capsys.readouterr().out
    assert "15 metrics, 32 call paths, 64 locations" in out
    assert "6278914" in out  # all visits


def test_dump_matches_values(capsys):
    path = os.path.join(DATA, "time.p4.cubex")
    assert main(["dump", path, "--metric", "visits", "--metric", "time", "--inclusive"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    report = cubescale.open(path)
    assert len(rows) == report.shape[0] * report.shape[1]
    visits, time = report.values("visits"), report.values("time")
    for row in rows:
        c, loc = int(row["cnode"]), int(row["location"])
        assert int(row["visits"]) == visits[c, loc]
        assert float(row["time"]) == time[c, loc]


def test_dump_one_cnode_by_region_name(capsys):
    assert main(["dump", os.path.join(DATA, "call_tree_test.cubex"), "--metric", "visits", "--cnode", "main"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # beside the indices: the call path, the process (name, rank) and the thread (name, rank)
    assert lines[0] == "cnode,cnode_id,region,call_path,location,process,process_rank,thread,thread_rank,visits"
    assert lines[1] == "1,1,main,test.x/main,0,Process,0,Master thread,0,1"


def test_dump_writes_scale_functions_as_text(capsys):
    path = os.path.join(DATA, "all_dtypes.cubex")
    assert main(["dump", path, "--metric", "SCALE_FUNC3", "--inclusive", "--cnode", "0"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    values = cubescale.open(path).values("SCALE_FUNC3", inclusive=True)
    assert [row["SCALE_FUNC3"] for row in rows] == [str(cubescale.scale_func.decode(v)) for v in values[0]]
    # main's inclusive function at location 0 sums all three call paths' terms
    assert rows[0]["SCALE_FUNC3"].startswith("2*x^(5/6)*log2(x)^7 + 1*x^(4/5)*log2(x)^6 + ")


def test_convert_compressed(tmp_path, capsys):
    out = tmp_path / "z.cubex"
    src = os.path.join(DATA, "l2dcm.p128.cubex")
    assert main(["convert", src, str(out), "--compress"]) == 0
    assert "converted" in capsys.readouterr().err
    assert out.stat().st_size < os.path.getsize(src)
    a, b = cubescale.open(src), cubescale.open(out)
    for m in a.metrics:
        assert (a.values(m, None) == b.values(m, None)).all()


@pytest.mark.parametrize("command", ["info", "dump", "convert"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_closed_pipe_is_quiet():
    # `cubescale dump ... | head -1`: the reader leaves early; no traceback, no message, and
    # the exit status a shell reports for a tool stopped by SIGPIPE.
    proc = subprocess.Popen([sys.executable, "-m", "cubescale.cli", "dump", os.path.join(DATA, "blast.p64.cubex")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"cnode,cnode_id,region,call_path,location")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert err == ""
    assert proc.returncode == 141


def test_unknown_metric_is_a_clear_error_not_a_traceback(capsys):
    path = os.path.join(DATA, "all_dtypes.cubex")
    assert main(["dump", path, "--metric", "time"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cubescale: error: no metric 'time'; metrics are INT8")
    assert "Traceback" not in err
