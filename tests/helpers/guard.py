"""What the guard's tests share (the read-time guard, and the further privacy models held to
it): each model with its brute-force verdict on a class, the brute-force release of a guarded
view after random edits of the source, and those edits."""

from __future__ import annotations

import pandas as pd
from hypothesis import strategies as st

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
from tests.helpers import brute

SENSITIVE_ROWS = [
    ["a", "ab", "*"],
    ["b", "ab", "*"],
    ["c", "c+", "*"],
    ["10", "num", "*"],
    ["2", "num", "*"],
]

#: (name, model factory, brute-force test of a class) - thresholds away from ties
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
        lambda df, q: recursive_ok(df, q, 2, 2.5),
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


def recursive_ok(df, qis, l_value, c):
    def ok(col):
        r = sorted(col.value_counts().tolist(), reverse=True)
        return len(r) >= l_value and r[0] < c * sum(r[l_value - 1 :])

    return brute.classes(df, qis)["s"].apply(ok)


def expected_release(
    df: pd.DataFrame, hs: list[Hierarchy], levels, names: list[str]
) -> pd.DataFrame:
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


__all__ = ["MODELS", "SENSITIVE_ROWS", "edits", "expected_release", "recursive_ok"]
