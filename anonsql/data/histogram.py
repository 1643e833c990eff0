"""The histogram: one row per distinct combination of QI leaves (and sensitive value), with its
count. It is the only thing the lattice search reads from the database; one GROUP BY builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from sqlglot import exp

from anonsql.backend.base import handed_over
from anonsql.backend.sql_templates import as_text, column, left_join, table
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.hierarchy.store import NODES


@dataclass
class Histogram:
    """Distinct (QI leaves..., sensitive value) combinations and their counts.

    ``codes[:, j]`` holds node ids of ``hierarchies[j]`` (leaves); ``sens`` holds indices into
    ``sens_labels`` (or is None without a sensitive attribute).
    """

    qis: list[str]
    hierarchies: list[Hierarchy]
    codes: np.ndarray
    counts: np.ndarray
    sens: np.ndarray | None = None
    sens_labels: list[str] = field(default_factory=list)
    sensitive: str | None = None
    #: rows left out because a QI value is missing from its hierarchy (``missing="suppress"``)
    missing_rows: int = 0
    #: their sensitive values' counts (indexed like ``sens_labels``): suppressed rows stay in
    #: the table's sensitive distribution, as ``check`` and the output guard count them
    missing_sens: np.ndarray | None = None
    #: with a privacy unit whose rows hold several QI tuples (docs/models/units.md): the
    #: rows are distinct (unit, QI leaves, sensitive value) records, ``unit_ids`` numbers
    #: each row's unit densely, and :attr:`units` counts every unit of the table (those whose
    #: every record lacks a hierarchy value included); see :mod:`anonsql.data.units`
    unit_ids: np.ndarray | None = None
    units: int = 0
    #: the units with a record left out (a value its hierarchy lacks): suppressed units
    missing_units: int = 0
    #: the left-out records' (unit id, sensitive value index) pairs: they stay in the
    #: table's sensitive distribution, as :attr:`missing_sens` does for rows
    missing_unit_values: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def rows(self) -> int:
        return int(self.counts.sum())

    @cached_property
    def weights(self) -> np.ndarray:
        """:attr:`counts` as float64, the form ``np.bincount`` takes weights in (converted
        once instead of on every marginal)."""
        return self.counts.astype(np.float64)

    @property
    def heights(self) -> list[int]:
        return [h.height for h in self.hierarchies]

    def overall_distribution(self) -> np.ndarray:
        """Share of each sensitive value in the whole table."""
        if self.sens is None:
            raise InputError("this histogram has no sensitive attribute")
        counts = np.bincount(self.sens, self.counts, minlength=len(self.sens_labels))
        if self.missing_sens is not None:
            counts = counts + self.missing_sens
        return counts / (self.rows + self.missing_rows)

    def marginal(self, j: int) -> np.ndarray:
        """Rows per leaf of QI j, dense over the hierarchy's node ids (float64)."""
        return np.bincount(self.codes[:, j], self.weights, minlength=self.hierarchies[j].size)

    def pair_marginal(self, a: int, b: int) -> np.ndarray:
        """Rows per pair of leaves of QIs a and b, dense over ``id_a * size_b + id_b``."""
        size_b = self.hierarchies[b].size
        pair = self.codes[:, a].astype(np.int64) * size_b + self.codes[:, b]
        return np.bincount(pair, self.weights, minlength=self.hierarchies[a].size * size_b)

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        qis: list[str],
        hierarchies: list[Hierarchy],
        sensitive: str | None = None,
    ) -> Histogram:
        """Histogram of an in-memory table (tests, and DataFrame sources)."""
        codes = np.empty((len(frame), len(qis)), dtype=np.int64)
        for j, (q, h) in enumerate(zip(qis, hierarchies, strict=True)):
            idx = pd.Index(h.leaf_labels).get_indexer(frame[q].astype(str))
            if (idx < 0).any():
                bad = frame[q].astype(str)[idx < 0].unique()[:10]
                raise InputError(f"column {q!r} has values missing from its hierarchy: {list(bad)}")
            codes[:, j] = h.leaf_ids[idx]
        df = pd.DataFrame(codes, columns=[f"q{j}" for j in range(len(qis))])
        if sensitive is not None:
            df["s"] = frame[sensitive].astype(str).to_numpy()
        keys = list(df.columns)
        grouped = df.groupby(keys, sort=False).size().reset_index(name="n")
        return cls._from_grouped(grouped, qis, hierarchies, sensitive)

    @classmethod
    def _from_grouped(
        cls, grouped, qis, hierarchies, sensitive, extra_labels: list[str] | None = None
    ) -> Histogram:
        counts = np.asarray(grouped["n"], dtype=np.int64)
        codes = np.empty((len(counts), len(qis)), dtype=np.int32, order="F")
        for j in range(len(qis)):
            codes[:, j] = np.asarray(grouped[f"q{j}"], dtype=np.int32)
        sens = None
        labels: list[str] = []
        if sensitive is not None:
            s = pd.Series(grouped["s"], dtype=object)
            values = s.where(s.notna(), "NULL").astype(str)
            labels = sorted(set(values.unique()) | set(extra_labels or []))
            sens = pd.Index(labels).get_indexer(values).astype(np.int64)
        return cls(qis, hierarchies, codes, counts, sens, labels, sensitive)

    @classmethod
    def from_database(
        cls,
        db: Database,
        source: str,
        qis: list[str],
        hierarchy_names: list[str],
        sensitive: str | None = None,
        missing: str = "error",
        within: str | None = None,
        max_rows: int | None = None,
        unit: str | None = None,
    ) -> Histogram:
        """One GROUP BY in the database: QI values are joined to their leaf node ids.
        ``within``: a table of raw QI values ``v0, v1, ...`` (as VARCHAR); only the rows
        whose QI values are one of its rows are counted (seed 002's passes over the
        outliers, :mod:`anonsql.algorithms.lattice.passes`).

        A QI value its hierarchy lacks (or NULL) is an error naming the values, or with
        ``missing="suppress"`` its rows are left out and counted in :attr:`missing_rows`
        (the caller charges them to the suppression limit; the output guard suppresses
        them at every read).

        ``unit``: the rows are the distinct (unit, QI values, sensitive value) of ``source``
        (docs/models/units.md, units whose rows hold several QI tuples), numbered by unit
        in :attr:`unit_ids`."""
        if missing not in ("error", "suppress"):
            raise InputError(f"missing is 'error' or 'suppress', not {missing!r}")
        hierarchies = [db.hierarchies.load(n) for n in hierarchy_names]
        keys = [db.hierarchies.pin(n) for n in hierarchy_names]
        query = histogram_query(source, qis, keys, sensitive, within, unit, map_first=True)
        if max_rows is not None:
            # a histogram beyond the memory budget is never read whole: the caller keeps it
            # in the engine instead (anonsql.data.engine_classes)
            query = query.limit(max_rows + 1)
        grouped = db.backend.fetch_columns(handed_over(query))
        if max_rows is not None and len(grouped["n"]) > max_rows:
            raise HistogramTooLarge(max_rows)
        bad = np.zeros(len(grouped["n"]), dtype=bool)
        for j, (q, n) in enumerate(zip(qis, hierarchy_names, strict=True)):
            ids = grouped[f"q{j}"]
            lacking = pd.isna(ids) if ids.dtype == object else ids < 0
            if lacking.any():  # NULL id: a value the hierarchy lacks
                if missing == "error":
                    _explain_missing(db, source, q, n)
                bad |= np.asarray(lacking, dtype=bool)
        unit_codes = None
        if unit is not None:
            unit_codes, unit_names = pd.factorize(np.asarray(grouped.pop("u"), dtype=object))
        dropped = 0
        missing_sens: pd.Series | None = None
        grouped_s_bad = None
        if bad.any():
            if sensitive is not None:
                grouped_s_bad = np.asarray(grouped["s"], dtype=object)[bad]
            dropped = int(np.asarray(grouped["n"])[bad].sum())
            if sensitive is not None:
                s = pd.Series(np.asarray(grouped["s"], dtype=object)[bad])
                n = np.asarray(grouped["n"])[bad]
                missing_sens = (
                    pd.Series(n, index=s.where(s.notna(), "NULL").astype(str))
                    .groupby(level=0)
                    .sum()
                )
            grouped = {c: np.asarray(v)[~bad] for c, v in grouped.items()}
            for j in range(len(qis)):
                grouped[f"q{j}"] = grouped[f"q{j}"].astype(np.int64)
        # every raw value of one column type casts to a distinct string (DuckDB writes
        # numbers and times in a round-trip form), so the grouped rows stay distinct
        extra = list(missing_sens.index) if missing_sens is not None else None
        hist = cls._from_grouped(grouped, qis, hierarchies, sensitive, extra)
        hist.missing_rows = dropped
        if unit_codes is not None:
            hist.unit_ids = unit_codes[~bad].astype(np.int64)
            hist.units = len(unit_names)
            hist.missing_units = len(np.unique(unit_codes[bad]))
            if grouped_s_bad is not None:
                s = pd.Series(np.asarray(grouped_s_bad, dtype=object))
                labels = pd.Index(hist.sens_labels).get_indexer(s.where(s.notna(), "NULL"))
                hist.missing_unit_values = (unit_codes[bad].astype(np.int64), labels)
        if missing_sens is not None:
            hist.missing_sens = missing_sens.reindex(hist.sens_labels, fill_value=0).to_numpy(
                np.float64
            )
        return hist


