"""How much memory a run may use (the lattice search, Mondrian in the engine), and where
the histogram goes: the budget (``memory_budget``, default :data:`DEFAULT_SHARE` of the
machine's physical memory), its
shares once the histogram is kept in the engine, the bytes a histogram row or a node's
class costs here, what this process and DuckDB's buffer manager hold now, DuckDB's
``memory_limit`` held for a block, and the engine's estimate of the distinct combinations.

:func:`anonsql.algorithms.lattice.engine_classes.load_histogram` reads the histogram into
memory when it fits, else keeps it in the engine
(:class:`~anonsql.algorithms.lattice.engine_classes.EngineHistogram`), by these figures.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
from sqlglot import exp

from anonsql.backend.sql_templates import column, table
from anonsql.database import Database
from anonsql.errors import InputError

#: share of the machine's physical memory a run may use for the histogram by default
DEFAULT_SHARE = 0.25
#: shares of the budget left after what the process holds when the histogram goes to the
#: engine (the libraries, about 220 MiB): DuckDB's own buffers (it runs in this process;
#: at least ENGINE_FLOOR), the hubs, the search's partition cache, and the node being read
#: (beyond it a node is assessed in batches); the rest is slack for temporaries
ENGINE_SHARE = 0.25
HUB_SHARE = 0.35
CACHE_SHARE = 0.1
NODE_SHARE = 0.15
ENGINE_FLOOR = 128 << 20
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1000,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1000**2,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1000**3,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1000**4,
    "tib": 1 << 40,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*$")


def physical_memory() -> int:
    """Bytes of physical memory (2 GiB where the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 2 << 30


def resident_bytes() -> int:
    """This process's resident memory now (0 where the platform does not say)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def engine_bytes(db: Database) -> int:
    """What DuckDB's buffer manager holds now (in this process's resident memory, and bounded
    by the ``memory_limit`` set after; 0 on other engines)."""
    if db.backend.dialect != "duckdb":
        return 0
    try:
        query = exp.select(exp.Sum(this=exp.column("memory_usage_bytes"))).from_(
            exp.Anonymous(this="duckdb_memory")
        )
        return int(db.backend.fetchall(query)[0][0] or 0)
    except Exception:  # a figure we cannot read counts as nothing held
        return 0


def default_budget() -> int:
    return int(physical_memory() * DEFAULT_SHARE)


def parse_size(value: Any, where: str = "memory_budget") -> int:
    """A memory size: a number of bytes, or a string such as ``512MiB``, ``1GiB``, ``2GB``
    (binary units for K/M/G/T and KiB..., decimal for KB/MB/GB/TB)."""
    if isinstance(value, bool):
        raise InputError(f"{where}: a memory size is bytes or e.g. '1GiB', not {value!r}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        number, unit = float(value), ""
    elif isinstance(value, str) and (m := _SIZE.match(value)):
        number, unit = float(m.group(1)), m.group(2).lower()
    else:
        raise InputError(f"{where}: a memory size is bytes or e.g. '1GiB', not {value!r}")
    if unit not in _UNITS:
        raise InputError(
            f"{where}: unknown unit {unit!r} in {value!r}; use B, KiB, MiB, GiB, TiB (or "
            f"KB, MB, GB, TB)"
        )
    size = number * _UNITS[unit]
    if not np.isfinite(size) or size < 1:
        raise InputError(f"{where}: a memory size is at least one byte, not {value!r}")
    return int(size)


def row_bytes(m: int, sensitive: bool) -> int:
    """Peak bytes per histogram row while it is read and partitioned in memory: the fetched
    columns (leaf ids, count, the sensitive value as a Python string), the codes and counts
    kept, and the bottom partition's row classes; an estimate on the safe side."""
    return 24 * m + 64 + (96 if sensitive else 0)


def class_bytes(m: int, sensitive: bool) -> int:
    """Peak bytes per class of a node read from the engine in batches and grouped here (as
    :func:`row_bytes`; measured: 148 bytes a class for 8 QIs, 40 of them kept)."""
    return 20 * m + 16 + (120 if sensitive else 0)


@contextlib.contextmanager
def duckdb_limit(db: Database, limit: int) -> Iterator[dict[str, str | None]]:
    """DuckDB's ``memory_limit`` held to ``limit`` bytes (when lower than it is) for the
    block, then restored; nothing on other engines or with ``limit`` 0. Yields a dict whose
    ``previous`` is the setting to restore (as DuckDB wrote it: restoring from its own
    text, not from a rounded read-back); a block that sets it to None hands the restoring
    on (:meth:`EngineHistogram.close`)."""
    previous = None
    if limit and db.backend.dialect == "duckdb":
        name = exp.Literal.string("memory_limit")
        try:
            got = db.backend.fetchall(
                exp.select(exp.Anonymous(this="current_setting", expressions=[name]))
            )
            if parse_size(str(got[0][0])) > limit:
                db.backend.execute(set_memory_limit(f"{limit}B"))
                previous = str(got[0][0])
        except Exception:  # a setting we cannot read or write is left as it is
            previous = None
    held = {"previous": previous}
    try:
        yield held
    finally:
        if held["previous"] is not None:
            with contextlib.suppress(Exception):
                db.backend.execute(set_memory_limit(held["previous"]))


def estimated_combinations(
    db: Database, source: str, qis: list[str], sensitive: str | None, cap: int
) -> float | None:
    """The number of distinct QI (and sensitive) combinations of ``source``, estimated by the
    engine's HyperLogLog (``approx_count_distinct`` over a hash of the tuple: one scan, a few
    KiB of state), where the source has more than ``cap`` rows (else the histogram fits
    whatever it holds, and nothing is spent); None where the engine has no such estimate
    (PostgreSQL) or the estimate fails."""
    if db.backend.dialect not in ("duckdb", "spark"):
        return None
    try:
        rows = db.backend.fetchall(exp.select(exp.Count(this=exp.Star())).from_(table(source)))
        if int(rows[0][0]) <= cap:
            return None
        cols = [column(q) for q in qis] + ([column(sensitive)] if sensitive is not None else [])
        hashed = exp.Anonymous(this="hash", expressions=cols)
        got = db.backend.fetchall(exp.select(exp.ApproxDistinct(this=hashed)).from_(table(source)))
        return float(got[0][0])
    except Exception:  # an estimate only: the LIMIT read below decides when there is none
        return None


def out_of_memory(error: BaseException) -> bool:
    """DuckDB's ``OutOfMemoryException`` (its message: "Out of Memory Error: ...")."""
    return "out of memory" in str(error).lower()


def set_memory_limit(value: str) -> exp.Expression:
    item = exp.EQ(this=exp.column("memory_limit"), expression=exp.Literal.string(value))
    return exp.Set(expressions=[exp.SetItem(this=item)])


__all__ = [
    "CACHE_SHARE",
    "DEFAULT_SHARE",
    "ENGINE_FLOOR",
    "ENGINE_SHARE",
    "HUB_SHARE",
    "NODE_SHARE",
    "class_bytes",
    "default_budget",
    "duckdb_limit",
    "engine_bytes",
    "estimated_combinations",
    "out_of_memory",
    "parse_size",
    "physical_memory",
    "resident_bytes",
    "row_bytes",
    "set_memory_limit",
]
