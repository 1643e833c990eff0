"""Search algorithms decide *which* generalization; ``SEARCHES`` maps names to classes."""

from __future__ import annotations

from anonsql.algorithms.lattice.base import Search, SearchResult, Solution
from anonsql.algorithms.lattice.exhaustive import Exhaustive
from anonsql.algorithms.lattice.flash import Flash
from anonsql.algorithms.lattice.heuristic import Heuristic
from anonsql.errors import InputError

SEARCHES: dict[str, type[Search]] = {
    "flash": Flash,
    "exhaustive": Exhaustive,
    "heuristic": Heuristic,
}


def search(name: str) -> Search:
    try:
        return SEARCHES[name]()
    except KeyError:
        raise InputError(f"unknown algorithm {name!r}; use one of {', '.join(SEARCHES)}") from None


__all__ = [
    "SEARCHES",
    "Exhaustive",
    "Flash",
    "Heuristic",
    "Search",
    "SearchResult",
    "Solution",
    "search",
]
