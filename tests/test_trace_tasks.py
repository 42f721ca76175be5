"""OpenMP explicit tasks in traces (Score-P's OPARI2 events, written with OTF2's writer): the
profile puts a task's call paths below ``<program>/TASKS/<task region>`` and a pointer below
the barrier or taskwait that ran it, without the time the task was suspended; untied tasks
that interleave are read per task; the wait-state analysis runs on such a trace and keeps
the tasks' call paths (docs/traces.md, "OpenMP tasks")."""

from __future__ import annotations

import pytest

import cubescale
from cubescale import testing, trace

TASK, UNTIED = "!$omp task @synthetic.c:5", "!$omp task untied @synthetic.c:6"
BARRIER, WAIT = "!$omp implicit barrier @synthetic.c:2", "!$omp taskwait @synthetic.c:7"
TEAM = "tasks/main/!$omp parallel @synthetic.c:1"

# Thread 0 creates A and B, runs A in the implicit barrier; A waits at a taskwait while B runs.
TIED = [{"fork": 100, "join": 1000, "threads": [
    [("task_create", 110, 120, 0, 1), ("task_create", 130, 140, 0, 2), ("enter", 200, "ibarrier"),
     ("task_begin", 210, 0, 1, False), ("enter", 220, "work"), ("leave", 260, "work"), ("enter", 270, "taskwait"),
     ("task_begin", 280, 0, 2, False), ("enter", 290, "work"), ("leave", 330, "work"), ("task_end", 340, 0, 2, False),
     ("task_switch", 350, 0, 1), ("leave", 360, "taskwait"), ("task_end", 380, 0, 1, False),
     ("task_switch", 390, 0, 0), ("leave", 400, "ibarrier")],
    [("ibarrier", 200, 400)]]}]
# Untied U and V suspend each other inside their regions.
UNTIED_RUN = [{"fork": 100, "join": 1000, "threads": [
    [("enter", 200, "ibarrier"), ("task_begin", 210, 0, 1, True), ("enter", 220, "work"),
     ("task_begin", 230, 0, 2, True), ("enter", 240, "taskwait"), ("task_switch", 250, 0, 1), ("leave", 260, "work"),
     ("task_end", 270, 0, 1, True), ("task_switch", 280, 0, 2), ("leave", 290, "taskwait"),
     ("task_end", 300, 0, 2, True), ("leave", 400, "ibarrier")]]}]


def by_path(report, location=0):
    """{call path "a/b/c": (visits, inclusive ns)} of one location."""
    visits, time = report.values("visits", inclusive=False), report.values("time", inclusive=True)
    paths = {}
    for c in report.cnodes:
        paths[c.index] = c.region.name if c.parent is None else paths[c.parent] + "/" + c.region.name
    return {paths[c.index]: (int(visits[c.index, location]), round(float(time[c.index, location]) * 1e9))
            for c in report.cnodes}


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    d = tmp_path_factory.mktemp("tasks")
    testing.write_omp_trace(d, "tasks", TIED, threads=2, end=1100, main=(0, 1100))
    return d / "tasks.otf2"


def test_tied_tasks_are_placed_as_score_p_places_them(tied):
    got = by_path(trace.profile(tied))
    assert got[f"{TEAM}/{BARRIER}"] == (1, 200)
    assert got[f"{TEAM}/{BARRIER}/{TASK}"] == (3, 160)  # A's runs of 70 and 30 ns, B's of 60
    assert got["tasks/TASKS"] == (0, 160)
    assert got[f"tasks/TASKS/{TASK}"] == (2, 160)  # A: 170 ns less the 70 it waited for B
    assert got[f"tasks/TASKS/{TASK}/work"] == (2, 80)
    assert got[f"tasks/TASKS/{TASK}/{WAIT}"] == (1, 20)
    assert got["tasks"] == (1, 1100)
    assert not any(path.startswith(f"{TEAM}/{BARRIER}/{TASK}/") for path in got)


