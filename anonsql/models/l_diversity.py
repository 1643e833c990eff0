"""l-diversity (Machanavajjhala et al.): distinct, entropy and recursive (c,l).

Entropy l-diversity follows seed 004 Definition 10 (natural logarithm): a class passes when
``-sum p ln p >= ln l``. Its per-class value is ``exp(-sum p ln p)``, the l-diversity measure
of seed 004 Definition 11, so the test reads ``value >= l``. The same model with Grassberger's
entropy estimator instead of the plug-in (Shannon) one is :class:`GrassbergerEntropyLDiversity`.
"""

from __future__ import annotations

import math

import numpy as np

from anonsql.errors import InputError
from anonsql.models.base import EPS, ClassStats, PrivacyModel


def _check_l(l_value: float, whole: bool = True) -> float:
    ok = isinstance(l_value, (int, float, np.integer, np.floating)) and not isinstance(
        l_value, bool
    )
    if not ok or l_value < 1 or (whole and float(l_value) != int(l_value)):
        kind = "a whole number" if whole else "a number"
        raise InputError(f"l must be {kind} >= 1, got {l_value!r}")
    return float(l_value)


class _LDiversity(PrivacyModel):
    needs_sensitive = True
    l: float  # noqa: E741 - set by each variant (whole for distinct and recursive (c,l))

    def validate(self, rows: int, distinct_sensitive: int | None) -> None:
        if distinct_sensitive is not None and self.l > distinct_sensitive:
            raise InputError(
                f"l = {self.l:g} is larger than the number of distinct sensitive values in "
                f"the whole table ({distinct_sensitive}, NULL not counted); no class can be "
                f"{self.l:g}-diverse"
            )


class DistinctLDiversity(_LDiversity):
    """Every class holds at least l distinct sensitive values.

    Monotone without and with suppression: a union of classes holds every value each of them
    holds, so it is l-diverse as soon as one of its classes is (ARX: monotonic with
    generalization and with suppression)."""

    name = "distinct-l"
    monotone_without_suppression = True
    monotone_with_suppression = True

    def __init__(self, l: float) -> None:  # noqa: E741 - the literature's name (whole)
        self.l = int(_check_l(l))

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        assert stats.pair_class is not None  # required just above
        return np.bincount(stats.pair_class, minlength=stats.classes).astype(np.float64)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values >= self.l

    def sql_template(self) -> tuple[str, dict]:
        return "models/distinct_l", {}

    def sql_pass(self) -> str:
        return f"value >= {self.l}"

    def describe(self) -> str:
        return f"distinct {self.l}-diversity"


class EntropyLDiversity(_LDiversity):
    """Seed 004 Definition 10; value = exp(entropy) (Definition 11).

    Monotone without suppression: entropy is concave and a union's distribution is the
    size-weighted mixture of its classes' distributions, so its entropy is at least the
    weighted mean of theirs, >= ln l when each is (Machanavajjhala et al.). Not monotone with
    suppression: {a, b} is 2-diverse, {a, a} is not, and their union {a, a, a, b} (entropy
    0.56 < ln 2) is not either: a node with the two classes is anonymous for a limit of two
    records, its generalization merging them suppresses all four."""

    name = "entropy-l"
    monotone_without_suppression = True
    monotone_with_suppression = False

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = _check_l(l, whole=False)

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        assert stats.pair_class is not None  # required just above
        p = stats.shares()
        h = -np.bincount(stats.pair_class, p * np.log(p), minlength=stats.classes)
        return np.exp(h)

    def passes(self, values: np.ndarray) -> np.ndarray:
        # compare entropies, with a tolerance for sums of logarithms
        return np.log(values) >= math.log(self.l) - EPS

    def sql_template(self) -> tuple[str, dict]:
        return "models/entropy_l", {}

    def sql_pass(self) -> str:
        return f"LN(value) >= {math.log(self.l) - EPS!r}"

    def describe(self) -> str:
        return f"entropy {self.l:g}-diversity"


