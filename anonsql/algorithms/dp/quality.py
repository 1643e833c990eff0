"""SafePub's score functions: the quality models of a transformation as functions of the
*sample* with bounded sensitivity, each divided by its sensitivity before the exponential
mechanism reads it (SafePub section 5, "Quality models with bounded sensitivity"; ARX's
``getScore`` of ``MetricMDNMLoss``, ``MetricMDNMPrecision``, ``MetricSDAECS``,
``MetricSDNMDiscernability`` and ``MetricMDNUEntropyPrecomputed``).

Notation: m QIs, k the threshold (classes below it suppressed), S the sample, C the released
classes (size >= k), s the suppressed records of S, N the source's row count. A score is
higher for better data (ARX negates the losses). The sensitivity is the most the score can
change when one record is added to or removed from the input (so to or from S):

* granularity (``loss``, Iyengar's loss with domain shares):
  u = -(m |s| + sum_j sum_{c in C} |c| share_j(c)), share_j = leaves below the class's value
  over all leaves of QI j's hierarchy, in [0, 1]. A record joining a class of k - 1 releases
  it: the k - 1 records' cost falls from m each to their shares, Delta u = m (k - 1) for
  k > 1; with k = 1 nothing is suppressed and a record adds at most m: Delta u = m.
* intensity (``precision``): u = -(sum_j |C rows| level_j / top_j + m |s|), the same
  Delta u = m max(k - 1, 1).
* group size (``aecs``): u = |C| + [s non-empty], the released classes plus one for the
  suppressed records; Delta u = 1 (a record releasing a class of k - 1 may empty s).
* discernibility (``dm``): u = -(sum_{c in C} |c|^2 + N |s|); Delta u = N (k^2 / (k - 1) + 1)
  for k > 1, 5 N for k = 1 (the paper's and ARX's bound; it covers 2 |c| + 1 for a class
  that grows, (k - 1) N + k^2 for one that is released, N for a suppressed record).
* non-uniform entropy (``entropy``, the paper's quadratic form): per QI, released records
  whose value is not the root count the square of their value's count, every suppressed or
  root-valued record costs N: u = -sum_j (sum_{v non-root} c_{j,v}^2 + N (|s| + root_j));
  Delta u = m N (k^2 / (k - 1) + 1), 5 m N for k = 1.

N enters discernibility and entropy as a constant, as in the paper and ARX: the source's row
count is then treated as public (it is outside the guarantee). Granularity, intensity and
group size need no such assumption. ARX counts the records left out by sampling as suppressed
too; that adds the same constant to every candidate, which the exponential mechanism ignores,
so the scores here are computed on the sample alone.

All arithmetic is exact (:class:`fractions.Fraction` of the engine's integer aggregates);
the normalized score becomes a float only for the mechanism (ARX: within one ulp).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from anonsql.errors import InputError

#: the quality models SafePub can search with (anonsql's metric names); loss is the default,
#: as ARX's default quality model
DP_METRICS = ("loss", "precision", "aecs", "dm", "entropy")
#: the metrics whose sensitivity reads the source's row count (treated as public)
NEEDS_ROWS = ("dm", "entropy")


@dataclass
class Aggregates:
    """One candidate's counts on the sample, from one query in the engine
    (:mod:`anonsql.algorithms.dp.engine`)."""

    levels: tuple[int, ...]
    released_classes: int
    released_rows: int
    suppressed_rows: int  # of the sample, with rows whose values a hierarchy lacks
    any_suppressed: bool
    sum_squares: int  # sum over released classes of size^2
    leaves: list[int]  # per QI: sum over released classes of size * leaves below the value
    root_rows: list[int]  # per QI: released rows whose value is the root
    value_squares: list[int] = field(default_factory=list)  # per QI (entropy only)


@dataclass(frozen=True)
class ScoreContext:
    """What a score needs beside the aggregates."""

    metric: str
    k: int
    qis: int
    leaf_totals: tuple[int, ...]  # leaves of each QI's hierarchy
    tops: tuple[int, ...]  # each QI's top level (height - 1)
    rows: int  # N, the source's row count (dm, entropy)


def check_metric(metric: str | None) -> str:
    metric = metric or "loss"
    if metric not in DP_METRICS:
        raise InputError(
            f"safepub scores transformations with a quality model of bounded sensitivity: "
            f"one of {', '.join(DP_METRICS)} (SafePub section 5), not {metric!r}"
        )
    return metric


def _squares_factor(k: int) -> Fraction:
    """k^2 / (k - 1) + 1 for k > 1, else 5 (the discernibility and entropy bounds)."""
    return Fraction(5) if k == 1 else Fraction(k * k, k - 1) + 1


def sensitivity(ctx: ScoreContext) -> Fraction:
    """Delta u of ``ctx.metric`` (module docstring)."""
    m, k = ctx.qis, ctx.k
    if ctx.metric in ("loss", "precision"):
        return Fraction(m * max(k - 1, 1))
    if ctx.metric == "aecs":
        return Fraction(1)
    if ctx.metric == "dm":
        return ctx.rows * _squares_factor(k)
    if ctx.metric == "entropy":
        return m * ctx.rows * _squares_factor(k)
    raise AssertionError(ctx.metric)


def utility(a: Aggregates, ctx: ScoreContext) -> Fraction:
    """u of ``ctx.metric`` on the sample, exact (module docstring)."""
    m, s = ctx.qis, a.suppressed_rows
    if ctx.metric == "loss":
        shares = sum(
            (Fraction(v, t) for v, t in zip(a.leaves, ctx.leaf_totals, strict=True)), Fraction(0)
        )
        return -(m * s + shares)
    if ctx.metric == "precision":
        levels = sum(
            (
                Fraction(lv, top) if top > 0 else Fraction(0)
                for lv, top in zip(a.levels, ctx.tops, strict=True)
            ),
            Fraction(0),
        )
        return -(a.released_rows * levels + m * s)
    if ctx.metric == "aecs":
        return Fraction(a.released_classes + (1 if a.any_suppressed else 0))
    if ctx.metric == "dm":
        return -Fraction(a.sum_squares + ctx.rows * s)
    if ctx.metric == "entropy":
        return -Fraction(sum(a.value_squares) + ctx.rows * (m * s + sum(a.root_rows)))
    raise AssertionError(ctx.metric)


def score(a: Aggregates, ctx: ScoreContext) -> float:
    """u / Delta u, what the exponential mechanism reads."""
    return float(utility(a, ctx) / sensitivity(ctx))


def arx_loss(a: Aggregates, ctx: ScoreContext) -> tuple[float, list[float]]:
    """ARX's Loss (gsFactor 0.5, :class:`anonsql.metrics.quality.Loss`) of the release on the
    sample: per QI (sum of shares of released records + suppressed records - n / L) /
    (n - n / L), floored to 10 decimals, then the geometric mean of (v + 1) minus 1. The
    figure ARX reports for a release with differential privacy (checked against ARX's test
    cases in ``tests/test_dp_arx.py``)."""
    import math

    n = a.released_rows + a.suppressed_rows
    per_qi = []
    for leaves, total in zip(a.leaves, ctx.leaf_totals, strict=True):
        if n == 0:
            per_qi.append(1.0)
            continue
        raw = Fraction(leaves, total) + a.suppressed_rows
        lo = Fraction(n, total)
        v = max((raw - lo) / (n - lo), Fraction(0)) if n > lo else Fraction(0)
        per_qi.append(math.floor(float(v) * 1e10 + 1e-4) / 1e10)
    out = 1.0
    for x in per_qi:
        out *= (x + 1.0) ** (1.0 / len(per_qi))
    return out - 1.0, per_qi


__all__ = [
    "DP_METRICS",
    "NEEDS_ROWS",
    "Aggregates",
    "ScoreContext",
    "arx_loss",
    "check_metric",
    "score",
    "sensitivity",
    "utility",
]
