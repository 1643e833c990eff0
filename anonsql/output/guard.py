"""The self-guarding output query: what every anonymized view runs at read time.

A view built by anonsql does not trust anything stored at run time to keep it anonymous. Each
read

1. gives every source row the run's transformation (:mod:`anonsql.algorithms.recoding`): its QI
   values are mapped to released labels and hierarchy node ids, through the run's pinned
   hierarchy versions (full-domain levels) or its stored recoding table (multidimensional
   recodings). A QI value that the mapping lacks - a value added after the run, a NULL - gives
   no node: that row is *unknown* and suppressed in every QI, whatever its level;
2. forms the equivalence classes of the rows as they are *now* (the rows mapped to node ids,
   then one GROUP BY over the node ids, so the class sizes cost about one GROUP BY of the
   source) and tests every privacy model of the run on them, with the SQL the ``check`` command runs
   (``sql/models/*.sql``, over the same four relations ``classes``, ``class_sensitive``,
   ``overall``);
3. suppresses (``*`` in every QI, or leaves out) the rows of every class that fails a model.

Models that read a population table (k-map, delta-presence) get each class's population count
from the population table grouped by the same mapping (its rows never leave the database), so
a read tests ``|class| / |population ∩ class|`` as the tables are *now*. The table-level risk
thresholds (average risk, sample and population uniqueness) are enforced after the per-class
models by suppressing the released classes smallest first (ties: node ids) until every
threshold holds, as the search does; population uniqueness is enforced through sample
uniqueness at its threshold, a sound bound (:mod:`anonsql.models.risk_thresholds`).

So a deleted row can shrink a class below k, an inserted row can form a new class, and either
way the read suppresses what fails. Correctness does not depend on any list of suppressed
classes kept from the run. The overall sensitive distribution (t-closeness) is that of every
row of the source, suppressed ones included, as ``anonsql check`` counts it on the released
table and as the run's search counted it (rows with values a hierarchy lacks included, with
``missing="suppress"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from anonsql.algorithms.recoding import SUPPRESSED_LABEL, LevelRecoding, Recoding, TableRecoding
from anonsql.backend.sql_templates import (
    as_text,
    column,
    ident,
    left_join,
    query_template,
    table,
    template,
)
from anonsql.errors import InputError
from anonsql.hierarchy.store import NODES
from anonsql.masking.methods import Mask, sql_digest, sql_mask
from anonsql.models.base import NULL_SENSITIVE, OnAttribute, PrivacyModel, unwrap
from anonsql.models.compile import SENSITIVE_ORDER

#: prefix of every relation name the query defines (common table expressions); a source
#: cannot be named like that (:func:`check_source_name`)
PREFIX = "__anonsql_"
#: the relations the model templates read, renamed to prefixed CTEs here
_MODEL_RELATIONS = ("classes", "class_sensitive", "overall")
#: with a privacy unit, what a distribution model reads instead: each unit weighing once,
#: shared among its values (anonsql.models.unit_requirements)
_SHARED = {"class_sensitive": "class_shares", "classes": "class_share_totals"}


@dataclass(frozen=True)
class _Lookup:
    """A keyed mask's column, read from its token join (aliased ``alias``)."""

    alias: str


@dataclass
class Guard:
    """What a read enforces: the run's privacy models over its sensitive attribute.

    ``sensitive_hierarchy`` is the pinned key of the hierarchy a hierarchical EMD uses; a row
    whose sensitive value that hierarchy lacks is unknown (suppressed), as the run could not
    have placed it either."""

    models: list[PrivacyModel]
    sensitive: str | list[str] | None = None  # several: a list of their columns
    sensitive_hierarchy: str | None = None
    sensitive_top: int | None = None
    #: the population table of k-map and delta-presence (grouped by the same mapping)
    population: str | None = None
    #: the privacy unit (docs/models/units.md): classes count its distinct values, and a
    #: row without one is suppressed
    unit: str | None = None
    k_only: bool = field(init=False)

    def __post_init__(self) -> None:
        if not self.models:
            raise InputError("a guarded output needs at least one privacy model")
        self.k_only = not any(m.needs_sensitive for m in self.models)
        if any(m.needs_population for m in self.models) and self.population is None:
            raise InputError("k-map and delta-presence need a population table")
        if not self.k_only and self.sensitive is None:
            raise InputError("l-diversity and t-closeness need a sensitive attribute (--sa)")


def check_source_name(source: str) -> None:
    if source.lower().startswith(PREFIX):
        raise InputError(f"names starting with {PREFIX!r} are reserved for anonsql's queries")


def _c(name: str, alias: str | None = None) -> exp.Column:
    return column(name, alias)


def _raw(name: str, alias: str = "s") -> exp.Expr:
    return as_text(column(name, alias))


def _subquery(query: exp.Expr, alias: str) -> exp.Subquery:
    return exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(alias)))