class RecursiveCLDiversity(_LDiversity):
    """Recursive (c,l)-diversity: with a class's value counts sorted r1 >= r2 >= ... >= rm,
    the class passes when r1 < c * (r_l + ... + r_m). Value: r1 / (r_l + ... + r_m)
    (infinite when the class has fewer than l values).

    Monotone without suppression (Machanavajjhala et al.): in a union, the largest count is at
    most the sum of the classes' largest counts, and the tail r_l + ... + r_m is at least the
    sum of their tails (the l - 1 values that are most frequent in the union are at most the
    l - 1 most frequent of each class), so r1 < c * tail carries over. Not monotone with
    suppression: with c = 2, l = 2, {a, b} passes (1 < 2 * 1), {a, a, a} fails, and their
    union (r1 = 4, tail 1) fails."""

    name = "recursive-cl"
    monotone_without_suppression = True
    monotone_with_suppression = False

    def __init__(self, l: float, c: float) -> None:  # noqa: E741 - l whole
        self.l = int(_check_l(l))
        if isinstance(c, bool) or not isinstance(c, (int, float)) or c <= 0:
            raise InputError(f"c must be a positive number, got {c!r}")
        self.c = float(c)

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        assert stats.pair_class is not None and stats.pair_count is not None  # required above
        order = np.lexsort((-stats.pair_count, stats.pair_class))
        cls = stats.pair_class[order]
        cnt = stats.pair_count[order]
        starts = np.searchsorted(cls, np.arange(stats.classes))
        rank = np.arange(len(cls)) - starts[cls]
        r1 = np.zeros(stats.classes)
        np.maximum.at(r1, cls, cnt)
        tail = np.bincount(cls, np.where(rank >= self.l - 1, cnt, 0), minlength=stats.classes)
        with np.errstate(divide="ignore"):
            return np.where(tail > 0, r1 / np.where(tail > 0, tail, 1), np.inf)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values < self.c

    def sql_template(self) -> tuple[str, dict]:
        return "models/recursive_cl", {"l": self.l}

    def sql_pass(self) -> str:
        return f"value < {self.c!r}"

    def describe(self) -> str:
        return f"recursive ({self.c:g},{self.l})-diversity"


# -- entropy l-diversity with Grassberger's estimator ------------------------------------------
#: counts up to this use the exact sum for G_n (ARX precomputes the same range); above it,
#: the asymptotic expansion of the digamma function
_G_EXACT_UP_TO = 100


