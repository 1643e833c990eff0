"""SafePub's sample, drawn once in the engine and stored.

Each record is drawn with probability beta (SafePub Algorithm 1, line 1; Eq. (1) of
:mod:`anonsql.algorithms.dp.params`) by ``sql/dp/draw_sample.sql``: the first 52 bits of
SHA-256(key || row number) below beta * 2^52. With a secret uniform 256-bit key, SHA-256 of
distinct inputs is a pseudorandom function, so the records' draws are independent Bernoulli
draws with probability exactly threshold / 2^52 (the beta the parameters are computed for).
The engines offer no cryptographic sampler of their own (their ``random()`` and TABLESAMPLE
are seeded non-cryptographic generators, some with 32-bit seeds), and OpenDP samples in
this process, not in the engine; the keyed hash is written here for that reason and tested
for its rate in ``tests/test_dp.py``.

The sample is written once, as a table ``anonsql_dp_sample_<run id>`` of the source's rows
(with their number ``__anonsql_row``) that the release's output reads: a DP output is a table,
or a view over this stored sample, never a view that draws again at every read (averaging
many draws would undo the sampling). It is restricted like anonsql's other side tables, and
dropped when its output is replaced (a refresh draws a new sample and spends budget again).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from anonsql.algorithms.dp.params import BETA_BITS
from anonsql.backend.sql_templates import column, drop, table, template

#: prefix of the stored samples' names
SAMPLE_PREFIX = "anonsql_dp_sample_"
ROW = "__anonsql_row"


def threshold_hex(threshold: int) -> str:
    """The sampler's threshold as 13 lowercase hex digits (52 bits), compared as text with
    the digest's first 13 hex digits (fixed width: text order is number order)."""
    width = BETA_BITS // 4
    if not 0 < threshold <= 16**width:
        raise ValueError(f"threshold {threshold} outside (0, 2^{BETA_BITS}]")
    if threshold == 16**width:
        return "g" * width  # above every hex digit: everything is drawn (beta = 1)
    return format(threshold, f"0{width}x")


def sample_query(
    dialect: str, source: str, threshold: int, order: list[str] | None = None
) -> exp.Expr:
    """The sample's SELECT, with the key as its one bound parameter (``?``): the key never
    enters a statement's text, so the engine's views of running and past statements
    (pg_stat_activity, pg_stat_statements, Spark's UI, query logs) do not show it.
    ``order``: number the rows in the order of these columns (as text), so that a seeded
    release draws the same rows again (tests, reproductions); without it the numbering is
    the engine's scan order, which is all an unseeded draw needs (distinct numbers within
    the one statement)."""
    q = template(
        "dp/draw_sample",
        dialect,
        source=table(source),
        key=exp.Placeholder(),
        threshold=threshold_hex(threshold),
    )
    if order:
        number = exp.Window(
            this=exp.RowNumber(),
            order=exp.Order(
                expressions=[exp.Ordered(this=exp.cast(column(c, "s"), "VARCHAR")) for c in order]
            ),
        )
        for alias in q.find_all(exp.Alias):
            if alias.alias == ROW:
                alias.set("this", number)
                break
    return q


def sample_name(run_hint: int) -> str:
    return f"{SAMPLE_PREFIX}{run_hint}"


def draw_sample(
    db, source: str, name: str, key: str, threshold: int, order: list[str] | None = None
) -> None:
    """Write the sample as table ``name`` (one CREATE TABLE ... AS: drawn once)."""
    be = db.backend
    query = sample_query(be.dialect, source, threshold, order)
    be.execute(drop("table", name))
    be.execute(exp.Create(this=table(name), kind="TABLE", expression=query), [key])
    be.restrict_access(name)


def new_sample_name(db) -> str:
    """A name no relation has: ``anonsql_dp_sample_<n>`` after the latest run id."""
    be = db.backend
    n = 1
    if be.table_exists("anonsql_runs"):
        n = int(
            be.fetchall(sqlglot.parse_one("SELECT COALESCE(MAX(run_id), 0) + 1 FROM anonsql_runs"))[
                0
            ][0]
        )
    while be.table_exists(sample_name(n)):
        n += 1
    return sample_name(n)


def drop_sample(db, name: str | None) -> None:
    if name and name.startswith(SAMPLE_PREFIX):
        db.backend.execute(drop("table", name))


def _dp_runs(db) -> list[tuple[str, str]]:
    """(sample, output) of every recorded DP release, oldest first: one statement (the
    writer calls this after creating the provenance tables)."""
    import json

    runs = table("anonsql_runs")
    query = (
        exp.select(column("output"), column("parameters"))
        .from_(runs)
        .where(
            exp.and_(
                column("output").is_(exp.null()).not_(),
                exp.Like(this=column("parameters"), expression=exp.convert('%"dp":%')),
            )
        )
        .order_by(column("run_id"))
    )
    out = []
    for name, params in db.backend.fetchall(query):
        sample = (json.loads(params).get("dp") or {}).get("sample")
        if sample and str(sample).startswith(SAMPLE_PREFIX):
            out.append((str(sample), str(name)))
    return out


def stale_samples(db, output: str | None, keep: str | None = None) -> tuple[str | None, list[str]]:
    """What a write of ``output`` leaves unread: the sample its current run reads (if that
    run is a DP release), and the orphans: samples whose output is gone (dropped by hand)
    or reads another sample now; each holds sampled source rows that nothing publishes.
    ``keep``: a sample being written now (its run is not recorded yet)."""
    be = db.backend
    samples = _dp_runs(db)
    # an output's current sample is the one of its latest DP run
    current: dict[str, str] = {}
    for sample, name in samples:
        same = next((o for o in current if be.same_relation(o, name)), name)
        current[same] = sample
    replaced = None
    if output is not None:
        replaced = next((s for o, s in current.items() if be.same_relation(o, output)), None)
    if len(samples) == len(current) and all(be.relation_kind(o) for o in current):
        return replaced, []  # every sample is its output's current one, and read
    live = {s for o, s in current.items() if be.relation_kind(o)}
    orphans = [
        s for s, _ in samples if s not in live and s not in (keep, replaced) and be.table_exists(s)
    ]
    return replaced, list(dict.fromkeys(orphans))


__all__ = [
    "ROW",
    "SAMPLE_PREFIX",
    "draw_sample",
    "drop_sample",
    "new_sample_name",
    "sample_query",
    "stale_samples",
    "threshold_hex",
]
