"""What the partitioning tests share (Mondrian, TA_DA, Mondrian's stop rule): the
hand-worked golden table (``tests/fixtures/papers/mondrian/golden.csv``), a run on a
fresh in-memory database, random tables of numeric and categorical QIs, and the brute force
every partitioning output is held to."""

from __future__ import annotations

import pandas as pd
from hypothesis import strategies as st

from tests.helpers import brute, papers


def golden() -> pd.DataFrame:
    """The worked example's table: age, state (QIs), income (sensitive), job (the label)."""
    return papers.frame("mondrian", "golden.csv")


#: golden()'s columns beside the QIs (age, state) and the sensitive income: job is released as is
GOLDEN_ROLES = {"keep": ["job"]}


#: Mondrian's stop rule, worked by hand: QIs age (numeric, 10..90: range 80) and zip
#: (categorical, 5 values: 4 steps); k = 2 (tests/fixtures/papers/mondrian/stop_rule.csv: the
#: table and its release under each rule)
_STOP = papers.frame("mondrian", "stop_rule.csv", dtype=str)
HAND = pd.DataFrame(
    {
        "age": _STOP["age"].astype(int).tolist(),
        "zip": _STOP["zip"].tolist(),
        "rid": _STOP["rid"].astype(int).tolist(),
    }
)
HAND_ROLES = {"keep": ["rid"], "allow_identifying": ["age", "zip", "rid"]}
#: the released (age, zip) per row of HAND, under each rule
HAND_NEXT = list(zip(_STOP["next_widest_age"], _STOP["next_widest_zip"], strict=True))
HAND_WIDEST = list(zip(_STOP["widest_age"], _STOP["widest_zip"], strict=True))


def released_age_zip(db, name: str = "o") -> list[tuple[str, str]]:
    """The released (age, zip) of output ``name`` of HAND, in the source's row order."""
    out = db.backend.fetch_df(f"SELECT * FROM {name}").sort_values("rid")
    return list(zip(out["age"].astype(str), out["zip"].astype(str), strict=True))


def table_roles(qis: list[str]) -> dict:
    """The roles of a random table's other columns (:func:`tables`): the label y released as
    is, rid the test's row key. On a few random rows any column may be unique, so the QIs, y
    and rid may be published although they look like identifiers."""
    return {"keep": ["y", "rid"], "allow_identifying": [*qis, "y", "rid"]}


def db_of(frame: pd.DataFrame, name: str = "t"):
    from anonsql.database import Database

    db = Database.open(":memory:")
    db.backend.write_frame(name, frame)
    return db


def run_on(db, source="t", **kw):
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    kw.setdefault("output", "o")
    kw.setdefault("algorithm", "mondrian")
    return anonymize(db, source, Spec(**kw))


def output_of(db, name="o") -> pd.DataFrame:
    out = db.backend.fetch_df(f"SELECT * FROM {name}")
    if "rid" in out.columns:  # the source's row order (a view's order is the engine's)
        out = out.sort_values("rid").reset_index(drop=True)
    return out


@st.composite
def tables(draw, max_rows: int = 40):
    n = draw(st.integers(2, max_rows))
    m = draw(st.integers(1, 3))
    cols = {}
    kinds = []
    for j in range(m):
        if draw(st.booleans()):
            cols[f"q{j}"] = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
            kinds.append("numeric")
        else:
            cols[f"q{j}"] = draw(st.lists(st.sampled_from("abcde"), min_size=n, max_size=n))
            kinds.append("categorical")
    cols["s"] = draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=n, max_size=n))
    cols["y"] = draw(st.lists(st.sampled_from(["p", "q"]), min_size=n, max_size=n))
    cols["rid"] = list(range(n))
    return pd.DataFrame(cols), kinds


def contains(kind: str, label: str, value) -> bool:
    from anonsql.algorithms.mondrian.release import members, midpoint

    if kind == "numeric":
        if label.startswith("["):
            lo, hi = (float(x) for x in label[1:-1].split(", "))
            return lo <= float(value) <= hi and lo < hi
        return float(label) == float(value) and midpoint(label) == float(value)
    return str(value) in members(label)


def check_release(df: pd.DataFrame, out: pd.DataFrame, qis, kinds, k, l_value) -> None:
    """The brute force every partitioning output is held to (rows in source order)."""
    assert len(out) == len(df)
    released = out[(out[qis] != "*").all(axis=1)]
    if len(released):
        assert (brute.k_values(released, qis) >= k).all()
        assert (brute.distinct_values(released, qis, "s") >= l_value).all()
    # equal QI tuples, equal release; each value inside its released interval or set
    pairs = pd.concat(
        [df[qis].astype(str).add_prefix("o_"), out[qis].add_prefix("g_")], axis=1
    ).drop_duplicates()
    assert not pairs.duplicated([f"o_{q}" for q in qis]).any()
    for q, kind in zip(qis, kinds, strict=True):
        for v, g in zip(df[q], out[q], strict=True):
            assert g == "*" or contains(kind, g, v), (q, v, g)
    # the whole table satisfies the models: nothing is suppressed
    if len(df) >= k and df["s"].nunique() >= l_value:
        assert len(released) == len(df)


def disjoint(a: str, b: str, kind: str) -> bool:
    from anonsql.algorithms.mondrian.release import members

    if kind == "numeric":

        def rng(x):
            return (
                tuple(float(v) for v in x[1:-1].split(", "))
                if x.startswith("[")
                else (float(x), float(x))
            )

        (a0, a1), (b0, b1) = rng(a), rng(b)
        return a1 < b0 or b1 < a0
    return not set(members(a)) & set(members(b))


__all__ = [
    "GOLDEN_ROLES",
    "HAND",
    "HAND_NEXT",
    "HAND_ROLES",
    "HAND_WIDEST",
    "check_release",
    "contains",
    "db_of",
    "disjoint",
    "golden",
    "output_of",
    "released_age_zip",
    "run_on",
    "table_roles",
    "tables",
]
