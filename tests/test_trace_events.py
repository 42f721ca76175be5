"""Events as DataFrames and the ``cubescale info`` summary of a trace."""

from __future__ import annotations

import numpy as np
import pytest
from otf2_oracle import SHARED_OTF2, have_otf2_print

from cubescale import FormatError, trace
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


def test_timestamps_and_windows_in_whole_ticks():
    # openmp-nested's ticks are ~9.5e16 (nanoseconds since the epoch), beyond a float's 2^53: the
    # offset is taken in whole ticks first, so every timestamp is exact and a window around an
    # event's own time finds it.
    from fractions import Fraction

    t = trace.open(SHARED_OTF2 / "openmp-nested" / "traces.otf2")
    resolution, offset, _ = t.clock
    assert offset > 2**53
    df = t.events()
    exact = [Fraction((int(tick) - offset) * 10**9, resolution) for tick in df["Ticks"]]
    assert max(abs(Fraction(ns) - x) for ns, x in zip(df["Timestamp (ns)"].tolist(), exact)) < Fraction(1, 1000)
    for s, location in zip(df["Timestamp (ns)"].to_numpy()[::7] / 1e9, df["Location"].to_numpy()[::7]):
        window = t.events(locations=[int(location)], time=(s, s))  # both ends kept
        assert len(window) and (window["Timestamp (ns)"] == s * 1e9).all()


@pytest.mark.parametrize("name", ["ping-pong-papi", "bcast-scorep8", "late-sender-barrier"])
def test_the_whole_duration_keeps_every_event(name):
    t = trace.open(SHARED_OTF2 / name / "traces.otf2")
    assert len(t.events(time=(0, t.duration))) == len(t.events())


def test_the_api_opens_an_experiment_directory_and_names_what_else_it_is_given(tmp_path):
    # As the command line takes them (docs/trace.md: "by its anchor or its experiment directory").
    by_directory = trace.open(SHARED_OTF2 / "ping-pong")
    assert by_directory.path.endswith("traces.otf2") and len(by_directory.events()) == len(trace.events(
        SHARED_OTF2 / "ping-pong" / "traces.otf2"))
    assert trace.open(SHARED_OTF2 / "integrity").path.endswith("TestTrace.otf2")  # its one anchor
    for given, words in ((SHARED_OTF2 / "late-sender-barrier" / "profile.cubex", "a CUBE4 report"),
                         (SHARED_OTF2 / "ping-pong" / "traces.def", "not the trace's anchor"),
                         (SHARED_OTF2 / "ping-pong" / "traces" / "0.evt", "not the trace's anchor")):
        with pytest.raises(FormatError, match=words):
            trace.open(given)
    assert main(["info", str(SHARED_OTF2 / "integrity")]) == 0


def test_info_says_each_warning_once(capsys):
    # OTF2's integrity trace puts its 4 locations in an undefined group: one line, with its count.
    assert main(["info", str(SHARED_OTF2 / "integrity" / "TestTrace.otf2")]) == 0
    warned = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert warned == ["warning: reference to undefined location group 0 (4 times)"]


@pytest.mark.skipif(not have_otf2_print(), reason="otf2-print not installed")
def test_event_type_names_are_otf2_prints():
    # otf2-print names every record it lists; its names are NUL-terminated strings in its binary
    # (a name may share its tail with a longer one: LEAVE with CALLING_CONTEXT_LEAVE). Three of
    # ours were OTF2's callback names before 2026-11-28: PARAMETER_INT, PARAMETER_UNSIGNED_INT,
    # IO_CHANGE_STATUS_FLAGS for otf2-print's PARAMETER_INT64, PARAMETER_UINT64, IO_CHANGE_FLAGS.
    import shutil
    from pathlib import Path

    binary = Path(shutil.which("otf2-print") or "").read_bytes()
    assert [n for n in trace.EVENT_TYPES if f"{n}\0".encode() not in binary] == []
    assert {"PARAMETER_INT64", "PARAMETER_UINT64", "IO_CHANGE_FLAGS"} <= set(trace.EVENT_TYPES)
    assert len(trace.EVENT_TYPES) == len(set(trace.EVENT_TYPES)) == 79
    t = trace.open(LSB)  # the old spellings are still taken as filters
    old = t.events(types=["PARAMETER_INT", "PARAMETER_UNSIGNED_INT", "IO_CHANGE_STATUS_FLAGS", "MPI_SEND"])
    assert old.equals(t.events(types=["PARAMETER_INT64", "PARAMETER_UINT64", "IO_CHANGE_FLAGS", "MPI_SEND"]))
    assert len(old) > 0


