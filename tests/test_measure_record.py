"""The measurement runtime on small programs: exact visit counts and nesting (recursion,
generators, exceptions unwinding through frames, threads, callbacks from C), filters and the
depth limit, manual regions, bytes and counters, and the time invariants of the profile."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from cubescale import measure


def _paths(profile) -> dict[tuple[str, ...], np.ndarray]:
    """Visits per call path (region names from the root) -> per-location visits."""
    regions = profile._core.regions
    parents = profile._core.cnode_parents()
    names = [regions[r].name for r in profile._core.cnode_regions()]
    visits = profile.values("visits")
    out: dict[tuple[str, ...], np.ndarray] = {}
    paths: list[tuple[str, ...]] = []
    for c, p in enumerate(parents):
        paths.append((paths[p] if p >= 0 else ()) + (names[c],))
        out[paths[c]] = visits[c]
    return out


def _measured(function, **options):
    measure.start(auto=True, **options)
    try:
        function()
    finally:
        measure.stop()
    return measure.profile()


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def test_recursion_counts_every_call_on_its_own_path():
    p = _measured(lambda: fib(4))
    paths = {k: int(v.sum()) for k, v in _paths(p).items() if k[-1] == "fib"}
    # fib(4) -> fib(3), fib(2) -> fib(2), fib(1), fib(1), fib(0) -> fib(1), fib(0)
    by_depth = {len(k): v for k, v in paths.items()}
    assert [by_depth[d] for d in sorted(by_depth)] == [1, 2, 4, 2]


def squares(n):
    for i in range(n):
        yield i * i


def test_generators_count_each_resumption():
    p = _measured(lambda: list(squares(3)))
    visits = {k[-1]: int(v.sum()) for k, v in _paths(p).items()}
    assert visits["squares"] == 4  # three values and the final StopIteration


def inner():
    raise KeyError("x")


def middle():
    inner()


def outer():
    try:
        middle()
    except KeyError:
        return "caught"


def after():
    return 1


def test_exceptions_unwind_every_frame():
    p = _measured(lambda: (outer(), after()))
    paths = {k: int(v.sum()) for k, v in _paths(p).items()}
    assert paths[next(k for k in paths if k[-3:] == ("outer", "middle", "inner"))] == 1
    # after() runs beside outer(), not inside a frame the exception left open
    after_paths = [k for k in paths if k[-1] == "after"]
    assert len(after_paths) == 1 and "outer" not in after_paths[0]


def key(x):
    return -x


def test_callbacks_from_c_nest_below_their_caller():
    def caller():
        return sorted([3, 1, 2], key=key)

    p = _measured(caller)
    paths = {k: int(v.sum()) for k, v in _paths(p).items()}
    k = next(k for k in paths if k[-1] == "key")
    assert paths[k] == 3 and k[-2] == "test_callbacks_from_c_nest_below_their_caller.<locals>.caller"
    with_c = _measured(caller, c_calls=True)
    paths_c = _paths(with_c)
    assert any(k[-2:] == ("builtins.sorted", "key") for k in paths_c)
    assert not any("stop" in name for k in paths_c for name in k)  # the measurement's own calls


def work(n):
    return sum(range(n))


def test_threads_are_their_own_locations():
    def run():
        threads = [threading.Thread(target=lambda k=k: [work(10) for _ in range(k + 1)], name=f"w{k}") for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    p = _measured(run)
    names = [n for n, _ in p.locations]
    assert names[0] == "Master thread" and sorted(names[1:]) == ["w0", "w1", "w2"]
    per_location = sum(v for k, v in _paths(p).items() if k[-1] == "work")
    assert sorted(int(x) for x in per_location) == [0, 1, 2, 3]


def test_filters_and_depth_limit():
    text = "SCOREP_REGION_NAMES_BEGIN\n EXCLUDE fib\nSCOREP_REGION_NAMES_END\n"
    p = _measured(lambda: (fib(3), work(5)), filter=text)
    assert not any("fib" in k for k in _paths(p))
    assert any(k[-1] == "work" for k in _paths(p))
    shallow = _measured(lambda: fib(6), depth_limit=3)
    paths = _paths(shallow)
    assert all(len(k) <= 3 or (len(k) == 4 and k[-1] == "COLLAPSE") for k in paths)  # Score-P's node below the limit
    assert any(k[-1] == "COLLAPSE" for k in paths)
    with pytest.raises(ValueError, match="unexpected 'BOGUS'"):
        measure.start(filter="SCOREP_REGION_NAMES_BEGIN\nBOGUS\nSCOREP_REGION_NAMES_END")


def test_mangled_rules_match_python_functions_by_name_and_unterminated_blocks_fail():
    # scorep-score -g's form; Python functions have no mangled name, so Score-P matches the name
    text = ("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\n    # name='fib'\n    MANGLED f\\ib\n"
            "SCOREP_REGION_NAMES_END\n")
    p = _measured(lambda: (fib(3), work(5)), filter=text)
    assert not any("fib" in k for k in _paths(p))
    assert any(k[-1] == "work" for k in _paths(p))
    with pytest.raises(ValueError, match="^filter line 2: SCOREP_REGION_NAMES_BEGIN without its SCOREP_REGION_NAMES_END$"):
        measure.start(filter="# generated\nSCOREP_REGION_NAMES_BEGIN\n  EXCLUDE fib\n")


def test_manual_regions_bytes_counters_and_time_invariants():
    measure.start()
    cells = measure.counter("cells", "#")
    with measure.region("outer"):
        for _ in range(3):
            with measure.region("inner"):
                measure.add_bytes(sent=10, received=4)
                cells(2.5)
                work(20000)
    measure.stop()
    p = measure.profile()
    paths = _paths(p)
    assert int(paths[("outer",)][0]) == 1 and int(paths[("outer", "inner")][0]) == 3
    assert int(p.values("bytes_sent")[1, 0]) == 30 and int(p.values("bytes_received")[1, 0]) == 12
    assert float(p.values("cells")[1, 0]) == 7.5
    time = p.values("time")  # inclusive
    assert time[0, 0] >= time[1, 0] > 0
    assert p.values("min_time")[1, 0] <= p.values("max_time")[1, 0] <= time[1, 0]


def test_time_invariants_on_an_automatic_profile():
    p = _measured(lambda: [fib(8) for _ in range(3)])
    time = p.values("time")[:, 0]
    parents = p._core.cnode_parents()
    exclusive = time.copy()
    for c, parent in enumerate(parents):
        if parent >= 0:
            exclusive[parent] -= time[c]
    assert (time >= 0).all() and (exclusive >= -1e-9).all()
    children = np.zeros_like(time)
    np.add.at(children, parents[parents >= 0], time[parents >= 0])
    assert (children <= time + 1e-9).all()
