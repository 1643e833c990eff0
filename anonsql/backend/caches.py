"""The process's caches of a run's fixed costs, and the one switch that turns them off.

* SQL templates are compiled once per process (:mod:`anonsql.backend.sql_templates`);
* hierarchy versions are looked up from one read of the catalog, kept while nothing can have
  changed it (:class:`anonsql.hierarchy.store.HierarchyStore`): across runs where this
  process is the database's only writer (a DuckDB file it holds), else for one run
  (:func:`one_run`; PostgreSQL and Spark, whose catalog other sessions may change between
  runs).

:func:`disabled` restores the uncached paths (a parse tree deep-copied and filled per
statement, one ``SELECT`` per hierarchy lookup); it exists for ``benchmarks/
bench_fixed_costs.py``, which measures both in one run (in a subprocess: the environment
variable ``ANONSQL_CACHES=0``). :func:`catalog_changed` is called by
every write to the hierarchy catalog made through anonsql, and by every rollback: it
invalidates the hierarchy lookups of every store of the process.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

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


# the run this context is in (a number per outermost run; None outside a run): a context
# variable, so two threads running at once never share a run's snapshot
_runs = itertools.count(1)
_current_run: ContextVar[int | None] = ContextVar("anonsql_run", default=None)


@contextmanager
def one_run() -> Iterator[None]:
    """A run's hierarchy lookups answer from one read of the catalog, taken at its first
    lookup (and again after a write through anonsql): one query per run instead of one per
    lookup. A version is named by its content key, so a version another session adds during
    the run is simply not this run's, as if it had started earlier."""
    if _current_run.get() is not None:  # a run inside a run (a pass of a search) shares it
        yield
        return
    token = _current_run.set(next(_runs))
    try:
        yield
    finally:
        _current_run.reset(token)


def current_run() -> int | None:
    return _current_run.get()


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