def test_untied_tasks_that_interleave_are_read_per_task(tmp_path):
    testing.write_omp_trace(tmp_path, "untied", UNTIED_RUN, threads=1, end=1100, main=(0, 1100))
    got = by_path(trace.profile(tmp_path / "untied.otf2"))
    assert got[f"untied/main/!$omp parallel @synthetic.c:1/{BARRIER}/{UNTIED}"] == (4, 80)
    assert got[f"untied/TASKS/{UNTIED}"] == (2, 80)
    assert got[f"untied/TASKS/{UNTIED}/work"] == (1, 20)
    assert got[f"untied/TASKS/{UNTIED}/{WAIT}"] == (1, 20)
    # The event table keeps the stream as recorded.
    events = trace.open(tmp_path / "untied.otf2").events()
    assert list(events["Event Type"]).count("THREAD_TASK_SWITCH") == 4


def test_the_analysis_keeps_the_tasks_call_paths(tied):
    report = cubescale.analyze(tied)
    got = by_path(report)
    assert got[f"tasks/TASKS/{TASK}"] == (2, 160)
    assert got[f"{TEAM}/{BARRIER}/{TASK}"] == (3, 160)
    assert report.metric("omp_ibarrier_wait") is not None


def test_a_worker_starting_while_the_master_runs_a_task_hangs_below_the_parallel_region(tmp_path):
    # The worker's team begins at 150, inside the master's task run (130-300): Score-P grafts
    # threads below the implicit task's call paths, never into a task.
    regions = [{"fork": 100, "join": 1000, "begin": [100, 150], "threads": [
        [("task_create", 105, 110, 0, 1), ("enter", 120, "ibarrier"), ("task_begin", 130, 0, 1, False),
         ("enter", 140, "work"), ("leave", 290, "work"), ("task_end", 300, 0, 1, False),
         ("task_switch", 300, 0, 0), ("leave", 400, "ibarrier")],
        [("ibarrier", 200, 400)]]}]
    testing.write_omp_trace(tmp_path, "graft", regions, threads=2, end=1100, main=(0, 1100))
    worker = by_path(trace.profile(tmp_path / "graft.otf2"), 1)
    assert worker["graft/main/!$omp parallel @synthetic.c:1"] == (1, 850)
    assert worker["graft"] == (0, 850)
    assert not any("TASKS" in path and value != (0, 0) for path, value in worker.items())


def test_barrier_waits_leave_out_the_tasks_run_while_waiting(tmp_path):
    # Thread 1 reaches the barrier at 390; thread 0 waited there from 200 but ran tasks for
    # 130 + 30 ns of it: 30 ns of waiting (scout's task correction), not 190.
    late = [dict(TIED[0], threads=[TIED[0]["threads"][0], [("ibarrier", 390, 400)]])]
    testing.write_omp_trace(tmp_path, "late", late, threads=2, end=1100, main=(0, 1100))
    report = cubescale.analyze(tmp_path / "late.otf2")
    wait = report.values("omp_ibarrier_wait", inclusive=False)
    barrier = next(c.index for c in report.cnodes if c.region.name == BARRIER)
    assert round(float(wait[barrier, 0]) * 1e9) == 30
    assert round(float(wait[:, 1].sum()) * 1e9) == 0


@pytest.mark.parametrize("untied", [False, True])
def test_root_causes_and_the_critical_path_run_on_task_traces(tmp_path, untied):
    regions = [{"fork": 100, "join": 1000, "threads": [
        [("enter", 200, "ibarrier"), ("task_begin", 210, 0, 1, untied), ("enter", 220, "work"), ("leave", 260, "work"),
         ("task_end", 270, 0, 1, untied), ("leave", 400, "ibarrier")],
        [("ibarrier", 300, 400)]]}]
    testing.write_omp_trace(tmp_path, "one", regions, threads=2, end=1100, main=(0, 1100))
    report = cubescale.analyze(tmp_path / "one.otf2", root_cause=True, threads=1)  # one pass: the light second pass
    got = by_path(report)
    region = UNTIED if untied else TASK
    assert got[f"one/TASKS/{region}"] == (1, 60)
    assert float(report.values("critical_path", inclusive=False).sum()) > 0
    assert "delay_ompbarrier" in [m.name for m in report.metrics]