def test_the_reference_fields_of_every_event_kind_that_has_them():
    # As otf2-print shows them: the communicator of COMM_CREATE/_DESTROY, the window of
    # RMA_WIN_CREATE/_DESTROY (its OTF2 id, as the transfers'), the paradigm of THREAD_JOIN.
    bcast = trace.open(SHARED_OTF2 / "bcast-scorep8" / "traces.otf2")
    names = bcast.table("communicators")["name"].tolist()
    made = bcast.events(types=["COMM_CREATE", "COMM_DESTROY"])
    assert len(made) and (made["Communicator"] >= 0).all()
    assert {names[c] for c in made["Communicator"]} >= {"MPI_COMM_WORLD", "MPI_COMM_SELF"}
    hybrid = trace.open(SHARED_OTF2 / "jacobi-hybrid" / "traces.otf2")
    windows = hybrid.events(types=["RMA_WIN_CREATE", "RMA_WIN_DESTROY", "RMA_PUT"])
    kinds = windows.groupby("Event Type", observed=True)["Communicator"].agg(lambda c: set(c.tolist()))
    assert len(kinds) == 3 and kinds["RMA_WIN_CREATE"] == kinds["RMA_WIN_DESTROY"] >= kinds["RMA_PUT"]
    assert -1 not in kinds["RMA_WIN_CREATE"]
    joins = hybrid.events(types=["THREAD_FORK", "THREAD_JOIN"])
    assert set(joins["Tag"].tolist()) == {3}  # OTF2_PARADIGM_OPENMP, the fork's and the join's


def test_trace_profile_warns_of_regions_left_open(tmp_path, capsys):
    # A run cut short leaves regions open: the profile closes them at the last event, as Score-P
    # does, and the command says so in one line (one process and under mpirun).
    import subprocess
    import sys

    from cubescale import testing
    from cubescale.mpirun import local_environment

    testing.write_ring_trace(tmp_path, "cut", processes=2, iterations=5, defect="unclosed")
    assert main(["trace-profile", str(tmp_path / "cut.otf2"), "-o", str(tmp_path / "a.cubex")]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warned) == 1 and "2 regions were still open" in warned[0], warned
    assert main(["trace-profile", str(LSB), "-o", str(tmp_path / "b.cubex")]) == 0
    assert "warning" not in capsys.readouterr().err
    done = subprocess.run(["timeout", "-k", "5", "200", "mpirun", "-q", "-n", "2", sys.executable, "-m", "cubescale",
                           "trace-profile", str(tmp_path / "cut.otf2"), "-o", str(tmp_path / "c.cubex")],
                          env=local_environment(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=250)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "warning" in line] == warned


@pytest.mark.parametrize("options", [["-m", "time"], ["--depth", "4", "--exclusive"], ["-v"]])
def test_info_of_a_trace_refuses_the_options_of_a_report(options, capsys):
    # They were ignored silently: a trace's summary has no call tree to show a metric on.
    assert main(["info", str(LSB), *options]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "to a report; a trace's summary has no call tree" in err[0] and options[0] in err[0]


def test_a_frame_larger_than_the_memory_is_refused_before_reading(monkeypatch):
    """events() without a filter on more events than fit (CUBESCALE_MEMORY_AVAILABLE stands for
    a job's share of a node): a MemoryError naming the need and what to do, before any reading;
    a filter, or enough memory, reads as before."""
    t = trace.open(SHARED_OTF2 / "jacobi-hybrid" / "traces.otf2")
    monkeypatch.setenv("CUBESCALE_MEMORY_AVAILABLE", str(10 * 2**20))  # 10 MiB for 300,816 events
    with pytest.raises(MemoryError, match=r"the 300,816 events of these locations need about 0\.\d GiB .* "
                                          r"choose fewer locations"):
        t.events()
    assert t._core.events_read() == 0
    assert len(t.events(types=["MPI_SEND"])) > 0  # a filter's share is not known before: read
    monkeypatch.setenv("CUBESCALE_MEMORY_AVAILABLE", str(2**30))
    assert len(t.events()) == 300_816
