"""Search algorithms decide *which* generalization; ``SEARCHES`` maps names to classes."""

from __future__ import annotations

from anonsql.errors import InputError
from anonsql.search.base import Search, SearchResult, Solution
from anonsql.search.exhaustive import Exhaustive
from anonsql.search.flash import Flash
from anonsql.search.heuristic import Heuristic

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
