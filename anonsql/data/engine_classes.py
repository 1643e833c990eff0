"""A histogram that stays in the engine, for tables whose distinct QI combinations do not fit
the memory budget (``memory_budget``, default :data:`DEFAULT_SHARE` of the machine's memory).

The lattice search asks for a node's classes (:meth:`EngineHistogram.node_classes`, the
hook of :class:`anonsql.search.base.NodeEvaluator`). Each node is served by whichever is
cheaper, by measured costs:

* in the engine: one GROUP BY of the generalized QIs over the histogram table (a temporary
  relation holding the leaf ids and counts), each QI taken to its level through the closure
  table (``anonsql_hierarchy_closure``: the ancestor at distance = level);
* in memory: a roll-up of a cached finer partition (:meth:`Partition.rollup`), which the
  engine's coarser aggregates seed: Flash's floor (the meet of the nodes its projections
  leave open) is one GROUP BY, and every node above it rolls up here when it fits.

Only partitions that fit the budget are cached (the search's LRU cache is sized to it).
Either way a node gets the same classes, so the search finds the same optimum.

The one-QI and two-QI marginals (read by the quality models and Flash's projection sieve)
come from one GROUPING SETS query; the sensitive values' totals and the rows with values a
hierarchy lacks from one more.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import time
from typing import Any, overload

import numpy as np
import pandas as pd
from sqlglot import exp

from anonsql.backend.sql_templates import column, table
from anonsql.data.histogram import Histogram, HistogramTooLarge, _explain_missing, histogram_query
from anonsql.data.partition import Partition, _group
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.hierarchy.store import CLOSURE

#: share of the machine's physical memory a run may use for the histogram by default
DEFAULT_SHARE = 0.25
#: two-QI marginals wider than this are skipped, as Flash's sieve skips them
PAIR_SPAN = 4_000_000
#: the histogram goes to the engine without a read when the estimate of its rows exceeds
#: what the budget holds by this factor (HyperLogLog's error is a few per cent; below it the
#: LIMIT read decides exactly)
ESTIMATE_MARGIN = 1.1
#: share of the budget DuckDB's own buffers (it runs in this process) may hold while the
#: histogram is kept there, and the least it is given
ENGINE_SHARE = 0.5
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
    """Peak bytes per class of a node read from the engine (as :func:`row_bytes`)."""
    return 28 * m + 64 + (120 if sensitive else 0)


def load_histogram(
    db: Database,
    source: str,
    qis: list[str],
    hierarchy_names: list[str],
    sensitive: str | None = None,
    missing: str = "error",
    budget: int | None = None,
) -> Histogram:
    """The histogram in memory when it fits ``budget`` bytes (one GROUP BY, read with a LIMIT
    one past what fits, so a run that fits costs what it always did), else an
    :class:`EngineHistogram` that keeps it in the engine."""
    budget = default_budget() if budget is None else budget
    cap = budget // row_bytes(len(qis), sensitive is not None)
    estimate = estimated_combinations(db, source, qis, sensitive, cap)
    if estimate is not None and estimate > ESTIMATE_MARGIN * cap:
        # surely too large: reading ``cap`` rows to find out would itself cost the budget
        # (and the engine's hash table for the whole GROUP BY on top)
        return EngineHistogram.build(db, source, qis, hierarchy_names, sensitive, missing, budget)
    try:
        return Histogram.from_database(
            db, source, qis, hierarchy_names, sensitive, missing, max_rows=cap
        )
    except HistogramTooLarge:
        pass
    return EngineHistogram.build(db, source, qis, hierarchy_names, sensitive, missing, budget)


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


class EngineHistogram(Histogram):
    """The histogram as a temporary relation of the engine (leaf ids ``q0..``, the
    sensitive value ``s`` as text, count ``n``), with what the search reads of it besides
    the classes: row count, sensitive totals, marginals. Its rows never come to Python:
    :attr:`codes` and :attr:`counts` raise."""

    def __init__(
        self,
        db: Database,
        relation: str,
        qis: list[str],
        hierarchies: list,
        keys: list[str],
        sensitive: str | None,
        budget: int,
    ) -> None:
        # the dataclass fields the search reads; codes and counts are properties that raise
        self.db = db
        self.relation = relation
        self.qis = list(qis)
        self.hierarchies = list(hierarchies)
        self.keys = list(keys)
        self.sensitive = sensitive
        self.budget = budget
        #: the budget's shares: half for the hubs (nodes computed in the engine that later
        #: nodes roll up from), a quarter for the search's partition cache, a quarter for
        #: the node being computed and its roll-up's temporaries
        self.hub_bytes = budget // 2
        self.cache_bytes = budget // 4
        self.sens: np.ndarray | None = None
        self.sens_labels: list[str] = []
        self.missing_rows = 0
        self.missing_sens: np.ndarray | None = None
        self.distinct = 0
        self._rows = 0
        self._totals: np.ndarray | None = None
        self._marginals: dict[tuple[int, ...], np.ndarray] | None = None
        #: nodes whose classes were computed by a GROUP BY in the engine / rolled up here
        self.nodes_in_engine = 0
        self.nodes_in_memory = 0
        self.engine_seconds: list[float] = []
        self._last: Partition | None = None
        #: partitions of hubs computed in the engine and kept (within half the cache)
        self._hubs: list[Partition] = []
        self._hub_bytes = 0
        self._meet: tuple[int, ...] | None = None
        self._too_big: list[tuple[int, ...]] = []
        self._memory_rate = 3e-8 * max(len(qis), 1)  # seconds per class rolled up (prior)
        self._engine_cost = 0.0  # seconds per GROUP BY in the engine (set by build)
        self._engine_limit: str | None = None  # DuckDB's memory_limit before build held it

    # -- what a Histogram offers ------------------------------------------------------------
    @property
    def codes(self) -> np.ndarray:  # type: ignore[override]
        raise RuntimeError("the histogram is kept in the engine: its rows are not in memory")

    @property
    def counts(self) -> np.ndarray:  # type: ignore[override]
        raise RuntimeError("the histogram is kept in the engine: its rows are not in memory")

    @property
    def weights(self) -> np.ndarray:  # type: ignore[override]
        raise RuntimeError("the histogram is kept in the engine: its rows are not in memory")

    @property
    def rows(self) -> int:
        return self._rows

    def overall_distribution(self) -> np.ndarray:
        if self._totals is None:
            raise InputError("this histogram has no sensitive attribute")
        counts = self._totals.copy()
        if self.missing_sens is not None:
            counts = counts + self.missing_sens
        return counts / (self.rows + self.missing_rows)

    def marginal(self, j: int) -> np.ndarray:
        return self._marginal((j,))

    def pair_marginal(self, a: int, b: int) -> np.ndarray:
        return self._marginal((a, b))

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        db: Database,
        source: str,
        qis: list[str],
        hierarchy_names: list[str],
        sensitive: str | None,
        missing: str,
        budget: int,
    ) -> EngineHistogram:
        """One GROUP BY into a temporary relation, and one pass over it for the totals."""
        hierarchies = [db.hierarchies.load(n) for n in hierarchy_names]
        keys = [db.hierarchies.pin(n) for n in hierarchy_names]
        for h in hierarchies:
            # the ancestor on level lv is the closure row at distance lv only where every
            # leaf's chain passes through every level
            if not (h.ancestors[h.leaf_ids] >= 0).all() or (h.levels[h.leaf_ids] != 0).any():
                raise InputError(
                    f"hierarchy {h.name!r} has leaves without an ancestor on every level; a "
                    f"histogram kept in the engine needs full-domain hierarchies"
                )
        backend = db.backend
        relation = f"__anonsql_hist_{os.getpid()}_{id(db) & 0xFFFFFF:x}_{_next()}"
        query = histogram_query(source, qis, keys, sensitive)
        hist = cls(db, relation, qis, hierarchies, keys, sensitive, budget)
        hist._hold_engine_buffers()
        t0 = time.perf_counter()
        try:
            backend.execute(_temporary(relation, query, backend.dialect))
        except BaseException:
            hist.close()
            raise
        built = time.perf_counter() - t0
        backend.refresh_statistics(relation)
        try:
            hist._read_totals(source, hierarchy_names, missing)
        except BaseException:
            hist.close()
            raise
        # the first node's GROUP BY is estimated at what the histogram's cost; measured after
        hist._engine_cost = built
        return hist

    def _hold_engine_buffers(self) -> None:
        """On DuckDB, which runs inside this process, hold its buffer pool (``memory_limit``)
        to :data:`ENGINE_SHARE` of the budget while the histogram is kept there (never
        raised; restored by :meth:`close`): past it DuckDB spills its aggregation and the
        temporary table to its temporary directory, so the process's peak is bounded by
        the budget and not by the engine's hash tables. Other engines run elsewhere."""
        if self.db.backend.dialect != "duckdb":
            return
        name = exp.Literal.string("memory_limit")
        try:
            got = self.db.backend.fetchall(
                exp.select(exp.Anonymous(this="current_setting", expressions=[name]))
            )
            current = str(got[0][0])
            held = max(int(self.budget * ENGINE_SHARE), ENGINE_FLOOR)
            if parse_size(current) <= held:
                return
            self.db.backend.execute(_set_memory_limit(f"{held}B"))
        except Exception:  # a setting we cannot read or write is left as it is
            return
        self._engine_limit = current

    def _release_engine_buffers(self) -> None:
        if self._engine_limit is not None:
            with contextlib.suppress(Exception):
                self.db.backend.execute(_set_memory_limit(self._engine_limit))
            self._engine_limit = None

    def _missing_condition(self) -> exp.Expression:
        return exp.or_(*[exp.column(f"q{j}").is_(exp.null()) for j in range(len(self.qis))])

    def _read_totals(self, source: str, hierarchy_names: list[str], missing: str) -> None:
        m = len(self.qis)
        lacking = exp.If(this=self._missing_condition(), true=exp.column("n"), false=exp.convert(0))
        select = exp.select(
            exp.alias_(exp.Count(this=exp.Star()), "combinations"),
            exp.alias_(exp.Sum(this=exp.column("n")), "total"),
            exp.alias_(exp.Sum(this=lacking), "lacking"),
            *[
                exp.alias_(
                    exp.Sum(
                        this=exp.If(
                            this=exp.column(f"q{j}").is_(exp.null()),
                            true=exp.convert(1),
                            false=exp.convert(0),
                        )
                    ),
                    f"lacks{j}",
                )
                for j in range(m)
            ],
        ).from_(table(self.relation))
        if self.sensitive is not None:
            select = select.select(exp.alias_(exp.column("s"), "s")).group_by(exp.column("s"))
        frame = self.db.backend.fetch_df(select)
        if missing == "error":
            for j, (q, n) in enumerate(zip(self.qis, hierarchy_names, strict=True)):
                if pd.to_numeric(frame[f"lacks{j}"]).fillna(0).sum() > 0:
                    _explain_missing(self.db, source, q, n)
        total = pd.to_numeric(frame["total"]).fillna(0).to_numpy(np.int64)
        lack = pd.to_numeric(frame["lacking"]).fillna(0).to_numpy(np.int64)
        self.distinct = int(pd.to_numeric(frame["combinations"]).sum())
        self._rows = int((total - lack).sum())
        self.missing_rows = int(lack.sum())
        if self.sensitive is not None:
            s = pd.Series(frame["s"], dtype=object)
            labels = s.where(s.notna(), "NULL").astype(str)
            # as Histogram.from_database: labels of the kept rows and the suppressed ones
            totals = pd.Series(total - lack, index=labels.to_numpy()).groupby(level=0).sum()
            lacked = pd.Series(lack, index=labels.to_numpy()).groupby(level=0).sum()
            present = sorted(set(totals.index[totals > 0]) | set(lacked.index[lacked > 0]))
            self.sens_labels = present
            self._labels = pd.Index(present)
            self._totals = totals.reindex(present, fill_value=0).to_numpy(np.float64)
            # a marker that the histogram has a sensitive attribute; its rows are elsewhere
            self.sens = np.empty(0, dtype=np.int64)
            if self.missing_rows:
                self.missing_sens = lacked.reindex(present, fill_value=0).to_numpy(np.float64)

    # -- marginals -------------------------------------------------------------------------------
    def _marginal(self, qis: tuple[int, ...]) -> np.ndarray:
        if self._marginals is None:
            self._marginals = self._read_marginals()
        if qis not in self._marginals:  # a pair too wide for the shared query
            self._marginals.update(self._read_marginals([qis]))
        return self._marginals[qis]

    def _read_marginals(self, sets: list[tuple[int, ...]] | None = None):
        """The one-QI and two-QI marginals in one GROUPING SETS query (leaf ids are never
        NULL in the rows read, so a NULL id marks a QI outside the row's set)."""
        hs = self.hierarchies
        m = len(self.qis)
        if sets is None:
            sets = [(j,) for j in range(m)]
            if m <= 16:
                sets += [
                    (a, b)
                    for a, b in itertools.combinations(range(m), 2)
                    if hs[a].size * hs[b].size <= PAIR_SPAN
                ]
        cols = sorted({j for s in sets for j in s})
        grouping = exp.GroupingSets(
            expressions=[exp.Tuple(expressions=[exp.column(f"q{j}") for j in s]) for s in sets]
        )
        select = (
            exp.select(
                *[exp.column(f"q{j}") for j in cols],
                exp.alias_(exp.Sum(this=exp.column("n")), "n"),
            )
            .from_(table(self.relation))
            .where(exp.not_(self._missing_condition()))
        )
        select.set("group", exp.Group(grouping_sets=[grouping]))
        got = self.db.backend.fetch_df(select)
        present = {j: _present(got[f"q{j}"]) for j in cols}
        n = pd.to_numeric(got["n"]).to_numpy(np.float64)
        out: dict[tuple[int, ...], np.ndarray] = {}
        for s in sets:
            mask = np.ones(len(got), dtype=bool)
            for j in cols:
                mask &= present[j] if j in s else ~present[j]
            ids = [pd.to_numeric(got[f"q{j}"][mask]).to_numpy(np.int64) for j in s]
            if len(s) == 1:
                out[s] = np.bincount(ids[0], n[mask], minlength=hs[s[0]].size)
            else:
                a, b = s
                key = ids[0] * hs[b].size + ids[1]
                out[s] = np.bincount(key, n[mask], minlength=hs[a].size * hs[b].size)
        return out

    # -- classes of a node -------------------------------------------------------------------------
    def node_classes(self, levels: tuple[int, ...], finer: Partition | None) -> Partition:
        """The classes of the node at ``levels``: rolled up in memory from the cheapest
        finer partition at hand (``finer``, the search's cached one; the node computed
        last; a hub) when that is cheaper by the measured costs, else by a GROUP BY in the
        engine, preferably of a hub below the node (see :meth:`_hub_for`)."""
        levels = tuple(int(x) for x in levels)
        source = self._finest_source(levels, finer)
        if source is not None and source.classes * self._memory_rate <= self._engine_cost:
            return self._rollup(source, levels)
        hub = self._hub_for(levels)
        if hub is not None:
            # read with a LIMIT one row past what the hubs' share holds (a row per class and
            # sensitive value, so at least a row per class): a hub too large to keep is cut
            # off in the engine, never brought here whole
            cap = self.hub_bytes // class_bytes(len(self.qis), self.sensitive is not None)
            part = self.classes_in_engine(hub, max_rows=cap)
            if part is not None and self._keep_hub(part):
                return self._rollup(part, levels)
            # too large to keep: so is every hub below it (finer nodes have more classes)
            self._too_big.append(hub)
            self._meet = levels
        return self.classes_in_engine(levels)

    def _keep_hub(self, part: Partition) -> bool:
        """Keep a hub's partition within :attr:`hub_bytes`: hubs above it are dropped
        first (it serves every node they serve), then the oldest."""
        size = _size(part)
        if size > self.hub_bytes:
            return False
        below = [
            h
            for h in self._hubs
            if not all(a <= b for a, b in zip(part.levels, h.levels, strict=True))
        ]
        self._hubs = below
        while self._hubs and sum(map(_size, self._hubs)) + size > self.hub_bytes:
            self._hubs.pop(0)
        self._hubs.append(part)
        self._hub_bytes = sum(map(_size, self._hubs))
        return True

    def _finest_source(self, levels, finer: Partition | None) -> Partition | None:
        best = finer
        for part in (self._last, *self._hubs):
            if part is None or not all(a <= b for a, b in zip(part.levels, levels, strict=True)):
                continue
            if best is None or part.classes < best.classes:
                best = part
        return best

    def _rollup(self, source: Partition, levels: tuple[int, ...]) -> Partition:
        t0 = time.perf_counter()
        part = source.rollup(self, levels)
        spent = time.perf_counter() - t0
        if source.classes >= 10_000:  # small roll-ups measure overheads, not the rate
            self._memory_rate = 0.5 * self._memory_rate + 0.5 * spent / source.classes
        self.nodes_in_memory += 1
        return part

    def _hub_for(self, levels: tuple[int, ...]) -> tuple[int, ...] | None:
        """A node below ``levels`` to compute in the engine instead, and keep: the meet of
        the nodes the engine was asked for so far. A search visits nodes all over the
        lattice; one GROUP BY of their meet, when its classes fit the budget, serves every
        later node above it by roll-ups here (the in-memory search's bottom partition
        plays that part). A meet as fine as one that did not fit is not tried again; the
        meet restarts from the node at hand."""
        meet = levels if self._meet is None else tuple(map(min, self._meet, levels))
        self._meet = meet
        if meet == levels:
            return None
        for big in self._too_big:
            if all(m <= b for m, b in zip(meet, big, strict=True)):
                self._meet = levels
                return None
        return meet

    @overload
    def classes_in_engine(self, levels: tuple[int, ...]) -> Partition: ...
    @overload
    def classes_in_engine(self, levels: tuple[int, ...], max_rows: int) -> Partition | None: ...

    def classes_in_engine(
        self, levels: tuple[int, ...], max_rows: int | None = None
    ) -> Partition | None:
        """One GROUP BY of the generalized QIs, through the closure table. The last node's
        classes are kept until the next one is asked for: a search asks for a node it just
        checked again (to score it), and a partition too large for the cache would
        otherwise cost a second GROUP BY. With ``max_rows``, None when the result has more
        rows (only ``max_rows + 1`` are read)."""
        if self._last is not None and self._last.levels == tuple(levels):
            return self._last
        self._last = None  # released before the next one is read: one at a time
        t0 = time.perf_counter()
        query = self.node_query(levels)
        if max_rows is not None:
            query = query.limit(max_rows + 1)
        got = self.db.backend.fetch_columns(query)
        if max_rows is not None and len(got["n"]) > max_rows:
            del got
            self.engine_seconds.append(time.perf_counter() - t0)
            self.nodes_in_engine += 1
            return None
        part = self._partition(levels, got)
        del got
        self._last = part
        spent = time.perf_counter() - t0
        self.engine_seconds.append(spent)
        self._engine_cost = 0.5 * self._engine_cost + 0.5 * spent
        self.nodes_in_engine += 1
        return part

    def node_query(self, levels: tuple[int, ...]) -> exp.Select:
        """``SELECT ancestor per QI, s, SUM(n) ... GROUP BY``; a QI on its top level (one
        node) is left out of the grouping, on level 0 it is the leaf id itself."""
        select = exp.select().from_(exp.alias_(table(self.relation), "h", table=True))
        keys: list[exp.Expression] = []
        for j, lv in enumerate(levels):
            h = self.hierarchies[j]
            if lv == h.top_level:
                continue
            if lv == 0:
                value: exp.Expression = exp.column(f"q{j}", "h")
            else:
                alias = f"c{j}"
                on = exp.and_(
                    exp.column("hierarchy", alias).eq(exp.convert(self.keys[j])),
                    exp.column("descendant", alias).eq(exp.column(f"q{j}", "h")),
                    exp.column("distance", alias).eq(exp.convert(int(lv))),
                )
                select = select.join(
                    exp.alias_(table(CLOSURE), alias, table=True), on=on, copy=False
                )
                value = exp.column("ancestor", alias)
            # node ids fit 32 bits: half the bytes a node's classes take to come here
            select = select.select(exp.alias_(exp.cast(value, "INT"), f"a{j}"), copy=False)
            keys.append(value)
        if self.sensitive is not None:
            value = exp.column("s", "h")
            select = select.select(exp.alias_(value, "s"), copy=False)
            keys.append(value)
        select = select.select(exp.alias_(exp.Sum(this=exp.column("n", "h")), "n"), copy=False)
        not_missing = exp.and_(
            *[exp.column(f"q{j}", "h").is_(exp.null()).not_() for j in range(len(self.qis))]
        )
        select = select.where(not_missing, copy=False)
        if keys:
            select = select.group_by(*keys, copy=False)
        return select

    def _partition(self, levels: tuple[int, ...], got: dict[str, Any]) -> Partition:
        # each fetched column is dropped from ``got`` as soon as it is converted, so the
        # fetched result and the partition built from it are not held whole at once
        counts = np.asarray(got.pop("n"), dtype=np.int64)
        rows = len(counts)
        ranks: list[np.ndarray] = []
        for j, lv in enumerate(levels):
            h = self.hierarchies[j]
            if lv == h.top_level:
                ranks.append(np.zeros(rows, dtype=np.int32))
                continue
            ids = np.asarray(got.pop(f"a{j}"))
            if ids.dtype.kind != "i":
                ids = ids.astype(np.int64)
            if rows and (h.levels[ids] != lv).any():
                raise RuntimeError(f"the closure table of {h.name!r} disagrees with its levels")
            ranks.append(h.level_rank32[ids])
            del ids
        sens = None
        if self.sensitive is not None:
            s = pd.Series(got.pop("s"), dtype=object)
            sens = self._labels.get_indexer(s.where(s.notna(), "NULL").astype(str))
            sens = sens.astype(np.int64)

        def col(j: int, sel: np.ndarray | slice | None = None) -> np.ndarray:
            return ranks[j] if sel is None else ranks[j][sel]

        return _group(tuple(levels), col, counts, self.hierarchies, (sens, None, None))

    # -- lifetime -----------------------------------------------------------------------------
    def classes(self, levels: tuple[int, ...]) -> Partition:
        """The classes of one node (the optimum's, for the output's figures)."""
        return self.classes_in_engine(tuple(int(x) for x in levels))

    def placement(self) -> dict[str, int]:
        return {"nodes_in_engine": self.nodes_in_engine, "nodes_in_memory": self.nodes_in_memory}

    def close(self) -> None:
        """Drop the temporary relation."""
        from anonsql.backend.sql_templates import drop

        self._last = None
        self._hubs, self._hub_bytes = [], 0
        # a temporary relation goes with the session anyway
        with contextlib.suppress(Exception):
            self.db.backend.execute(drop("table", self.relation))
        self._release_engine_buffers()


