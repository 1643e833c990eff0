"""The input of the partitioning algorithms: the table's distinct combinations of QI values
(with the sensitive value, the label and any clustering features) and their counts, from one
GROUP BY in the database.

How a QI is read:

* with a hierarchy (named with ``hierarchy`` or stored under the column's name): its values
  are the hierarchy's leaves, ordered as the hierarchy lists them; Mondrian splits a
  partition among the children of its values' lowest common ancestor and releases that
  ancestor;
* without one, a column whose engine type is numeric (integers, decimals, floats) is
  *numeric*: ordered by value, released as the interval ``[min, max]``;
* any other column without hierarchy is *categorical*: its values in value (string) order,
  released as the set of values in the partition.

Values are keyed by ``CAST(column AS VARCHAR)``, as the output's guard matches the source's
rows to the recoding (:mod:`anonsql.output.guard`), so every row that was partitioned is
recognised at read time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from sqlglot import exp

from anonsql.backend.sql_templates import column, table
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy

NUMERIC, CATEGORICAL, HIERARCHY = "numeric", "categorical", "hierarchy"


@dataclass
class Points:
    """Distinct (QI values, sensitive value, label, features) combinations with counts.

    ``codes[:, j]`` indexes ``domains[j]``, which is in the QI's order (so codes are ranks);
    ``numbers[j]`` holds each domain value as a number (numeric QIs), ``leaves[j]`` its leaf
    node id (hierarchy QIs)."""

    qis: list[str]
    kinds: list[str]
    domains: list[list[str]]
    codes: np.ndarray
    counts: np.ndarray
    numbers: list[np.ndarray | None]
    hierarchies: list[Hierarchy | None]
    leaves: list[np.ndarray | None]
    sens: np.ndarray | None = None
    sens_labels: list[str] = field(default_factory=list)
    label: np.ndarray | None = None
    label_values: list[str] = field(default_factory=list)
    #: clustering features (raw: numbers, or 1..n value ranks for text), one column each
    features: np.ndarray | None = None
    feature_names: list[str] = field(default_factory=list)
    #: rows left out: a QI value NULL or missing from its hierarchy (``missing="suppress"``)
    missing_rows: int = 0

    @property
    def rows(self) -> int:
        return int(self.counts.sum())

    @property
    def width(self) -> int:
        return len(self.qis)

    @cached_property
    def tuple_ids(self) -> np.ndarray:
        """Id of each histogram row's QI tuple (rows differing only in the sensitive value,
        the label or the features share one)."""
        return row_ids(self.codes)

    def overall(self) -> np.ndarray:
        if self.sens is None:
            raise InputError("this table has no sensitive attribute")
        counts = np.bincount(self.sens, self.counts, minlength=len(self.sens_labels))
        return counts / counts.sum()

    def subset(self, rows: np.ndarray) -> Points:
        """The histogram rows ``rows`` (same domains)."""

        def take(a):
            return None if a is None else a[rows]

        return Points(
            self.qis,
            self.kinds,
            self.domains,
            self.codes[rows],
            self.counts[rows],
            self.numbers,
            self.hierarchies,
            self.leaves,
            take(self.sens),
            self.sens_labels,
            take(self.label),
            self.label_values,
            take(self.features),
            self.feature_names,
        )

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        qis: list[str],
        hierarchies: list[Hierarchy | None],
        sensitive: str | None = None,
        label: str | None = None,
        features: list[str] | None = None,
        missing: str = "error",
    ) -> Points:
        """Points of grouped (or raw) rows: columns ``v<j>`` (the QI as text), ``r<j>`` (the
        QI as the engine typed it), ``s``, ``y``, ``f<i>`` and the count ``n`` - or, with
        ``n`` absent, a raw table named by its own columns (tests, in-memory sources)."""
        if "n" not in frame.columns:
            frame = _grouped_frame(frame, qis, sensitive, label, features or [])
        return cls._build(frame, qis, hierarchies, sensitive, label, features or [], missing)

    @classmethod
    def from_database(
        cls,
        db,
        source: str,
        qis: list[str],
        hierarchies: list[Hierarchy | None],
        sensitive: str | None = None,
        label: str | None = None,
        features: list[str] | None = None,
        missing: str = "error",
    ) -> Points:
        """One GROUP BY in the database over the QIs (raw and as text), the sensitive value,
        the label and the features."""
        query = points_query(source, qis, sensitive, label, features or [])
        frame = db.backend.fetch_df(query)
        return cls._build(frame, qis, hierarchies, sensitive, label, features or [], missing)

    @classmethod
    def _build(cls, frame, qis, hierarchies, sensitive, label, features, missing) -> Points:
        if missing not in ("error", "suppress"):
            raise InputError(f"missing is 'error' or 'suppress', not {missing!r}")
        m = len(qis)
        frame = frame.reset_index(drop=True)
        bad = np.zeros(len(frame), dtype=bool)
        for j in range(m):
            text = frame[f"v{j}"]
            lacking = text.isna().to_numpy().copy()
            h = hierarchies[j]
            if h is not None:
                known = pd.Index(h.leaf_labels)
                lacking |= ~text.astype(str).isin(known).to_numpy()
            if lacking.any() and missing == "error":
                vals = list(dict.fromkeys("NULL" if pd.isna(v) else str(v) for v in text[lacking]))
                where = f"its hierarchy {h.name!r} lacks" if h is not None else "are NULL"
                raise InputError(
                    f"quasi-identifier {qis[j]!r} has values that {where}: {vals[:10]}; "
                    f"pass --missing suppress (option missing = 'suppress') to leave those "
                    f"rows out (the output suppresses them)"
                )
            bad |= lacking
        missing_rows = int(frame["n"][bad].sum())
        frame = frame[~bad].reset_index(drop=True)
        if len(frame) == 0:
            raise InputError("the table has no rows to anonymize")
        if features:
            # k-means reads the rows in order (its seeded initialization picks rows by
            # position), and a GROUP BY returns its groups in any order (DuckDB's differs
            # from run to run on Bank): sorted, the clustering is a function of the data and
            # the seed. Mondrian and the tree do not depend on the order.
            key = frame[[c for c in frame.columns if not c.startswith("r")]].astype(str)
            frame = frame.loc[key.sort_values(list(key.columns)).index].reset_index(drop=True)
        kinds, domains, numbers, leaves = [], [], [], []
        codes = np.empty((len(frame), m), dtype=np.int64)
        for j in range(m):
            text = frame[f"v{j}"].astype(str)
            raw = frame[f"r{j}"] if f"r{j}" in frame.columns else text
            kind, domain, number, leaf = qi_domain(text, raw, hierarchies[j])
            kinds.append(kind)
            domains.append(domain)
            numbers.append(number)
            leaves.append(leaf)
            codes[:, j] = pd.Index(domain).get_indexer(text)
        counts = frame["n"].to_numpy(np.int64)
        sens, sens_labels = _codes(frame, "s") if sensitive is not None else (None, [])
        y, y_labels = _codes(frame, "y") if label is not None else (None, [])
        feats = None
        if features:
            cols = []
            for i in range(len(features)):
                raw = frame[f"f{i}"]
                if pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw):
                    x = raw.astype(float).to_numpy()
                    # a missing number sits at the column's mean (it then weighs nothing
                    # after standardization)
                    x = np.where(np.isnan(x), np.nanmean(x) if (~np.isnan(x)).any() else 0.0, x)
                else:
                    # seed 003 section IV-B: the n values of a categorical attribute are
                    # mapped onto 1..n (value order; NULL is a value of its own)
                    t = raw.astype(object).where(raw.notna(), "NULL").astype(str)
                    x = pd.Index(sorted(t.unique())).get_indexer(t).astype(float) + 1.0
                cols.append(x)
            feats = np.column_stack(cols)
        return cls(
            list(qis),
            kinds,
            domains,
            codes,
            counts,
            numbers,
            list(hierarchies),
            leaves,
            sens,
            sens_labels,
            y,
            y_labels,
            feats,
            list(features),
            missing_rows,
        )


def qi_domain(
    text: pd.Series, raw: pd.Series, h: Hierarchy | None
) -> tuple[str, list[str], np.ndarray | None, np.ndarray | None]:
    """How one QI is read (module docstring), from its values as text and as the engine typed
    them (every present value at least once; the known values only): its kind, its domain
    in the QI's order (a value's code is its index), each domain value's number (numeric)
    and leaf node id (hierarchy). The in-memory histogram and the one kept in the engine
    (:mod:`anonsql.algorithms.mondrian.engine`) both code their values so."""
    if h is not None:
        order = _leaf_order(h)
        present = set(text.unique())
        domain = [h.labels[x] for x in order if h.labels[x] in present]
        leaf = np.asarray([h.leaf(v) for v in domain], dtype=np.int64)
        return HIERARCHY, domain, None, leaf
    if pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw):
        pairs = (
            pd.DataFrame({"t": text, "x": raw.astype(float)})
            .drop_duplicates("t")
            .sort_values(["x", "t"])
        )
        return NUMERIC, list(pairs["t"]), pairs["x"].to_numpy(np.float64), None
    return CATEGORICAL, sorted(text.unique()), None, None


def row_ids(matrix: np.ndarray) -> np.ndarray:
    """Id of each row of an integer matrix among its distinct rows in lexicographic order:
    ``np.unique(matrix, axis=0, return_inverse=True)[1]``, computed on one int64 key per row
    (mixed radix, first column most significant, so the keys sort as the rows do) when the
    columns' ranges allow; ranking 1-D keys is many times faster than numpy's row-wise
    sort."""
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        return np.unique(matrix, axis=0, return_inverse=True)[1].ravel()
    lo = matrix.min(axis=0)
    spans = (matrix.max(axis=0) - lo + 1).tolist()
    if math.prod(spans) >= 2**62:  # the key would overflow int64
        return np.unique(matrix, axis=0, return_inverse=True)[1].ravel()
    key = np.zeros(matrix.shape[0], dtype=np.int64)
    for j, span in enumerate(spans):
        key = key * span + (matrix[:, j] - lo[j])
    # np.unique(key, return_inverse=True)[1], by hashing the keys and sorting the distinct
    # ones only (about twice as fast on millions of rows with repeated keys)
    return pd.factorize(key, sort=True)[0].astype(np.int64, copy=False)


def _codes(frame: pd.DataFrame, col: str) -> tuple[np.ndarray, list[str]]:
    s = frame[col].astype(object)
    values = s.where(s.notna(), "NULL").astype(str)
    labels = sorted(values.unique())
    return pd.Index(labels).get_indexer(values).astype(np.int64), labels


def _leaf_order(h: Hierarchy) -> list[int]:
    """The hierarchy's leaves depth first, children in id order: neighbours in this order
    share ancestors, so an ordered split keeps subtrees together."""
    children: dict[int, list[int]] = {}
    for node, p in enumerate(h.parents):
        if p >= 0:
            children.setdefault(int(p), []).append(node)
    out: list[int] = []
    stack = [h.root]
    while stack:
        node = stack.pop()
        kids = children.get(node)
        if not kids:
            if h.levels[node] == 0:
                out.append(node)
            continue
        stack.extend(reversed(kids))
    return out


def _grouped_frame(frame, qis, sensitive, label, features) -> pd.DataFrame:
    """What :func:`points_query` computes, over an in-memory table."""
    out = pd.DataFrame(index=frame.index)
    for j, q in enumerate(qis):
        out[f"r{j}"] = frame[q]
        out[f"v{j}"] = frame[q].map(lambda v: None if pd.isna(v) else _text(v))
    if sensitive is not None:
        out["s"] = frame[sensitive].map(lambda v: None if pd.isna(v) else _text(v))
    if label is not None:
        out["y"] = frame[label].map(lambda v: None if pd.isna(v) else _text(v))
    for i, f in enumerate(features):
        out[f"f{i}"] = frame[f]
    keys = [c for c in out.columns if not c.startswith("r")]
    grouped = out.groupby(keys, dropna=False, sort=False)
    res = grouped.size().reset_index(name="n")
    firsts = grouped[[f"r{j}" for j in range(len(qis))]].first().reset_index(drop=True)
    return pd.concat([res, firsts], axis=1)


def _text(v) -> str:
    """A Python value as DuckDB's CAST(... AS VARCHAR) writes it (integers without a
    fraction; other values as str)."""
    if isinstance(v, float) and v.is_integer():
        return repr(v)
    return str(v)


def points_query(
    source: str, qis: list[str], sensitive: str | None, label: str | None, features: list[str]
) -> exp.Select:
    """``v<j>`` (QI as text), ``r<j>`` (QI as typed), ``s``, ``y``, ``f<i>``, ``n``: one
    GROUP BY over the source."""
    cols: list[exp.Expr] = []
    for j, q in enumerate(qis):
        cols.append(exp.alias_(exp.cast(column(q), "VARCHAR"), f"v{j}"))
        cols.append(exp.alias_(column(q), f"r{j}"))
    if sensitive is not None:
        cols.append(exp.alias_(exp.cast(column(sensitive), "VARCHAR"), "s"))
    if label is not None:
        cols.append(exp.alias_(exp.cast(column(label), "VARCHAR"), "y"))
    for i, f in enumerate(features):
        cols.append(exp.alias_(column(f), f"f{i}"))
    return (
        exp.select(*cols, exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(table(source))
        .group_by(*[exp.Literal.number(i + 1) for i in range(len(cols))])
    )


__all__ = [
    "CATEGORICAL",
    "HIERARCHY",
    "NUMERIC",
    "Points",
    "points_query",
    "qi_domain",
    "row_ids",
]
