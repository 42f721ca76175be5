"""A measurement's life: start() hooks every thread that runs (a thread pool made before it
included, each its own named location), stop() unhooks every thread (threads that go on
running record nothing more), region ids outlive start(), and Score-P's file-name block
filters Python functions by their source file."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from cubescale import measure
from cubescale._core import measure as _measure


def tick():
    return 1


def _visits(profile, name: str) -> np.ndarray:
    regions, cnode_regions = profile._core.regions, profile._core.cnode_regions()
    rows = [c for c, r in enumerate(cnode_regions) if regions[r].name == name]
    return profile.values("visits")[rows].sum(axis=0)


def _by_location(profile, name: str) -> dict[str, int]:
    return {loc: int(v) for (loc, _), v in zip(profile.locations, _visits(profile, name))}


def test_stop_unhooks_threads_that_keep_running():
    stop, started = threading.Event(), threading.Event()

    def loop():
        started.set()
        while not stop.is_set():
            tick()
            time.sleep(0.0005)

    measure.start(auto=True)
    worker = threading.Thread(target=loop, name="looper")
    worker.start()
    started.wait()
    time.sleep(0.02)
    measure.stop()
    first = _by_location(measure.profile(), "tick")
    time.sleep(0.05)  # the looper goes on calling tick()
    later = _by_location(measure.profile(), "tick")
    stop.set()
    worker.join()
    assert first["looper"] > 0
    assert later == first


def test_threads_running_before_start_are_recorded_under_their_names():
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="early") as pool:
        pool.submit(tick).result()  # the worker exists and waits for work
        measure.start(auto=True)
        for _ in range(5):
            pool.submit(tick).result()
        measure.stop()
    visits = _by_location(measure.profile(), "tick")
    assert visits == {"Master thread": 0, "early_0": 5}


def test_a_region_registered_before_start_names_the_same_region_after_it():
    early = measure.region("registered early")
    region_id = early._region()
    measure.start()  # a new measurement: the registry carries over
    assert _measure.region("registered early", early.file, early.line, "user", "function") == region_id
    with early:
        pass
    measure.stop()
    assert [r.name for r in measure.profile()._core.regions] == ["registered early"]


def test_the_file_block_filters_functions_by_source_file():
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "helpers_module.py")
    with open(path, "w") as f:
        f.write("def helper():\n    return 2\n")
    namespace: dict = {}
    exec(compile(open(path).read(), path, "exec"), namespace)

    def caller():
        return namespace["helper"]() + tick()

    text = f"SCOREP_FILE_NAMES_BEGIN\n EXCLUDE {folder}/*\nSCOREP_FILE_NAMES_END\n"
    measure.start(auto=True, filter=text)
    caller()
    measure.stop()
    names = {r.name for r in measure.profile()._core.regions}
    assert "tick" in names and "helper" not in names
    measure.start(auto=True)  # without the filter the same function is a region again
    caller()
    measure.stop()
    assert "helper" in {r.name for r in measure.profile()._core.regions}


def test_the_measurements_own_functions_are_never_regions():
    measure.start(auto=True, c_calls=True)
    bytes_counter = measure.counter("work items")
    with measure.region("manual"):
        measure.add_bytes(sent=1)
        bytes_counter(3)
        tick()
    measure.stop()
    names = {r.name for r in measure.profile()._core.regions}
    assert {"manual", "tick"} <= names
    files = {r.module for r in measure.profile()._core.regions}
    assert measure.__file__ not in files
