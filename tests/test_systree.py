"""System tree: folding, expansion, enumeration, merging (property tests on random trees)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from systree_strategies import canonical_text, single_trees

from cubescale.systree import SingleNodeTree, SystemTree, kind_mask

KINDS = ["nodes", "location_groups", "locations", "all"]
KIND_OF = {"nodes": "node", "location_groups": "location_group", "locations": "location"}


@settings(max_examples=150, deadline=None)
@given(single_trees())
def test_fold_then_expand_is_identity(single):
    folded = single.fold()
    expanded = folded.expand()
    assert canonical_text(expanded) == canonical_text(single)
    assert folded.count("all") == len(single)
    # Folding is idempotent: the expanded form folds to the same records.
    assert expanded.fold() == folded


@settings(max_examples=100, deadline=None)
@given(single_trees())
def test_fold_keeps_real_names_in_place(single):
    folded = SystemTree.from_single(single, names="all")
    assert canonical_text(folded.expand(), with_names=True) == canonical_text(single, with_names=True)


@settings(max_examples=100, deadline=None)
@given(single_trees(), st.sampled_from(KINDS))
def test_enumeration_equals_depth_first_order_of_expansion(single, kinds):
    tree = single.fold()
    expanded = tree.expand()
    wanted = [e for e in expanded.preorder() if kinds == "all" or expanded.kind(e) == KIND_OF[kinds]]
    assert tree.count(kinds) == len(wanted)
    for index, element in enumerate(wanted):
        path = tree.path_of(index, kinds)
        assert tree.index_of(path, kinds) == index
        assert tree.record(path[-1][0]).cls == expanded.class_name(element)
        assert tree.name(index, kinds) == expanded.name(element)
    if wanted:
        records, copies = tree.paths_of(np.arange(len(wanted)), kinds)
        for index in range(len(wanted)):
            path = tree.path_of(index, kinds)
            assert records[index, : len(path)].tolist() == [r for r, _ in path]
            assert copies[index, : len(path)].tolist() == [c for _, c in path]


@settings(max_examples=60, deadline=None)
@given(st.lists(single_trees(max_elements=25), min_size=2, max_size=4))
def test_merge_is_order_independent_and_equals_folding_the_union(singles):
    trees = [s.fold() for s in singles]
    results = []
    for order in itertools.permutations(trees):
        acc = order[0]
        for t in order[1:]:
            acc = acc.merge(t)
        results.append(acc)
    assert all(r == results[0] for r in results)
    # The union: all machines' children under one machine root.
    union = SingleNodeTree()
    union.add_root("machine", "m")
    for single in singles:
        mapping = {0: 0}
        for e in single.preorder()[1:]:
            mapping[e] = union.add(mapping[single.parent(e)], single.class_name(e), kind=single.kind(e))
    assert union.fold() == results[0]


def test_juqueen_is_constant_size_and_small():
    sizes = []
    for racks in (1, 2, 7, 14, 28):
        tree = SystemTree.from_shape(f"rack:{racks} midplane:2 nodeboard:16 node:32 process:64 thread:4")
        assert len(tree) == 7
        sizes.append(tree.nbytes)
    assert max(sizes) <= 672
    assert max(sizes) - min(sizes) <= 1  # only the varint of the rack count may grow
    full = SystemTree.from_shape("juqueen")
    assert full.count("location_groups") == 1_835_008
    assert full.counts_per_class()["node"] == 28_672


def test_figure4_inhomogeneous():
    tree = SystemTree.figure4()
    assert tree.counts_per_class() == {
        "machine": 1, "node": 32, "process": 128, "gpu_stream": 64, "thread": 384,
    }
    assert tree.count("locations") == 16 * 4 * 4 + 16 * 4 * 3
    assert len(tree) == 8


def test_ancestors_give_the_node_of_every_location():
    tree = SystemTree.figure4()
    expanded = tree.expand()
    locations = [e for e in expanded.preorder() if expanded.kind(e) == "location"]
    nodes = [e for e in expanded.preorder() if expanded.kind(e) == "node"]
    node_index = {e: i for i, e in enumerate(nodes)}
    got = tree.ancestors(np.arange(len(locations)), depth=1, of="locations", to="nodes")
    want = [node_index[expanded.parent(expanded.parent(e))] for e in locations]
    assert got.tolist() == want


def test_index_errors_are_clear():
    tree = SystemTree.from_shape("node:2 process:2")
    with pytest.raises(IndexError, match="out of range"):
        tree.path_of(4, "location_groups")
    with pytest.raises(IndexError):
        tree.index_of([(0, 0), (1, 2)], "nodes")  # node copy 2 of 2
    with pytest.raises(ValueError, match="unknown kind"):
        tree.count("threads")
    assert kind_mask("all") == 7


def test_names_from_single_tree_are_looked_up():
    single = SingleNodeTree()
    m = single.add_root("machine", "cluster")
    for host in ("jwc01", "jwc02", "jwc03"):
        n = single.add(m, "node", host)
        p = single.add(n, "process", f"rank on {host}")
        single.add(p, "thread", "master")
    tree = single.fold()
    assert tree.render() == "machine ×1 > node ×3 > process ×1 > thread ×1"
    assert [tree.name(i, "nodes") for i in range(4)] == ["cluster", "jwc01", "jwc02", "jwc03"]
    assert tree.name(2, "location_groups") == "process 2"  # not mapped: generated
    back = SystemTree.from_bytes(tree.to_bytes(), names=tree.names_to_bytes(chunk_entries=1))
    assert back.names == tree.names


def test_single_size_matches_expansion():
    for spec in ("node:3 process:5 thread:2", "figure4", "rack:3 node:11 process:7"):
        tree = SystemTree.from_shape(spec)
        assert tree.single_nbytes == tree.expand().nbytes
        assert tree.single_nbytes > tree.nbytes


def test_repr_and_render():
    tree = SystemTree.from_shape("node:1024 process:64 thread:4")
    assert repr(tree) == (
        "<SystemTree 4 records, 262,144 locations: machine ×1 > node ×1024 > process ×64 > thread ×4>"
    )
    assert "single-node form" in tree.summary()
    assert tree._repr_html_().startswith("<pre>")