def _g_even_table() -> np.ndarray:
    """G_{2h} for h = 0..50 from the definition: G_{2h} = -gamma - ln 2 + sum_{k=1..h}
    2 / (2k - 1) (Grassberger 2003, as ARX's ``EntropyEstimator.G`` states it)."""
    base = -float(np.euler_gamma) - math.log(2)
    return np.array(
        [
            base + math.fsum(2 / (2 * k - 1) for k in range(1, h + 1))
            for h in range(_G_EXACT_UP_TO // 2 + 1)
        ]
    )


G_EVEN = _g_even_table()
#: coefficients of the expansion G_{2h} = ln(2h) + m (1/24 - m (7/960 - m 31/8064)),
#: m = 1/h^2 (psi(h + 1/2) + ln 2 at infinity)
_G_S1, _G_S2, _G_S3 = 1 / 24, 7 / 960, 31 / 8064


def grassberger_g(n: np.ndarray) -> np.ndarray:
    """Grassberger's logarithm substitute G_n for counts n >= 1 (P. Grassberger, Entropy
    Estimates from Insufficient Samplings, arXiv:physics/0307138v2, eq. 29:
    G_n = psi(n) + 1/2 (-1)^n (psi((n+1)/2) - psi(n/2))), computed as ARX 3.9 does
    (``EntropyLDiversity.EntropyEstimator.G``): G_{2h+1} = G_{2h}; exact sums up to n = 100,
    the digamma expansion above (in floating point, where ARX's ``(n/2)*(n/2)`` overflows
    Java's int for n > 92,681)."""
    n = np.asarray(n).astype(np.int64)
    half = n // 2
    out = np.empty(n.shape, dtype=np.float64)
    small = n <= _G_EXACT_UP_TO
    out[small] = G_EVEN[half[small]]
    h = half[~small].astype(np.float64)
    m = 1.0 / (h * h)
    out[~small] = np.log(2 * h) + m * (_G_S1 - m * (_G_S2 - m * _G_S3))
    return out


def grassberger_sql_params() -> dict:
    """The template parameters of ``models/grassberger_entropy_l``: the table of G_{2h}
    (h = 0..50) as an inline relation ``(h, g)`` (a UNION ALL of one-row SELECTs, which every
    dialect spells alike), and the expansion's coefficients."""
    from functools import reduce

    from sqlglot import exp

    rows: list[exp.Query] = [
        exp.select(
            exp.alias_(exp.convert(h), "h"),
            exp.alias_(exp.cast(exp.convert(float(g)), "DOUBLE"), "g"),
        )
        for h, g in enumerate(G_EVEN)
    ]
    return {
        "g_even": reduce(lambda a, b: exp.union(a, b, distinct=False), rows).subquery(),
        "exact_up_to": _G_EXACT_UP_TO,
        "s1": _G_S1,
        "s2": _G_S2,
        "s3": _G_S3,
    }


class GrassbergerEntropyLDiversity(_LDiversity):
    """Entropy l-diversity (Machanavajjhala et al., TKDD 2007) with the entropy estimated by
    Grassberger's estimator instead of the plug-in one, as proposed by Stammler, Katzenbeisser
    and Hamacher (Correcting Finite Sampling Issues in Entropy l-diversity, PSD 2016) and
    implemented by ARX 3.9 (``EntropyLDiversity`` with ``EntropyEstimator.GRASSBERGER``).

    For a class of N records whose sensitive values occur n_1, ..., n_m times, the estimate is
    ``H_G = G_N - 1/N * sum_i n_i G_{n_i}`` (natural logarithm; :func:`grassberger_g`; the
    Shannon estimator is the same formula with ln n for G_n). As in ARX, a class passes when it
    holds at least ceil(l) distinct values and ``H_G >= ln l``. Value: ``min(exp(H_G), m)``,
    the l the class reaches on both counts, so the test reads ``value >= l``.

    ARX aborts its sum as soon as a partial sum exceeds N (G_N - ln l); with G_1 < 0 a later
    singleton could have lowered it again, so ARX's verdict depends on its hash order in rare
    cases. Here the full sum decides (the definition).

    Not monotone without suppression (ARX declares it monotone with generalization, as for the
    Shannon estimator; the estimator breaks it): G corrects small samples upwards, so a class
    {a, b} has H_G = G_2 - G_1 = 2 >= ln 2, and the union of two such classes, {a, a, b, b},
    has H_G = G_4 - G_2 = 0.667 < ln 2. Not monotone with suppression either: {a, b} passes
    l = 2, {a x 8} fails, and their union (H_G = 0.557) fails."""

    name = "entropy-l-grassberger"
    monotone_without_suppression = False
    monotone_with_suppression = False

    def __init__(self, l: float) -> None:  # noqa: E741
        self.l = _check_l(l, whole=False)

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        # required just above: the pairs and the classes' counts of values are set
        assert stats.pair_class is not None and stats.pair_count is not None
        assert stats.vals is not None
        weighted = np.bincount(
            stats.pair_class,
            stats.pair_count * grassberger_g(stats.pair_count),
            minlength=stats.classes,
        )
        # N: the class's records with a (non-NULL) sensitive value
        sizes = stats.vals
        with np.errstate(invalid="ignore", divide="ignore"):
            h = grassberger_g(np.maximum(sizes, 1)) - weighted / np.maximum(sizes, 1)
        distinct = np.bincount(stats.pair_class, minlength=stats.classes).astype(np.float64)
        return np.minimum(np.exp(h), distinct)

    def passes(self, values: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(values) >= math.log(self.l) - EPS

    def sql_template(self) -> tuple[str, dict]:
        return "models/grassberger_entropy_l", grassberger_sql_params()

    def sql_pass(self) -> str:
        return f"LN(value) >= {math.log(self.l) - EPS!r}"

    def describe(self) -> str:
        return f"entropy {self.l:g}-diversity (Grassberger estimator)"