class HistogramTooLarge(Exception):
    """The histogram has more rows than the memory budget allows to read (``max_rows``)."""

    def __init__(self, max_rows: int) -> None:
        super().__init__(f"the histogram has more than {max_rows} rows")
        self.max_rows = max_rows


def _explain_missing(db: Database, source: str, column: str, hierarchy: str) -> None:
    """Raise the hierarchy's missing-values error, saying how a run can go on."""
    from anonsql.errors import MissingValuesError

    try:
        db.hierarchies.check_column(source, column, hierarchy)
    except MissingValuesError as e:
        raise MissingValuesError(
            f"{e}; add them to the hierarchy, or pass --missing suppress (option "
            f"missing = 'suppress') to suppress those rows within the suppression limit",
            e.count,
            e.examples,
        ) from None


def histogram_query(
    source: str,
    qis: list[str],
    hierarchy_names: list[str],
    sensitive: str | None,
    within: str | None = None,
    unit: str | None = None,
    map_first: bool = False,
) -> exp.Select:
    """The histogram: per combination of leaf node ids (``q<j>``; NULL for a value the
    hierarchy lacks, which the caller reports), its rows ``n``, with the sensitive value
    ``s`` and the unit ``u`` (as text) as further keys when given.

    By default the source is grouped by its raw QI values first, then the distinct
    combinations are mapped to leaf ids. With ``map_first`` every row's values are mapped
    to leaf ids (a LEFT JOIN per QI with its hierarchy's leaves, a build side of a few
    thousand rows at most) and the rows are grouped by the integer ids: on DuckDB half the
    CPU of grouping text values, on Adult (30,162 rows) and at 10 M rows alike
    (docs/benchmarks.md, "Fixed costs of a run"); rows whose values a hierarchy lacks are
    then not kept apart by their raw values, which no caller needs. ``within`` (a table of
    raw QI values ``v0, v1, ...`` as text; only the rows whose QI values are one of its rows
    are counted) takes the default path."""
    if map_first and within is None:
        rows = exp.select().from_(exp.alias_(table(source), "b", table=True))
        keys: list[exp.Expression] = []
        for j, (q, h) in enumerate(zip(qis, hierarchy_names, strict=True)):
            alias = f"h{j}"
            on = exp.and_(
                exp.column("hierarchy", alias).eq(exp.convert(h)),
                exp.column("level", alias).eq(exp.convert(0)),
                exp.column("label", alias).eq(as_text(column(q, "b"))),
                copy=False,
            )
            left_join(rows, exp.alias_(table(NODES), alias, table=True), on)
            keys.append(exp.alias_(exp.column("id", alias), f"q{j}"))
        if sensitive is not None:
            keys.append(exp.alias_(as_text(column(sensitive, "b")), "s"))
        if unit is not None:
            keys.append(exp.alias_(as_text(column(unit, "b")), "u"))
        return rows.select(*keys, exp.alias_(exp.Count(this=exp.Star()), "n"), copy=False).group_by(
            *[exp.Literal.number(i + 1) for i in range(len(keys))], copy=False
        )
    raw = [exp.alias_(as_text(column(q)), f"v{j}") for j, q in enumerate(qis)]
    keys = [exp.column(f"v{j}") for j in range(len(qis))]
    if sensitive is not None:
        raw.append(exp.alias_(as_text(column(sensitive)), "s"))
        keys.append(exp.column("s"))
    if unit is not None:
        raw.append(exp.alias_(as_text(column(unit)), "u"))
    grouped = (
        exp.select(*raw, exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(table(source))
        .group_by(*[exp.Literal.number(i + 1) for i in range(len(raw))])
    )
    select = exp.select().from_(exp.alias_(grouped.subquery(), "g", table=True))
    if within is not None:
        # after the GROUP BY: the join costs one probe per distinct combination, not per row
        on = exp.and_(
            *[exp.column(f"v{j}", "w").eq(exp.column(f"v{j}", "g")) for j in range(len(qis))]
        )
        select = select.join(exp.alias_(table(within), "w", table=True), on=on, copy=False)
    for j, h in enumerate(hierarchy_names):
        alias = f"h{j}"
        on = exp.and_(
            exp.column("hierarchy", alias).eq(exp.convert(h)),
            exp.column("level", alias).eq(exp.convert(0)),
            exp.column("label", alias).eq(exp.column(f"v{j}", "g")),
        )
        left_join(select, exp.alias_(table(NODES), alias, table=True), on)
        select = select.select(exp.alias_(exp.column("id", alias), f"q{j}"), copy=False)
    if sensitive is not None:
        select = select.select(exp.alias_(exp.column("s", "g"), "s"), copy=False)
    if unit is not None:
        select = select.select(exp.alias_(exp.column("u", "g"), "u"), copy=False)
    return select.select(exp.alias_(exp.column("n", "g"), "n"), copy=False)


__all__ = ["Histogram", "HistogramTooLarge", "histogram_query"]
