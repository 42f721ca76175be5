"""Hypothesis strategies for random, irregular system trees (shared by the systree tests)."""

from hypothesis import strategies as st

from cubescale.systree import SingleNodeTree

NODE_CLASSES = ["rack", "node", "board"]
LOCATION_CLASSES = ["thread", "gpu_stream", "metric"]


@st.composite
def single_trees(draw, max_elements: int = 60) -> SingleNodeTree:
    """Random machines: nodes under nodes (depth <= 4), processes under nodes, locations
    under processes. Few classes, so equal subtrees (and folding) are common. Names are
    unique, so that name placement can be checked."""
    tree = SingleNodeTree()
    tree.add_root("machine", "m")
    nodes, groups = [0], []
    depth = {0: 0}
    n = draw(st.integers(1, max_elements))
    for i in range(1, n):
        what = draw(st.integers(0, 9))
        if what < 3 or not groups:
            parent = nodes[draw(st.integers(0, len(nodes) - 1))]
            if what == 0 and depth[parent] < 4:
                e = tree.add(parent, draw(st.sampled_from(NODE_CLASSES)), f"n{i}", kind="node")
                nodes.append(e)
                depth[e] = depth[parent] + 1
            else:
                groups.append(tree.add(parent, "process", f"p{i}"))
        else:
            parent = groups[draw(st.integers(0, len(groups) - 1))]
            tree.add(parent, draw(st.sampled_from(LOCATION_CLASSES)), f"l{i}")
    return tree


def canonical_text(tree: SingleNodeTree, with_names: bool = False) -> str:
    """The tree as text with every element's children sorted: equal for two trees that
    describe the same machine whatever the order of siblings."""
    memo: dict[int, str] = {}
    for e in reversed(tree.preorder()):
        label = tree.kind(e) + ":" + tree.class_name(e) + (":" + tree.name(e) if with_names else "")
        kids = sorted(memo[c] for c in tree.children(e))
        memo[e] = label + "(" + ",".join(kids) + ")"
    return memo[0]