_COUNTER = itertools.count(1)


def _size(part: Partition) -> int:
    arrays = (part.codes, part.sizes, part.pair_class, part.pair_value, part.pair_count)
    return sum(a.nbytes for a in arrays if a is not None)


def _next() -> int:
    return next(_COUNTER)


def _present(col: pd.Series) -> np.ndarray:
    """Which values of a fetched id column are not NULL (NaN, None, or Spark's -1)."""
    if col.dtype == object:
        return col.notna().to_numpy()
    values = pd.to_numeric(col)
    return (values.notna() & (values >= 0)).to_numpy()


def _set_memory_limit(value: str) -> exp.Expression:
    item = exp.EQ(this=exp.column("memory_limit"), expression=exp.Literal.string(value))
    return exp.Set(expressions=[exp.SetItem(this=item)])


def _temporary(name: str, query: exp.Select, dialect: str) -> exp.Expression:
    """A session-private relation holding ``query``'s rows: a temporary table, or on Spark a
    cached temporary view (``CACHE TABLE ... AS``, computed once, kept by the executors)."""
    if dialect == "spark":
        return exp.Cache(this=table(name), expression=query)
    return exp.Create(
        this=table(name),
        kind="TABLE",
        expression=query,
        properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
    )


def is_in_engine(hist: Histogram) -> bool:
    return isinstance(hist, EngineHistogram)


__all__ = [
    "DEFAULT_SHARE",
    "ENGINE_FLOOR",
    "ENGINE_SHARE",
    "EngineHistogram",
    "default_budget",
    "estimated_combinations",
    "is_in_engine",
    "load_histogram",
    "parse_size",
    "physical_memory",
]
