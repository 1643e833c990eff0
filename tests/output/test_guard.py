"""The read-time guard (anonsql/output/guard.py) against an independent brute force: for every
privacy model, a random table, random hierarchies and random levels, then random edits of the
source (deletes, inserts of new combinations, values the hierarchy lacks, NULLs), the guarded
query releases exactly the rows of the classes that satisfy every model *now*, and suppresses
the rest in every QI."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.recoding import LevelRecoding, TableRecoding
from anonsql.database import Database
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.models import (
    HierarchicalEMD,
    KAnonymity,
)
from anonsql.output.guard import Guard, guarded_query
from tests.helpers.guard import MODELS, SENSITIVE_ROWS, edits, expected_release
from tests.helpers.strategies import anonymization_cases


@settings(max_examples=35, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), anonymization_cases(max_rows=40))
def test_guard_matches_brute_force_after_edits(data, case):
    df, hs = case
    names = data.draw(
        st.lists(st.sampled_from(sorted(MODELS)), min_size=1, max_size=3, unique=True)
    )
    levels = [data.draw(st.integers(0, h.top_level)) for h in hs]
    edited = data.draw(edits(df, hs))
    db = Database.open(":memory:")
    keys = [db.hierarchies.pin(db.hierarchies.save(h).name) for h in hs]
    db.hierarchies.save(Hierarchy.from_rows("sens", SENSITIVE_ROWS))
    skey = db.hierarchies.pin("sens")
    db.backend.write_frame("t", edited.astype(object).where(edited.notna(), None))
    models = []
    for n in names:
        m = MODELS[n][0]()
        if isinstance(m, HierarchicalEMD):
            m = HierarchicalEMD(m.t, skey)
        models.append(m)
    top = db.hierarchies.load(skey).top_level if "hierarchical-emd" in names else None
    guard = Guard(models, "s", skey if "hierarchical-emd" in names else None, top)
    qis = [h.name for h in hs]
    # the mapped rows kept once (a small source at publication: MATERIALIZED) or mapped
    # again where read (NOT MATERIALIZED): the same rows either way
    source_rows = data.draw(st.sampled_from([None, len(df)]))
    # the classes keyed by their node ids, or by one packed key (as published)
    widths = data.draw(st.sampled_from([None, [h.size for h in hs]]))
    query = guarded_query(
        "duckdb",
        "t",
        [*qis, "s", "rid"],
        qis,
        LevelRecoding(keys, levels),
        guard,
        source_rows=source_rows,
        widths=widths,
    )
    got = db.backend.fetch_df(query).set_index("rid").sort_index()
    want = expected_release(edited.set_index("rid"), hs, levels, names).sort_index()
    for q in qis:
        assert got[q].tolist() == want[q].tolist(), (names, levels, q)


def test_unknown_value_at_level_zero_is_suppressed_everywhere():
    db = Database.open(":memory:")
    h = Hierarchy.from_rows("q", [["a", "*"], ["b", "*"]])
    g = Hierarchy.from_rows("g", [["x", "*"], ["y", "*"]])
    db.hierarchies.save(h)
    db.hierarchies.save(g)
    rows = [("a", "x")] * 3 + [("zz", "x"), (None, "x")]
    db.backend.write_frame("t", pd.DataFrame(rows, columns=["q", "g"]))
    rec = LevelRecoding([db.hierarchies.pin("q"), db.hierarchies.pin("g")], [0, 0])
    out = db.backend.fetch_df(
        guarded_query("duckdb", "t", ["q", "g"], ["q", "g"], rec, Guard([KAnonymity(2)]))
    )
    assert sorted(map(tuple, out.values.tolist())) == [("*", "*")] * 2 + [("a", "x")] * 3


def test_packed_key_suppresses_a_node_id_outside_the_hierarchy():
    """A map row edited to a node id outside the pinned hierarchy's cannot give its rows
    another class's packed key (and count with it): its value is unknown, suppressed."""
    db = Database.open(":memory:")
    h = Hierarchy.from_rows("q", [["a", "*"], ["b", "*"]])
    g = Hierarchy.from_rows("g", [["x", "*"], ["y", "*"]])
    db.hierarchies.save(h)
    db.hierarchies.save(g)
    db.backend.write_frame("t", pd.DataFrame([("a", "x"), ("b", "y")], columns=["q", "g"]))
    keys = [db.hierarchies.pin("q"), db.hierarchies.pin("g")]
    query = guarded_query(
        "duckdb",
        "t",
        ["q", "g"],
        ["q", "g"],
        LevelRecoding(keys, [0, 0]),
        Guard([KAnonymity(2)]),
        widths=[h.size, g.size],
    )
    # y's node id such that (b, y) packs to (a, x)'s key: a class of 2 if it were packed
    forged = (h.node("a", 0) - h.node("b", 0)) * g.size + g.node("x", 0)
    db.backend.execute(
        "UPDATE anonsql_hierarchy_map SET node = ? WHERE hierarchy = ? AND level = 0 "
        "AND value = 'y'",
        [forged, keys[1]],
    )
    out = db.backend.fetch_df(query)
    assert sorted(map(tuple, out.values.tolist())) == [("*", "*")] * 2


def test_recoding_table_guard_suppresses_new_tuples():
    db = Database.open(":memory:")
    h = Hierarchy.from_rows("q", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    db.hierarchies.save(h)
    db.backend.write_frame("t", pd.DataFrame({"q": ["a", "b", "a", "b", "c"]}))
    from anonsql.provenance import Provenance

    prov = Provenance(db.backend)
    ab = h.node("ab", 1)
    stored = TableRecoding([["a"], ["b"]], [["ab"], ["ab"]], [[ab], [ab]])
    prov.replace_recodings(1, "o", stored.frame(db.backend.dialect))
    rec = TableRecoding([], [], [], output="o")
    out = db.backend.fetch_df(
        guarded_query("duckdb", "t", ["q"], ["q"], rec, Guard([KAnonymity(2)]))
    )
    assert sorted(out["q"]) == ["*", "ab", "ab", "ab", "ab"]


def test_source_name_prefix_is_reserved():
    from anonsql.errors import InputError

    with pytest.raises(InputError, match="reserved"):
        guarded_query(
            "duckdb", "__anonsql_x", ["q"], ["q"], LevelRecoding(["q"], [0]), Guard([KAnonymity(2)])
        )
