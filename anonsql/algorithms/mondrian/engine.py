"""Mondrian where the data lives: the level-by-level recursion of
:func:`anonsql.algorithms.mondrian.cuts.mondrian_groups` run as SQL in the engine (DuckDB,
PostgreSQL, Spark), on the table's histogram kept there.

The histogram is one row per distinct QI tuple: the QIs as codes (ranks in the QI's order,
from domains read with one small GROUP BY per QI and coded by
:func:`anonsql.data.points.qi_domain`, exactly as the in-memory histogram codes them), the
tuple's rows, and, when a model reads the sensitive attribute, its rows per sensitive value
(one column each). Every part of one depth is split at once, with a few statements per depth
(``sql/mondrian/``):

1. the parts' weights and per QI their extreme codes or distinct codes (one GROUP BY); from
   them each part's normalized ranges and the order it tries its QIs in: widest first, ties
   by QI order (the stable sort of the in-memory version), in one more statement over the
   parts;
2. a *try*: every open part's rows per value of the QI it tries (one GROUP BY), the weighted
   median per part (window sums: the first value holding half the rows goes left with those
   before it, unless it is the last value), the two sides per part and every privacy model's
   SQL test on them (the templates the output's guard runs, ``sql/models``); parts whose cut
   fails try their next widest QI in the next try (``next-widest``) or are released
   (``widest``);
3. the rows of the parts released at this depth go to a table of the depth, the others to
   the next depth's rows under their child's number.

The partitions are those of the in-memory version (the same widths in the same floating
point operations, the same median in whole numbers, the same stop rule): the tests hold the
two to each other on random tables. What comes back to Python is the partition of every
distinct tuple (integers), from which the release's labels and figures are computed as for
the in-memory path.

Not served here (the in-memory path runs instead, :func:`engine_unsupported` says why): QIs
with a hierarchy (their cuts are among the children of a lowest common ancestor),
several sensitive attributes, a sensitive attribute with more than :data:`MAX_SENSITIVE`
values (one column each), and TA_DA's groups (its tree and clusters are computed in memory).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import sqlglot
from sqlglot import exp

from anonsql.algorithms.mondrian.cuts import NEXT_WIDEST, check_stop
from anonsql.backend.sql_templates import column, drop, query_template, table, temporary
from anonsql.data.points import NUMERIC, Points, qi_domain
from anonsql.errors import InputError
from anonsql.models.base import NULL_SENSITIVE, PrivacyModel, sensitive_order

#: the most sensitive values the engine's histogram carries as count columns (one each), for
#: the models that read the counts; k-anonymity and distinct l-diversity alone read a
#: bitmask of the values present instead (at most MASK_BITS values besides NULL)
MAX_SENSITIVE = 64
#: the bits of a BIGINT bitmask used for values (the sign bit left alone): categorical QIs
#: with at most this many values count a part's distinct values from one, as does distinct
#: l-diversity (a COUNT(DISTINCT) costs ten times a BIT_OR on DuckDB)
MASK_BITS = 62
#: source rows from which a run partitions in the engine. DuckDB: from where the engine
#: path is the faster one (benchmarks/bench_partition_scale.py, docs/benchmarks.md: at
#: 100,000 rows the in-memory path took half its CPU, at 1 M rows the engine path 60% of the
#: in-memory one's). None: when the in-memory path would not fit the memory budget
#: (:func:`memory_rows`): on PostgreSQL the in-memory path was four times faster at 1 M
#: rows (a server runs each statement on one core, and a depth is a dozen statements), and
#: on Spark every statement costs a second or more
ENGINE_ROWS: dict[str, int | None] = {"duckdb": 500_000, "postgres": None, "spark": None}
#: resident bytes per source row the in-memory path holds at its peak (bench_partition_scale:
#: 925 MB at 1 M rows, about 200 MB of it the libraries), rounded up
MEMORY_ROW_BYTES = 1000
#: the prefix of the temporary relations of a run
PREFIX = "__anonsql_mondrian_"
#: the histogram per tuple and sensitive value, kept when the parts carry a bitmask
VALUES = f"{PREFIX}values"


def memory_rows() -> int:
    """The source rows the in-memory path holds within the default memory budget (a share
    of the machine's memory, :func:`anonsql.data.memory.default_budget`)."""
    from anonsql.data.memory import default_budget

    return default_budget() // MEMORY_ROW_BYTES


def engine_threshold(dialect: str) -> int:
    """The source rows from which a run on ``dialect`` partitions in the engine."""
    rows = ENGINE_ROWS.get(dialect)
    return memory_rows() if rows is None else rows


def engine_unsupported(
    points_kinds_hint: list[bool], sensitive: Any, mode: str, needs_sensitive: bool
) -> str | None:
    """Why the engine path cannot run this partitioning (None: it can). ``points_kinds_hint``
    says per QI whether it has a hierarchy."""
    if mode != "mondrian":
        return "TA_DA's groups are computed in memory"
    if any(points_kinds_hint):
        return "a QI with a hierarchy is cut among its lowest common ancestor's children"
    if isinstance(sensitive, list) and needs_sensitive:
        return "several sensitive attributes"
    return None


#: engine types whose values are equal exactly when their texts are (the text of a value is
#: a function of it, and two values with one text are one value): integers and unbounded
#: strings. Not floats (-0.0 equals 0.0), decimals (PostgreSQL's numeric keeps each value's
#: scale: 1.0 equals 1.00), fixed-width strings (compared without trailing spaces).
_INTEGERS = {"tinyint", "smallint", "integer", "int", "bigint", "int2", "int4", "int8"}
_INTEGERS |= {"utinyint", "usmallint", "uinteger", "ubigint", "long", "short", "byte"}
_STRINGS = {"varchar", "text", "string", "character varying"}


def _raw_key(sql_type: str, raw: pd.Series) -> bool:
    """Whether a QI's histogram may join its domain on the value as typed (faster than on
    its text: at 10 M rows 1.8 s of CPU against 3.1 s): an integer or string type, read
    back as integers or strings."""
    t = sql_type.lower().split("(")[0].strip()
    if t in _INTEGERS:
        return raw.dtype.kind in "iu"
    if t in _STRINGS:
        return raw.dtype == object and all(isinstance(v, str) for v in raw.tolist())
    return False


def _c(name: str, alias: str | None = None) -> exp.Column:
    return exp.column(name, alias) if alias else exp.column(name)


def _double(value: float) -> exp.Expr:
    """A float as the engine's DOUBLE, exactly: parsed from its shortest round-trip text
    (a numeric literal would be a DECIMAL on DuckDB and PostgreSQL)."""
    return exp.cast(exp.convert(repr(float(value))), "DOUBLE")


def _pick(selector: exp.Expr, options: list[exp.Expr]) -> exp.Expr:
    """``CASE selector WHEN 0 THEN options[0] WHEN 1 ... END`` (the option itself when
    there is one)."""
    if len(options) == 1:
        return options[0]
    return exp.Case(
        this=selector,
        ifs=[exp.If(this=exp.convert(i), true=o) for i, o in enumerate(options)],
    )


@dataclass
class EngineRun:
    """What the engine computed: the histogram (as :class:`Points`), the partition of each of
    its rows, and how it went."""

    points: Points
    part_of_row: np.ndarray
    levels: int = 0
    statements: int = 0
    timings: dict[str, float] = field(default_factory=dict)


def depth_first(depths: list[tuple[int, int, np.ndarray]]) -> np.ndarray:
    """Each partition number's place in the depth-first order of the cuts (the order of the
    in-memory version's partitions: a part's children, and all their descendants, before
    its next sibling). ``depths``: per depth, the first partition number, the count of its
    parts, and the parts cut in the order of their children's numbers (the i-th has
    children 2i and 2i + 1 at the next depth)."""
    leaves = [np.ones(n, dtype=np.int64) for _, n, _ in depths]
    for d in range(len(depths) - 2, -1, -1):
        cut = depths[d][2]
        below = leaves[d + 1]
        leaves[d][cut] = below[0::2][: len(cut)] + below[1::2][: len(cut)]
    start = np.cumsum(leaves[0]) - leaves[0]
    total = depths[-1][0] + depths[-1][1] if depths else 0
    place = np.zeros(total, dtype=np.int64)
    for d, (first, n, cut) in enumerate(depths):
        place[first : first + n] = start
        if d + 1 < len(depths):
            nxt = np.zeros(depths[d + 1][1], dtype=np.int64)
            nxt[0::2] = start[cut]
            nxt[1::2] = start[cut] + leaves[d + 1][0::2]
            start = nxt
    return place


class EngineMondrian:
    """One Mondrian run in the engine of ``db`` (a context manager: the temporary relations
    are dropped on exit)."""

    def __init__(
        self,
        db: Any,
        source: str,
        qis: list[str],
        sensitive: str | None,
        models: list[PrivacyModel],
        needs_sensitive: bool,
        missing: str = "error",
        stop: str = NEXT_WIDEST,
        sensitive_top: int | None = None,
    ) -> None:
        from anonsql.models.k_anonymity import KAnonymity
        from anonsql.models.l_diversity import DistinctLDiversity

        self.db = db
        self.be = db.backend
        self.dialect = self.be.dialect
        self.source = source
        self.qis = list(qis)
        self.sensitive = sensitive if needs_sensitive else None
        self.models = [m for m in models if not m.table_level]
        # k-anonymity and distinct l-diversity read a class's size and its count of distinct
        # sensitive values: a bitmask of the values present carries the second, one column
        # instead of one per value (the other models read the counts)
        self.masked = all(type(m) in (KAnonymity, DistinctLDiversity) for m in self.models)
        self.missing = missing
        self.stop = check_stop(stop)
        self.sensitive_top = sensitive_top
        self.statements = 0
        #: the relations made, in order (dropped on exit)
        self._made: list[str] = []
        self.kinds: list[str] = []
        self.domains: list[list[str]] = []
        self.numbers: list[np.ndarray | None] = []
        self.sens_labels: list[str] = []
        self.spans: list[float] = []
        self.missing_rows = 0
        self.rows = 0
        #: per QI: the histogram joins its domain on the typed value (else on the text)
        self.raw_keys: list[bool] = []

    # -- plumbing ---------------------------------------------------------------------------
    def __enter__(self) -> EngineMondrian:
        self._jit = None
        if self.dialect == "postgres":
            # PostgreSQL only (the override files sql/mondrian/postgres__*jit.sql)
            self._jit = self._fetch(self._template("jit"))[0][0]
            self._fetch(self._template("set_jit", value="off"))
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for name in reversed(self._made):
            with contextlib.suppress(Exception):
                self.be.execute(drop("table", name))
        self._made.clear()
        if getattr(self, "_jit", None) is not None:
            with contextlib.suppress(Exception):
                self.be.fetchall(self._template("set_jit", value=self._jit))
            self._jit = None

    def _run(self, statement: exp.Expr) -> None:
        self.statements += 1
        self.be.execute(statement)

    def _fetch(self, statement: exp.Expr) -> list[tuple]:
        self.statements += 1
        return self.be.fetchall(statement)

    def _count(self, name: str, where: exp.Expr | None = None) -> int:
        q = exp.select(exp.Count(this=exp.Star())).from_(table(name))
        if where is not None:
            q = q.where(where)
        return int(self._fetch(q)[0][0])

    def _create(self, name: str, query: exp.Query) -> None:
        """Write ``query``'s rows as relation ``name``: a temporary table; on Spark a table
        (parquet), not a cached view. A cached view is analysed again from its definition
        whenever it is read, with the definitions of the views it reads: each depth reads
        the one before it several times over, so the plans of a chain of cached views
        would double in size with every depth."""
        self._drop(name)
        if self.dialect == "spark":
            self._run(exp.Create(this=table(name), kind="TABLE", expression=query))
        else:
            self._run(temporary(name, query, self.dialect))
        self._made.append(name)
        self.be.refresh_statistics(name)

    def _drop(self, name: str) -> None:
        if name in self._made:
            self._run(drop("table", name))
            self._made.remove(name)

    def _upload(self, name: str, frame: pd.DataFrame) -> None:
        self._drop(name)
        self.be.write_frame(name, frame, temporary=True)
        self.statements += 1
        self._made.append(name)
        self.be.refresh_statistics(name)

    def _template(self, name: str, **params: Any) -> exp.Select:
        tree = query_template(f"mondrian/{name}", self.dialect, **params)
        assert isinstance(tree, exp.Select)  # every statement of sql/mondrian/ is one SELECT
        return tree

    def _popcount(self, mask: exp.Expr) -> exp.Expr:
        """The bits set in ``mask`` (``sql/mondrian/popcount.sql``, per engine)."""
        return self._template("popcount", mask=mask).selects[0].unalias()

    # -- the histogram ----------------------------------------------------------------------
    def _known(self) -> exp.Expr:
        """Every QI has a value: the rows Mondrian partitions (the others are missing)."""
        return exp.and_(*[column(q).is_(exp.null()).not_() for q in self.qis])

    def prepare(self) -> str | None:
        """Read each QI's domain (and the sensitive values), code them in Python and upload
        them as small tables; count the rows with a missing QI value (NULL), raising when
        ``missing`` is "error". Returns why the engine cannot partition this table (None: it
        can)."""
        self._started = (time.perf_counter(), time.process_time())
        be = self.be
        src = table(self.source)
        if self.missing not in ("error", "suppress"):
            raise InputError(f"missing is 'error' or 'suppress', not {self.missing!r}")
        known_one = exp.Case(
            ifs=[exp.If(this=self._known(), true=exp.convert(1))], default=exp.convert(0)
        )
        total, known = self._fetch(
            exp.select(
                exp.Count(this=exp.Star()),
                exp.func("COALESCE", exp.Sum(this=known_one), exp.convert(0)),
            ).from_(src)
        )[0]
        self.missing_rows = int(total) - int(known)
        self.rows = int(known)
        if self.missing_rows and self.missing == "error":
            for q in self.qis:
                if self._count(self.source, column(q).is_(exp.null())):
                    raise InputError(
                        f"quasi-identifier {q!r} has values that are NULL: ['NULL']; "
                        f"pass --missing suppress (option missing = 'suppress') to leave those "
                        f"rows out (the output suppresses them)"
                    )
        if self.rows == 0:
            raise InputError("the table has no rows to anonymize")
        known_rows = self._known() if self.missing_rows else exp.true()
        types = be.column_types(self.source)
        for j, q in enumerate(self.qis):
            frame = be.fetch_df(
                self._template("domain", col=column(q), source=src, known=known_rows.copy())
            )
            self.statements += 1
            kind, domain, number, _leaf = qi_domain(frame["v"].astype(str), frame["r"], None)
            self.kinds.append(kind)
            self.domains.append(domain)
            self.numbers.append(number)
            up = pd.DataFrame(
                {"v": pd.Series(domain, dtype=object), "code": np.arange(len(domain))}
            )
            if kind == NUMERIC:
                up["x"] = np.asarray(number, dtype=np.float64)
                span = float(number.max() - number.min())  # type: ignore[union-attr]
            else:
                span = float(len(domain) - 1)
            self.spans.append(max(span, 0.0))
            raw = frame["r"]
            if _raw_key(types.get(q, ""), raw):
                # one value per text: the histogram joins the values as the engine types
                # them, without writing each row's value as text first
                up["r"] = raw.set_axis(frame["v"].astype(str)).loc[domain].to_numpy()
                self.raw_keys.append(True)
            else:
                self.raw_keys.append(False)
            self._upload(f"{PREFIX}dom{j}", up)
        if self.sensitive is None:
            return None
        frame = be.fetch_df(
            self._template(
                "sensitive_domain", col=column(self.sensitive), source=src, known=known_rows
            )
        )
        self.statements += 1
        self.sens_labels = sorted(frame["v"].astype(str).unique())
        if self.masked and len(self.sens_labels) > MASK_BITS:
            self.masked = False
        if not self.masked and len(self.sens_labels) > MAX_SENSITIVE:
            return (
                f"the sensitive attribute has {len(self.sens_labels)} values (the engine's "
                f"histogram holds at most {MAX_SENSITIVE}, one column each)"
            )
        self._upload(
            f"{PREFIX}sens",
            pd.DataFrame(
                {
                    "v": pd.Series(self.sens_labels, dtype=object),
                    "code": np.arange(len(self.sens_labels)),
                }
            ),
        )
        return None

    def _histogram(self, name: str) -> None:
        """Write the coded histogram (``pid`` 0, codes ``c<j>``, rows ``n``, and the
        sensitive values: a bitmask ``mask`` or a count per value ``s<i>``). With a bitmask
        the histogram per tuple and sensitive value is written first (:data:`VALUES`): the
        release's figures read its counts at the end."""
        q = self._template("histogram", source=table(self.source))
        keys = []
        for j, name_q in enumerate(self.qis):
            d = f"d{j}"
            on = (
                _c("r", d).eq(column(name_q, "b"))
                if self.raw_keys[j]
                else _c("v", d).eq(exp.cast(column(name_q, "b"), "VARCHAR"))
            )
            q = q.join(exp.alias_(table(f"{PREFIX}dom{j}"), d, table=True), on=on, copy=False)
            keys.append(_c("code", d))
            q = q.select(exp.alias_(_c("code", d), f"c{j}"), copy=False)
        if self.sensitive is not None:
            label = exp.func(
                "COALESCE",
                exp.cast(column(self.sensitive, "b"), "VARCHAR"),
                exp.convert(NULL_SENSITIVE),
            )
            q = q.join(
                exp.alias_(table(f"{PREFIX}sens"), "ds", table=True),
                on=_c("v", "ds").eq(label),
                copy=False,
            )
            if self.masked:
                q = q.select(exp.alias_(_c("code", "ds"), "s"), copy=False)
                keys.append(_c("code", "ds"))
                self._create(VALUES, q.group_by(*keys, copy=False))
                # each value's bit is its code (NULL's is left out when counting)
                codes = [_c(f"c{j}") for j in range(len(self.qis))]
                q = (
                    exp.select(exp.alias_(exp.convert(0), "pid"), *codes)
                    .select(
                        exp.alias_(exp.Sum(this=_c("n")), "n"),
                        exp.alias_(exp.BitwiseOrAgg(this=self._bit(_c("s"))), "mask"),
                    )
                    .from_(table(VALUES))
                    .group_by(*[c.copy() for c in codes])
                )
                self._create(name, q)
                return
            for i in range(len(self.sens_labels)):
                hit = exp.Case(
                    ifs=[exp.If(this=_c("code", "ds").eq(exp.convert(i)), true=exp.convert(1))],
                    default=exp.convert(0),
                )
                q = q.select(exp.alias_(exp.Sum(this=hit), f"s{i}"), copy=False)
        self._create(name, q.group_by(*keys, copy=False))

    @staticmethod
    def _bit(position: exp.Expr) -> exp.Expr:
        """``1 << position`` as a BIGINT (the position an INT: PostgreSQL shifts a BIGINT by
        an INT only)."""
        return exp.BitwiseLeftShift(
            this=exp.cast(exp.convert(1), "BIGINT"), expression=exp.cast(position, "INT")
        )

    # -- one depth ---------------------------------------------------------------------------
    @property
    def _counts(self) -> list[str]:
        """The sensitive columns a row carries."""
        if self.sensitive is None:
            return []
        return ["mask"] if self.masked else [f"s{i}" for i in range(len(self.sens_labels))]

    def _sums(self, alias: str) -> list[exp.Expr]:
        """The sensitive columns of ``alias`` summed over a group (a bitmask: OR-ed)."""
        return [
            exp.alias_(
                exp.BitwiseOrAgg(this=_c(s, alias)) if s == "mask" else exp.Sum(this=_c(s, alias)),
                s,
            )
            for s in self._counts
        ]

    def _carried(self, alias: str) -> list[exp.Expr]:
        """The columns a row carries from depth to depth."""
        cols = [f"c{j}" for j in range(len(self.qis))] + ["n", *self._counts]
        return [_c(c, alias) for c in cols]

    def _parts(self, rows: str, name: str) -> None:
        self._create(name, self.parts_query(rows))

    def parts_query(self, rows: str) -> exp.Select:
        """The parts of one depth (the relation ``rows``) with their weight, normalized range
        per QI (``w<j>``), and per try ``r`` the QI tried (``d<r>``) and its range
        (``ww<r>``)."""
        m = len(self.qis)
        stats = self._template("part_stats", rows=table(rows))
        distinct: dict[int, exp.Expr] = {}
        for j, kind in enumerate(self.kinds):
            c = _c(f"c{j}", "r")
            if kind == NUMERIC:
                stats = stats.select(
                    exp.alias_(exp.Min(this=c), f"lo{j}"),
                    exp.alias_(exp.Max(this=c.copy()), f"hi{j}"),
                    copy=False,
                )
            elif len(self.domains[j]) <= MASK_BITS:
                stats = stats.select(
                    exp.alias_(exp.BitwiseOrAgg(this=self._bit(c)), f"nd{j}"), copy=False
                )
                distinct[j] = self._popcount(_c(f"nd{j}", "s"))
            else:
                stats = stats.select(
                    exp.alias_(exp.Count(this=exp.Distinct(expressions=[c])), f"nd{j}"),
                    copy=False,
                )
                distinct[j] = _c(f"nd{j}", "s")
        widths = exp.select(_c("pid", "s"), _c("weight", "s")).from_(
            exp.alias_(stats.subquery(), "s", table=True)
        )
        for j, kind in enumerate(self.kinds):
            span = self.spans[j]
            if span <= 0:
                w: exp.Expr = _double(0.0)
            elif kind == NUMERIC:
                lo, hi = f"lo{j}_x", f"hi{j}_x"
                dom = table(f"{PREFIX}dom{j}")
                widths = widths.join(
                    exp.alias_(dom, lo, table=True),
                    on=_c("code", lo).eq(_c(f"lo{j}", "s")),
                    copy=False,
                ).join(
                    exp.alias_(dom.copy(), hi, table=True),
                    on=_c("code", hi).eq(_c(f"hi{j}", "s")),
                    copy=False,
                )
                # nums[hi] - nums[lo], over the table's span: the in-memory operations
                w = exp.Div(
                    this=exp.paren(exp.Sub(this=_c("x", hi), expression=_c("x", lo))),
                    expression=_double(span),
                )
            else:
                w = exp.Div(
                    this=exp.cast(exp.Sub(this=distinct[j], expression=exp.convert(1)), "DOUBLE"),
                    expression=_double(span),
                )
            widths = widths.select(exp.alias_(w, f"w{j}"), copy=False)
        # rank of QI j: the QIs wider than it, and those as wide before it (numpy's stable
        # argsort of the negated widths: widest first, ties in QI order)
        ranked = exp.select(_c("pid", "x"), _c("weight", "x")).from_(
            exp.alias_(widths.subquery(), "x", table=True)
        )
        for j in range(m):
            rank: exp.Expr = exp.convert(0)
            for i in range(m):
                if i == j:
                    continue
                wi, wj = _c(f"w{i}", "x"), _c(f"w{j}", "x")
                before = wi >= wj if i < j else wi > wj
                rank = exp.Add(
                    this=rank,
                    expression=exp.Case(
                        ifs=[exp.If(this=before, true=exp.convert(1))], default=exp.convert(0)
                    ),
                )
            ranked = ranked.select(_c(f"w{j}", "x"), exp.alias_(rank, f"k{j}"), copy=False)
        order = exp.select(_c("pid", "y"), _c("weight", "y")).from_(
            exp.alias_(ranked.subquery(), "y", table=True)
        )
        for r in range(m):
            at = [_c(f"k{j}", "y").eq(exp.convert(r)) for j in range(m)]
            dim = exp.Case(ifs=[exp.If(this=a, true=exp.convert(j)) for j, a in enumerate(at)])
            width = exp.Case(
                ifs=[exp.If(this=a.copy(), true=_c(f"w{j}", "y")) for j, a in enumerate(at)]
            )
            order = order.select(exp.alias_(dim, f"d{r}"), exp.alias_(width, f"ww{r}"), copy=False)
        return order

    def _pass(self, model: PrivacyModel, value: exp.Expr) -> exp.Expr:
        """``model``'s SQL test (what the output's guard runs) on ``value``."""
        cond = sqlglot.parse_one(model.sql_pass(), read="duckdb")
        return exp.func(
            "COALESCE",
            cond.transform(
                lambda n: value.copy() if isinstance(n, exp.Column) and n.name == "value" else n
            ),
            exp.false(),
        )

    def _model_verdicts(self, classes: str) -> exp.Select:
        """``pid, ok`` per class (a side of a cut) of the relation ``classes``: every model's
        SQL test, as the output's guard runs it (:mod:`anonsql.models.compile`)."""
        q = exp.select(_c("pid", "c")).from_(exp.alias_(exp.to_table(classes), "c", table=True))
        conds = []
        for i, model in enumerate(self.models):
            name, params = model.sql_template()
            if "top" in params and params["top"] is None:
                params = {**params, "top": self.sensitive_top}
            values = query_template(name, self.dialect, **params)
            v = f"v{i}"
            conds.append(self._pass(model, _c("value", v)))
            q = q.join(
                exp.alias_(values.subquery(), v, table=True),
                on=_c("class_id", v).eq(_c("class_id", "c")),
                join_type="left",
                copy=False,
            )
        return q.select(exp.alias_(exp.and_(*conds) if conds else exp.true(), "ok"), copy=False)

    def _mask_verdicts(self, sides: str) -> exp.Select:
        """``pid, ok`` per side when the models are k-anonymity and distinct l-diversity: a
        class's size and its distinct sensitive values (the bits of its mask) are their
        values, tested as the guard tests them."""
        from anonsql.models.k_anonymity import KAnonymity

        size = exp.cast(_c("n", "k"), "DOUBLE")
        # the bits of the values, NULL's left out (it is no value)
        valid = sum(1 << i for i, v in enumerate(self.sens_labels) if v != NULL_SENSITIVE)
        held = exp.BitwiseAnd(this=_c("mask", "k"), expression=exp.convert(valid))
        vals = exp.cast(self._popcount(held), "DOUBLE") if self._counts else None
        conds = [
            self._pass(m, size if isinstance(m, KAnonymity) else vals)  # type: ignore[arg-type]
            for m in self.models
        ]
        return exp.select(
            _c("pid", "k"), exp.alias_(exp.and_(*conds) if conds else exp.true(), "ok")
        ).from_(exp.alias_(exp.to_table(sides), "k", table=True))

    def _try(self, rows: str, parts: str, r: int, floor: int, previous: str | None, name: str):
        self._create(name, self.try_query(rows, parts, r, floor, previous))

    def try_query(
        self, rows: str, parts: str, r: int, floor: int, previous: str | None
    ) -> exp.Select:
        """Try ``r`` of every open part (of ``parts``, the rows ``rows``; ``previous``: the
        try before, whose failed parts try again): its cut on its ``r``-th widest QI, and
        whether both sides satisfy every model."""
        m = len(self.qis)
        code = _pick(_c(f"d{r}", "p"), [_c(f"c{j}", "r") for j in range(m)])
        open_ = exp.and_(
            exp.GTE(this=_c("weight", "p"), expression=exp.convert(floor)),
            exp.GT(this=_c(f"ww{r}", "p"), expression=_double(0.0)),
        )
        if previous is not None:
            failed = (
                exp.select(_c("pid", "t"))
                .from_(exp.alias_(table(previous), "t", table=True))
                .where(exp.not_(_c("passed", "t")))
            )
            open_ = exp.and_(open_, _c("pid", "p").isin(query=failed))
        counts = self._template(
            "try_counts", rows=table(rows), parts=table(parts), code=code, open=open_
        )
        counts = counts.select(*self._sums("r"), copy=False)
        medians = self._template("median", counts=exp.to_table("h"), parts=table(parts))
        sides = self._template("split_classes", counts=exp.to_table("h"), medians=exp.to_table("t"))
        sides = sides.select(*self._sums("h"), copy=False)
        query = (
            self._template(
                "try_result",
                medians=exp.to_table("t"),
                parts=table(parts),
                verdicts=exp.to_table("verdicts"),
                dim=_c(f"d{r}", "p"),
            )
            .with_("h", as_=counts, copy=False)
            .with_("t", as_=medians, copy=False)
            .with_("sides", as_=sides, copy=False)
        )
        if self.masked:
            return query.with_("verdicts", as_=self._mask_verdicts("sides"), copy=False)
        # the relations the models' SQL reads (anonsql.models.compile), over the sides
        class_id = exp.Add(
            this=exp.Mul(this=exp.convert(2), expression=_c("pid", "k")),
            expression=_c("child", "k"),
        )
        sums = self._counts
        non_null = [
            s for s, label in zip(sums, self.sens_labels, strict=True) if label != NULL_SENSITIVE
        ]
        vals: exp.Expr = exp.Null()
        if non_null:
            total: exp.Expr = _c(non_null[0], "k")
            for s in non_null[1:]:
                total = exp.Add(this=total, expression=_c(s, "k"))
            vals = exp.func("NULLIF", exp.cast(total, "DOUBLE"), exp.convert(0))
        classes = exp.select(
            exp.alias_(class_id, "class_id"),
            _c("pid", "k"),
            exp.alias_(exp.cast(_c("n", "k"), "DOUBLE"), "size"),
            exp.alias_(exp.false(), "suppressed"),
            exp.alias_(vals, "vals"),
        ).from_(exp.alias_(exp.to_table("sides"), "k", table=True))
        query = query.with_("classes", as_=classes, copy=False)
        if self.sensitive is not None:
            labels = exp.alias_(table(f"{PREFIX}sens"), "l", table=True)
            count = _pick(_c("code", "l"), [_c(s, "k") for s in sums])
            pairs = (
                exp.select(
                    exp.alias_(class_id.copy(), "class_id"),
                    exp.alias_(_c("v", "l"), "s"),
                    exp.alias_(exp.cast(count, "DOUBLE"), "c"),
                )
                .from_(exp.alias_(exp.to_table("sides"), "k", table=True))
                .join(labels, join_type="cross", copy=False)
                .where(
                    exp.GT(this=count.copy(), expression=exp.convert(0)),
                    _c("v", "l").neq(exp.convert(NULL_SENSITIVE)),
                    copy=False,
                )
            )
            query = query.with_("class_sensitive", as_=pairs, copy=False).with_(
                "overall", as_=exp.select("*").from_(table(f"{PREFIX}overall")), copy=False
            )
        return query.with_("verdicts", as_=self._model_verdicts("classes"), copy=False)

    def _overall(self, rows: str) -> None:
        """The table's sensitive distribution (``overall(s, q, rnk)``, as the models' SQL
        reads it: NULL left out, values ranked numbers first)."""
        sums = [exp.Sum(this=_c(s)) for s in self._counts]
        got = self._fetch(exp.select(*sums).from_(table(rows)))[0]
        counts = np.asarray([int(v or 0) for v in got], dtype=np.float64)
        keep = np.asarray([lab != NULL_SENSITIVE for lab in self.sens_labels])
        total = counts[keep].sum()
        labels = [lab for lab, k in zip(self.sens_labels, keep, strict=True) if k]
        rank = sensitive_order(labels) + 1 if labels else np.zeros(0, dtype=np.int64)
        frame = pd.DataFrame(
            {
                "s": pd.Series(labels, dtype=object),
                "q": counts[keep] / total if total > 0 else counts[keep],
                "rnk": rank.astype(np.int64),
            }
        )
        self._upload(f"{PREFIX}overall", frame)

    # -- the run ----------------------------------------------------------------------------
    def run(self, floor: int, controllers: int = 1, seed: int = 0) -> EngineRun:
        """Partition the table (after :meth:`prepare`); ``floor``: the fewest rows a part
        needs to be tried (twice the smallest class the models allow); ``controllers`` and
        ``seed``: the data controllers' split (:func:`controller_of_tuples`)."""
        from anonsql.algorithms.mondrian.driver import controller_of_tuples

        t0, c0 = getattr(self, "_started", (time.perf_counter(), time.process_time()))
        rows = f"{PREFIX}histogram"
        self._histogram(rows)
        if controllers > 1:
            owners = controller_of_tuples(self._count(rows), controllers, seed)
            owned = f"{PREFIX}rows0"
            self._assign_controllers(rows, owners, owned)
            self._drop(rows)
            rows = owned
        if self.sensitive is not None and not self.masked:
            self._overall(rows)
        t1, c1 = time.perf_counter(), time.process_time()
        m = len(self.qis)
        tries = m if self.stop == NEXT_WIDEST else 1
        finals: list[str] = []
        # per depth: the first partition number, the parts, the cut parts in child order
        depths: list[tuple[int, int, np.ndarray]] = []
        offset = 0
        level = 0
        while True:
            parts, cuts = f"{PREFIX}parts{level}", f"{PREFIX}cuts{level}"
            self._parts(rows, parts)
            n_parts, top = self._fetch(
                exp.select(exp.Count(this=exp.Star()), exp.Max(this=_c("pid"))).from_(table(parts))
            )[0]
            tried: list[str] = []
            for r in range(tries):
                name = f"{PREFIX}try{level}_{r}"
                self._try(rows, parts, r, floor, tried[-1] if tried else None, name)
                tried.append(name)
                if r + 1 == tries:
                    break
                # the parts whose cut failed, with a next widest QI to try
                left = (
                    exp.select(exp.Count(this=exp.Star()))
                    .from_(exp.alias_(table(name), "t", table=True))
                    .join(
                        exp.alias_(table(parts), "p", table=True),
                        on=_c("pid", "p").eq(_c("pid", "t")),
                    )
                    .where(
                        exp.not_(_c("passed", "t")),
                        exp.GT(this=_c(f"ww{r + 1}", "p"), expression=_double(0.0)),
                    )
                )
                if not int(self._fetch(left)[0][0]):
                    break
            union: exp.Query = exp.select("pid", "dim", "thr", "passed").from_(table(tried[0]))
            for t in tried[1:]:
                union = exp.union(
                    union, exp.select("pid", "dim", "thr", "passed").from_(table(t)), distinct=False
                )
            self._create(cuts, self._template("cuts", tries=union.subquery()))
            for t in tried:
                self._drop(t)
            self.statements += 1
            cut_pids = np.asarray(
                self.be.fetch_columns(exp.select(_c("pid")).from_(table(cuts)).order_by(_c("seq")))[
                    "pid"
                ],
                dtype=np.int64,
            )
            depths.append((offset, int(top) + 1, cut_pids))
            if len(cut_pids) < int(n_parts):
                final = f"{PREFIX}final{level}"
                q = self._template(
                    "final_rows", rows=table(rows), cuts=table(cuts), base=exp.convert(offset)
                )
                self._create(final, q.select(*self._carried("r"), copy=False))
                finals.append(final)
            offset += int(top) + 1
            self._drop(parts)
            if not len(cut_pids):
                self._drop(cuts)
                break
            nxt = f"{PREFIX}rows{level + 1}"
            code = _pick(_c("dim", "c"), [_c(f"c{j}", "r") for j in range(m)])
            q = self._template("cut_rows", rows=table(rows), cuts=table(cuts), code=code)
            self._create(nxt, q.select(*self._carried("r"), copy=False))
            self._drop(cuts)
            self._drop(rows)
            rows = nxt
            level += 1
        self._drop(rows)
        t2, c2 = time.perf_counter(), time.process_time()
        out = self._collect(finals)
        self._finals = finals
        points, part = self._points(out)
        for f in finals:
            self._drop(f)
        self._drop(VALUES)
        part = depth_first(depths)[part]
        t3, c3 = time.perf_counter(), time.process_time()
        # wall and CPU seconds (this process's: DuckDB's threads run in it, a server's not)
        return EngineRun(
            points,
            part,
            level + 1,
            self.statements,
            {
                "histogram": t1 - t0,
                "levels": t2 - t1,
                "read": t3 - t2,
                "histogram_cpu": c1 - c0,
                "levels_cpu": c2 - c1,
                "read_cpu": c3 - c2,
            },
        )

    def _assign_controllers(self, rows: str, controllers: np.ndarray, name_out: str) -> None:
        """Start each tuple in its data controller's part: the tuples numbered in
        lexicographic order of their codes, as :attr:`Points.tuple_ids` numbers them."""
        name = f"{PREFIX}owners"
        self._upload(
            name,
            pd.DataFrame(
                {"tid": np.arange(len(controllers), dtype=np.int64), "owner": controllers}
            ),
        )
        order = exp.Order(expressions=[exp.Ordered(this=_c(f"c{j}")) for j in range(len(self.qis))])
        numbered = exp.select(
            exp.alias_(
                exp.Sub(
                    this=exp.Window(this=exp.Anonymous(this="ROW_NUMBER"), order=order),
                    expression=exp.convert(1),
                ),
                "tid",
            ),
            *self._carried(""),
        ).from_(table(rows))
        q = (
            exp.select(exp.alias_(_c("owner", "o"), "pid"), *self._carried("t"))
            .from_(exp.alias_(numbered.subquery(), "t", table=True))
            .join(
                exp.alias_(table(name), "o", table=True),
                on=_c("tid", "o").eq(_c("tid", "t")),
                copy=False,
            )
        )
        self._create(name_out, q)
        self._drop(name)

    def _collect(self, finals: list[str]) -> dict[str, np.ndarray]:
        cols = ["part", *[f"c{j}" for j in range(len(self.qis))], "n", *self._counts]
        union: exp.Query | None = None
        for f in finals:
            q = exp.select(*cols).from_(table(f))
            union = q if union is None else exp.union(union, q, distinct=False)
        assert union is not None  # the first depth releases or cuts every part
        self.statements += 1
        return self.be.fetch_columns(
            exp.select("*").from_(exp.alias_(union.subquery(), "u", table=True))
        )

    def _value_counts(
        self, finals: list[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The histogram per tuple and sensitive value (:data:`VALUES`) with each tuple's
        partition: codes, partitions, counts and sensitive codes."""
        m = len(self.qis)
        codes = [f"c{j}" for j in range(m)]
        union: exp.Query | None = None
        for f in finals:
            q = exp.select("part", *codes).from_(table(f))
            union = q if union is None else exp.union(union, q, distinct=False)
        assert union is not None
        q = (
            exp.select(_c("part", "f"), *[_c(c, "l") for c in codes], _c("s", "l"), _c("n", "l"))
            .from_(exp.alias_(table(VALUES), "l", table=True))
            .join(
                exp.alias_(union.subquery(), "f", table=True),
                on=exp.and_(*[_c(c, "f").eq(_c(c, "l")) for c in codes]),
            )
        )
        self.statements += 1
        out = self.be.fetch_columns(q)
        return (
            np.column_stack([np.asarray(out[c], dtype=np.int64) for c in codes]),
            np.asarray(out["part"], dtype=np.int64),
            np.asarray(out["n"], dtype=np.int64),
            np.asarray(out["s"], dtype=np.int64),
        )

    def _points(self, out: dict[str, np.ndarray]) -> tuple[Points, np.ndarray]:
        """The histogram as :class:`Points` (one row per tuple and sensitive value present,
        as the in-memory histogram has them) and each row's partition."""
        m = len(self.qis)
        codes = np.column_stack([np.asarray(out[f"c{j}"], dtype=np.int64) for j in range(m)])
        part = np.asarray(out["part"], dtype=np.int64)
        counts = np.asarray(out["n"], dtype=np.int64)
        sens = None
        if self.sensitive is not None and self.masked:
            # a bitmask says which values a tuple holds, not how many rows hold each (the
            # release's figures read the counts): they come from the histogram per value
            codes, part, counts, sens = self._value_counts(self._finals)
        elif self.sensitive is not None:
            per = np.column_stack([np.asarray(out[s], dtype=np.int64) for s in self._counts])
            tup, val = np.nonzero(per)
            codes, part, counts = codes[tup], part[tup], per[tup, val]
            sens = val.astype(np.int64)
        points = Points(
            list(self.qis),
            list(self.kinds),
            self.domains,
            codes,
            counts,
            self.numbers,
            [None] * m,
            [None] * m,
            sens,
            list(self.sens_labels),
            missing_rows=self.missing_rows,
        )
        return points, part


__all__ = [
    "ENGINE_ROWS",
    "MAX_SENSITIVE",
    "MEMORY_ROW_BYTES",
    "EngineMondrian",
    "EngineRun",
    "engine_threshold",
    "engine_unsupported",
    "memory_rows",
]
