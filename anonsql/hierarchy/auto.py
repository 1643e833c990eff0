"""Automatic hierarchies: a quasi-identifier without a hierarchy gets one built from its type
and its values (README "Automatic hierarchies").

The column's kind comes from :func:`anonsql.masking.profile.profile_table` (the catalog type
and a sample), its distinct values and their counts from one GROUP BY in the engine; the
builders of :mod:`anonsql.hierarchy.builders` make the tree:

* numbers with more than :data:`FEW` distinct values: intervals of a round width (1, 2 or 5
  times a power of ten, about a twentieth of the range between the 1st and 99th
  percentiles), doubling on each level up to one interval for that range; values below the
  1st percentile's interval are bottom-coded (``<lo``), values from the top of the 99th
  percentile's interval on top-coded (``>=hi``), so one outlier does not stretch every
  interval;
* dates and timestamps: day, month, year, decade;
* postal codes: one more digit masked from the right on each level;
* few-valued columns (at most :data:`FEW` distinct values, any type) and categories: one
  level, every value to ``*``;
* other text: prefix masking, a quarter of the longest value's characters more on each level.

A built hierarchy is stored under the column's name, with ``auto ...`` as its source, and
pinned by the run like any other; a later run rebuilds it from the values then present (a
stored hierarchy whose source does not start with ``auto`` is the user's and is used as it
is). ``anonsql hierarchy export NAME FILE`` writes it in ARX's format, to start from and edit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from sqlglot import exp

from anonsql.backend.sql_templates import column, table
from anonsql.errors import InputError
from anonsql.hierarchy import builders
from anonsql.hierarchy.hierarchy import Hierarchy

#: at most this many distinct values: one level, every value to ``*``
FEW = 12
#: the share of the values below the bottom code and above the top code
TAIL = 0.01
#: the source recorded for a built hierarchy (a stored one without it is the user's)
AUTO = "auto"


@dataclass(frozen=True)
class Built:
    """A built hierarchy and what it is, in words."""

    hierarchy: Hierarchy
    how: str


def is_auto(source: str | None) -> bool:
    return bool(source) and str(source).startswith(AUTO)


def _nice(width: float) -> float:
    """The smallest of 1, 2 and 5 times a power of ten that is at least ``width``."""
    if width <= 0 or not math.isfinite(width):
        return 1.0
    p = 10 ** math.floor(math.log10(width))
    return float(next(m * p for m in (1, 2, 5, 10) if m * p >= width - 1e-12 * p))


def _values(db, source: str, name: str) -> tuple[list[str], np.ndarray]:
    """The column's distinct values as text and their row counts (one GROUP BY)."""
    v = exp.cast(column(name), "VARCHAR")
    rows = db.backend.fetchall(
        exp.select(exp.alias_(v, "v"), exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(table(source))
        .where(column(name).is_(exp.null()).not_())
        .group_by(exp.Literal.number(1))
        .order_by(exp.Literal.number(1))
    )
    return [str(r[0]) for r in rows], np.array([int(r[1]) for r in rows], dtype=np.int64)


#: column names that say "a code": its digits are masked, not averaged or cut into intervals
_CODE_NAME = re.compile(r"zip|postal|post_?code|plz|cap\b|code", re.I)


def _code_like(name: str, values: list[str]) -> bool:
    """A whole number of one fixed width (3 digits or more) in a column named like a code."""
    widths = {len(v) for v in values}
    return (
        bool(_CODE_NAME.search(name))
        and len(widths) == 1
        and min(widths) >= 3
        and all(v.isdigit() for v in values)
    )


def _quantile(x: np.ndarray, w: np.ndarray, q: float) -> float:
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order])
    return float(x[order][min(int(np.searchsorted(cum, q * cum[-1])), len(x) - 1)])


def number_intervals(name: str, values: list[str], counts: np.ndarray) -> Built:
    """Round-width intervals over the central 98% of the rows, tails coded."""
    x = np.array([float(v) for v in values])
    lo, hi = _quantile(x, counts, TAIL), _quantile(x, counts, 1 - TAIL)
    if hi <= lo:  # nearly every row on one value: the whole range
        lo, hi = float(x.min()), float(x.max())
    width = _nice((hi - lo) / 20) if hi > lo else 1.0
    low = math.floor(lo / width) * width  # the bottom code, on the finest grid
    end = math.ceil(hi / width) * width
    if end <= hi:
        end += width
    # doubling widths until one interval, aligned on a multiple of its width, holds the
    # central range; every level is then aligned on multiples of its own width (round labels)
    widths = [width]
    while math.floor(lo / widths[-1]) * widths[-1] + widths[-1] < end:
        widths.append(widths[-1] * 2)
    start = math.floor(lo / widths[-1]) * widths[-1]
    bottom = low if x.min() < low else None
    top = end if x.max() >= end else None
    h = builders.intervals(name, values, widths, start=start, bottom=bottom, top=top)
    shown = ", ".join(f"{w:g}" for w in widths)
    tails = []
    if bottom is not None:
        tails.append(f"below {bottom:g} bottom-coded")
    if top is not None:
        tails.append(f"from {top:g} top-coded")
    how = f"intervals of {shown}" + (f" ({'; '.join(tails)})" if tails else "")
    h.source = f"{AUTO} {how}"
    return Built(h, how)


def build_auto(db, source: str, name: str) -> Built:
    """A hierarchy for column ``name`` of ``source``, from its kind and values."""
    from anonsql.masking.profile import profile_table

    values, counts = _values(db, source, name)
    if not values:
        raise InputError(
            f"{name!r} holds only NULL values: no hierarchy can be built for it; give one "
            f"(--hierarchy) or leave the column out of the quasi-identifiers"
        )
    (p,) = profile_table(db, source, [name], quick=True)
    kind = p.kind
    if kind == "number" and _code_like(name, values):
        kind = "postal-code"  # a zip code read as a number: masked, not cut into intervals
    if len(values) <= FEW or kind in ("category", "boolean"):
        h = builders.flat(name, values)
        how = f"one level: its {len(values)} values to *"
    elif kind == "number":
        return number_intervals(name, values, counts)
    elif kind in ("date", "timestamp"):
        h = builders.dates(name, values)
        how = "day, month, year, decade"
    elif kind == "postal-code":
        h = builders.mask(name, values, step=1)
        how = "one more character masked from the right on each level"
    else:
        step = max(1, math.ceil(max(len(v) for v in values) / 4))
        h = builders.mask(name, values, step=step)
        how = f"prefix masking, {step} more character(s) masked from the right on each level"
    h.source = f"{AUTO} {how}"
    return Built(h, how)


def ensure_hierarchies(db, source: str, qis: list[str], given: dict) -> dict[str, str]:
    """Build and store a hierarchy for every QI that has none (given or stored), and rebuild
    the ones an earlier run built; returns QI -> what was built."""
    built: dict[str, str] = {}
    # the user's hierarchies (given, or stored and not built by a run) are read from the
    # catalog, not loaded
    todo = [
        q
        for q in qis
        if q not in given
        and not (db.hierarchies.exists(q) and not is_auto(db.hierarchies.source_of(q)))
    ]
    if not todo:
        return built
    # one transaction for all of them: none is stored unless all are, and an engine that
    # copies a table before its first change in a transaction (Spark) copies the hierarchy
    # tables once, not once per QI
    with db.backend.transaction():
        for q in todo:
            b = build_auto(db, source, q)
            db.hierarchies.save(b.hierarchy, q)
            built[q] = b.how
    return built


__all__ = ["AUTO", "Built", "build_auto", "ensure_hierarchies", "is_auto", "number_intervals"]
