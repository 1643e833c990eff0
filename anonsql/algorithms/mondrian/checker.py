"""Tests a candidate split: do all its parts satisfy the run's privacy models?

The models are the ones the output's guard enforces at every read
(:mod:`anonsql.models`), evaluated with their own numpy definitions on the candidate parts,
so a partition the algorithm accepts is one the guard releases."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonsql.errors import InputError
from anonsql.models.base import ClassStats, PrivacyModel


@dataclass
class Checker:
    """``models`` over the sensitive codes of a :class:`~anonsql.data.points.Points`;
    ``overall`` is the whole table's sensitive distribution (t-closeness, beta, delta)."""

    models: list[PrivacyModel]
    overall: np.ndarray | None = None
    labels: list[str] | None = None
    sensitive_hierarchy: object | None = None

    def __post_init__(self) -> None:
        bad = [m.name for m in self.models if m.table_level or m.needs_population]
        if bad:
            raise InputError(
                f"the partitioning algorithms test every class on its own: "
                f"{', '.join(bad)} need a population table or all classes at once; use a "
                f"lattice algorithm for them"
            )
        self.needs_sensitive = any(m.needs_sensitive for m in self.models)
        from anonsql.models.k_anonymity import KAnonymity

        #: the fewest rows a class may hold (k-anonymity's k, else 1): a part with fewer
        #: than twice as many rows has no allowable split, which the algorithms know
        #: without testing one (at a million rows most parts are such)
        self.min_rows = max((m.k for m in self.models if isinstance(m, KAnonymity)), default=1)

    def stats(self, parts: list[tuple[np.ndarray | None, np.ndarray]]) -> ClassStats:
        """ClassStats of ``parts``: each a (sensitive codes, counts) pair."""
        sizes = np.asarray([float(c.sum()) for _, c in parts])
        if not self.needs_sensitive:
            return ClassStats(sizes)
        pc, pv, pn = [], [], []
        width = len(self.overall)  # type: ignore[arg-type]
        for i, (s, c) in enumerate(parts):
            hist = np.bincount(s, c, minlength=width)  # type: ignore[arg-type]
            nz = np.flatnonzero(hist)
            pc.append(np.full(len(nz), i, dtype=np.int64))
            pv.append(nz)
            pn.append(hist[nz])
        return ClassStats(
            sizes,
            np.concatenate(pc),
            np.concatenate(pv),
            np.concatenate(pn).astype(np.float64),
            self.overall,
            self.labels,
            self.sensitive_hierarchy,  # type: ignore[arg-type]
        )

    def passes_grouped(
        self, classes: np.ndarray, sens: np.ndarray | None, counts: np.ndarray
    ) -> np.ndarray:
        """Per class id 0..C-1 of ``classes`` (one per histogram row): does it satisfy every
        model? The same test as :meth:`passes`, vectorized for many classes."""
        n = int(classes.max()) + 1 if len(classes) else 0
        sizes = np.bincount(classes, counts, minlength=n).astype(np.float64)
        if not self.needs_sensitive:
            stats = ClassStats(sizes)
        else:
            width = len(self.overall)  # type: ignore[arg-type]
            pair = classes.astype(np.int64) * width + sens  # type: ignore[operator]
            if n * width <= 4 * len(pair) + 1024:
                # the distinct (class, value) pairs by counting (no sort), in sorted order
                present = np.bincount(pair, minlength=n * width) > 0
                keys = np.flatnonzero(present)
                inverse = (np.cumsum(present) - 1)[pair]
            else:
                found = np.unique(pair, return_inverse=True)
                keys, inverse = found[0], found[1]
            pn = np.bincount(inverse.ravel(), counts).astype(np.float64)
            stats = ClassStats(
                sizes,
                keys // width,
                keys % width,
                pn,
                self.overall,
                self.labels,
                self.sensitive_hierarchy,  # type: ignore[arg-type]
            )
        ok = np.ones(n, dtype=bool)
        for m in self.models:
            ok &= m.check(stats)
        return ok

    def passes(self, parts: list[tuple[np.ndarray | None, np.ndarray]]) -> np.ndarray:
        """Per part: does it satisfy every model?"""
        if not parts:
            return np.zeros(0, dtype=bool)
        stats = self.stats(parts)
        ok = np.ones(len(parts), dtype=bool)
        for m in self.models:
            ok &= m.check(stats)
        return ok

    def all_pass(self, parts: list[tuple[np.ndarray | None, np.ndarray]]) -> bool:
        return bool(self.passes(parts).all())


__all__ = ["Checker"]
