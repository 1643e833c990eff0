"""What an anonymization algorithm is: it reads the source (through the histogram), decides
a recoding, and returns it with its figures. It never writes: the one output writer
(:mod:`anonsql.output.writer`) materializes every algorithm's recoding behind the same
read-time guard, with the same provenance and pinned hierarchies."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

from anonsql.algorithms.recoding import Recoding
from anonsql.errors import InputError
from anonsql.models.base import PrivacyModel
from anonsql.spec import Spec, Spell

if TYPE_CHECKING:
    from anonsql.algorithms.lattice.base import Progress
    from anonsql.database import Database


def given_options(spec: Spec, given: Collection[str] | None, names: Collection[str]) -> set[str]:
    """Which of the options ``names`` the user set: those in ``given``, or, without it, those
    whose value differs from the Spec's default."""
    if given is not None:
        return {n for n in names if n in given}
    defaults = {f.name: f.default for f in fields(Spec)}
    return {n for n in names if getattr(spec, n) != defaults.get(n)}


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

    @property
    def pinned_keys(self) -> list[str]:
        """``keys`` of an algorithm that reads every QI's hierarchy: the run loads or builds
        one for each QI unless the algorithm sets ``hierarchies_optional``."""
        keys = [k for k in self.keys if k is not None]
        if len(keys) != len(self.keys):
            raise InputError("this algorithm needs a hierarchy for every quasi-identifier")
        return keys


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
    #: the relation the output reads instead of the source (SafePub's stored sample)
    release_source: str | None = None
    #: what the algorithm derived, recorded beside the spec in provenance (SafePub: "dp")
    parameters: dict[str, Any] = field(default_factory=dict)
    #: run inside the output's transaction before anything is written (SafePub's budget)
    before_write: Callable[[Any], None] | None = None


class Algorithm(ABC):
    """One entry of the registry (:func:`anonsql.algorithms.registry`): its name, its own
    options and their rules, how it runs, the models its output's guard enforces and how
    a run of it is summed up. Nothing outside its folder names an algorithm."""

    name: ClassVar[str]
    #: the options of its own (names of :data:`anonsql.options.OPTIONS`), beyond the
    #: shared goal, roles and output
    options: ClassVar[tuple[str, ...]] = ()
    #: chosen by its name in ``algorithm`` (local recoding is chosen by ``recoding``)
    selectable: ClassVar[bool] = True
    #: a QI may come without hierarchy (its key is then None): the partitioning algorithms
    #: read such a QI as numeric or categorical (:mod:`anonsql.data.points`)
    hierarchies_optional: ClassVar[bool] = False
    #: the algorithm protects several sensitive attributes at once (README "Several
    #: sensitive attributes"): it tests each model on each attribute
    several_sensitive: ClassVar[bool] = False
    #: what the progress bar counts (None: the algorithm's name)
    progress: ClassVar[str | None] = None
    #: what ``checked`` counts for a run without a lattice, as the report says it (None:
    #: nothing said)
    counted: ClassVar[str | None] = None

    @classmethod
    def claims(cls, spec: Spec) -> bool:
        """Whether ``spec`` asks for this algorithm (by default: its name)."""
        return spec.algorithm == cls.name

    @classmethod
    def for_spec(cls, spec: Spec) -> Algorithm:
        """The instance that runs ``spec``."""
        return cls()

    @classmethod
    def check(
        cls,
        spec: Spec,
        prefix: str,
        given: Collection[str] | None,
        spell: Spell,
        chosen: type[Algorithm] | None,
        alone: bool = False,
    ) -> None:
        """Reject misuse of this algorithm's own options, whichever algorithm ``spec``
        names (``chosen``, None when the name is unknown): a value out of range, or an
        option given to an algorithm that does not take it. ``given``: the options the user
        set (None: those that differ from the Spec's defaults); ``alone``: each option is
        checked by itself (its type and range), not how the options combine."""
        return  # an algorithm without options of its own has nothing to check

    def reads_sensitive(self, spec: Spec) -> bool:
        """Whether the algorithm itself reads the sensitive attribute (beyond the models):
        then a sensitive attribute no model protects is not a mistake."""
        return False

    def guard_models(self, spec: Spec, sensitive_key: str | None) -> list[PrivacyModel]:
        """The models the output's guard enforces at every read for a run of ``spec``
        (rebuilt from the run's recorded spec when an output is read again)."""
        from anonsql.models.goal import build_models

        return build_models(spec, sensitive_key)

    def summary_lines(self, result: Any) -> list[str]:
        """What the command line says of a run (:class:`anonsql.run.Result`) before the
        figures every run has."""
        return [f"{self.name} ({result.algorithm})"]

    @abstractmethod
    def run(self, ctx: RunContext) -> Outcome:
        """Decide the recoding of ``ctx.source``."""


__all__ = ["Algorithm", "Outcome", "RunContext", "given_options"]
