"""Anonymization algorithms by user-facing name (``--algorithm``, ``"algorithm"`` in specs and
SQL parameters). Each returns a recoding; :func:`anonsql.run.anonymize` hands it to the one
output writer.

The registry is one line per family folder: a family's ``algorithm`` module lists its
algorithms in ``ALGORITHMS``. Each algorithm declares its own options and their rules, the
models its guard enforces and how a run of it is summed up (:class:`~.base.Algorithm`), so
that nothing outside its folder names it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anonsql.errors import InputError
from anonsql.spec import Option, Spec

if TYPE_CHECKING:
    # the base loads the models; the registry's callers (the command line's options)
    # must not pay for it before a run
    from anonsql.algorithms.base import Algorithm


def registry() -> dict[str, type[Algorithm]]:
    """Every algorithm by name, in the order ``anonsql algorithms`` lists them. The families
    are imported here, on first use, so that ``anonsql --help`` loads none of them."""
    from anonsql.algorithms.dp.algorithm import ALGORITHMS as DP
    from anonsql.algorithms.greedy.algorithm import ALGORITHMS as GREEDY
    from anonsql.algorithms.lattice.algorithm import ALGORITHMS as LATTICE
    from anonsql.algorithms.lattice.passes import ALGORITHMS as PASSES
    from anonsql.algorithms.microaggregation.algorithm import ALGORITHMS as MICROAGGREGATION
    from anonsql.algorithms.mondrian.algorithm import ALGORITHMS as MONDRIAN
    from anonsql.algorithms.mondrian.tada import ALGORITHMS as TADA

    families = (LATTICE, GREEDY, PASSES, MONDRIAN, TADA, MICROAGGREGATION, DP)
    return {cls.name: cls for family in families for cls in family}


def own_options() -> tuple[Option, ...]:
    """Every family's own options (one line per family; light modules, which import no
    algorithm), each named once: an option two families take is declared by one."""
    from anonsql.algorithms.dp.options import OPTIONS as DP
    from anonsql.algorithms.greedy.options import OPTIONS as GREEDY
    from anonsql.algorithms.lattice.options import OPTIONS as LATTICE
    from anonsql.algorithms.microaggregation.options import OPTIONS as MICROAGGREGATION
    from anonsql.algorithms.mondrian.options import OPTIONS as MONDRIAN

    return (*LATTICE, *GREEDY, *MONDRIAN, *MICROAGGREGATION, *DP)


def selectable() -> list[str]:
    """The names ``algorithm`` takes (local recoding is chosen by ``recoding``)."""
    return [name for name, cls in registry().items() if cls.selectable]


def algorithm(name: str) -> Algorithm:
    """The registered algorithm ``name`` (local recoding's inner search is Flash)."""
    try:
        return registry()[name]()
    except KeyError:
        raise InputError(
            f"unknown algorithm {name!r}; use one of {', '.join(selectable())}"
        ) from None


def algorithm_for(spec: Spec) -> Algorithm:
    """The algorithm that runs ``spec``: the one that claims it (:meth:`Algorithm.claims`)."""
    for cls in registry().values():
        if cls.claims(spec):
            return cls.for_spec(spec)
    raise InputError(f"unknown algorithm {spec.algorithm!r}; use one of {', '.join(selectable())}")


__all__ = [
    "algorithm",
    "algorithm_for",
    "own_options",
    "registry",
    "selectable",
]