def _mapping_joins(
    q: exp.Select,
    dialect: str,
    qis: list[str],
    recoding: Recoding,
    alias: str,
    value,
    widths: list[int] | None = None,
) -> tuple[exp.Select, list[exp.Expr], list[exp.Expr]]:
    """Join ``q`` (rows aliased ``alias``) to the transformation; returns the query, each QI's
    node id and each QI's released label (NULL where the mapping lacks the value). With
    ``widths`` (level recodings), a map row whose node id is outside ``[0, width)`` matches
    nothing: its value is unknown, as :func:`_packed_key` needs."""
    nodes: list[exp.Expr] = []
    labels: list[exp.Expr] = []
    if isinstance(recoding, LevelRecoding):
        for j, (key, lv) in enumerate(zip(recoding.hierarchies, recoding.levels, strict=True)):
            m = f"{PREFIX}m{j}"
            # LEFT JOIN: a value the hierarchy lacks keeps its row (suppressed, not dropped);
            # an outer join also keeps PostgreSQL's row estimate at the source's size
            on: exp.Expr = _c("value", m).eq(value(qis[j], alias))
            if widths is not None:
                # the pinned hierarchy's node ids are 0 .. size - 1: only an edited map holds
                # another, and its value is then suppressed rather than packed into the key of
                # another class
                in_range = exp.Between(
                    this=_c("node", m),
                    low=exp.convert(0),
                    high=exp.convert(widths[j] - 1),
                )
                on = exp.and_(on, in_range, copy=False)
            left_join(q, _subquery(level_map(dialect, key, lv), m), on)
            nodes.append(_c("node", m))
            labels.append(_c("generalized", m))
        return q, nodes, labels
    assert isinstance(recoding, TableRecoding)
    r = f"{PREFIX}rec"
    rec_on = exp.and_(
        *[_c(f"o{j}", r).eq(value(q_, alias)) for j, q_ in enumerate(qis)], copy=False
    )
    left_join(q, _subquery(recoding.lookup_query(len(qis)), r), rec_on)
    return q, [_c(f"n{j}", r) for j in range(len(qis))], [_c(f"g{j}", r) for j in range(len(qis))]


#: the largest packed class key: every engine's BIGINT (a signed 64-bit integer)
_KEY_MAX = 2**63 - 1


def _packable(widths: list[int] | None) -> bool:
    """Whether node ids bounded by ``widths`` pack into one BIGINT (:func:`_packed_key`)."""
    if widths is None or not widths or any(w < 1 for w in widths):
        return False
    return math.prod(widths) - 1 <= _KEY_MAX


def _packed_key(nodes: list[exp.Expr], widths: list[int]) -> exp.Expr:
    """One BIGINT per row for the node ids ``nodes`` (each in ``[0, width)``): the mixed-radix
    number ``(..(n0 * w1 + n1) * w2 + ..) + n<m-1>``, NULL when any node id is NULL. Distinct
    node tuples get distinct keys, and the keys sort as the tuples do (n0 first), so a class's
    ROW_NUMBER and the risk thresholds' size-then-nodes order are those of the node ids. The
    classes' GROUP BY and the verdict join then compare one column instead of one per QI
    (Adult, 8 QIs: view scan 24.8 -> 23.1 ms on DuckDB, 94.8 -> 79.5 ms on PostgreSQL)."""
    key: exp.Expr = exp.cast(nodes[0].copy(), "BIGINT")
    for nd, w in zip(nodes[1:], widths[1:], strict=True):
        key = exp.Add(
            this=exp.Mul(
                this=exp.paren(key, copy=False) if isinstance(key, exp.Add) else key,
                expression=exp.convert(w),
            ),
            expression=nd.copy(),
        )
    return key


def level_map(dialect: str, key: str, level: int) -> exp.Expr:
    """``value, generalized, node`` of hierarchy version ``key`` on ``level``, read from its
    stored map (``sql/hierarchy/level_lookup.sql``; a tree of the caller's own)."""
    return template("hierarchy/level_lookup", dialect, name=key, level=level)


