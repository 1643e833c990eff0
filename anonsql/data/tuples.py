"""The distinct QI tuples of a table with their record counts (and label counts): what the
microaggregation methods cluster, read with one GROUP BY (:func:`read_tuples`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlglot import exp

from anonsql.backend.sql_templates import column, table
from anonsql.errors import InputError


@dataclass
class WeightedTuples:
    """``values[i]`` is the i-th distinct QI tuple (original units), ``counts[i]`` its number
    of records. With a label: ``label_tuple[r]`` / ``label_code[r]`` / ``label_count[r]`` list
    how many records of tuple ``label_tuple[r]`` carry label ``labels[label_code[r]]`` (equal
    QI tuples may carry different labels)."""

    values: np.ndarray
    counts: np.ndarray
    labels: list[str] | None = None
    label_tuple: np.ndarray | None = None
    label_code: np.ndarray | None = None
    label_count: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.values = np.asarray(self.values, dtype=np.float64)
        if self.values.ndim == 1:
            self.values = self.values[:, None]
        self.counts = np.asarray(self.counts, dtype=np.int64)

    @classmethod
    def from_records(cls, x: np.ndarray, y: np.ndarray | None = None) -> WeightedTuples:
        """Group records ``x`` (n x m) and optional labels ``y`` by distinct tuple."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1:
            x = x[:, None]
        values, inverse, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        if y is None:
            return cls(values, counts)
        labels, codes = np.unique(np.asarray(y).astype(str), return_inverse=True)
        pairs, pc = np.unique(
            np.stack([inverse, codes.reshape(-1)], axis=1), axis=0, return_counts=True
        )
        return cls(values, counts, [str(s) for s in labels], pairs[:, 0], pairs[:, 1], pc)

    @property
    def records(self) -> int:
        return int(self.counts.sum())

    @property
    def width(self) -> int:
        return int(self.values.shape[1])

    def scale(self) -> tuple[np.ndarray, np.ndarray]:
        """Record-weighted mean and standard deviation per attribute (1 for a constant one):
        distances are taken between z-scores so no attribute dominates by its unit, as
        sdcMicro's MDAV does by default (``standardized``)."""
        w = self.counts / self.counts.sum()
        mu = w @ self.values
        sd = np.sqrt(w @ (self.values - mu) ** 2)
        sd[sd <= 0] = 1.0
        return mu, sd

    def standardized(self) -> np.ndarray:
        mu, sd = self.scale()
        return (self.values - mu) / sd

    def majority(self, groups: np.ndarray, n_groups: int) -> np.ndarray:
        """Each group's most frequent label code by records (ties: the smaller code)."""
        assert self.label_tuple is not None and self.labels is not None
        assert self.label_code is not None and self.label_count is not None
        table = np.zeros((n_groups, len(self.labels)), dtype=np.int64)
        np.add.at(table, (groups[self.label_tuple], self.label_code), self.label_count)
        return table.argmax(axis=1)

    def expand(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Record indices (into the tuples) and, with a label, each record's label code: the
        records themselves, for measures defined per record."""
        if self.label_tuple is None:
            return np.repeat(np.arange(len(self.counts)), self.counts), None
        # the three label arrays come together (from_records)
        assert self.label_code is not None and self.label_count is not None
        idx = np.repeat(self.label_tuple, self.label_count)
        return idx, np.repeat(self.label_code, self.label_count)


def read_tuples(
    db, source: str, qis: list[str], label: str | None, missing: str
) -> tuple[WeightedTuples, np.ndarray, int]:
    """The distinct QI tuples with their counts (and label counts), each tuple's values as the
    guard casts them (VARCHAR; a (tuples, QIs) object array of str), and the number of rows
    left out for a NULL QI value."""
    be = db.backend
    if label is not None:
        be.require_columns(source, [label])
        if label in qis:
            raise InputError(f"the label {label!r} cannot also be a quasi-identifier")
    # the engine's catalog types: an empty result frame is untyped on PostgreSQL
    from anonsql.masking.detect import type_family

    types = be.column_types(source)
    bad = [q for q in qis if type_family(types[q]) != "number"]
    if bad:
        raise InputError(
            f"microaggregation needs numeric quasi-identifiers; not numeric: {', '.join(bad)}"
        )
    m = len(qis)
    parts: list[exp.Expr] = [
        exp.alias_(exp.cast(column(q), "VARCHAR"), f"o{j}") for j, q in enumerate(qis)
    ]
    parts += [exp.alias_(exp.cast(column(q), "DOUBLE"), f"v{j}") for j, q in enumerate(qis)]
    if label is not None:
        parts.append(
            exp.alias_(
                exp.func("COALESCE", exp.cast(column(label), "VARCHAR"), exp.convert("NULL")), "y"
            )
        )
    keys = len(parts)
    query = (
        exp.select(*parts, exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(table(source))
        .group_by(*[exp.Literal.number(i + 1) for i in range(keys)])
    )
    df = be.fetch_df(query)
    if df.empty:
        raise InputError(f"table {source!r} is empty")
    vals = df[[f"v{j}" for j in range(m)]].to_numpy(dtype=np.float64)
    null = np.isnan(vals).any(axis=1)
    dropped = int(df["n"][null].sum())
    if null.any():
        if missing != "suppress":
            cols = [q for j, q in enumerate(qis) if np.isnan(vals[:, j]).any()]
            raise InputError(
                f"NULL values in {', '.join(cols)} ({dropped} rows): microaggregation needs a "
                f"value; use missing 'suppress' to leave those rows out (the guard suppresses "
                f"them)"
            )
        df = df[~null].reset_index(drop=True)
        vals = vals[~null]
        if df.empty:
            raise InputError(f"every row of {source!r} has a NULL quasi-identifier")
    # the distinct tuples as the guard sees them (VARCHAR), numbered in sorted order (by
    # code point, column by column): pandas' hashing groupby, much faster than np.unique on
    # strings at 1 M tuples
    keys = df[[f"o{j}" for j in range(m)]].astype(str)
    inverse = keys.groupby(list(keys.columns), sort=True).ngroup().to_numpy(dtype=np.int64)
    u = int(inverse.max()) + 1
    first = np.empty(u, dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(inverse))[::-1]  # one row per tuple
    originals = keys.to_numpy(dtype=object)[first]
    counts = np.bincount(inverse, weights=df["n"].to_numpy(), minlength=u)
    values = np.zeros((u, m))
    values[inverse] = vals
    if label is None:
        data = WeightedTuples(values, counts.astype(np.int64))
    else:
        labels, codes = np.unique(df["y"].astype(str).to_numpy(), return_inverse=True)
        codes = codes.reshape(-1)
        # the engine returns groups in any order: sorted, the drawn examples and the
        # records' order (cross-validation folds) are the same at every run
        order = np.lexsort((codes, inverse))
        data = WeightedTuples(
            values,
            counts.astype(np.int64),
            [str(s) for s in labels],
            inverse[order],
            codes[order],
            df["n"].to_numpy(dtype=np.int64)[order],
        )
    return data, originals, dropped


__all__ = ["WeightedTuples", "read_tuples"]
