"""The process's caches of a run's fixed costs, and the one switch that turns them off.

* SQL templates are compiled once per process (:mod:`anonsql.backend.sql_templates`);
* hierarchy versions are looked up from one read of the catalog, kept while nothing can have
  changed it (:class:`anonsql.hierarchy.store.HierarchyStore`).

:func:`disabled` restores the uncached paths (a parse tree deep-copied and filled per
statement, one ``SELECT`` per hierarchy lookup); it exists for ``benchmarks/
bench_fixed_costs.py``, which measures both in one run (in a subprocess: the environment
variable ``ANONSQL_CACHES=0``). :func:`catalog_changed` is called by
every write to the hierarchy catalog made through anonsql, and by every rollback: it
invalidates the hierarchy lookups of every store of the process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

#: False inside :func:`disabled`, or in a process started with ANONSQL_CACHES=0
ENABLED = os.environ.get("ANONSQL_CACHES", "1") != "0"

# bumped by every change to a hierarchy catalog made in this process (any database, any
# connection: over-invalidating costs one query, under-invalidating would serve a stale
# version); a store's snapshot of the catalog is valid while the count is the one it read at
_catalog_generation = 0


def catalog_generation() -> int:
    return _catalog_generation


def catalog_changed() -> None:
    """Forget every store's snapshot of the hierarchy catalog."""
    global _catalog_generation
    _catalog_generation += 1


@contextmanager
def disabled() -> Iterator[None]:
    """Run without the caches (the benchmark's baseline)."""
    global ENABLED
    before = ENABLED
    ENABLED = False
    try:
        yield
    finally:
        ENABLED = before
