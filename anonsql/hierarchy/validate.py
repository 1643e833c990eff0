"""Structural checks of a stored hierarchy, run as SQL over its closure table."""

from __future__ import annotations

from anonsql.backend.sql_templates import template
from anonsql.errors import HierarchyError
from anonsql.hierarchy.store import HierarchyStore

_MESSAGES = {
    "unrooted": "node(s) do not reach the root",
    "bad_distances": "closure distance(s) differ from the level difference",
    "bad_leaf_counts": "node(s) store a wrong number of leaves",
    "bad_depths": "leaf/leaves have a path to the root of the wrong length",
    "extra_roots": "extra root(s)",
}


def check_invariants(store: HierarchyStore, name: str) -> dict[str, int]:
    """Counts of violated invariants (all zero for a sound hierarchy); raises on any."""
    key = store.pin(name)
    df = store.backend.fetch_df(
        template("hierarchy/check_invariants", store.backend.dialect, name=key)
    )
    counts = {k: int(df[k].iloc[0]) for k in _MESSAGES}
    bad = [f"{n} {_MESSAGES[k]}" for k, n in counts.items() if n]
    if bad:
        raise HierarchyError(f"hierarchy {name!r} is inconsistent: {'; '.join(bad)}")
    return counts
