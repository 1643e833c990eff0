"""The family's registry line: SafePub (:mod:`anonsql.algorithms.dp.safepub`)."""

from __future__ import annotations

from anonsql.algorithms.base import Algorithm
from anonsql.algorithms.dp.safepub import SafePub

ALGORITHMS: tuple[type[Algorithm], ...] = (SafePub,)

__all__ = ["ALGORITHMS"]
