"""Hypothesis strategies shared by the tests: random balanced hierarchies and tables."""

from __future__ import annotations

from hypothesis import strategies as st

from anonsql.hierarchy.hierarchy import Hierarchy


@st.composite
def hierarchy_rows(draw, max_leaves: int = 12, max_height: int = 4, reuse_labels: bool = True):
    """Rows ``[leaf, ..., root]`` of a random balanced tree. Labels of inner nodes are drawn
    from a small pool so the same label often stands on two levels (allowed)."""
    height = draw(st.integers(2, max_height))
    n = draw(st.integers(1, max_leaves))
    level_nodes = [f"v{i}" for i in range(n)]
    paths = [[x] for x in level_nodes]
    node_of_path = list(range(n))
    for lv in range(1, height):
        if lv == height - 1:
            groups = [0] * len(level_nodes)
        else:
            k = draw(st.integers(1, max(1, len(level_nodes))))
            groups = draw(
                st.lists(
                    st.integers(0, k - 1), min_size=len(level_nodes), max_size=len(level_nodes)
                )
            )
        used = sorted(set(groups))
        pool = "ab" if reuse_labels else ""
        names = {}
        for j, g in enumerate(used):
            names[g] = f"{pool[j]}" if j < len(pool) and lv > 1 else f"L{lv}g{g}"
        if lv == height - 1:
            names = {0: "*"}
        new_nodes = [names[g] for g in used]
        for p, node in zip(paths, node_of_path, strict=True):
            p.append(names[groups[node]])
        node_of_path = [used.index(groups[node]) for node in node_of_path]
        level_nodes = new_nodes
    return paths


@st.composite
def hierarchies(draw, name: str = "h", **kw) -> Hierarchy:
    return Hierarchy.from_rows(name, draw(hierarchy_rows(**kw)))


@st.composite
def anonymization_cases(draw, max_qis: int = 3, max_rows: int = 60):
    """A random table (DataFrame) with 1..max_qis QIs, each with its own random hierarchy,
    and a sensitive column ``s`` drawn from a few values."""
    import pandas as pd

    m = draw(st.integers(1, max_qis))
    hs = [
        Hierarchy.from_rows(f"q{j}", draw(hierarchy_rows(max_leaves=6, max_height=4)))
        for j in range(m)
    ]
    n = draw(st.integers(1, max_rows))
    data = {}
    for j, h in enumerate(hs):
        data[f"q{j}"] = draw(st.lists(st.sampled_from(h.leaf_labels), min_size=n, max_size=n))
    data["s"] = draw(st.lists(st.sampled_from(["a", "b", "c", "10", "2"]), min_size=n, max_size=n))
    return pd.DataFrame(data), hs
