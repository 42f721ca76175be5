"""Local profiles and their unification in one process (the same C++ kernels and spanning
tree as under MPI): the global definitions do not depend on how many profiles there are or
in which order the ranks hold them, the maps send every local call path to the global call
path with the same path of (region, parameters), and collating a real report re-creates it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from mpi4py import MPI
from profile_strategies import ALL_DTYPES, REGIONS, random_profile

import cubescale
from cubescale._core import profile as _profile
from cubescale.parallel import CollectiveError, write_report
from cubescale.profile import LocalProfile, Metric, Region


def _paths(parents, keys):
    out = []
    for c, p in enumerate(parents):
        out.append((out[p] if p >= 0 else ()) + (keys[c],))
    return out


def _local_paths(profile):
    core = profile._core
    keys = [(REGIONS[r], tuple(sorted((a["parkey"], a["parvalue"]) for a in core.parameters(c))))
            for c, r in enumerate(core.cnode_regions().tolist())]
    return _paths(core.cnode_parents().tolist(), keys)


def _named_paths(profile):
    """Call paths by region name and parameters (a merged profile's regions are in canonical
    order, not the pool's)."""
    core = profile._core
    names = [r.name for r in core.regions]
    keys = [(names[r], tuple(sorted((a["parkey"], a["parvalue"]) for a in core.parameters(c))))
            for c, r in enumerate(core.cnode_regions().tolist())]
    return _paths(core.cnode_parents().tolist(), keys)


def _unify(profiles):
    return _profile.unify_in_process([p._core for p in profiles])


@pytest.mark.parametrize("seed", range(4))
def test_global_definitions_do_not_depend_on_rank_order(seed):
    profiles = [random_profile(seed, r, ALL_DTYPES) for r in range(7)]
    reference = _unify(profiles)["definitions"]
    rng = np.random.default_rng(seed)
    for _ in range(5):
        order = rng.permutation(len(profiles))
        assert _unify([profiles[i] for i in order])["definitions"] == reference


def test_global_call_tree_is_the_union_in_canonical_preorder():
    profiles = [random_profile(3, r, ALL_DTYPES) for r in range(6)]
    result = _unify(profiles)
    regions = [r.name for r in result["regions"]]
    assert regions == sorted(regions)
    parents = result["cnode_parents"].tolist()
    assert all(p < c for c, p in enumerate(parents))
    global_paths = _paths(parents, [(regions[r],) for r in result["cnode_regions"].tolist()])
    union = set()
    for rank, profile in enumerate(profiles):
        local = _local_paths(profile)
        union |= {tuple(k[0] for k in p) for p in local}
        for c, g in enumerate(result["cnode_maps"][rank].tolist()):
            assert global_paths[g] == tuple((k[0],) for k in local[c])
    assert {tuple(k[0] for k in p) for p in global_paths} == union
    # Siblings are ordered by region, then parameters.
    for p in set(parents):
        kids = [c for c, q in enumerate(parents) if q == p]
        assert [result["cnode_regions"][k] for k in kids] == sorted(result["cnode_regions"][k] for k in kids)


def test_unification_takes_log_p_rounds():
    profiles = [random_profile(1, r % 5, ALL_DTYPES) for r in range(64)]
    assert _unify(profiles)["rounds"] == 7  # a binary tree over 64 ranks has 7 levels
    assert _unify(profiles[:1])["rounds"] == 1


def test_metric_order_kept_when_all_agree_sorted_otherwise():
    def profile(names):
        return LocalProfile([Metric(name=n) for n in names], [Region(name="main")], [-1], [0],
                            [("t", "thread")], [np.zeros((1, 1)) for _ in names])

    same = _unify([profile(["time", "visits", "bytes"])] * 3)
    assert [m.name for m in same["metrics"]] == ["time", "visits", "bytes"]
    mixed = _unify([profile(["time", "visits"]), profile(["visits", "bytes"])])
    assert [m.name for m in mixed["metrics"]] == ["bytes", "time", "visits"]
    assert _unify([profile(["visits", "bytes"]), profile(["time", "visits"])])["definitions"] == mixed["definitions"]


def test_conflicting_definitions_and_duplicate_siblings_are_named():
    a = LocalProfile([Metric(name="time")], [Region(name="main")], [-1], [0],
                     [("t", "thread")], [np.zeros((1, 1))])
    b = LocalProfile([Metric(name="time", dtype="UINT64")], [Region(name="main")], [-1], [0],
                     [("t", "thread")], [np.zeros((1, 1), dtype=np.uint64)])
    with pytest.raises(ValueError, match="time is defined differently"):
        _unify([a, b])
    twins = LocalProfile([Metric(name="time")], [Region(name="main"), Region(name="f")],
                         [-1, 0, 0], [0, 1, 1], [("t", "thread")], [np.zeros((3, 1))])
    with pytest.raises(ValueError, match="siblings with the same region"):
        _unify([twins])
    with pytest.raises(CollectiveError, match="siblings with the same region"):
        write_report(MPI.COMM_SELF, twins, "/nonexistent/never.cubex")


def test_local_profile_rejects_bad_parts():
    with pytest.raises(ValueError, match="shape"):
        LocalProfile([Metric(name="t")], [Region(name="m")], [-1], [0], [("t", "thread")],
                     [np.zeros((2, 1))])
    with pytest.raises(ValueError, match="calls region 3"):
        LocalProfile([Metric(name="t")], [Region(name="m")], [-1], [3], [("t", "thread")],
                     [np.zeros((1, 1))])
    with pytest.raises(ValueError, match="not preorder"):
        LocalProfile([Metric(name="t")], [Region(name="m")], [-1, 1], [0, 0],
                     [("t", "thread")], [np.zeros((2, 1))])


@pytest.mark.parametrize("name", ["bt-mz.p2x4.bad_checksums.cubex", "time.p4.cubex", "all_dtypes.cubex"])
def test_collating_a_real_report_in_one_process_keeps_every_value(name, tmp_path, shared_data):
    source = cubescale.open(shared_data / "cubex" / name)
    profile = LocalProfile.from_report(source)
    out = tmp_path / "again.cubex"
    write_report(MPI.COMM_SELF, profile, out, block_bytes=4096)
    again = cubescale.open(out)
    assert again.shape == source.shape
    # Call paths by their path of region names (the global order is canonical, not the file's).
    def keyed(report):
        keys = [(c.region.name, tuple(tuple(sorted(a.items())) for a in report.cnode_parameters(c.index)))
                for c in report.cnodes]
        return _paths([c.parent if c.parent is not None else -1 for c in report.cnodes], keys)
    row = {p: i for i, p in enumerate(keyed(again))}
    rows = [row[p] for p in keyed(source)]
    for m in source.metrics:
        mine = np.asarray(again.values(m.name, inclusive=None))[rows]
        assert mine.tobytes() == np.asarray(source.values(m, inclusive=None)).tobytes(), m.name
    assert [m.name for m in again.metrics] == [m.name for m in source.metrics]


def test_every_part_of_a_report_together_covers_it(shared_data):
    source = cubescale.open(shared_data / "cubex" / "time.p4.cubex")
    parts = [LocalProfile.from_report(source, part=(i, 3)) for i in range(3)]
    assert sum(p.shape[1] for p in parts) == source.shape[1]
    for a, b in itertools.combinations(parts, 2):
        assert a.shape[0] == b.shape[0] == source.shape[0]


@pytest.mark.parametrize("seed", range(3))
def test_merged_profiles_hold_every_profiles_values_side_by_side(seed):
    profiles = [random_profile(seed, rank, ALL_DTYPES) for rank in range(5)]  # rank 2 visits nothing
    merged = LocalProfile.merge(profiles)
    assert merged.locations == [loc for p in profiles for loc in p.locations]
    row_of = {path: i for i, path in enumerate(_named_paths(merged))}
    assert set(row_of) == {path for p in profiles for path in _named_paths(p)}
    column = 0
    for p in profiles:
        rows = [row_of[path] for path in _named_paths(p)]
        others = np.setdiff1d(np.arange(merged.shape[0]), rows)
        columns = slice(column, column + p.shape[1])
        for name, _, _ in ALL_DTYPES:
            got = np.ascontiguousarray(merged.values(name)[rows, columns])
            assert got.tobytes() == np.ascontiguousarray(p.values(name)).tobytes(), (seed, name)
            assert not np.ascontiguousarray(merged.values(name)[others, columns]).view(np.uint8).any()
        column += p.shape[1]


def test_merging_profiles_with_conflicting_metrics_raises():
    profiles = [random_profile(0, rank, ALL_DTYPES, conflict=True) for rank in range(2)]
    with pytest.raises(ValueError, match="visits"):
        LocalProfile.merge(profiles)
    with pytest.raises(ValueError, match="no profiles"):
        LocalProfile.merge([])
