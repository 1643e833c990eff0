"""Builders for the hierarchies users need every day: numeric intervals, prefix masking,
dates and groups of ordered values. Each returns a validated :class:`Hierarchy`."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Iterable, Sequence
from types import UnionType
from typing import Any

from anonsql.errors import HierarchyError
from anonsql.hierarchy.hierarchy import Hierarchy

ROOT = "*"
#: most values a range (--range LOW:HIGH, a definition's "range") may hold: a hierarchy is
#: built in memory and stored with a closure row per node and ancestor, and a million
#: leaves already take seconds; a range beyond it is a typo, not a domain
MAX_RANGE = 1_000_000


def value_range(low: Any, high: Any, where: str = "range") -> list[int]:
    """The integers low..high (both included), checked before any is made; ``where`` names
    the range in messages (``--range``, a definition's ``range``)."""
    if any(isinstance(x, bool) or not isinstance(x, int) for x in (low, high)):
        raise HierarchyError(f"{where}: low and high must be integers, not {low!r}, {high!r}")
    if high < low:
        raise HierarchyError(f"{where} {low}:{high} is empty (high is below low)")
    if high - low + 1 > MAX_RANGE:
        raise HierarchyError(
            f"{where} {low}:{high} holds {high - low + 1:,} values; a hierarchy is built from "
            f"at most {MAX_RANGE:,} (take the values from the column instead)"
        )
    return list(range(low, high + 1))


def _distinct(values: Iterable[Any]) -> list[Any]:
    out = [v for v in dict.fromkeys(values) if v is not None]
    if not out:
        raise HierarchyError("a hierarchy needs at least one value")
    return out


def _number(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise HierarchyError(f"interval hierarchy: {v!r} is not a number") from None
    if not math.isfinite(x):
        raise HierarchyError(f"interval hierarchy: {v!r} is not a finite number")
    return x


def _finite(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def intervals(
    name: str,
    values: Iterable[Any],
    widths: Sequence[float],
    start: float | None = None,
    bottom: float | None = None,
    top: float | None = None,
) -> Hierarchy:
    """Level ``i`` groups values into intervals ``[lo, lo + widths[i-1])`` aligned on ``start``
    (default: the smallest value, or ``bottom``). Each width must be a multiple of the one
    before so intervals nest. Values below ``bottom`` become ``<bottom`` and values at or above
    ``top`` become ``>=top`` on every level (bottom and top coding). The root is ``*``.
    """
    vals = _distinct(values)
    nums = [_number(v) for v in vals]
    if not widths:
        raise HierarchyError("interval hierarchy: give at least one width")
    for w in widths:
        # NaN compares false with everything, so it would pass a plain "w <= 0" test
        if not _finite(w) or w <= 0:
            raise HierarchyError(f"interval hierarchy: width {w!r} must be a positive number")
    for option, value in (("start", start), ("bottom", bottom), ("top", top)):
        if value is not None and not _finite(value):
            raise HierarchyError(f"interval hierarchy: {option} {value!r} must be a number")
    for a, b in itertools.pairwise(widths):
        if not float(b / a).is_integer():
            raise HierarchyError(
                f"interval hierarchy: width {b} is not a multiple of {a}; intervals of one "
                f"level must nest in the next"
            )
    if bottom is not None and top is not None and bottom >= top:
        raise HierarchyError(f"interval hierarchy: bottom {bottom} must be below top {top}")
    origin = start if start is not None else (bottom if bottom is not None else min(nums))
    rows = []
    for v, x in zip(vals, nums, strict=True):
        row = [str(v)]
        for w in widths:
            if bottom is not None and x < bottom:
                row.append(f"<{_fmt(bottom)}")
            elif top is not None and x >= top:
                row.append(f">={_fmt(top)}")
            else:
                lo = origin + math.floor((x - origin) / w) * w
                row.append(f"[{_fmt(lo)}, {_fmt(lo + w)})")
        row.append(ROOT)
        rows.append(row)
    return Hierarchy.from_rows(name, rows, source=f"intervals {list(widths)}")


def mask(name: str, values: Iterable[Any], step: int = 1, char: str = "*") -> Hierarchy:
    """Prefix masking (zip codes): each level replaces ``step`` more trailing characters by
    ``char`` (47012 -> 4701* -> 470** ...). Values of different lengths share a final ``*``
    root."""
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise HierarchyError(f"mask hierarchy: step {step!r} must be a whole number >= 1")
    vals = [str(v) for v in _distinct(values)]
    longest = max(len(v) for v in vals)
    nlevels = math.ceil(longest / step)
    rows = []
    for v in vals:
        row = [v]
        for i in range(1, nlevels + 1):
            k = min(len(v), i * step)
            row.append(v[: len(v) - k] + char * k)
        rows.append(row)
    if len({r[-1] for r in rows}) > 1 or nlevels == 0:
        rows = [[*r, ROOT] for r in rows]
    return Hierarchy.from_rows(name, rows, source=f"mask step {step}")


DATE_LEVELS = ("month", "year", "decade")


def _date(v: Any) -> dt.date:
    if isinstance(v, dt.datetime):
        return v.date()
    if isinstance(v, dt.date):
        return v
    try:
        return dt.date.fromisoformat(str(v)[:10])
    except ValueError:
        raise HierarchyError(f"date hierarchy: {v!r} is not an ISO date (YYYY-MM-DD)") from None


def dates(name: str, values: Iterable[Any], levels: Sequence[str] = DATE_LEVELS) -> Hierarchy:
    """Day -> month (``2024-03``) -> year (``2024``) -> decade (``2020s``) -> ``*``; ``levels``
    picks which of month, year and decade are kept (in that order)."""
    unknown = [lv for lv in levels if lv not in DATE_LEVELS]
    if unknown:
        raise HierarchyError(f"date hierarchy: unknown level {unknown[0]!r}; use {DATE_LEVELS}")
    order = [lv for lv in DATE_LEVELS if lv in levels]
    rows = []
    for v in _distinct(values):
        d = _date(v)
        label = {
            "month": f"{d.year:04d}-{d.month:02d}",
            "year": f"{d.year:04d}",
            "decade": f"{d.year // 10 * 10}s",
        }
        rows.append([str(v) if not isinstance(v, dt.date) else v.isoformat()])
        rows[-1] += [label[lv] for lv in order] + [ROOT]
    return Hierarchy.from_rows(name, rows, source=f"dates {order}")


def groups(name: str, ordered_values: Sequence[Any], sizes: Sequence[int]) -> Hierarchy:
    """Groups of consecutive values of an ordered domain: level ``i`` puts ``sizes[i-1]``
    values per group (``[a..b]``); each size must be a multiple of the one before."""
    vals = [str(v) for v in _distinct(ordered_values)]
    if not sizes:
        raise HierarchyError("group hierarchy: give at least one group size")
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise HierarchyError(f"group hierarchy: size {size!r} must be a whole number >= 1")
    for a, b in itertools.pairwise(sizes):
        if b % a:
            raise HierarchyError(
                f"group hierarchy: size {b} is not a multiple of {a}; groups must nest"
            )
    rows = []
    for pos, v in enumerate(vals):
        row = [v]
        for s in sizes:
            g = pos // s
            members = vals[g * s : (g + 1) * s]
            row.append(f"[{members[0]}..{members[-1]}]" if len(members) > 1 else f"[{v}]")
        row.append(ROOT)
        rows.append(row)
    return Hierarchy.from_rows(name, rows, source=f"groups {list(sizes)}")


def flat(name: str, values: Iterable[Any]) -> Hierarchy:
    """Two levels: each value, then ``*``."""
    return Hierarchy.from_rows(name, [[str(v), ROOT] for v in _distinct(values)], source="flat")


BUILDERS = ("intervals", "mask", "dates", "groups", "flat")


def _list_option(
    kind: str, options: dict[str, Any], key: str, item: type | UnionType, default=None
):
    """A builder's list option from a spec file or manifest, checked before it is used."""
    value = options.get(key, default)
    if value is None:
        raise HierarchyError(f"{kind} hierarchy: give {key!r} (a list)")
    ok = isinstance(value, list | tuple) and all(
        isinstance(v, item) and not isinstance(v, bool) for v in value
    )
    if not ok:
        kinds: dict[type | UnionType, str] = {str: "names", int: "whole numbers"}
        what = kinds.get(item, "numbers")
        raise HierarchyError(f"{kind} hierarchy: {key!r} must be a list of {what}, not {value!r}")
    return list(value)


def build(name: str, kind: str, values: Iterable[Any], **options: Any) -> Hierarchy:
    """Dispatch by builder name (used by the CLI and by manifest/spec files)."""
    values = list(values)
    if kind == "intervals":
        return intervals(
            name,
            values,
            _list_option(kind, options, "widths", int | float),
            start=options.get("start"),
            bottom=options.get("bottom"),
            top=options.get("top"),
        )
    if kind == "mask":
        char = options.get("char", "*")
        if not isinstance(char, str) or not char:
            raise HierarchyError(f"mask hierarchy: char must be a non-empty string, not {char!r}")
        return mask(name, values, step=options.get("step", 1), char=char)
    if kind == "dates":
        return dates(name, values, _list_option(kind, options, "levels", str, DATE_LEVELS))
    if kind == "groups":
        return groups(name, values, _list_option(kind, options, "sizes", int))
    if kind == "flat":
        return flat(name, values)
    raise HierarchyError(f"unknown hierarchy builder {kind!r}; use one of {', '.join(BUILDERS)}")
