"""What the partitioning tests share (Mondrian, TA_DA, Mondrian's stop rule): the
hand-worked golden table (``tests/fixtures/papers/mondrian/golden.csv``), a run on a
fresh in-memory database, random tables of numeric and categorical QIs, and the brute force
every partitioning output is held to; the release as it was computed partition by partition,
the reference of the vectorized one."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from anonsql.algorithms.recoding import TableRecoding
from anonsql.data.points import HIERARCHY, NUMERIC, Points, row_ids
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


# -- the release as it was computed partition by partition (before issue 30's vectorized
# release): the reference the vectorized one is held to, figure for figure --------------------


def reference_partition_keys(points: Points, partitions: list[np.ndarray]) -> list[list[tuple]]:
    """Per partition, per QI: a key of the released value (hierarchy: (node,); numeric:
    (min code, max code); categorical: the sorted codes)."""
    if not partitions:
        return []
    sizes = np.asarray([len(r) for r in partitions])
    if (sizes == 0).any():
        raise AssertionError("an empty partition")
    rows = np.concatenate(partitions)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    owner = np.repeat(np.arange(len(partitions), dtype=np.int64), sizes)
    columns: list[list[tuple]] = []
    for j in range(points.width):
        codes = points.codes[rows, j]
        if points.kinds[j] == HIERARCHY:
            h = points.hierarchies[j]
            leaves = points.leaves[j]
            columns.append(
                [
                    (h.lca_of_set(leaves[np.unique(codes[a : a + n])]),)
                    for a, n in zip(starts.tolist(), sizes.tolist(), strict=True)
                ]
            )
        elif points.kinds[j] == NUMERIC:
            # codes are ranks in value order: a partition's interval is its extreme codes
            lo = np.minimum.reduceat(codes, starts).tolist()
            hi = np.maximum.reduceat(codes, starts).tolist()
            columns.append(list(zip(lo, hi, strict=True)))
        else:
            size = len(points.domains[j])
            pairs = np.unique(owner * size + codes)  # (partition, code), sorted
            bounds = np.searchsorted(pairs // size, np.arange(len(partitions) + 1)).tolist()
            values = (pairs % size).tolist()
            columns.append(
                [tuple(values[bounds[i] : bounds[i + 1]]) for i in range(len(partitions))]
            )
    return [list(k) for k in zip(*columns, strict=True)]


def reference_label_of(points: Points, j: int, key: tuple) -> str:
    dom = points.domains[j]
    kind = points.kinds[j]
    if kind == HIERARCHY:
        return points.hierarchies[j].labels[key[0]]
    if kind == NUMERIC:
        lo, hi = key
        return dom[lo] if lo == hi else f"[{dom[lo]}, {dom[hi]}]"
    return dom[key[0]] if len(key) == 1 else "{" + ", ".join(dom[c] for c in key) + "}"


def reference_release(
    points: Points, partitions: list[np.ndarray]
) -> tuple[TableRecoding, np.ndarray]:
    """The recoding of ``partitions`` (which cover every row of ``points``, each QI tuple in
    one of them), and each histogram row's released class (rows with equal labels share a
    class id)."""
    keys = reference_partition_keys(points, partitions)
    m = points.width
    node_of: list[dict[tuple, int]] = []
    for j in range(m):
        distinct = sorted({k[j] for k in keys})
        if points.kinds[j] == HIERARCHY:
            node_of.append({k: int(k[0]) for k in distinct})
        else:
            node_of.append({k: i for i, k in enumerate(distinct)})
    row_part = np.full(len(points.counts), -1, dtype=np.int64)
    for p, rows in enumerate(partitions):
        row_part[rows] = p
    if (row_part < 0).any():
        raise AssertionError("the partitions do not cover every row")
    node_rows = np.asarray([[node_of[j][k[j]] for j in range(m)] for k in keys], dtype=np.int64)
    row_class = row_ids(node_rows[row_part])
    # one recoding row per distinct QI tuple, from its first histogram row
    tid = points.tuple_ids
    _, first = np.unique(tid, return_index=True)
    part_of_tuple = row_part[first]
    if not (node_rows[row_part] == node_rows[part_of_tuple[tid]]).all():
        raise AssertionError("rows with equal QI tuples were released differently")
    original = np.column_stack(
        [np.asarray(points.domains[j], dtype=object)[points.codes[first, j]] for j in range(m)]
    ).tolist()
    labels = [
        np.asarray([reference_label_of(points, j, k[j]) for k in keys], dtype=object)
        for j in range(m)
    ]
    generalized = np.column_stack([labels[j][part_of_tuple] for j in range(m)]).tolist()
    nodes = node_rows[part_of_tuple].tolist()
    return TableRecoding(original, generalized, nodes), row_class


def reference_widths(points, partitions: list[np.ndarray]) -> np.ndarray:
    """The normalized widths' numerators of every partition (rows) and QI (columns)."""
    out = np.zeros((len(partitions), points.width))
    keys = reference_partition_keys(points, partitions)
    for j in range(points.width):
        kind = points.kinds[j]
        if kind == NUMERIC:
            nums = points.numbers[j]
            out[:, j] = [float(nums[k[j][1]] - nums[k[j][0]]) for k in keys]
        elif kind == HIERARCHY:
            counts = points.hierarchies[j].leaf_counts
            out[:, j] = [float(counts[k[j][0]] - 1) for k in keys]
        else:
            out[:, j] = [float(len(k[j]) - 1) for k in keys]
    return out


def reference_measures(points, groups, partitions, row_class, checker) -> dict:
    """:func:`anonsql.algorithms.mondrian.driver.measures` as it was (the classes' figures and
    the NCP summed partition by partition)."""
    from anonsql.algorithms.mondrian.cuts import Spans

    cls = row_class
    ncls = int(cls.max()) + 1
    ok = checker.passes_grouped(cls, points.sens, points.counts)
    sizes = np.bincount(cls, points.counts)
    spans = Spans.of(points)
    total = float(points.counts.sum())
    per_qi = np.zeros(points.width)  # each QI's penalty: its NCP is per_qi / total
    widths = reference_widths(points, partitions).tolist()
    for rows, row_widths in zip(partitions, widths, strict=True):
        w = float(points.counts[rows].sum())
        for j in range(points.width):
            span = spans.widths[j]
            if span > 0:
                per_qi[j] += w * row_widths[j] / span
    pen = float(per_qi.sum())
    failing = int(sizes[~ok].sum())
    from anonsql.metrics.risk import risk_measures

    risk = risk_measures(sizes, ~ok).to_dict()
    return {
        "classes": ncls,
        "groups": len(groups),
        "partitions": len(partitions),
        "min_class_size": int(sizes.min()),
        "avg_class_size": float(sizes.mean()),
        "rows": int(total),
        "failing_rows": failing,
        "missing_rows": points.missing_rows,
        "ncp": pen / (total * points.width) if total else 0.0,
        # NCP per QI (the report's per-QI loss): the run's NCP is their mean
        "ncp_per_qi": [float(v / total) if total else 0.0 for v in per_qi],
        **risk,  # classes, min_class_size, ...: the classes the guard releases
    }


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
    "reference_measures",
    "reference_release",
    "reference_widths",
    "released_age_zip",
    "run_on",
    "table_roles",
    "tables",
]
