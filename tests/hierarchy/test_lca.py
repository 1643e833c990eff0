"""LCA: closure-table SQL, the DuckDB UDFs and the numpy implementation must agree."""

from __future__ import annotations

import itertools

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from anonsql.database import Database
from anonsql.hierarchy.hierarchy import Hierarchy
from tests.helpers.strategies import hierarchy_rows


def brute_lca(h: Hierarchy, nodes: list[int]) -> int:
    """Walk every node's path to the root; the LCA is the first common node of the paths."""

    def path(n: int) -> list[int]:
        out = [n]
        while h.parents[n] >= 0:
            n = int(h.parents[n])
            out.append(n)
        return out

    paths = [path(n) for n in nodes]
    common = set(paths[0]).intersection(*map(set, paths[1:]))
    return next(n for n in paths[0] if n in common)


@settings(max_examples=30, deadline=None)
@given(hierarchy_rows(max_leaves=8), st.data())
def test_sql_udf_and_numpy_lca_agree(rows, data):
    db = Database.open(":memory:")
    h = db.hierarchies.save(Hierarchy.from_rows("h", rows))
    pairs = list(itertools.product(range(h.size), repeat=2))
    frame = pd.DataFrame(
        [(i, a) for i, (a, b) in enumerate(pairs)] + [(i, b) for i, (a, b) in enumerate(pairs)],
        columns=["set_id", "node"],
    )
    db.backend.write_frame("pairs", frame)
    sql = db.hierarchies.lca_sql("h", "pairs").set_index("set_id")["lca"].sort_index()
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    numpy = h.lca(a, b)
    brute = [brute_lca(h, [x, y]) for x, y in pairs]
    assert list(sql) == list(numpy) == brute
    udf = db.backend.fetch_df(
        "SELECT anonsql_lca_id('h', p.a, p.b) AS l FROM (SELECT UNNEST(?) AS a, UNNEST(?) AS b) p",
        [a, b],
    )["l"]
    assert list(udf) == brute

    # sets of leaves: SQL, UDF over labels, numpy
    leaves = list(h.leaf_ids)
    members = data.draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=6))
    db.backend.write_frame("one", pd.DataFrame({"set_id": 0, "node": members}))
    assert db.hierarchies.lca_sql("h", "one")["lca"].iloc[0] == brute_lca(h, members)
    assert h.lca_of_set(members) == brute_lca(h, members)
    label = db.backend.fetchall(
        "SELECT anonsql_lca_list('h', ?)", [[h.labels[m] for m in members]]
    )[0][0]
    assert label == h.labels[brute_lca(h, members)]
    db.close()


def test_label_udfs_on_adult_like_hierarchy(db):
    rows = [["Cat", "Felid", "Mammal"], ["Lion", "Felid", "Mammal"], ["Dog", "Dog", "Mammal"]]
    db.hierarchies.save(Hierarchy.from_rows("race", rows))
    got = db.backend.fetchall(
        "SELECT anonsql_lca('race', 'Cat', 'Lion'), anonsql_lca('race', 'Cat', 'Dog'), "
        "anonsql_lca('race', NULL, 'Dog'), anonsql_generalize('race', 'Dog', 1), "
        "anonsql_generalize('race', 'Lion', 2)"
    )[0]
    assert got == ("Felid", "Mammal", None, "Dog", "Mammal")


def test_udf_errors_are_clear(db):
    db.hierarchies.save(Hierarchy.from_rows("race", [["Cat", "*"]]))
    import pytest

    with pytest.raises(Exception, match="no label 'Cow'"):
        db.backend.fetchall("SELECT anonsql_lca('race', 'Cat', 'Cow')")
    with pytest.raises(Exception, match="no hierarchy named 'nope'"):
        db.backend.fetchall("SELECT anonsql_lca('nope', 'Cat', 'Cat')")
