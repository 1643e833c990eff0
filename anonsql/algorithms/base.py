"""What an anonymization algorithm is: it reads the source (through the histogram), decides
a recoding, and returns it with its figures. It never writes: the one output writer
(:mod:`anonsql.output.writer`) materializes every algorithm's recoding behind the same
read-time guard, with the same provenance and pinned hierarchies."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from anonsql.models.base import PrivacyModel
from anonsql.output.recoding import Recoding
from anonsql.spec import Spec

if TYPE_CHECKING:
    from anonsql.algorithms.lattice.base import Progress
    from anonsql.database import Database


@dataclass
class RunContext:
    """The checked inputs of a run: the source, the spec, each QI's pinned hierarchy key and
    the sensitive hierarchy's key (hierarchical EMD)."""

    db: Database
    source: str
    spec: Spec
    keys: list[str | None]  # None: a QI without hierarchy (``hierarchies_optional``)
    sensitive_key: str | None
    progress: Progress | None
    timings: dict[str, float]
    t0: float
    #: what must last until the output is written, undone after it (or on failure): e.g.
    #: DuckDB's memory limit held by a histogram kept in the engine, so the write runs
    #: within the same budget as the search
    after: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)


@dataclass
class Outcome:
    """An algorithm's answer: the recoding, the models every released class satisfies (the
    guard enforces them at every read), and its figures."""

    recoding: Recoding
    models: list[PrivacyModel]
    metric: str
    score: float
    measures: dict[str, Any]
    checked: int
    algorithm: str
    guarantee: str
    levels: dict[str, int] = field(default_factory=dict)
    per_qi: dict[str, float] | None = None
    lattice_size: int | None = None
    solutions: list[dict] = field(default_factory=list)


class Algorithm(ABC):
    """One entry of :data:`anonsql.algorithms.ALGORITHMS`."""

    name: ClassVar[str]
    #: a QI may come without hierarchy (its key is then None): the partitioning algorithms
    #: read such a QI as numeric or categorical (:mod:`anonsql.data.points`)
    hierarchies_optional: ClassVar[bool] = False

    @abstractmethod
    def run(self, ctx: RunContext) -> Outcome:
        """Decide the recoding of ``ctx.source``."""


__all__ = ["Algorithm", "Outcome", "RunContext"]
