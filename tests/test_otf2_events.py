"""Events as DataFrames and the ``cubescale info`` summary of a trace."""

from __future__ import annotations

import numpy as np
import pytest
from otf2_oracle import SHARED_OTF2, have_otf2_print

import cubescale.trace as trace
from cubescale.cli import main

PAPI = SHARED_OTF2 / "ping-pong-papi" / "traces.otf2"
LSB = SHARED_OTF2 / "late-sender-barrier" / "traces.otf2"


def test_columns_and_dtypes():
    df = trace.events(PAPI)
    assert list(df.columns[:13]) == ["Timestamp (ns)", "Event Type", "Name", "Location", "Process", "Region",
                                     "Partner", "Communicator", "Tag", "Bytes", "Bytes Received", "Request", "Metric"]
    assert list(df.columns[13:]) == ["PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP", "Ticks"]
    assert df["Ticks"].dtype == np.uint64 and df["Bytes"].dtype == np.uint64
    assert df["Event Type"].dtype == "category" and df["Name"].dtype == "category"
    enters = df[df["Event Type"] == "ENTER"]
    assert (enters["Name"].astype(str).to_numpy()
            == trace.open(PAPI).regions["name"].to_numpy()[enters["Region"].to_numpy()]).all()
    assert df["Timestamp (ns)"].min() >= 0


def test_metric_values_match_otf2_print():
    if not have_otf2_print():
        pytest.skip("otf2-print not installed")
    import subprocess

    out = subprocess.run(["otf2-print", str(PAPI)], check=True, capture_output=True, text=True).stdout
    first = next(line for line in out.splitlines() if line.startswith("METRIC"))
    # METRIC  0  7396895680158984  Metric: 0, 3 Values: ("PAPI_TOT_CYC" <0>; UINT64; 98850), ...
    values = [int(part.split(";")[2].strip(" )")) for part in first.split("Values:")[1].split("),")]
    df = trace.events(PAPI, types=["METRIC"])
    row = df.iloc[0]
    assert int(row["Ticks"]) == int(first.split()[2])
    assert [int(row[c]) for c in ("PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP")] == values
    assert df[["PAPI_TOT_CYC"]].notna().all().all()
    assert trace.events(PAPI, types=["ENTER"])["PAPI_TOT_CYC"].isna().all()


def test_messages():
    df = trace.events(LSB, types=["MPI_SEND", "MPI_RECV"])
    sends, recvs = df[df["Event Type"] == "MPI_SEND"], df[df["Event Type"] == "MPI_RECV"]
    assert len(sends) == len(recvs) == 3
    # every send's (sender, receiver, tag, bytes) has a matching receive
    pairs_s = sorted(zip(sends["Location"], sends["Partner"], sends["Tag"], sends["Bytes"]))
    pairs_r = sorted(zip(recvs["Partner"], recvs["Location"], recvs["Tag"], recvs["Bytes"]))
    assert pairs_s == pairs_r
    coll = trace.events(LSB, types=["MPI_COLLECTIVE_END"])
    assert set(coll["Tag"]) == {0}  # OTF2_COLLECTIVE_OP_BARRIER


def test_filters():
    t = trace.open(LSB)
    everything = t.events()
    start, end = 5.0, 15.0
    window = t.events(time=(start, end))
    inside = everything[(everything["Timestamp (ns)"] >= start * 1e9) & (everything["Timestamp (ns)"] < end * 1e9)]
    assert len(window) == len(inside) > 0
    only = t.events(regions=["MPI_Barrier"], regions_only=True)
    assert set(only["Name"].astype(str)) == {"MPI_Barrier"} and len(only) == 8
    mixed = t.events(regions="MPI_Barrier")
    assert len(mixed) == len(only) + int((~everything["Event Type"].isin(["ENTER", "LEAVE"])).sum())
    assert set(t.events(locations=2)["Location"]) == {2}
    with pytest.raises(ValueError):
        t.events(types=["NO_SUCH_EVENT"])
    with pytest.raises(KeyError):
        t.events(regions="no such region")
    with pytest.raises(ValueError):
        t.events(locations=[99])


def test_info_summarizes_a_trace(capsys):
    assert main(["info", str(SHARED_OTF2 / "jacobi-hybrid" / "traces.otf2")]) == 0
    out = capsys.readouterr().out
    assert "10 locations in 2 location groups" in out
    assert "THREAD_TEAM_BEGIN" in out and "16,036" in out
    assert "CUDA[0:2]" in out and "accelerator_stream" in out
    assert "bytes_sent" in out  # the trace's metric members


def test_info_on_a_broken_trace(tmp_path, capsys):
    bad = tmp_path / "traces.otf2"
    bad.write_text("nothing")
    assert main(["info", str(bad)]) == 2
    assert "traces.otf2" in capsys.readouterr().err


def test_trace_profile_command(tmp_path, capsys):
    out = tmp_path / "p.cubex"
    assert main(["trace-profile", str(LSB), "-o", str(out)]) == 0
    assert out.exists() and "12 call paths, 4 locations" in capsys.readouterr().out
