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
        # summed once per counts array (the search asks at every check; at 8 M rows a sum
        # costs milliseconds): a new array is summed again
        memo = self.__dict__.get("_rows")
        if memo is None or memo[0] is not self.counts:
            memo = (self.counts, int(self.counts.sum()))
            self.__dict__["_rows"] = memo
        return memo[1]

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
        """Rows per leaf of QI j, dense over the hierarchy's node ids (float64, read-only)."""
        memo = self._marginals
        if (j,) not in memo:
            self._read_joint(j, None)
        if (j,) not in memo:  # in no joint marginal: alone
            memo[(j,)] = np.bincount(self.codes[:, j], self.weights, minlength=self._leaf_width(j))
        return _embed(memo[(j,)], (self.hierarchies[j].size,))

    def pair_marginal(self, a: int, b: int) -> np.ndarray:
        """Rows per pair of leaves of QIs a and b, dense over ``id_a * size_b + id_b``."""
        pair = (min(a, b), max(a, b))
        if pair not in self._marginals:
            self._read_joint(*pair)
        # read once (Flash's sieve reads each pair once): not kept
        table = self._marginals.pop(pair, None)
        if table is None:  # in no joint marginal: alone
            wa, wb = self._leaf_width(pair[0]), self._leaf_width(pair[1])
            key = self.codes[:, pair[0]].astype(np.int64) * wb + self.codes[:, pair[1]]
            table = np.bincount(key, self.weights, minlength=wa * wb).reshape(wa, wb)
        if pair != (a, b):
            table = table.T
        sizes = (self.hierarchies[a].size, self.hierarchies[b].size)
        return _embed(table, sizes).ravel()

    def _leaf_width(self, j: int) -> int:
        """One past the largest leaf id of QI j: the range of the codes."""
        leaves = self.hierarchies[j].leaf_ids
        return int(leaves.max()) + 1 if len(leaves) else 1

    @cached_property
    def _marginals(self) -> dict[tuple[int, ...], np.ndarray]:
        """One-QI marginals (kept) and two-QI ones not read yet, over leaf ids."""
        return {}

    @cached_property
    def _joints(self) -> list[list[int]]:
        """Groups of QIs whose leaf combinations fit a joint marginal (at most
        :data:`JOINT_CELLS`, and not many more than the histogram's rows, so that it costs
        about one pass over them) and that together hold every pair of QIs that fits:
        greedily, the widest pair not held yet, then while the group fits the QI adding the
        most such pairs. A group's joint marginal is one pass over the histogram's rows and
        holds its one- and two-QI marginals as sums: on a large histogram a few passes
        instead of one per QI and per pair (Flash's sieve reads them all)."""
        m = len(self.qis)
        widths = [self._leaf_width(j) for j in range(m)]
        limit = min(JOINT_CELLS, max(len(self.counts), 1 << 16))
        todo = {(a, b) for a in range(m) for b in range(a + 1, m) if widths[a] * widths[b] <= limit}
        groups: list[list[int]] = []
        while todo:
            a, b = max(sorted(todo), key=lambda p: widths[p[0]] * widths[p[1]])
            group, cells = [a, b], widths[a] * widths[b]
            while True:
                gains = [
                    (sum((min(c, g), max(c, g)) in todo for g in group), -widths[c], -c)
                    for c in range(m)
                    if c not in group and cells * widths[c] <= limit
                ]
                best = max(gains, default=(0, 0, 0))
                if best[0] == 0:
                    break
                group.append(-best[2])
                cells *= widths[-best[2]]
            group.sort()
            groups.append(group)
            todo -= {(x, y) for x in group for y in group if x < y}
        return groups

    def _read_joint(self, a: int, b: int | None) -> None:
        """One pass over the rows: the joint marginal of the first group of :attr:`_joints`
        holding QI ``a`` (and ``b``), summed into the group's one-QI marginals and, when a
        pair is asked for, its two-QI ones (into :attr:`_marginals`); the joint itself is
        not kept. Nothing when no group holds them."""
        group = next((g for g in self._joints if a in g and (b is None or b in g)), None)
        if group is None:
            return
        widths = [self._leaf_width(j) for j in group]
        key = self.codes[:, group[0]].astype(np.int64)
        for j, w in zip(group[1:], widths[1:], strict=True):
            key *= w
            key += self.codes[:, j]
        cells = int(np.prod(widths, dtype=np.int64))
        joint = np.bincount(key, self.weights, minlength=cells).reshape(widths)
        del key
        memo = self._marginals
        axes = range(len(group))
        for x, j in enumerate(group):
            if (j,) not in memo:
                memo[(j,)] = joint.sum(axis=tuple(i for i in axes if i != x))
            if b is None:
                continue
            for y in range(x + 1, len(group)):
                other = tuple(i for i in axes if i not in (x, y))
                memo[(j, group[y])] = joint.sum(axis=other)

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
        if within is None and unit is None and db.backend.dialect == "duckdb":
            # DuckDB maps every row's values to leaf ids and groups the integers: less than
            # half the CPU of grouping the raw values as text (10 M rows, 8 QIs: 3.4 s
            # against 9.8 s, and below one GROUP BY of the raw columns; docs/benchmarks.md)
            query = leaf_id_query(source, qis, keys, sensitive)
        else:
            # elsewhere too the rows are mapped to leaf ids before grouping (integer keys)
            query = histogram_query(source, qis, keys, sensitive, within, unit, map_first=True)
        if max_rows is not None:
            # a histogram beyond the memory budget is never read whole: the caller keeps it
            # in the engine instead (anonsql.algorithms.lattice.engine_classes)
            query = query.limit(max_rows + 1, copy=False)  # the query is this call's own
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
                n_bad = np.asarray(grouped["n"])[bad]
                missing_sens = (
                    pd.Series(n_bad, index=s.where(s.notna(), "NULL").astype(str))
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


#: the most leaf combinations of a joint marginal (float64 cells: 8 MiB), see
#: :attr:`Histogram._joints`
JOINT_CELLS = 1 << 20


def _embed(table: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A marginal over leaf ids widened to ``shape`` (the hierarchies' node ids: inner
    nodes hold no rows), read-only."""
    if table.shape == shape:
        out = table
    else:
        out = np.zeros(shape, dtype=np.float64)
        out[tuple(slice(0, n) for n in table.shape)] = table
    out.flags.writeable = False
    return out


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
        keys: list[exp.Expr] = []
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


def leaf_id_query(
    source: str,
    qis: list[str],
    hierarchy_names: list[str],
    sensitive: str | None,
    part: tuple[int, int] | None = None,
) -> exp.Select:
    """The histogram with every row's QI values mapped to leaf ids first (a LEFT JOIN per QI
    with its hierarchy's leaves: a build side of at most a few thousand rows), then grouped
    by the integer ids (and the sensitive value). The same counts per combination of leaf
    ids as :func:`histogram_query`, except that rows whose values a hierarchy lacks (NULL
    ids) are not kept apart by their raw values. DuckDB 2.0's hash aggregate spills integer
    keys within its ``memory_limit`` where text keys fail: 51 M distinct combinations group
    under 128 MiB here, the raw text values not under 1 GB (README "Histogram kept in the
    engine"); it is also twice as fast.

    ``part = (p, P)`` keeps only the rows whose raw QI tuple hashes to ``p`` modulo ``P``
    (DuckDB's ``hash``): equal tuples fall in the same part, so the parts' histograms are
    disjoint and together the whole one, each a GROUP BY of a ``P``-th of the keys."""
    inner = exp.select().from_(exp.alias_(table(source), "b", table=True))
    for j, (q, h) in enumerate(zip(qis, hierarchy_names, strict=True)):
        # built in place (copy=False) and joined by left_join: the builders' copies and the
        # join type's parse were most of this query's cost in a small run
        leaves = (
            exp.select(exp.column("label"), exp.column("id"), copy=False)
            .from_(table(NODES), copy=False)
            .where(
                exp.column("hierarchy").eq(exp.convert(h)),
                exp.column("level").eq(exp.convert(0)),
                copy=False,
            )
        )
        alias = f"h{j}"
        on = exp.column("label", alias).eq(exp.cast(column(q, "b"), "VARCHAR"))
        left_join(inner, exp.alias_(leaves.subquery(copy=False), alias, table=True), on)
        inner = inner.select(exp.alias_(exp.column("id", alias), f"q{j}"), copy=False)
    if sensitive is not None:
        value = exp.cast(column(sensitive, "b"), "VARCHAR")
        inner = inner.select(exp.alias_(value, "s"), copy=False)
    if part is not None:
        p, parts = part
        hashed = exp.Anonymous(this="hash", expressions=[column(q, "b") for q in qis])
        inner = inner.where(exp.Mod(this=hashed, expression=exp.convert(parts)).eq(p), copy=False)
    keys = [f"q{j}" for j in range(len(qis))] + (["s"] if sensitive is not None else [])
    return (
        exp.select(
            *[exp.column(k) for k in keys], exp.alias_(exp.Count(this=exp.Star()), "n"), copy=False
        )
        .from_(exp.alias_(inner.subquery(copy=False), "r", table=True), copy=False)
        .group_by(*[exp.column(k) for k in keys], copy=False)
    )


__all__ = ["Histogram", "HistogramTooLarge", "histogram_query", "leaf_id_query"]
