"""A privacy goal: models that every class must satisfy, and how many records may be
suppressed to get there (ARX's semantics: classes that fail a model are suppressed; the
transformation is anonymous when the suppressed records stay within the limit)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from anonsql.data.histogram import Histogram
from anonsql.data.partition import Partition
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.models.base import ClassStats, PrivacyModel


@dataclass
class Assessment:
    passing: np.ndarray  # per class: satisfies every model
    suppressed_rows: int
    anonymous: bool

    @property
    def suppressed(self) -> np.ndarray:
        return ~self.passing


@dataclass
class Requirements:
    models: list[PrivacyModel]
    suppression_limit: float = 0.0
    sensitive_hierarchy: Hierarchy | None = None
    _overall: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        lim = self.suppression_limit
        if isinstance(lim, bool) or not isinstance(lim, (int, float)) or not 0 <= lim <= 1:
            raise InputError(f"the suppression limit must be a share in [0, 1], got {lim!r}")
        if not self.models:
            raise InputError("give at least one privacy model (e.g. k)")

    @property
    def needs_sensitive(self) -> bool:
        return any(m.needs_sensitive for m in self.models)

    def validate(self, hist: Histogram) -> None:
        distinct = len(hist.sens_labels) if hist.sens is not None else None
        for m in self.models:
            if m.needs_sensitive and hist.sens is None:
                raise InputError(f"{m.describe()} needs a sensitive attribute (--sa)")
            m.validate(hist.rows, distinct)

    def stats(self, part: Partition, hist: Histogram) -> ClassStats:
        if hist.sens is not None and self._overall is None:
            self._overall = hist.overall_distribution()
        return ClassStats(
            part.sizes,
            part.pair_class,
            part.pair_value,
            part.pair_count,
            self._overall,
            hist.sens_labels or None,
            self.sensitive_hierarchy,
        )

    def assess(self, part: Partition, hist: Histogram) -> Assessment:
        stats = self.stats(part, hist)
        passing = np.ones(part.classes, dtype=bool)
        for m in self.models:
            passing &= m.check(stats)
        suppressed_rows = int(part.sizes[~passing].sum())
        return Assessment(
            passing, suppressed_rows, suppressed_rows <= self.suppression_limit * hist.rows
        )
