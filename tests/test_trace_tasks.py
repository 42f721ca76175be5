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
