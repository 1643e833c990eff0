"""Anonymization algorithms by user-facing name (``--algorithm``, ``"algorithm"`` in specs and
SQL parameters). Each returns a recoding; :func:`anonsql.run.anonymize` hands it to
the one output writer."""

from __future__ import annotations

from anonsql.algorithms.base import Algorithm, Outcome, RunContext
from anonsql.errors import InputError


def _registry() -> dict[str, type[Algorithm]]:
    from anonsql.algorithms.greedy.algorithm import GreedyAlgorithm
    from anonsql.algorithms.lattice.algorithm import Exhaustive, Flash, Heuristic
    from anonsql.algorithms.lattice.passes import RhoGain
    from anonsql.algorithms.microaggregation.algorithm import MICROAGGREGATION
    from anonsql.algorithms.mondrian.algorithm import MondrianAlgorithm
    from anonsql.algorithms.mondrian.tada import TadaAlgorithm

    return {
        cls.name: cls
        for cls in (
            *(Flash, Exhaustive, Heuristic, GreedyAlgorithm, RhoGain),
            *(MondrianAlgorithm, TadaAlgorithm),
            *MICROAGGREGATION,
        )
    }


ALGORITHM_NAMES = ("flash", "exhaustive", "heuristic", "greedy", "rho-gain", "mondrian", "tada")
ALGORITHM_NAMES += ("mdav", "ktca", "ctca", "kde")  # seed 001's microaggregation


def algorithm(name: str) -> Algorithm:
    registry = _registry()
    try:
        return registry[name]()
    except KeyError:
        raise InputError(f"unknown algorithm {name!r}; use one of {', '.join(registry)}") from None


__all__ = ["ALGORITHM_NAMES", "Algorithm", "Outcome", "RunContext", "algorithm"]
