"""l-diversity (Machanavajjhala et al.): distinct, entropy and recursive (c,l).

Entropy l-diversity follows seed 004 Definition 10 (natural logarithm): a class passes when
``-sum p ln p >= ln l``. Its per-class value is ``exp(-sum p ln p)``, the l-diversity measure
of seed 004 Definition 11, so the test reads ``value >= l``.
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

    def validate(self, rows: int, distinct_sensitive: int | None) -> None:
        if distinct_sensitive is not None and self.l > distinct_sensitive:
            raise InputError(
                f"l = {self.l:g} is larger than the number of distinct sensitive values in "
                f"the whole table ({distinct_sensitive}); no class can be {self.l:g}-diverse"
            )


class DistinctLDiversity(_LDiversity):
    """Every class holds at least l distinct sensitive values.

    Monotone without and with suppression: a union of classes holds every value each of them
    holds, so it is l-diverse as soon as one of its classes is (ARX: monotonic with
    generalization and with suppression)."""

    name = "distinct-l"
    monotone_without_suppression = True
    monotone_with_suppression = True

    def __init__(self, l: int) -> None:  # noqa: E741 - the literature's name
        self.l = int(_check_l(l))

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
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

    def __init__(self, l: int, c: float) -> None:  # noqa: E741
        self.l = int(_check_l(l))
        if isinstance(c, bool) or not isinstance(c, (int, float)) or c <= 0:
            raise InputError(f"c must be a positive number, got {c!r}")
        self.c = float(c)

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
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
