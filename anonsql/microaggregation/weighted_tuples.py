"""The distinct QI tuples of a table with their record counts (and label counts): what the
microaggregation methods cluster."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class WeightedTuples:
    """``values[i]`` is the i-th distinct QI tuple (original units), ``counts[i]`` its number
    of records. With a label: ``label_tuple[r]`` / ``label_code[r]`` / ``label_count[r]`` list
    how many records of tuple ``label_tuple[r]`` carry label ``labels[label_code[r]]`` (equal
    QI tuples may carry different labels)."""

    values: np.ndarray
    counts: np.ndarray
    labels: list[str] | None = None
    label_tuple: np.ndarray | None = None
    label_code: np.ndarray | None = None
    label_count: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.values = np.asarray(self.values, dtype=np.float64)
        if self.values.ndim == 1:
            self.values = self.values[:, None]
        self.counts = np.asarray(self.counts, dtype=np.int64)

    @classmethod
    def from_records(cls, x: np.ndarray, y: np.ndarray | None = None) -> WeightedTuples:
        """Group records ``x`` (n x m) and optional labels ``y`` by distinct tuple."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim == 1:
            x = x[:, None]
        values, inverse, counts = np.unique(x, axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        if y is None:
            return cls(values, counts)
        labels, codes = np.unique(np.asarray(y).astype(str), return_inverse=True)
        pairs, pc = np.unique(
            np.stack([inverse, codes.reshape(-1)], axis=1), axis=0, return_counts=True
        )
        return cls(values, counts, [str(s) for s in labels], pairs[:, 0], pairs[:, 1], pc)

    @property
    def records(self) -> int:
        return int(self.counts.sum())

    @property
    def width(self) -> int:
        return int(self.values.shape[1])

    def scale(self) -> tuple[np.ndarray, np.ndarray]:
        """Record-weighted mean and standard deviation per attribute (1 for a constant one):
        distances are taken between z-scores so no attribute dominates by its unit, as
        sdcMicro's MDAV does by default (``standardized``)."""
        w = self.counts / self.counts.sum()
        mu = w @ self.values
        sd = np.sqrt(w @ (self.values - mu) ** 2)
        sd[sd <= 0] = 1.0
        return mu, sd

    def standardized(self) -> np.ndarray:
        mu, sd = self.scale()
        return (self.values - mu) / sd

    def majority(self, groups: np.ndarray, n_groups: int) -> np.ndarray:
        """Each group's most frequent label code by records (ties: the smaller code)."""
        assert self.label_tuple is not None and self.labels is not None
        table = np.zeros((n_groups, len(self.labels)), dtype=np.int64)
        np.add.at(table, (groups[self.label_tuple], self.label_code), self.label_count)
        return table.argmax(axis=1)

    def expand(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Record indices (into the tuples) and, with a label, each record's label code: the
        records themselves, for measures defined per record."""
        if self.label_tuple is None:
            return np.repeat(np.arange(len(self.counts)), self.counts), None
        idx = np.repeat(self.label_tuple, self.label_count)
        return idx, np.repeat(self.label_code, self.label_count)


__all__ = ["WeightedTuples"]
