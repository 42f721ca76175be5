"""Hardware levels from hwloc, on synthetic topologies (independent of the test machine)."""

import pytest

from cubescale.systree import SingleNodeTree, SystemTree


def test_single_child_levels_are_merged():
    tree = SystemTree.local(synthetic="pack:2 l3:1 core:4 pu:2", cpus="0", host="h")
    counts = tree.counts_per_class()
    assert counts["package"] == 2 and counts["core"] == 8 and counts["pu"] == 16
    assert "l3cache" not in counts  # merged into its package
    package = next(r for r in tree.records() if r.cls == "package")
    assert package.properties == {"levels": "package+l3cache"}


def test_process_hangs_under_the_element_covering_its_binding():
    for cpus, parent_class in (("0", "pu"), ("2-3", "core"), ("0-7", "package"), ("0-15", "node")):
        single = SingleNodeTree.local(synthetic="pack:2 l3:1 core:4 pu:2", cpus=cpus, threads=3)
        process = next(e for e in single.preorder() if single.kind(e) == "location_group")
        assert single.class_name(single.parent(process)) == parent_class, cpus
        assert [single.class_name(c) for c in single.children(process)] == ["thread"] * 3


def test_cache_chain_becomes_a_core():
    # Each core has private L2 and L1 caches: the chain l2 > l1 > core is one element.
    tree = SystemTree.local(synthetic="pack:1 l3:1 l2:4 l1d:1 core:1 pu:2", cpus="0-1", host="h")
    core = next(r for r in tree.records() if r.cls == "core" and r.copies == 3)
    assert core.properties == {"levels": "l2cache+l1cache+core"}


def test_real_machine():
    tree = SystemTree.local(threads=2)
    assert tree.count("locations") == 2
    assert tree.count("location_groups") == 1
    assert tree.counts_per_class()["node"] == 1


def test_bad_inputs():
    with pytest.raises(ValueError):
        SystemTree.local(synthetic="not a topology")
    with pytest.raises(ValueError, match="CPU list 'zero': 'zero' is no PU"):
        SystemTree.local(synthetic="pack:1 core:2 pu:1", cpus="zero")
