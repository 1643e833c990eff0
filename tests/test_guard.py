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
    BasicBetaLikeness,
    DeltaDisclosure,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceEMD,
    GrassbergerEntropyLDiversity,
    HierarchicalEMD,
    KAnonymity,
    L1Closeness,
    OrderedDistanceEMD,
    RecursiveCLDiversity,
)
from anonsql.output.guard import Guard, guarded_query
from tests import brute
from tests.strategies import anonymization_cases

SENSITIVE_ROWS = [
    ["a", "ab", "*"],
    ["b", "ab", "*"],
    ["c", "c+", "*"],
    ["10", "num", "*"],
    ["2", "num", "*"],
]

# (name, model factory, brute-force test of a class) - thresholds away from ties
MODELS = {
    "k": (lambda: KAnonymity(2), lambda df, q: brute.k_values(df, q) >= 2),
    "distinct": (
        lambda: DistinctLDiversity(2),
        lambda df, q: brute.distinct_values(df, q, "s") >= 2,
    ),
    "entropy": (
        lambda: EntropyLDiversity(1.7),
        lambda df, q: brute.entropy_values(df, q, "s") >= 1.7,
    ),
    "recursive": (
        lambda: RecursiveCLDiversity(2, 2.5),
        lambda df, q: _recursive_ok(df, q, 2, 2.5),
    ),
    "equal-emd": (
        lambda: EqualDistanceEMD(0.37),
        lambda df, q: brute.equal_emd_values(df, q, "s") <= 0.37,
    ),
    "ordered-emd": (
        lambda: OrderedDistanceEMD(0.29),
        lambda df, q: brute.ordered_emd_values(df, q, "s") <= 0.29,
    ),
    "l1": (lambda: L1Closeness(0.61), lambda df, q: brute.l1_values(df, q, "s") <= 0.61),
    "hierarchical-emd": (
        lambda: HierarchicalEMD(0.23, "sens"),
        lambda df, q: brute.hierarchical_emd_values(df, q, "s", SENSITIVE_ROWS) <= 0.23,
    ),
    "basic-beta": (
        lambda: BasicBetaLikeness(0.83),
        lambda df, q: brute.beta_values(df, q, "s") <= 0.83,
    ),
    "enhanced-beta": (
        lambda: EnhancedBetaLikeness(0.71),
        lambda df, q: brute.beta_values(df, q, "s", "enhanced") <= 0.71,
    ),
    "delta": (lambda: DeltaDisclosure(1.13), lambda df, q: brute.delta_values(df, q, "s") < 1.13),
    "grassberger": (
        lambda: GrassbergerEntropyLDiversity(2.3),
        lambda df, q: brute.grassberger_values(df, q, "s") >= 2.3,
    ),
}


def _recursive_ok(df, qis, l_value, c):
    def ok(col):
        r = sorted(col.value_counts().tolist(), reverse=True)
        return len(r) >= l_value and r[0] < c * sum(r[l_value - 1 :])

    return brute.classes(df, qis)["s"].apply(ok)


def _expected(df: pd.DataFrame, hs: list[Hierarchy], levels, names: list[str]) -> pd.DataFrame:
    """Brute force: each row's labels, or ``*`` everywhere when a value is unknown to its
    mapping or its class fails a model (classes over the rows the mapping knows; the overall
    distribution over every row, as ``check`` counts a released table's)."""
    qis = [h.name for h in hs]
    out = df.copy()
    known = pd.Series(True, index=df.index)
    for q, h, lv in zip(qis, hs, levels, strict=True):
        rows = {r[0]: r[lv] for r in h.to_rows()}
        mapped = df[q].map(lambda v, rows=rows: rows.get(v) if isinstance(v, str) else None)
        known &= mapped.notna()
        out[q] = mapped
    if "hierarchical-emd" in names:
        known &= df["s"].isin([r[0] for r in SENSITIVE_ROWS])
    ok = pd.Series(False, index=df.index)
    # unknown rows go into one extra class whose verdict is ignored: they count in the overall
    # distribution and in no tested class
    sub = out.copy()
    for q in qis:
        sub[q] = sub[q].where(known, "\x00unknown")
    if known.any():
        passing = None
        for name in names:
            verdict = MODELS[name][1](sub, qis)
            passing = verdict if passing is None else (passing & verdict)
        keys = sub[known][qis].apply(tuple, axis=1)
        ok[known] = keys.map(lambda k: bool(passing.loc[k] if len(qis) > 1 else passing.loc[k[0]]))
    for q in qis:
        out[q] = out[q].where(ok, "*")
    return out


@st.composite
def edits(draw, df: pd.DataFrame, hs: list[Hierarchy]):
    """Deletes, inserts of existing or new combinations, values no hierarchy holds, NULLs."""
    out = df.copy()
    n_del = draw(st.integers(0, max(0, len(df) - 1)))
    drop = draw(st.lists(st.sampled_from(list(df.index)), max_size=n_del, unique=True))
    out = out.drop(index=drop)
    inserts = draw(st.integers(0, 4))
    rows = []
    for _ in range(inserts):
        row = {}
        for h in hs:
            row[h.name] = draw(st.sampled_from([*h.leaf_labels, "unknown!", None]))
        row["s"] = draw(st.sampled_from(["a", "b", "c", "10", "2", "zz"]))
        rows.append(row)
    if rows:
        out = pd.concat([out, pd.DataFrame(rows)], ignore_index=True)
    out["rid"] = range(len(out))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
    query = guarded_query(
        "duckdb", "t", [*qis, "s", "rid"], qis, LevelRecoding(keys, levels), guard
    )
    got = db.backend.fetch_df(query).set_index("rid").sort_index()
    want = _expected(edited.set_index("rid"), hs, levels, names).sort_index()
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


def test_recoding_table_guard_suppresses_new_tuples():
    db = Database.open(":memory:")
    h = Hierarchy.from_rows("q", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    db.hierarchies.save(h)
    db.backend.write_frame("t", pd.DataFrame({"q": ["a", "b", "a", "b", "c"]}))
    from anonsql.provenance import Provenance

    prov = Provenance(db.backend)
    ab = h.node("ab", 1)
    prov.replace_recodings(1, "o", [["a"], ["b"]], [["ab"], ["ab"]], [[ab], [ab]])
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
