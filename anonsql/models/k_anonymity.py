"""k-anonymity: every equivalence class holds at least k records."""

from __future__ import annotations

import numpy as np

from anonsql.errors import InputError
from anonsql.models.base import ClassStats, PrivacyModel


class KAnonymity(PrivacyModel):
    """Monotone without and with suppression: a union of classes is at least as large as each
    of them, so it holds k records as soon as one of its classes does. A generalization's
    classes smaller than k are therefore unions of classes smaller than k, and the records it
    suppresses are a subset of those its specializations suppress."""

    name = "k-anonymity"
    monotone_without_suppression = True
    monotone_with_suppression = True

    def __init__(self, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InputError(f"k must be a whole number >= 1, got {k!r}")
        self.k = int(k)

    def class_values(self, stats: ClassStats) -> np.ndarray:
        return stats.sizes.astype(np.float64)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values >= self.k

    def sql_template(self) -> tuple[str, dict]:
        return "models/k_anonymity", {}

    def sql_pass(self) -> str:
        return f"value >= {self.k}"

    def validate(self, rows: int, distinct_sensitive: int | None) -> None:
        if self.k > rows:
            raise InputError(f"k = {self.k} is larger than the table ({rows} rows)")

    def describe(self) -> str:
        return f"{self.k}-anonymity"
