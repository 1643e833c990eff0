"""Privacy units: many rows per person (docs/models/units.md).

With ``unit`` (a column naming the person, household or customer each row belongs to) every
count a model or a limit uses counts distinct units, not rows: a class is k-anonymous when it
holds k distinct units, the suppression limit is a share of the units, and the risk figures
are per unit. This is k-anonymity as Sweeney states it ("k-anonymity: a model for
protecting privacy", 2002: each released combination of quasi-identifier values matches at
least k *individuals*), and the entity counting of Snowflake's privacy unit and Tumult
Analytics' privacy IDs.

When every unit's rows share one quasi-identifier tuple and one sensitive value (a person's
birth year, sex and zip code on each of their visits), each unit falls into exactly one class
at every generalization, so distinct units add up when classes merge, exactly as rows do: the
lattice search runs unchanged on a histogram whose counts are distinct units, with every
pruning rule proven for additive counts, and no unit is ever partly suppressed. That case is
detected (:attr:`UnitShape.varying` is 0) and keeps the speed of a row-level run.

Otherwise (a person who moved, the visit date as a QI, several diagnoses) the search reads the
table's distinct (unit, QI tuple, sensitive value) records and counts each class's units
itself, with the rules re-proven for counts that do not add up
(:mod:`anonsql.models.unit_requirements`). Such a release defends against an adversary who
knows all of one person's quasi-identifier tuples as long as the person's records cannot be
linked to each other in the output: the unit is never released, nor any mask that links its
rows (:mod:`anonsql.masking.roles` refuses them). At every read the output's guard counts
``COUNT(DISTINCT unit)`` per class, so a unit that later moves or gains rows is still counted
once per class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from anonsql.backend.sql_templates import column, table

#: the session-private relation of one row per unit that the search reads
UNITS = "__anonsql_units"


def unit_value(unit: str, alias: str | None = None) -> exp.Expression:
    """The unit as text: units are compared by their text, as QI values are."""
    return exp.cast(column(unit, alias), "VARCHAR")


@dataclass(frozen=True)
class UnitShape:
    """How a table's rows fall into units."""

    rows: int
    units: int
    null_rows: int  # rows without a unit
    varying: int  # units with more than one (QI tuple, sensitive value)
    example: str | None  # one such unit

    def figures(self, unit: str) -> dict[str, Any]:
        """What the run's measures say about its units (its counts are units)."""
        return {"unit": unit, "units": self.units, "source_rows": self.rows}


def unit_shape(db, source: str, unit: str) -> UnitShape:
    """How ``source``'s rows fall into units, from :data:`UNITS` (written first) and one light
    scan of the source (its rows, and those without a unit)."""
    be = db.backend
    # COUNT(*) - COUNT(unit): the rows without a unit, read from the column's validity alone
    rows, with_unit = be.fetchall(
        exp.select(exp.Count(this=exp.Star()), exp.Count(this=column(unit))).from_(table(source))
    )[0]
    nulls = int(rows) - int(with_unit)
    key = unit_value(unit)
    tuples, units = be.fetchall(
        exp.select(
            exp.Count(this=exp.Star()), exp.Count(this=exp.Distinct(expressions=[key]))
        ).from_(table(UNITS))
    )[0]
    varying, example = 0, None
    if tuples > units:  # a unit on two rows of UNITS holds two tuples (or sensitive values)
        several = (
            exp.select(exp.alias_(key.copy(), "u"))
            .from_(table(UNITS))
            .group_by(key.copy())
            .having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.convert(1)))
        )
        varying, example = be.fetchall(
            exp.select(exp.Count(this=exp.Star()), exp.Min(this=exp.column("u", "x"))).from_(
                exp.alias_(several.subquery(), "x", table=True)
            )
        )[0]
    return UnitShape(int(rows), int(units), nulls, int(varying), example)


def units_relation(
    db, source: str, qis: list[str], sensitive: str | list[str] | None, unit: str
) -> UnitShape:
    """Write :data:`UNITS`, the table's distinct (unit, QIs, sensitive value) records, and
    say how the rows fall into units: one record per unit when each unit's rows share one
    tuple (``varying`` 0), so that every count the search makes is a count of units."""
    from anonsql.backend.sql_templates import drop, temporary

    db.backend.require_columns(source, [unit])
    several = [sensitive] if isinstance(sensitive, str) else list(sensitive or [])
    cols = [column(c) for c in dict.fromkeys([unit, *qis, *several])]
    rows = (
        exp.select(*cols)
        .distinct()
        .from_(table(source))
        .where(unit_value(unit).is_(exp.null()).not_())
    )
    # one pass over the source: its distinct (unit, QIs, sensitive value), which is one row
    # per unit when every unit has one tuple, as the search needs (checked on it)
    db.backend.execute(temporary(UNITS, rows, db.backend.dialect))
    try:
        shape = unit_shape(db, source, unit)
    except BaseException:
        db.backend.execute(drop("table", UNITS))
        raise
    return shape


__all__ = [
    "UNITS",
    "UnitShape",
    "unit_shape",
    "unit_value",
    "units_relation",
]
