"""Builders for the hierarchies users need every day: numeric intervals, prefix masking,
dates and groups of ordered values. Each returns a validated :class:`Hierarchy`."""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

from anonsql.errors import HierarchyError
from anonsql.hierarchy.hierarchy import Hierarchy

ROOT = "*"


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
    if math.isnan(x):
        raise HierarchyError("interval hierarchy: NaN is not a value")
    return x


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
        if w <= 0:
            raise HierarchyError(f"interval hierarchy: width {w} must be positive")
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
    if step < 1:
        raise HierarchyError("mask hierarchy: step must be at least 1")
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
    for a, b in itertools.pairwise(sizes):
        if a < 1 or b % a:
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


def build(name: str, kind: str, values: Iterable[Any], **options: Any) -> Hierarchy:
    """Dispatch by builder name (used by the CLI and by manifest/spec files)."""
    values = list(values)
    if kind == "intervals":
        return intervals(
            name,
            values,
            options["widths"],
            start=options.get("start"),
            bottom=options.get("bottom"),
            top=options.get("top"),
        )
    if kind == "mask":
        return mask(name, values, step=int(options.get("step", 1)), char=options.get("char", "*"))
    if kind == "dates":
        return dates(name, values, options.get("levels", DATE_LEVELS))
    if kind == "groups":
        return groups(name, values, options["sizes"])
    if kind == "flat":
        return flat(name, values)
    raise HierarchyError(f"unknown hierarchy builder {kind!r}; use one of {', '.join(BUILDERS)}")
