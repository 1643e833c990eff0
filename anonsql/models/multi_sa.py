"""Several sensitive attributes (README "Several sensitive attributes").

The lattice search reads one sensitive column. With several, it runs unchanged on a
session-private relation holding the QIs, the sensitive columns and one composite column
:data:`SA_COLUMN`: an injective text encoding of the tuple of sensitive values. The models
then see each attribute through :meth:`~anonsql.models.base.ClassStats.attribute`, which
sums the (class, tuple) counts to (class, value) counts; the tuple of each composite value is
read back from the relation (``SELECT DISTINCT``), never parsed from its text.
"""

from __future__ import annotations

from sqlglot import exp

from anonsql.backend.sql_templates import column, table, temporary
from anonsql.models.base import Composite

#: the session-private relation the search reads
MULTI_SA = "__anonsql_multi_sa"
#: its composite sensitive column
SA_COLUMN = "__anonsql_sa"


def sensitive_tuple(columns: list[str], alias: str | None = None) -> exp.Expression:
    """An injective text of the tuple of ``columns``' values: per value ``N;`` for NULL, else
    its length, a colon and its text (a value's length says where it ends)."""
    parts: list[exp.Expression] = []
    for c in columns:
        v = exp.cast(column(c, alias), "VARCHAR")
        text = exp.Concat(
            expressions=[exp.cast(exp.Length(this=v.copy()), "VARCHAR"), exp.convert(":"), v.copy()]
        )
        parts.append(
            exp.Case(ifs=[exp.If(this=v.is_(exp.null()), true=exp.convert("N;"))], default=text)
        )
    return exp.Concat(expressions=parts)


def multi_sa_relation(db, source: str, keep: list[str], sensitive: list[str]) -> None:
    """Write :data:`MULTI_SA`: ``source``'s columns ``keep`` (QIs, unit), its sensitive
    columns and their composite :data:`SA_COLUMN`. The caller drops it (``ctx.after``)."""
    cols = [column(c) for c in dict.fromkeys([*keep, *sensitive])]
    rows = exp.select(*cols, exp.alias_(sensitive_tuple(sensitive), SA_COLUMN)).from_(table(source))
    db.backend.execute(temporary(MULTI_SA, rows, db.backend.dialect))


def composite(db, sensitive: list[str], labels: list[str], overall) -> Composite:
    """Each composite label's values (one ``SELECT DISTINCT`` over :data:`MULTI_SA`), as the
    histogram labels them (text, NULL as ``NULL``)."""
    query = (
        exp.select(
            exp.cast(column(SA_COLUMN), "VARCHAR"),
            *[exp.cast(column(c), "VARCHAR") for c in sensitive],
        )
        .distinct()
        .from_(table(MULTI_SA))
    )
    rows = [tuple(r) for r in db.backend.fetchall(query)]
    return Composite.build(sensitive, list(labels), rows, overall)


def multi_sa_histogram(db, source: str, qis: list[str], names: list[str], sensitive: list[str]):
    """The histogram of ``source`` over the QIs and the composite of ``sensitive``, and the
    composite's description (the relation is written, read and dropped here)."""
    from anonsql.backend.sql_templates import drop
    from anonsql.data.histogram import Histogram

    multi_sa_relation(db, source, qis, sensitive)
    try:
        hist = Histogram.from_database(db, MULTI_SA, qis, names, SA_COLUMN)
        comp = composite(db, sensitive, hist.sens_labels, hist.overall_distribution())
    finally:
        db.backend.execute(drop("table", MULTI_SA))
    return hist, comp


__all__ = [
    "MULTI_SA",
    "SA_COLUMN",
    "composite",
    "multi_sa_histogram",
    "multi_sa_relation",
    "sensitive_tuple",
]