def _rename_model_relations(tree: exp.Query, suffix: str = "", shares: bool = False) -> exp.Query:
    """Point a model's template at the prefixed relations; with ``shares``, its
    ``class_sensitive`` is the per-unit weighted one (``class_shares``)."""

    def rename(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and not node.db and node.name in _MODEL_RELATIONS:
            name = _SHARED.get(node.name, node.name) if shares else node.name
            return exp.alias_(
                exp.to_table(PREFIX + name + suffix), node.alias or node.name, table=True
            )
        return node

    renamed = tree.transform(rename)
    assert isinstance(renamed, exp.Query)  # its tables renamed, a query is still one
    return renamed


def _model_ok(
    models: list[PrivacyModel],
    dialect: str,
    top: int | None,
    suffix: str = "",
    unit: bool = False,
) -> exp.Select:
    """``class_id, ok`` over the prefixed ``classes`` relation (of one sensitive attribute:
    ``suffix``): every model's SQL test. With a ``unit``, the distribution models read each
    unit's weight shared among its values (:mod:`anonsql.models.unit_requirements`)."""
    cls = f"{PREFIX}classes{suffix}"
    q = exp.select(_c("class_id", "c")).from_(exp.alias_(exp.to_table(cls), "c", table=True))
    conds = []
    for i, model in enumerate(models):
        if model.table_level:
            continue  # enforced over all classes (:func:`_table_verdicts`)
        name, params = model.sql_template()
        if "top" in params and params["top"] is None:
            params = {**params, "top": top}
        shares = unit and getattr(model, "reads_distribution", False)
        values = _rename_model_relations(query_template(name, dialect, **params), suffix, shares)
        v = f"v{i}"
        cond = sqlglot.parse_one(model.sql_pass(), read="duckdb")
        cond = cond.transform(
            lambda n, v=v: _c("value", v) if isinstance(n, exp.Column) and n.name == "value" else n
        )
        conds.append(exp.func("COALESCE", cond, exp.false()))
        left_join(q, _subquery(values, v), _c("class_id", v).eq(_c("class_id", "c")))
    return q.select(exp.alias_(exp.and_(*conds) if conds else exp.true(), "ok"), copy=False)


def _sensitive_leaves(key: str) -> exp.Select:
    """The leaf labels of the sensitive attribute's hierarchy (a pinned version)."""
    return (
        exp.select(_c("label"))
        .from_(table(NODES))
        .where(_c("hierarchy").eq(exp.convert(key)), _c("level").eq(exp.convert(0)), copy=False)
    )


def _population_counts(
    dialect: str, population: str, qis: list[str], recoding: Recoding
) -> exp.Select:
    """The population table grouped by the run's mapping: node ids ``n0..``, the count ``pn``
    of population rows per class and ``known`` (1: the mapping knows every QI value of the
    group). Rows with a value the mapping lacks group under a NULL node id with ``known`` 0:
    the join to the classes never matches them, and the population-only classes
    (:func:`_unreleased`) leave them out. ``known`` is an aggregate, as in step 1 of
    :func:`guarded_query`, so that no NOT NULL test of the node ids turns the mapping's LEFT
    JOINs into inner joins (PostgreSQL then plans nested loops). The population's rows never
    leave the database: k-map and delta-presence join this to the classes by node ids."""
    n_cols = [f"n{j}" for j in range(len(qis))]
    rows = exp.select().from_(exp.alias_(table(population), "pr", table=True))
    rows, nodes, _ = _mapping_joins(rows, dialect, qis, recoding, "pr", _raw)
    keys = [exp.alias_(nd, n) for nd, n in zip(nodes, n_cols, strict=True)]
    every_known = exp.and_(*[nd.is_(exp.null()).not_() for nd in nodes])
    known_row = exp.Case(
        ifs=[exp.If(this=every_known, true=exp.convert(1))], default=exp.convert(0)
    )
    return rows.select(
        *keys,
        exp.alias_(exp.Count(this=exp.Star()), "pn"),
        exp.alias_(exp.Min(this=known_row), "known"),
        copy=False,
    ).group_by(*[exp.Literal.number(i + 1) for i in range(len(keys))], copy=False)


def _unreleased(pop: str, ck: str, n_cols: list[str]) -> exp.Expr:
    """``u``: the number of population classes (known node ids) without a class of the source:
    population-only classes, which delta-presence with delta_min > 0 fails and no suppression
    repairs (:mod:`anonsql.models.delta_presence`). A LEFT JOIN kept where the class is
    missing: an anti-join, planned as a hash join."""
    on = " AND ".join(f"k.{n} = p.{n}" for n in n_cols)
    return sqlglot.parse_one(
        f"""
        SELECT COUNT(*) AS u
        FROM {pop} AS p LEFT JOIN {ck} AS k ON {on}
        WHERE p.known = 1 AND k.class_id IS NULL
        """,
        read="duckdb",
    )


def _table_verdicts(
    models: list[PrivacyModel], ck: str, class_ok: str, n_cols: list[str], name: str
) -> list[tuple[str, exp.Expr]]:
    """The verdicts after the table-level risk thresholds
    (:mod:`anonsql.models.risk_thresholds`): the classes passing the per-class models are
    ranked by size, then node ids; suppressing the first j leaves C - j classes, N - S_j
    records and U - U_j sample uniques; j* is the smallest j after which every threshold holds
    (average risk: (C - j) / (N - S_j); sample uniqueness, and population uniqueness through
    it: (U - U_j) / (N - S_j); an empty release holds), and the first j* classes are
    suppressed. Each measure only falls as j grows (the search's
    :func:`~anonsql.models.risk_thresholds.enforce_table_models` finds the same j*)."""
    ranked, best = f"{PREFIX}ranked", f"{PREFIX}jstar"
    order = ", ".join(["k.size", *[f"k.{n}" for n in n_cols]])
    win = f"OVER (ORDER BY {order} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"

    def holds(classes: str, uniques: str, records: str) -> str:
        conds = []
        for mdl in models:
            t = repr(float(mdl.threshold))  # type: ignore[attr-defined]
            left = classes if mdl.name == "average-risk" else uniques
            conds.append(f"CAST({left} AS DOUBLE) / {records} <= {t}")
        return f"({records} = 0 OR ({' AND '.join(conds)}))"

    rank_sql = f"""
        SELECT k.class_id, k.size,
               ROW_NUMBER() OVER (ORDER BY {order}) AS r,
               SUM(k.size) {win} AS s_r,
               SUM(CASE WHEN k.size = 1 THEN 1 ELSE 0 END) {win} AS u_r,
               COUNT(*) OVER () AS c_all,
               SUM(k.size) OVER () AS n_all,
               SUM(CASE WHEN k.size = 1 THEN 1 ELSE 0 END) OVER () AS u_all
        FROM {ck} AS k JOIN {class_ok} AS o ON o.class_id = k.class_id
        WHERE o.ok
    """
    after = holds("x.c_all - x.r", "x.u_all - x.u_r", "(x.n_all - x.s_r)")
    before = holds("MAX(x.c_all)", "MAX(x.u_all)", "MAX(x.n_all)")
    best_sql = f"""
        SELECT CASE WHEN COUNT(*) = 0 OR {before} THEN 0
                    ELSE MIN(CASE WHEN {after} THEN x.r END) END AS j
        FROM {ranked} AS x
    """
    verdict_sql = f"""
        SELECT o.class_id, o.ok AND NOT COALESCE(x.r <= b.j, FALSE) AS ok
        FROM {class_ok} AS o
        LEFT JOIN {ranked} AS x ON x.class_id = o.class_id
        CROSS JOIN {best} AS b
    """
    return [
        (ranked, sqlglot.parse_one(rank_sql, read="duckdb")),
        (best, sqlglot.parse_one(best_sql, read="duckdb")),
        (name, sqlglot.parse_one(verdict_sql, read="duckdb")),
    ]


#: sources of at most this many rows (at publication) get their mapped rows computed once
#: and kept for the query's two passes (a MATERIALIZED common table expression): on small
#: tables the mapping joins' planning and set-up dominate a read. A larger source is mapped
#: again in the second pass, which costs less than keeping a copy of all its rows
#: (benchmarks/bench_views.py; docs/benchmarks.md)
MATERIALIZE_ROWS = 200_000


def guarded_query(
    dialect: str,
    source: str,
    columns: list[str],
    qis: list[str],
    recoding: Recoding,
    guard: Guard,
    drop_suppressed: bool = False,
    roots: list[int] | None = None,
    flag: bool = False,
    masks: dict[str, Mask] | None = None,
    output: str | None = None,
    mask_digests: bool = False,
    source_rows: int | None = None,
    widths: list[int] | None = None,
) -> exp.Select:
    """SELECT of the released rows of ``source`` (``columns``, QIs as labels).

    ``masks``: the masking method of each identifier among ``columns``; a keyed one reads its
    tokens from ``anonsql_masks`` under ``output`` (a value without a token reads NULL), by
    the value's text, or by its SHA-256 digest with ``mask_digests`` (deployment scripts).

    With ``roots`` (each QI's root node id) the rows also carry, per QI j, the original value
    ``__o<j>`` and the released node ``__n<j>`` (the root for suppressed rows): what the
    data-mining representations read. With ``flag`` they carry ``__suppressed``.

    ``source_rows``: the source's size when known (at publication); it only chooses how the
    engine evaluates the mapped rows (:data:`MATERIALIZE_ROWS`), never what a read
    releases.

    ``widths``: each QI's hierarchy size (level recodings; node ids 0 .. size - 1). When the
    node ids pack into one BIGINT (:func:`_packed_key`), the classes are keyed by that one
    column ``nk`` instead of one node id per QI (not with ``roots``, which release each QI's
    node, nor with a population table, grouped by node ids of its own)."""
    check_source_name(source)
    m = len(qis)
    packed = (
        isinstance(recoding, LevelRecoding)
        and roots is None
        and guard.population is None
        and _packable(widths)
    )
    bounds = widths if packed else None
    n_cols = ["nk"] if packed else [f"n{j}" for j in range(m)]
    # k-anonymity alone needs class sizes only; any other model reads the model relations
    # (without a sensitive attribute, over one constant sensitive value)
    simple = guard.k_only and all(mdl.name == "k-anonymity" for mdl in guard.models)
    no_sensitive = guard.k_only
    if guard.population is not None:
        check_source_name(guard.population)
    sensitive = [guard.sensitive] if isinstance(guard.sensitive, str) else guard.sensitive or []
    unit = guard.unit
    masks = masks or {}

    # 0. every source row with its transformation, once (``r``): the source columns the
    #    query reads (under generated names c<i>, so no source column can clash with the
    #    others), each QI's node id n<j> (NULL: the mapping lacks the value) and label g<j>,
    #    and ``k`` (1: the mapping knows every QI value of the row); or, packed, the node ids
    #    as one key ``nk`` (NULL: the mapping lacks a value) and the labels. Both passes read
    #    these rows, so the mapping joins appear once in the query: a query of half the
    #    joins to plan, and on a small source (``source_rows``) rows mapped once.
    rows_name = f"{PREFIX}r"
    reads_sensitive = (not simple and not no_sensitive) or guard.sensitive_hierarchy is not None
    read: list[str] = []
    for c in [
        *[c for c in columns if c in masks or c not in qis],  # a QI is released as its label
        *(qis if roots is not None else []),
        *(sensitive if reads_sensitive else []),
        *([unit] if unit else []),
    ]:
        if c not in read:
            read.append(c)
    src = {c: _c(f"c{i}", "r") for i, c in enumerate(read)}
    mapped_rows = exp.select(
        *[exp.alias_(column(c, "s"), f"c{i}") for i, c in enumerate(read)]
    ).from_(exp.alias_(table(source), "s", table=True))
    mapped_rows, row_nodes, row_labels = _mapping_joins(
        mapped_rows, dialect, qis, recoding, "s", _raw, bounds
    )
    labels = [exp.alias_(lb, f"g{j}") for j, lb in enumerate(row_labels)]
    # ``unknown``: the row's test that the mapping lacks one of its QI values; ``known``, the
    # classes' aggregate of it (step 1)
    unknown: exp.Expr
    known_row: exp.Expr
    if bounds is not None:
        # the packed key is NULL exactly when a node id is, so the rows carry no column ``k``
        # (its NULL test per QI and its copy in the mapped rows: 92.2 against 78.4 ms for a
        # scan of the Adult view on PostgreSQL)
        key = exp.alias_(_packed_key(row_nodes, bounds), n_cols[0])
        mapped_rows = mapped_rows.select(key, *labels, copy=False)
        unknown = _c(n_cols[0], "r").is_(exp.null())
        known_row = exp.Case(
            ifs=[exp.If(this=unknown.copy(), true=exp.convert(0))], default=exp.convert(1)
        )
    else:
        every_known = exp.and_(*[nd.is_(exp.null()).not_() for nd in row_nodes], copy=False)
        mapped_rows = mapped_rows.select(
            *[exp.alias_(nd, n) for nd, n in zip(row_nodes, n_cols, strict=True)],
            *labels,
            exp.alias_(
                exp.Case(
                    ifs=[exp.If(this=every_known, true=exp.convert(1))], default=exp.convert(0)
                ),
                "k",
            ),
            copy=False,
        )
        unknown = _c("k", "r").eq(exp.convert(0))
        known_row = _c("k", "r")

    def raw(name: str) -> exp.Expr:
        return as_text(src[name].copy())

    # 1. the classes as they are now: the mapped rows grouped by their node ids. Grouping
    #    after the mapping keeps the GROUP BY at one group per class (plus the sensitive
    #    value), however many distinct raw combinations the source holds: grouping raw
    #    values first costs a GROUP BY as large as the source's distinct QI tuples (8.2 M of
    #    10 M rows in benchmarks/bench_views.py)
    grouped_name = f"{PREFIX}g"
    keys = [exp.alias_(_c(n, "r"), n) for n in n_cols]
    if not simple and len(sensitive) > 1 and not no_sensitive:
        # several sensitive attributes: one column each (s0, s1, ...)
        for i, sa in enumerate(sensitive):
            sv = exp.func("COALESCE", raw(sa), exp.convert("NULL"))
            keys.append(exp.alias_(sv, f"s{i}"))
    elif not simple:
        s = (
            exp.convert("NULL")
            if no_sensitive
            else exp.func("COALESCE", raw(sensitive[0]), exp.convert("NULL"))  # the one
        )
        keys.append(exp.alias_(s, "s"))
    if unit is not None:
        # one group per (class, unit): a class's size is its number of groups' distinct units
        keys.append(exp.alias_(raw(unit), "u"))
    # ``known`` (1: the mapping knows every QI value of the group) is an aggregate, not a test
    # of the grouping keys, so that no engine pushes it below the GROUP BY: a NOT NULL test of
    # the node ids would turn the mapping's LEFT JOINs into inner joins, whose multiplied
    # selectivities PostgreSQL estimates at one row and answers with nested loops (5.8 s
    # instead of 0.17 s on Adult), and DuckDB with hash tables built on the source's side
    grouped = (
        exp.select(
            *keys,
            exp.alias_(exp.Count(this=exp.Star()), "n"),
            exp.alias_(exp.Min(this=known_row), "known"),
        )
        .from_(exp.alias_(table(rows_name), "r", table=True))
        .group_by(*[exp.Literal.number(i + 1) for i in range(len(keys))], copy=False)
    )
    mapped = exp.select().from_(exp.alias_(table(grouped_name), "g", table=True))
    g_nodes = [_c(n, "g") for n in n_cols]
    known: list[exp.Expr] = [_c("known", "g").eq(exp.convert(1))]
    if guard.sensitive_hierarchy is not None:
        sl = f"{PREFIX}sl"
        left_join(
            mapped,
            _subquery(_sensitive_leaves(guard.sensitive_hierarchy), sl),
            _c("label", sl).eq(_c("s", "g")),
        )
        known.append(_c("label", sl).is_(exp.null()).not_())
    if unit is not None:
        known.append(_c("u", "g").is_(exp.null()).not_())  # a row without a unit: no class
    mapped = mapped.select(
        *[exp.alias_(nd, n) for nd, n in zip(g_nodes, n_cols, strict=True)], copy=False
    )
    if not simple and len(sensitive) > 1 and not no_sensitive:
        mapped = mapped.select(*[_c(f"s{i}", "g") for i in range(len(sensitive))], copy=False)
    elif not simple:
        mapped = mapped.select(_c("s", "g"), copy=False)
    if unit is not None:
        mapped = mapped.select(_c("u", "g"), copy=False)
    mapped = mapped.select(_c("n", "g"), copy=False).where(exp.and_(*known, copy=False), copy=False)
    mapped_name = f"{PREFIX}known"

    ctes: list[tuple[str, exp.Expr]] = [(rows_name, mapped_rows), (grouped_name, grouped)]
    ok_name = f"{PREFIX}ok"
    node_keys = [_c(n) for n in n_cols]
    # The verdicts the rows look up. Every row whose QI values the mapping knows belongs to a
    # class, so a row is released unless a value is unknown (a NULL node) or its class fails:
    # only the failing classes need to be looked up, a small hash table for the row pass to
    # probe. With a sensitive hierarchy, a row with known QI values can have no class (every
    # row of its QI tuple has a sensitive value the hierarchy lacks): there every class's
    # verdict is looked up and a row without one is suppressed.
    failing_only = guard.sensitive_hierarchy is None
    if simple and unit is None:
        # k-anonymity alone, counted in rows: the groups are the classes already (grouped by
        # their node ids alone), and a class fails when it has fewer than k rows
        k = min(int(getattr(mdl, "k", 0)) for mdl in guard.models)
        size: exp.Expr = _c("n", "g")
        ok = (
            exp.select(
                *[exp.alias_(nd.copy(), n) for nd, n in zip(g_nodes, n_cols, strict=True)],
                exp.alias_(exp.GTE(this=size, expression=exp.convert(k)), "ok"),
            )
            .from_(exp.alias_(table(grouped_name), "g", table=True))
            .where(
                exp.and_(
                    *[cond.copy() for cond in known],
                    exp.LT(this=size.copy(), expression=exp.convert(k)),
                    copy=False,
                ),
                copy=False,
            )
        )
        ctes.append((ok_name, ok))
    elif simple:
        # k-anonymity alone, counted in units: a class's size is its distinct units
        k = min(int(getattr(mdl, "k", 0)) for mdl in guard.models)
        size = _distinct_units()
        ok = (
            exp.select(*node_keys, exp.alias_(exp.GTE(this=size, expression=exp.convert(k)), "ok"))
            .from_(table(mapped_name))
            .group_by(*node_keys, copy=False)
        )
        if failing_only:
            ok = ok.having(exp.LT(this=size.copy(), expression=exp.convert(k)), copy=False)
        ctes += [(mapped_name, mapped), (ok_name, ok)]
    else:
        ctes.append((mapped_name, mapped))
        population = pop_join = ""
        pop_cte = None
        if guard.population is not None:
            pop = f"{PREFIX}pop"
            pop_cte = (pop, _population_counts(dialect, guard.population, qis, recoding))
            population = ", CAST(COALESCE(p.pn, 0) AS DOUBLE) AS population"
            on = " AND ".join(f"p.{n} = k.{n}" for n in n_cols)
            pop_join = f"LEFT JOIN {pop} AS p ON {on}"
        columns_of = _AttributeColumns(
            n_cols, mapped_name, grouped_name, unit, population, pop_join
        )
        if len(sensitive) <= 1:
            first, rest = _attribute_ctes(guard.models, "", "s", columns_of, dialect, guard)
            ctes.extend(first)
            if pop_cte is not None:
                ctes.append(pop_cte)
            ctes.extend(rest)
            ck = f"{PREFIX}ck"
        else:
            # several sensitive attributes: the relations of each attribute (suffixed), then
            # one verdict per class, every attribute's ANDed (README "Several sensitive
            # attributes"); the models that read no sensitive attribute go with the first
            if pop_cte is not None:
                ctes.append(pop_cte)
            verdict_of = []
            for i in range(len(sensitive)):
                mine = [
                    unwrap(mdl)[0]
                    for mdl in guard.models
                    if (unwrap(mdl)[1] if isinstance(mdl, OnAttribute) else 0) == i
                ]
                first, rest = _attribute_ctes(mine, f"_{i}", f"s{i}", columns_of, dialect, guard)
                ctes.extend(first + rest)
                verdict_of.append((f"{PREFIX}ck_{i}", f"{PREFIX}class_ok_{i}"))
            ck = verdict_of[0][0]
            ck0, ok0 = verdict_of[0]
            joins = [f"{ck0} AS k0 JOIN {ok0} AS o0 ON o0.class_id = k0.class_id"]
            for i, (cki, oki) in enumerate(verdict_of[1:], start=1):
                on = " AND ".join(f"k{i}.{n} = k0.{n}" for n in n_cols)
                # the class ids of the attributes' relations are joined by node keys
                joins.append(f"JOIN {cki} AS k{i} ON {on} ")
                joins.append(f"JOIN {oki} AS o{i} ON o{i}.class_id = k{i}.class_id")
            every = " AND ".join(f"o{i}.ok" for i in range(len(verdict_of)))
            ctes.append(
                (
                    f"{PREFIX}class_ok",
                    sqlglot.parse_one(
                        f"SELECT k0.class_id, {every} AS ok FROM {' '.join(joins)}", read="duckdb"
                    ),
                )
            )
        verdicts = f"{PREFIX}class_ok"
        tables = [mdl for mdl in guard.models if mdl.table_level]
        if tables:
            verdicts = f"{PREFIX}table_ok"
            ctes.extend(_table_verdicts(tables, ck, f"{PREFIX}class_ok", n_cols, verdicts))
        verdict: exp.Expr = _c("ok", "o")
        ok = (
            exp.select(*[_c(n, "k") for n in n_cols])
            .from_(exp.alias_(table(ck), "k", table=True))
            .join(
                exp.alias_(table(verdicts), "o", table=True),
                on=_c("class_id", "o").eq(_c("class_id", "k")),
                copy=False,
            )
        )
        if any(getattr(mdl, "tests_unreleased", False) for mdl in guard.models):
            # a population class without source rows fails delta-presence (delta_min > 0):
            # nothing can be released, every class's verdict is false
            un = f"{PREFIX}unreleased"
            ctes.append((un, _unreleased(f"{PREFIX}pop", ck, n_cols)))
            ok.append("joins", exp.Join(this=exp.alias_(table(un), "u", table=True), kind="CROSS"))
            verdict = exp.and_(verdict, _c("u", "u").eq(exp.convert(0)))
        plain = isinstance(verdict, exp.Column)
        ok = ok.select(verdict.copy() if plain else exp.alias_(verdict, "ok"), copy=False)
        if failing_only:
            ok = ok.where(exp.not_(verdict.copy()), copy=False)
        ctes.append((ok_name, ok))

    # 2. every mapped row, joined to its class's verdict
    q = exp.select().from_(exp.alias_(table(rows_name), "r", table=True))
    ok_on = exp.and_(*[_c(n, "ok").eq(_c(n, "r")) for n in n_cols], copy=False)
    left_join(q, exp.alias_(table(ok_name), "ok", table=True), ok_on)
    unknown_sensitive = None
    if guard.sensitive_hierarchy is not None:
        # a row whose sensitive value the hierarchy lacks was left out of its class's test:
        # releasing it would add an untested value to the class
        sl = f"{PREFIX}rsl"
        one = guard.sensitive
        assert isinstance(one, str)  # hierarchical EMD reads one attribute's hierarchy
        left_join(
            q,
            _subquery(_sensitive_leaves(guard.sensitive_hierarchy), sl),
            _c("label", sl).eq(exp.func("COALESCE", raw(one), exp.convert("NULL"))),
        )
        unknown_sensitive = _c("label", sl).is_(exp.null())
    if failing_only:
        # a value the mapping lacks, or a failing class
        suppressed: exp.Expr = exp.or_(
            unknown,
            exp.not_(exp.func("COALESCE", _c("ok", "ok"), exp.true())),
            copy=False,
        )
    else:
        # no verdict: a value the mapping lacks, no class, or a failing class
        suppressed = exp.not_(exp.func("COALESCE", _c("ok", "ok"), exp.false()))
    if unknown_sensitive is not None:
        suppressed = exp.or_(suppressed, unknown_sensitive, copy=False)
    if unit is not None:
        # a row without a unit belongs to no class (counted for no one): never released
        suppressed = exp.or_(suppressed, raw(unit).is_(exp.null()), copy=False)
    if drop_suppressed:
        q = q.where(exp.not_(suppressed.copy()), copy=False)
    if roots is not None:
        for j, (name, root) in enumerate(zip(qis, roots, strict=True)):
            node = exp.Case(
                ifs=[exp.If(this=suppressed.copy(), true=exp.convert(root))],
                default=_c(n_cols[j], "r"),
            )
            q = q.select(exp.alias_(raw(name), f"__o{j}"), exp.alias_(node, f"__n{j}"), copy=False)
    if flag:
        q = q.select(exp.alias_(suppressed.copy(), "__suppressed"), copy=False)
    keyed = [c for c, mk_ in masks.items() if mk_.keyed]
    lookups: dict[str, _Lookup] = {}  # keyed masks, read from their token joins
    for j, c in enumerate(keyed):
        if c not in columns:
            continue
        if output is None:
            raise InputError(
                "a keyed mask needs the output's name (its tokens are stored under it)"
            )
        # one hash join per keyed column: the row's value (or, in a deployed copy, its
        # digest) to its token
        mk = f"{PREFIX}mask{j}"
        by = "digest" if mask_digests else "value"
        lookup = (
            exp.select(_c(by), _c("token"))
            .from_(table("anonsql_masks"))
            .where(
                _c("output").eq(exp.convert(output)),
                _c("col").eq(exp.convert(c)),
                copy=False,
            )
        )
        key = sql_digest(src[c].copy(), dialect) if mask_digests else raw(c)
        left_join(q, _subquery(lookup, mk), _c(by, mk).eq(key))
        lookups[c] = _Lookup(mk)
    for c in columns:
        mask = lookups[c] if c in lookups else masks.get(c)
        if isinstance(mask, _Lookup):
            q = q.select(exp.alias_(_c("token", mask.alias), ident(c)), copy=False)
        elif mask is not None:
            q = q.select(exp.alias_(sql_mask(mask, src[c].copy()), ident(c)), copy=False)
        elif c in qis:
            value: exp.Expr = _c(f"g{qis.index(c)}", "r")
            if not drop_suppressed:
                value = exp.Case(
                    ifs=[exp.If(this=suppressed.copy(), true=exp.convert(SUPPRESSED_LABEL))],
                    default=value,
                )
            q = q.select(exp.alias_(value, ident(c)), copy=False)
        else:
            q = q.select(exp.alias_(src[c].copy(), ident(c)), copy=False)
    # The mapped rows are read twice (the classes, then the released rows). A small source's
    # are kept once (MATERIALIZED); a large one's are mapped again in the second pass (NOT
    # MATERIALIZED), cheaper than a copy of every row; where the size is not known, as a
    # large one. PostgreSQL: the classes' rows computed once too. Inlined, the GROUP BY over
    # the mapped source may be planned inside a parallel join, every worker computing it
    # again (10 million rows: 43 s for a scan of the view against 26 s materialized). DuckDB
    # plans it well inlined, and a materialized CTE would keep it from dropping the verdict
    # join in a count(*). Spark has no such hints.
    hints = dialect in ("duckdb", "postgres")
    small = source_rows is not None and source_rows <= MATERIALIZE_ROWS
    for name, cte in ctes:
        materialized = None
        if hints and name == rows_name:
            materialized = small
        elif name == grouped_name and dialect == "postgres":
            materialized = True
        q = q.with_(ident(name), as_=cte, materialized=materialized, copy=False)
    return q


__all__ = ["SUPPRESSED_LABEL", "Guard", "check_source_name", "guarded_query"]


@dataclass(frozen=True)
class _AttributeColumns:
    """What every sensitive attribute's relations share in :func:`guarded_query`."""

    n_cols: list[str]
    mapped_name: str
    grouped_name: str
    unit: str | None
    population: str
    pop_join: str


def _attribute_ctes(
    models: list, suffix: str, scol: str, at: _AttributeColumns, dialect: str, guard: Guard
) -> tuple[list[tuple[str, exp.Expr]], list[tuple[str, exp.Expr]]]:
    """The relations of one sensitive attribute (column ``scol`` of the mapped rows), each
    name suffixed with ``suffix``: ``cs`` and ``ck`` (first), then ``classes``,
    ``class_sensitive``, ``overall`` and ``class_ok`` (the verdict of ``models``)."""
    n_cols, mapped_name, grouped_name, unit = at.n_cols, at.mapped_name, at.grouped_name, at.unit
    node_keys = [_c(n) for n in n_cols]
    first: list[tuple[str, exp.Expr]] = []
    cs, ck = f"{PREFIX}cs{suffix}", f"{PREFIX}ck{suffix}"
    # per class and sensitive value: its rows, or with a unit the distinct units holding
    # the value (a value counts once per unit)
    s_col = _c("s") if scol == "s" else exp.alias_(_c(scol), "s")
    if unit is None and scol == "s":
        # one sensitive attribute counted in rows: the known groups are these already (one
        # per class and value)
        cs_query = exp.select(*node_keys, s_col, exp.alias_(_c("n"), "c")).from_(table(mapped_name))
    else:
        count = exp.Sum(this=_c("n")) if unit is None else _distinct_units()
        cs_query = (
            exp.select(*node_keys, s_col, exp.alias_(count, "c"))
            .from_(table(mapped_name))
            .group_by(*node_keys, _c(scol), copy=False)
        )
    first.append((cs, cs_query))
    order = exp.Order(expressions=[exp.Ordered(this=_c(n)) for n in n_cols])
    row_number = exp.Window(this=exp.Anonymous(this="ROW_NUMBER"), order=order)
    if unit is not None:
        # a unit counts once in its class, whatever its rows and values
        size = _distinct_units()
        vals = _distinct_units(only_values=True, scol=scol)
        ck_from = mapped_name
    else:
        size = exp.Sum(this=_c("c"))
        # the records with a sensitive value: NULL is no value (models/compile.py)
        valued = exp.NEQ(this=_c("s"), expression=exp.convert(NULL_SENSITIVE))
        vals = exp.Sum(
            this=exp.Case(ifs=[exp.If(this=valued, true=_c("c"))], default=exp.convert(0))
        )
        ck_from = cs
    ck_query = (
        exp.select(
            *node_keys,
            exp.alias_(row_number, "class_id"),
            exp.alias_(size, "size"),
            exp.alias_(vals, "vals"),
        )
        .from_(table(ck_from))
        .group_by(*node_keys)
    )
    first.append((ck, ck_query))
    # the value order of ordered-distance EMD, as ``check`` ranks the values
    x_s = f"x.{scol}"
    v_order = x_s
    if any(mdl.name == "ordered-emd" for mdl in models):
        v_order = SENSITIVE_ORDER.format(s=x_s)
    null = f"'{NULL_SENSITIVE}'"  # a constant of anonsql, not user input
    s_as = "" if scol == "s" else " AS s"
    on_nodes = " AND ".join(f"x.{n} = k.{n}" for n in n_cols)
    overall = f"""
          SELECT {x_s}{s_as}, CAST(SUM(x.n) AS DOUBLE) / (SELECT SUM(y.n) FROM {grouped_name} AS y
                                                 WHERE y.{scol} <> {null})
                   AS q,
                 ROW_NUMBER() OVER (ORDER BY {v_order}) AS rnk
          FROM {grouped_name} AS x WHERE {x_s} <> {null} GROUP BY {x_s}"""
    shares = ""
    if unit is not None:
        # each unit weighs once, shared equally among the distinct values it holds: in its
        # class (the distribution models' class_shares) and in the table (overall); a unit
        # of one value weighs 1 on it (anonsql.models.unit_requirements)
        uv, cu, m = f"{PREFIX}uv{suffix}", f"{PREFIX}cuv{suffix}", f"{PREFIX}cum{suffix}"
        overall = f"""
          SELECT {x_s}{s_as}, SUM(1.0 / w.m) / (SELECT COUNT(DISTINCT y.u) FROM {uv} AS y) AS q,
                 ROW_NUMBER() OVER (ORDER BY {v_order}) AS rnk
          FROM {uv} AS x JOIN (SELECT u, COUNT(*) AS m FROM {uv} GROUP BY u) AS w ON w.u = x.u
          GROUP BY {x_s}"""
        keys = ", ".join(n_cols)
        shares = f"""
        , {cu} AS (
          SELECT DISTINCT {keys}, {scol}, u FROM {mapped_name} WHERE {scol} <> {null}
        ), {m} AS (
          SELECT {keys}, u, COUNT(*) AS m FROM {cu} GROUP BY {keys}, u
        ), {PREFIX}class_shares{suffix} AS (
          SELECT k.class_id, x.{scol}{s_as}, SUM(1.0 / w.m) AS c
          FROM {cu} AS x JOIN {m} AS w ON {" AND ".join(f"w.{n} = x.{n}" for n in n_cols)}
            AND w.u = x.u
          JOIN {ck} AS k ON {on_nodes}
          GROUP BY k.class_id, x.{scol}
        )"""
        shares = (
            f""", {uv} AS (
          SELECT DISTINCT u, {scol} FROM {grouped_name}
          WHERE {scol} <> {null} AND u IS NOT NULL
        )"""
            + shares
        )
    vals_col, held = "k.vals", ""
    if unit is not None:
        # a count model's class total is the sum of its counts (a value once per unit holding
        # it), as its numpy side sums them; the distribution models read class_share_totals
        keys = ", ".join(f"x.{n}" for n in n_cols)
        on_held = " AND ".join(f"h.{n} = k.{n}" for n in n_cols)
        vals_col = "h.held"
        held = (
            f" LEFT JOIN (SELECT {keys}, SUM(x.c) AS held FROM {cs} AS x "
            f"WHERE x.s <> {null} GROUP BY {keys}) AS h ON {on_held}"
        )
        shares += f"""
        , {PREFIX}class_share_totals{suffix} AS (
          SELECT k.class_id, CAST(k.size AS DOUBLE) AS size, FALSE AS suppressed,
                 NULLIF(CAST(k.vals AS DOUBLE), 0) AS vals
          FROM {ck} AS k
        )"""
    rel = sqlglot.parse_one(
        f"""
        WITH {PREFIX}classes{suffix} AS (
          SELECT k.class_id, CAST(k.size AS DOUBLE) AS size, FALSE AS suppressed,
                 NULLIF(CAST({vals_col} AS DOUBLE), 0) AS vals{at.population}
          FROM {ck} AS k{held} {at.pop_join}
        ), {PREFIX}class_sensitive{suffix} AS (
          SELECT k.class_id, x.s, CAST(x.c AS DOUBLE) AS c
          FROM {cs} AS x JOIN {ck} AS k ON {on_nodes}
          WHERE x.s <> {null}
        ){shares}, {PREFIX}overall{suffix} AS ({overall}
        ) SELECT 1
        """,
        read="duckdb",
    ).args["with_"]
    rest = [(c.alias, c.this) for c in rel.expressions]
    rest.append(
        (
            f"{PREFIX}class_ok{suffix}",
            _model_ok(models, dialect, guard.sensitive_top, suffix, unit is not None),
        )
    )
    return first, rest


def _distinct_units(only_values: bool = False, scol: str = "s") -> exp.Expr:
    """COUNT(DISTINCT u): a class's units (with ``only_values``, those holding a sensitive
    value in column ``scol``: NULL is no value)."""
    u: exp.Expr = _c("u")
    if only_values:
        u = exp.Case(
            ifs=[
                exp.If(this=exp.NEQ(this=_c(scol), expression=exp.convert(NULL_SENSITIVE)), true=u)
            ]
        )
    return exp.Count(this=exp.Distinct(expressions=[u]))
