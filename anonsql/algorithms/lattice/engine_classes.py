"""A histogram that stays in the engine, for tables whose distinct QI combinations do not fit
the memory budget (``memory_budget``, default :data:`DEFAULT_SHARE` of the machine's memory).

The lattice search asks for a node's classes (:meth:`EngineHistogram.node_classes`, the
hook of :class:`anonsql.algorithms.lattice.base.NodeEvaluator`). Each node is served by whichever is
cheaper, by measured costs:

* in the engine: one GROUP BY of the generalized QIs over the histogram table (a temporary
  relation holding the leaf ids and counts), each QI taken to its level through the closure
  table (``anonsql_hierarchy_closure``: the ancestor at distance = level);
* in memory: a roll-up of a cached finer partition (:meth:`Partition.rollup`), which the
  engine's coarser aggregates seed: Flash's floor (the meet of the nodes its projections
  leave open) is one GROUP BY, and every node above it rolls up here when it fits.

* from a node kept in the engine: on a large histogram (:data:`MATERIALIZE_ROWS`) a node
  the engine computes is written there first, read from there, and kept when much smaller
  than what it was grouped from (:data:`BASE_SHARE`): later nodes above it are grouped from
  the smallest kept node below them, not the whole histogram (:meth:`_prepare`).

* in batches: a node the engine computes whose classes exceed the node's share of the budget
  is never held whole: its classes stream in batches and are assessed and scored batch by
  batch (``node_summary.py``), or, when a node above it is known to have too
  many classes, tested first by its class sizes in the engine (one row back: the records in
  classes smaller than k).

Only partitions that fit the budget are cached (the search's LRU cache is sized to it).
Either way a node gets the same classes (or the same verdict and score), so the search
finds the same optimum.

The one-QI and two-QI marginals (read by the quality models and Flash's projection sieve)
come from one GROUPING SETS query; the sensitive values' totals and the rows with values a
hierarchy lacks from one more.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import time
from typing import Any, TypeGuard, overload

import numpy as np
import pandas as pd
from sqlglot import exp

from anonsql.algorithms.lattice.node_summary import NodeReducer, NodeSummary, summable
from anonsql.backend.sql_templates import table, temporary
from anonsql.data.classes import Partition, _group
from anonsql.data.histogram import (
    Histogram,
    HistogramTooLarge,
    _explain_missing,
    histogram_query,
    leaf_id_query,
)
from anonsql.data.memory import (
    CACHE_SHARE,
    DEFAULT_SHARE,
    ENGINE_FLOOR,
    ENGINE_SHARE,
    HUB_SHARE,
    NODE_SHARE,
    class_bytes,
    default_budget,
    duckdb_limit,
    engine_bytes,
    estimated_combinations,
    out_of_memory,
    parse_size,
    physical_memory,
    resident_bytes,
    row_bytes,
    set_memory_limit,
)
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.hierarchy.store import CLOSURE
from anonsql.metrics.quality import AECS, Discernibility, DiscernibilityStar
from anonsql.models.k_anonymity import KAnonymity

_log = logging.getLogger(__name__)

#: two-QI marginals wider than this are skipped, as Flash's sieve skips them
PAIR_SPAN = 4_000_000
#: the histogram goes to the engine without a read when the estimate of its rows exceeds
#: what the budget holds by this factor (HyperLogLog's error is a few per cent; below it the
#: LIMIT read decides exactly)
ESTIMATE_MARGIN = 1.1
#: bytes of DuckDB's ``memory_limit`` per distinct combination its hash aggregate needs to
#: build the histogram on integer leaf ids (measured, DuckDB 2.0.1, 2 threads: 51 M
#: combinations fail at 96 MiB and pass at 128 MiB, 2-2.6 bytes each); past it the build
#: runs in hash parts of the source, each a GROUP BY of its share of the combinations. A
#: first guess only, the lower bound (3 bytes cut the 128 MiB build in two parts, twice the
#: time of one): the need is not proportional (at 96 MiB two parts of 25 M fail too, eight
#: pass), so an out-of-memory error is met by more parts
GROUP_BYTES = 2
#: the most parts a build is cut into (each part scans the source once); an out-of-memory
#: error multiplies the parts by PART_GROWTH and starts again
MAX_PARTS = 256
PART_GROWTH = 4
#: Flash's floor is kept in the engine when it has at most this share of the histogram's
#: rows (a GROUP BY reading it instead of the histogram costs about that share)
FLOOR_SHARE = 0.7
#: a node computed in the engine is written there as a temporary relation first (and read
#: back from it) when its base has at least MATERIALIZE_ROWS rows, and kept as a base for the
#: nodes above it when it has at most BASE_SHARE of its base's rows: a later node's GROUP BY
#: then reads the fewest rows any kept node below it offers, not the whole histogram (at 100
#: M rows a GROUP BY of the 51 M-row histogram costs 2.5-5.5 s, most of it proportional to
#: the rows read). Kept bases hold at most BASE_ROWS times the histogram's rows in all (the
#: engine's storage, not this process's: DuckDB spills them past its limit), the least
#: recently used dropped first
MATERIALIZE_ROWS = 1_000_000
BASE_SHARE = 0.25
BASE_ROWS = 2.0


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
    :class:`EngineHistogram` that keeps it in the engine.

    What fits a budget the caller gives is reckoned from what it leaves beyond what the
    process holds already (the libraries) and DuckDB's share (held there while the histogram
    is read): half of the rest, the other half being the in-memory search's partition cache
    and temporaries. The default budget bounds the histogram alone."""
    explicit = budget is not None
    budget = default_budget() if budget is None else budget
    m, has_sensitive = len(qis), sensitive is not None
    free = max(budget - (resident_bytes() - engine_bytes(db)), budget // 4)
    engine = max(int(free * ENGINE_SHARE), ENGINE_FLOOR) if db.backend.dialect == "duckdb" else 0
    room = max(free - engine, 0) // 2
    # the default budget (a share of the machine) bounds the histogram alone, as it did
    cap = (room if explicit else budget) // row_bytes(m, has_sensitive)
    with duckdb_limit(db, engine if explicit else 0) as held:
        # held from the first scan: the scans fill DuckDB's buffer pool with the source's
        # blocks (775 MiB of resident memory at 100 M rows under a 1 GB limit)
        estimate = estimated_combinations(db, source, qis, sensitive, cap)

        def in_engine() -> EngineHistogram:
            hist = EngineHistogram.build(
                db,
                source,
                qis,
                hierarchy_names,
                sensitive,
                missing,
                budget,
                estimate,
                restore=held.get("previous"),
            )
            held["previous"] = None  # the histogram holds the limit until it is closed
            return hist

        if estimate is not None and estimate > ESTIMATE_MARGIN * cap:
            # surely too large: reading ``cap`` rows to find out would itself cost the
            # budget (and the engine's hash table for the whole GROUP BY on top)
            return in_engine()
        try:
            hist = Histogram.from_database(
                db, source, qis, hierarchy_names, sensitive, missing, max_rows=cap
            )
            if explicit:
                # the in-memory search's partition cache
                # (anonsql.algorithms.lattice.base.NodeEvaluator)
                hist.cache_bytes = max(room, 1 << 20)  # type: ignore[attr-defined]
            return hist
        except HistogramTooLarge:
            pass
        return in_engine()


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
        #: what the budget leaves beyond what this process holds already (at least a
        #: quarter of it), shared out: DuckDB's buffers (:meth:`_hold_engine_buffers`), the
        #: hubs (nodes computed in the engine that later nodes roll up from), the search's
        #: partition cache, and the node being read: a node with more classes than its
        #: share holds is not brought here whole but assessed in batches
        #: (:mod:`anonsql.algorithms.lattice.node_summary`)
        held = resident_bytes() - engine_bytes(db)
        self.free = max(budget - held, budget // 4)
        self.hub_bytes = int(self.free * HUB_SHARE)
        self.cache_bytes = int(self.free * CACHE_SHARE)
        self.node_bytes = int(self.free * NODE_SHARE)
        self._evaluation: tuple[Any, Any] | None = None
        self._summaries: dict[tuple[int, ...], NodeSummary] = {}
        #: class counts of the nodes computed or rolled up so far (a hub cut off by its
        #: LIMIT: the LIMIT), for :meth:`_at_least`
        self._known: dict[tuple[int, ...], int] = {}
        self.nodes_summarized = 0
        #: the floor (:meth:`rebase`): its levels, the engine relation of its classes, rows
        self._floor: tuple[tuple[int, ...], str, int] | None = None
        #: nodes kept in the engine as temporary relations, that the GROUP BYs of the nodes
        #: above them read (:meth:`_prepare`): levels -> [relation, rows, last use]
        self._bases: dict[tuple[int, ...], list] = {}
        #: the last node written to the engine and not kept as a base (dropped at the next)
        self._current: tuple[tuple[int, ...], str, int] | None = None
        self._tick = 0
        #: Spark: relation -> the node relation its view reads; relations kept for them
        self._parent: dict[str, str] = {}
        self._pending: set[str] = set()
        #: see MATERIALIZE_ROWS (tests set 0 to write every node)
        self.materialize_rows = MATERIALIZE_ROWS
        self.nodes_materialized = 0
        #: rows per batch read from the engine (None: from the node share; tests set it)
        self.batch_rows: int | None = None
        self.sens: np.ndarray | None = None
        self.sens_labels: list[str] = []
        self.missing_rows = 0
        self.missing_sens: np.ndarray | None = None
        self.distinct = 0
        self._rows = 0
        self._totals: np.ndarray | None = None
        self._engine_marginals: dict[tuple[int, ...], np.ndarray] | None = None
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
        #: DuckDB's memory_limit while the histogram is kept (bytes; 0 elsewhere or unknown)
        self.engine_bytes = 0
        #: the hash parts the histogram was built in (1: one GROUP BY)
        self.parts = 1

    # -- what a Histogram offers ------------------------------------------------------------
    @property
    def codes(self) -> np.ndarray:  # type: ignore[override]
        raise RuntimeError("the histogram is kept in the engine: its rows are not in memory")

    @property
    def counts(self) -> np.ndarray:  # type: ignore[override]
        raise RuntimeError("the histogram is kept in the engine: its rows are not in memory")

    @property
    def weights(self) -> np.ndarray:
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
        estimate: float | None = None,
        parts: int | None = None,
        restore: str | None = None,
    ) -> EngineHistogram:
        """One GROUP BY into a temporary relation (on DuckDB, of integer leaf ids, in
        ``parts`` hash parts of the source: by default as many as the engine's limit needs
        for the ``estimate`` of distinct combinations, :data:`GROUP_BYTES` each), and one
        pass over it for the totals. DuckDB running out of memory anyway drops what was
        written and starts again with :data:`PART_GROWTH` times the parts (the source is
        only read). ``restore``: DuckDB's limit to restore at :meth:`close`, when the
        caller holds it lower already."""
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
        hist = cls(db, relation, qis, hierarchies, keys, sensitive, budget)
        hist._hold_engine_buffers(restore)
        t0 = time.perf_counter()
        try:
            hist._fill(source, qis, keys, sensitive, estimate, parts)
        except BaseException as e:
            limit = hist._engine_limit
            hist.close()
            if out_of_memory(e):
                # even MAX_PARTS parts did not fit DuckDB's share: say what to raise
                held = "" if limit is None else " (its share of the budget)"
                raise InputError(
                    f"the engine ran out of memory grouping {source!r} by its quasi-identifiers"
                    f"{held}: give a larger --memory-budget (DuckDB's own limit: "
                    f"{type(e).__name__}: {str(e).splitlines()[0]})"
                ) from None
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

    def _fill(
        self,
        source: str,
        qis: list[str],
        keys: list[str],
        sensitive: str | None,
        estimate: float | None,
        parts: int | None,
    ) -> None:
        """Write the histogram into :attr:`relation`. On DuckDB the rows' values are
        mapped to leaf ids before the GROUP BY (:func:`leaf_id_query`): its hash aggregate
        spills integer keys within its limit, where 51 M combinations of text keys fail
        even at 1 GB; in parts when the limit calls for them or an attempt runs out of
        memory. Other engines run :func:`histogram_query` (the raw values grouped first)."""
        backend = self.db.backend
        if backend.dialect != "duckdb":
            query = histogram_query(source, qis, keys, sensitive)
            backend.execute(temporary(self.relation, query, backend.dialect))
            return
        if parts is None:
            need = (estimate or 0.0) * GROUP_BYTES
            held = self.engine_bytes or need  # a limit we could not read: one part first
            parts = min(max(int(np.ceil(need / max(held, 1))), 1), MAX_PARTS)
        while True:
            try:
                for p in range(parts):
                    query = leaf_id_query(
                        source, qis, keys, sensitive, (p, parts) if parts > 1 else None
                    )
                    if p == 0:
                        backend.execute(temporary(self.relation, query, backend.dialect))
                    else:
                        backend.execute(_insert(self.relation, query))
                self.parts = parts
                return
            except Exception as e:
                with contextlib.suppress(Exception):
                    backend.execute(_drop_relation(self.relation, backend.dialect))
                if not out_of_memory(e) or parts >= MAX_PARTS:
                    raise
                parts = min(parts * PART_GROWTH, MAX_PARTS)

    def _hold_engine_buffers(self, restore: str | None = None) -> None:
        """On DuckDB, which runs inside this process, hold its buffer pool (``memory_limit``)
        to :data:`ENGINE_SHARE` of the free budget while the histogram is kept there (never
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
            held = max(int(self.free * ENGINE_SHARE), ENGINE_FLOOR)
            self.engine_bytes = min(parse_size(current), held)
            if parse_size(current) > held:
                self.db.backend.execute(set_memory_limit(f"{held}B"))
                restore = restore or current
        except Exception:  # a setting we cannot read or write is left as it is
            pass
        self._engine_limit = restore

    def _release_engine_buffers(self) -> None:
        if self._engine_limit is not None:
            with contextlib.suppress(Exception):
                self.db.backend.execute(set_memory_limit(self._engine_limit))
            self._engine_limit = None

    def _missing_condition(self) -> exp.Expr:
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
        if self._engine_marginals is None:
            self._engine_marginals = self._read_marginals()
        if qis not in self._engine_marginals:  # a pair too wide for the shared query
            self._engine_marginals.update(self._read_marginals([qis]))
        return self._engine_marginals[qis]

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
        if levels in self._summaries:
            return self._summaries[levels]  # type: ignore[return-value]
        source = self._finest_source(levels, finer)
        if source is not None and source.classes * self._memory_rate <= self._engine_cost:
            return self._known_as(self._rollup(source, levels))
        hub = self._hub_for(levels)
        if hub is not None:
            # read with a LIMIT one row past what the hubs' share holds (a row per class and
            # sensitive value, so at least a row per class): a hub too large to keep is cut
            # off in the engine, never brought here whole; a hub below a node known to have
            # more classes than that is not tried (the GROUP BY would be spent for nothing)
            cap = self.hub_bytes // class_bytes(len(self.qis), self.sensitive is not None)
            part = None
            if self._at_least(hub) <= cap:
                part = self.classes_in_engine(hub, max_rows=cap)
                self._known[hub] = cap + 1 if part is None else part.classes
            if part is not None and self._keep_hub(part):
                return self._known_as(self._rollup(part, levels))
            # too large to keep: so is every hub below it (finer nodes have more classes)
            self._too_big.append(hub)
            self._meet = levels
        return self._known_as(self._node(levels))

    def _known_as(self, part):
        self._known[part.levels] = part.classes
        return part

    def _at_least(self, levels: tuple[int, ...]) -> int:
        """Classes the node at ``levels`` has at least: as many as any node above it whose
        count is known (a generalization merges classes)."""
        most = 0
        for known, classes in self._known.items():
            if classes > most and all(a >= b for a, b in zip(known, levels, strict=True)):
                most = classes
        return most

    def evaluate_with(self, requirements, quality) -> None:
        """The search's models: a node too large for :attr:`node_bytes` is then assessed
        and scored in batches as it comes from the engine (a :class:`NodeSummary` instead of
        its classes) when the quality model's score sums over batches."""
        self._evaluation = (requirements, quality) if summable(quality) else None
        self._summaries.clear()

    def _node(self, levels: tuple[int, ...]) -> Partition | NodeSummary:
        """The node's classes by one GROUP BY in the engine, read in batches of whole
        classes: kept while they fit :attr:`node_bytes`, else (with the search's models
        known, :meth:`evaluate_with`) assessed batch by batch into a :class:`NodeSummary`,
        so no more than a batch and what fits is held. A node known to be too large (a
        node above it has more classes than fit) is first tested in the engine by its
        class sizes alone (:meth:`_proven`)."""
        if self._last is not None and self._last.levels == levels:
            return self._last
        self._last = None
        if self._evaluation is None:
            return self.classes_in_engine(levels)
        self._prepare(levels)
        cap = max(self.node_bytes // class_bytes(len(self.qis), self.sensitive is not None), 1)
        if self._at_least(levels) > cap:
            proven = self._proven(levels)
            if proven is not None:
                return proven
        t0 = time.perf_counter()
        held: list[dict[str, Any]] = []
        rows = 0
        chunks = self._chunks(levels, self._batch(cap))
        for chunk in chunks:
            held.append(chunk)
            rows += len(chunk["n"])
            if rows > cap:
                break
        else:
            self._engine_done(t0, "node", levels, rows)
            part = self._group_chunk(levels, _concat(held, levels, self.hierarchies))
            del held
            self._last = part
            return self._known_as(part)
        if self._scored_in_sql():
            # too large to hold: its summary from its class sizes in the engine instead of
            # the rest of its batches
            held.clear()
            chunks.close()
            self._engine_done(t0, "cut", levels, rows)
            summary = self._proven(levels)
            if summary is not None:
                return self._known_as(summary)
            chunks = self._chunks(levels, self._batch(cap))
        summary = self._summarize(levels, held, chunks)
        del held
        self._engine_done(t0, "batched", levels, summary.classes)
        return self._known_as(summary)

    def rebase(self, levels: tuple[int, ...]) -> None:
        """Every node the search checks from now on lies above ``levels`` (Flash's floor):
        the floor's classes are kept in the engine as a temporary relation (one GROUP BY)
        and every later node's GROUP BY reads them instead of the histogram, fewer rows
        where the floor generalizes (each QI taken on from the floor's level through the
        closure table). Kept only when the floor has at most :data:`FLOOR_SHARE` of the
        histogram's rows (else it is dropped: its GROUP BY is spent)."""
        levels = tuple(int(x) for x in levels)
        if self._floor is not None or not any(levels):
            return
        t0 = time.perf_counter()
        name = f"{self.relation}_floor"
        rows = self._write_node(name, levels)
        self._engine_done(t0, "floor", levels)
        if rows > FLOOR_SHARE * self.distinct:
            self._release(name)
            return
        self._floor = (levels, name, rows)

    def _engine_done(
        self, t0: float, what: str = "node", levels: tuple[int, ...] = (), rows: int = -1
    ) -> None:
        spent = time.perf_counter() - t0
        _log.debug("%s %s %.3f s %d", what, list(levels), spent, rows)
        self.engine_seconds.append(spent)
        self._engine_cost = 0.5 * self._engine_cost + 0.5 * spent
        self.nodes_in_engine += 1

    def _batch(self, cap: int) -> int:
        return self.batch_rows or min(max(cap // 2, 1 << 12), 1 << 18)

    def _summarize(self, levels: tuple[int, ...], held: list, chunks) -> NodeSummary:
        """The node's :class:`NodeSummary` from the batches ``held`` and those ``chunks``
        still yields (a second pass, when the score needs one, reads them again)."""
        assert self._evaluation is not None
        requirements, quality = self._evaluation
        reducer = NodeReducer(levels, requirements, quality, self)
        while held:
            reducer.add(self._group_chunk(levels, held.pop(0)))
        for chunk in chunks:
            reducer.add(self._group_chunk(levels, chunk))
            del chunk
        self.nodes_summarized += 1
        batch = self._batch(
            max(self.node_bytes // class_bytes(len(self.qis), self.sensitive is not None), 1)
        )

        def rescore(rule) -> float:
            t0 = time.perf_counter()
            second = NodeReducer(levels, requirements, quality, self, rule)
            for chunk in self._chunks(levels, batch):
                second.add(self._group_chunk(levels, chunk))
            self._engine_done(t0, "rescore", levels)
            return second.score.value(second.released, second.score.supp_rows)

        summary = reducer.finish(rescore)
        self._summaries[levels] = summary
        return summary

    def _proven(self, levels: tuple[int, ...]) -> NodeSummary | None:
        """A node too large to read, tested in the engine by its class sizes alone: one
        GROUP BY brings back the records in classes smaller than k (k-anonymity, and any
        model tested after it, suppresses them), the classes, records and squared sizes.
        When those records exceed the limit the node is not anonymous (nor is any
        specialization): its summary says so, and its full assessment and score are
        computed in batches only if asked for. Otherwise (or without k-anonymity) None, and
        the node is assessed in batches."""
        assert self._evaluation is not None
        requirements, quality = self._evaluation
        ks = [m.k for m in requirements.class_models if isinstance(m, KAnonymity)]
        if not ks or max(ks) <= 1:
            return None
        k = max(ks)
        t0 = time.perf_counter()
        inner = self.node_query(levels, sensitive=False).subquery("g")
        size = exp.column("n", "g")
        is_small = size < exp.convert(k)
        small = exp.If(this=is_small, true=size, false=exp.convert(0))
        squared = exp.cast(size, "DOUBLE") * exp.cast(size, "DOUBLE")
        query = exp.select(
            exp.alias_(exp.Sum(this=small), "below"),
            exp.alias_(exp.Count(this=exp.Star()), "classes"),
            exp.alias_(exp.Sum(this=size), "total"),
            exp.alias_(exp.Sum(this=squared), "squares"),
            exp.alias_(
                exp.Sum(this=exp.If(this=is_small, true=exp.convert(1), false=exp.convert(0))),
                "small",
            ),
            exp.alias_(
                exp.Sum(this=exp.If(this=is_small, true=exp.convert(0.0), false=squared)),
                "released_squares",
            ),
        ).from_(inner)
        row = self.db.backend.fetchall(query)[0]
        below, classes, total, squares, smalls, released_squares = row
        self._engine_done(t0, "proven", levels, classes)
        below, classes, total = float(below or 0), int(classes or 0), int(total or 0)
        self._known[levels] = max(self._known.get(levels, 0), classes)
        if below <= requirements.allowed(self.rows):
            if not self._scored_in_sql():
                return None
            figures = (
                below,
                classes,
                total,
                float(squares or 0.0),
                int(smalls or 0),
                float(released_squares or 0.0),
            )
            return self._sql_summary(levels, k, figures)
        bound = None
        if isinstance(quality, AECS) and classes:
            bound = float(total) / classes
        elif isinstance(quality, Discernibility | DiscernibilityStar):
            bound = float(squares or 0.0)

        def complete() -> NodeSummary:
            t1 = time.perf_counter()
            cap = max(self.node_bytes // class_bytes(len(self.qis), self.sensitive is not None), 1)
            full = self._summarize(levels, [], self._chunks(levels, self._batch(cap)))
            self._engine_done(t1, "complete", levels)
            return full

        summary = NodeSummary.proven(levels, below, classes, total, bound, complete)
        self.nodes_summarized += 1
        self._summaries[levels] = summary
        return summary

    def _scored_in_sql(self) -> bool:
        """Whether a node's whole summary follows from its class sizes in the engine: the
        only per-class model is k-anonymity (a class passes when it has k records or
        more), there is no table-level model, and the score needs, beyond sums of sizes,
        only the suppressed records' counts per QI value (:meth:`_sql_summary`)."""
        assert self._evaluation is not None
        requirements, quality = self._evaluation
        models = requirements.class_models
        return (
            bool(models)
            and all(type(m) is KAnonymity for m in models)
            and not requirements.table_models
            and summable(quality)
        )

    def _sql_summary(
        self,
        levels: tuple[int, ...],
        k: float,
        figures: tuple[float, int, int, float, int, float],
    ) -> NodeSummary:
        """The summary of a node with k-anonymity alone, from its class sizes in the engine
        (``figures``: records in classes smaller than k, classes, records, squared sizes,
        classes smaller than k, squared sizes of the others) and, when some classes are
        suppressed and the score needs them, one GROUPING SETS query: the suppressed
        records' counts per value of each QI (a row per value, however many classes). The
        same verdict, suppressed records, released classes, score and bound as
        :class:`NodeReducer` over the batches: the classes smaller than k are exactly the
        ones it suppresses, and its score's sums over suppressed classes
        (:class:`~.node_summary.ScoreSum`) are sums over their records' values."""
        from anonsql.algorithms.lattice.node_summary import ScoreSum, SummaryAssessment

        assert self._evaluation is not None
        requirements, quality = self._evaluation
        below, classes, total, squares, smalls, released_squares = figures
        score = ScoreSum(quality, levels, self)
        score.rows, score.supp_rows, score.supp_classes = float(total), below, smalls
        score.dm, score.dm_star = released_squares, squares
        if smalls and score.needs_values():
            t0 = time.perf_counter()
            for j, ids, counts in self._suppressed_values(levels, k, below):
                score.add_values(j, ids, counts)
            self._engine_done(t0, "values", levels)
        out = NodeSummary(levels)
        out.classes, out.rows = classes, total
        out.below_monotone = out.below = below
        out.clean = True  # k-anonymity alone: monotone with suppression
        suppressed, released = int(below), classes - smalls
        allowed = requirements.allowed(self.rows)
        out.assessment = SummaryAssessment(
            np.empty(0, dtype=bool), suppressed, suppressed <= allowed, released
        )
        if type(quality) is AECS:
            out.bound = float(total) / classes if classes else None
        elif type(quality) in (Discernibility, DiscernibilityStar):
            out.bound = squares
        out._score = score.value(released, below)
        self.nodes_summarized += 1
        self._summaries[levels] = out
        return out

    def _suppressed_values(self, levels: tuple[int, ...], k: float, below: float):
        """Per QI: node ids at the node's level and the records with each among the classes
        smaller than k (``below`` records in all; a QI on its top level: the root, with all
        of them). One GROUPING SETS query, a row per value of each QI."""
        keys = [j for j, lv in enumerate(levels) if lv != self.hierarchies[j].top_level]
        got, n = None, None
        if keys:
            inner = self.node_query(levels, sensitive=False).subquery("g")
            select = (
                exp.select(
                    *[exp.column(f"a{j}", "g") for j in keys],
                    exp.alias_(exp.Sum(this=exp.column("n", "g")), "n"),
                )
                .from_(inner)
                .where(exp.column("n", "g") < exp.convert(k))
            )
            grouping = exp.GroupingSets(
                expressions=[exp.Tuple(expressions=[exp.column(f"a{j}", "g")]) for j in keys]
            )
            select.set("group", exp.Group(grouping_sets=[grouping]))
            got = self.db.backend.fetch_df(select)
            n = pd.to_numeric(got["n"]).to_numpy(np.float64)
        for j, lv in enumerate(levels):
            h = self.hierarchies[j]
            if got is None or n is None or lv == h.top_level:
                yield j, np.asarray(h.level_nodes[lv][:1], dtype=np.int64), np.array([below])
                continue
            mask = _present(got[f"a{j}"])
            yield j, pd.to_numeric(got[f"a{j}"][mask]).to_numpy(np.int64), n[mask]

    def _chunks(self, levels: tuple[int, ...], batch: int):
        """The node's GROUP BY in batches of about ``batch`` rows, converted (ranks per
        QI, counts, sensitive codes) and cut at class boundaries: with a sensitive
        attribute a class is several rows, sent together (ordered), and the rows of the
        last class of a batch are carried to the next."""
        assert self._evaluation is not None
        # with a sensitive attribute a class's rows must come together; with table-level
        # models the classes in the in-memory order of ties (by node ids)
        ordered = self.sensitive is not None or bool(self._evaluation[0].table_models)
        query = self.node_query(levels, ordered=ordered)
        carry: dict[str, Any] | None = None
        keys = [j for j, lv in enumerate(levels) if lv != self.hierarchies[j].top_level]
        for got in _stream(self.db.backend, query, batch):
            chunk = self._convert(levels, got)
            del got
            if carry is not None:
                chunk = _concat([carry, chunk], levels, self.hierarchies)
                carry = None
            if self.sensitive is not None and len(chunk["n"]):
                last = np.ones(len(chunk["n"]), dtype=bool)
                for j in keys:
                    col = chunk["r"][j]
                    last &= col == col[-1]
                # ordered: the last class's rows are the tail where every key is the last's
                start = int(np.flatnonzero(~last)[-1]) + 1 if (~last).any() else 0
                carry = _slice(chunk, slice(start, None))
                chunk = _slice(chunk, slice(0, start))
            if len(chunk["n"]):
                yield chunk
        if carry is not None and len(carry["n"]):
            yield carry

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
        self._prepare(levels)
        t0 = time.perf_counter()
        query = self.node_query(levels)
        if max_rows is not None:
            query = query.limit(max_rows + 1)
        got = self.db.backend.fetch_columns(query)
        if max_rows is not None and len(got["n"]) > max_rows:
            del got
            self._engine_done(t0, "hub-cut", levels, max_rows + 1)
            return None
        part = self._partition(levels, got)
        del got
        self._last = part
        self._engine_done(t0, "hub" if max_rows is not None else "read", levels, part.classes)
        return part

    def _base_for(self, levels: tuple[int, ...]) -> tuple[str, str, list[int], int]:
        """The relation a GROUP BY of the node at ``levels`` reads: the histogram (``q``
        columns, leaf ids) or the node below it kept in the engine with the fewest rows
        (``a`` columns: its ancestor ids); with its levels and rows."""
        best: tuple[str, str, list[int], int] = (
            self.relation,
            "q",
            [0] * len(levels),
            self.distinct,
        )
        candidates: list[tuple[tuple[int, ...], str, int]] = [
            (lv, b[0], b[1]) for lv, b in self._bases.items()
        ]
        if self._floor is not None:
            candidates.append(self._floor)
        if self._current is not None:
            candidates.append(self._current)
        for lv, name, rows in candidates:
            if rows < best[3] and all(a >= b for a, b in zip(levels, lv, strict=True)):
                best = (name, "a", list(lv), rows)
        if best[0] != self.relation and tuple(best[2]) in self._bases:
            self._tick += 1
            self._bases[tuple(best[2])][2] = self._tick
        return best

    def _node_table(self, levels: tuple[int, ...], relation: str, ordered: bool) -> exp.Select:
        """The node's classes as kept in the engine (its own GROUP BY's rows)."""
        names = [f"a{j}" for j, lv in enumerate(levels) if lv != self.hierarchies[j].top_level]
        cols: list[exp.Expression] = [exp.column(n) for n in names]
        if self.sensitive is not None:
            cols.append(exp.column("s"))
        select = exp.select(*cols, exp.column("n")).from_(table(relation))
        if ordered and names:
            select = select.order_by(*[exp.column(n) for n in names], copy=False)
        return select

    def _prepare(self, levels: tuple[int, ...]) -> None:
        """Before a node's GROUP BY in the engine: write it there as a temporary relation
        (one GROUP BY from its base, :meth:`_base_for`) when its base is large
        (:attr:`materialize_rows`) and the node may be much smaller (no node above it is
        known to have more than :data:`BASE_SHARE` of the base's rows); every read of the
        node then scans it, and it is kept as a base for the nodes above it when it has at
        most that share (within :data:`BASE_ROWS` times the histogram's rows in all),
        else dropped at the next node. Either way the same classes as the GROUP BY."""
        _, _, base, base_rows = self._base_for(levels)
        if tuple(base) == tuple(levels) or base_rows < max(self.materialize_rows, 1):
            return
        if self._at_least(levels) > BASE_SHARE * base_rows:
            return
        t0 = time.perf_counter()
        relation = f"{self.relation}_n{_next()}"
        rows = self._write_node(relation, levels)
        self._drop_current()  # after: the new node may have been grouped from it
        self.nodes_materialized += 1
        if self.sensitive is None:  # else a row per class and sensitive value
            self._known[levels] = max(self._known.get(levels, 0), rows)
        spent = time.perf_counter() - t0
        _log.debug("materialize %s %.3f s %d from %d", list(levels), spent, rows, base_rows)
        if rows <= BASE_SHARE * base_rows:
            self._tick += 1
            self._bases[levels] = [relation, rows, self._tick]
            limit = BASE_ROWS * max(self.distinct, 1)
            while sum(b[1] for b in self._bases.values()) > limit and len(self._bases) > 1:
                victim = min(
                    (lv for lv in self._bases if lv != levels), key=lambda lv: self._bases[lv][2]
                )
                self._drop_base(victim)
        else:
            self._current = (levels, relation, rows)

    def _write_node(self, name: str, levels: tuple[int, ...]) -> int:
        """The node's GROUP BY (from its base) into the temporary relation ``name``; its
        rows (a row per class, per class and sensitive value with one)."""
        backend = self.db.backend
        self._grouped_from(name, levels)
        backend.execute(temporary(name, self.node_query(levels), backend.dialect))
        count = exp.select(exp.Count(this=exp.Star())).from_(table(name))
        rows = int(backend.fetchall(count)[0][0])
        backend.refresh_statistics(name)
        return rows

    def _drop_current(self) -> None:
        if self._current is not None:
            self._release(self._current[1])
            self._current = None

    def _drop_base(self, levels: tuple[int, ...]) -> None:
        self._release(self._bases.pop(levels)[0])

    def _release(self, name: str) -> None:
        """Drop a node's relation. On Spark a cached view is still defined by its query, so
        a relation another live one was grouped from is kept (uncounted) until that one
        goes; DuckDB and PostgreSQL copy the rows, and drop at once."""
        if any(parent == name for parent in self._parent.values()):
            self._pending.add(name)
            return
        self._pending.discard(name)
        with contextlib.suppress(Exception):
            self.db.backend.execute(_drop_relation(name, self.db.backend.dialect))
        parent = self._parent.pop(name, None)
        if parent in self._pending:
            self._release(parent)

    def _grouped_from(self, name: str, levels: tuple[int, ...]) -> None:
        """Record the relation ``name``'s view reads (Spark only, see :meth:`_release`)."""
        if self.db.backend.dialect == "spark":
            parent = self._base_for(levels)[0]
            if parent != self.relation:
                self._parent[name] = parent

    def node_query(
        self, levels: tuple[int, ...], ordered: bool = False, sensitive: bool = True
    ) -> exp.Select:
        """``SELECT ancestor per QI, s, SUM(n) ... GROUP BY``; a QI on its top level (one
        node) is left out of the grouping, on level 0 it is the leaf id itself. ``ordered``:
        by the QIs' node ids (a class's rows together, classes in the in-memory tie order).
        A node above the floor (:meth:`rebase`) or above a node kept in the engine
        (:meth:`_prepare`) is grouped from the smallest such table, each QI taken from that
        table's level to the node's; a node kept there is read as it is."""
        relation, prefix, base, _ = self._base_for(levels)
        if prefix == "a" and tuple(base) == tuple(levels) and (self.sensitive is None or sensitive):
            return self._node_table(levels, relation, ordered)
        select = exp.select().from_(exp.alias_(table(relation), "h", table=True))
        keys: list[exp.Expression] = []
        for j, lv in enumerate(levels):
            h = self.hierarchies[j]
            if lv == h.top_level:
                continue
            if lv == base[j]:
                value: exp.Expression = exp.column(f"{prefix}{j}", "h")
            else:
                alias = f"c{j}"
                on = exp.and_(
                    exp.column("hierarchy", alias).eq(exp.convert(self.keys[j])),
                    exp.column("descendant", alias).eq(exp.column(f"{prefix}{j}", "h")),
                    exp.column("distance", alias).eq(exp.convert(int(lv) - base[j])),
                )
                select = select.join(
                    exp.alias_(table(CLOSURE), alias, table=True), on=on, copy=False
                )
                value = exp.column("ancestor", alias)
            # node ids fit 32 bits: half the bytes a node's classes take to come here
            select = select.select(exp.alias_(exp.cast(value, "INT"), f"a{j}"), copy=False)
            keys.append(value)
        if self.sensitive is not None and sensitive:
            value = exp.column("s", "h")
            select = select.select(exp.alias_(value, "s"), copy=False)
            keys.append(value)
        select = select.select(exp.alias_(exp.Sum(this=exp.column("n", "h")), "n"), copy=False)
        if prefix == "q":  # the floor holds no rows with values a hierarchy lacks
            not_missing = exp.and_(
                *[exp.column(f"q{j}", "h").is_(exp.null()).not_() for j in range(len(self.qis))]
            )
            select = select.where(not_missing, copy=False)
        if keys:
            select = select.group_by(*keys, copy=False)
        if ordered:
            names = [f"a{j}" for j, lv in enumerate(levels) if lv != self.hierarchies[j].top_level]
            if names:
                select = select.order_by(*[exp.column(n) for n in names], copy=False)
        return select

    def _partition(self, levels: tuple[int, ...], got: dict[str, Any]) -> Partition:
        return self._group_chunk(levels, self._convert(levels, got))

    def _convert(self, levels: tuple[int, ...], got: dict[str, Any]) -> dict[str, Any]:
        """Fetched columns as ranks per QI (None at its top level), counts and sensitive
        codes; each fetched column is dropped from ``got`` as soon as it is converted, so
        the fetched result and what is built from it are not held whole at once."""
        counts = np.asarray(got.pop("n"), dtype=np.int64)
        rows = len(counts)
        ranks: list[np.ndarray | None] = []
        for j, lv in enumerate(levels):
            h = self.hierarchies[j]
            if lv == h.top_level:
                ranks.append(None)
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
        return {"n": counts, "r": ranks, "s": sens}

    def _group_chunk(self, levels: tuple[int, ...], chunk: dict[str, Any]) -> Partition:
        counts, ranks = chunk["n"], chunk["r"]
        zeros = np.zeros(len(counts), dtype=np.int32)

        def col(j: int, sel: np.ndarray | slice | None = None) -> np.ndarray:
            r = ranks[j] if ranks[j] is not None else zeros
            return r if sel is None else r[sel]

        return _group(tuple(levels), col, counts, self.hierarchies, (chunk["s"], None, None))

    # -- lifetime -----------------------------------------------------------------------------
    def classes(self, levels: tuple[int, ...]) -> Partition:
        """The classes of one node (the optimum's, for the output's figures)."""
        return self.classes_in_engine(tuple(int(x) for x in levels))

    def placement(self) -> dict[str, int]:
        return {
            "nodes_in_engine": self.nodes_in_engine,
            "nodes_in_memory": self.nodes_in_memory,
            "nodes_summarized": self.nodes_summarized,
            "nodes_written_in_engine": self.nodes_materialized,
            "histogram_parts": self.parts,
        }

    def close(self, keep_limit: bool = False) -> None:
        """Drop the temporary relation, and restore DuckDB's memory limit unless
        ``keep_limit`` (the caller then calls :meth:`release_limit`)."""
        from anonsql.backend.sql_templates import drop

        self._last = None
        self._hubs, self._hub_bytes = [], 0
        self._summaries.clear()
        if self._floor is not None:
            self._release(self._floor[1])
            self._floor = None
        self._drop_current()
        for levels in list(self._bases):
            self._drop_base(levels)
        for name in sorted(self._pending, reverse=True):  # none left, unless a drop failed
            with contextlib.suppress(Exception):
                self.db.backend.execute(_drop_relation(name, self.db.backend.dialect))
        self._pending.clear()
        self._parent.clear()
        # a temporary relation goes with the session anyway
        with contextlib.suppress(Exception):
            self.db.backend.execute(drop("table", self.relation))
        if not keep_limit:
            self._release_engine_buffers()

    def release_limit(self) -> None:
        """Restore DuckDB's memory limit held since the build (idempotent)."""
        self._release_engine_buffers()


_COUNTER = itertools.count(1)


def _slice(chunk: dict[str, Any], sel: slice) -> dict[str, Any]:
    return {
        "n": chunk["n"][sel],
        "r": [None if r is None else r[sel] for r in chunk["r"]],
        "s": None if chunk["s"] is None else chunk["s"][sel],
    }


def _concat(chunks: list[dict[str, Any]], levels, hierarchies) -> dict[str, Any]:
    if not chunks:
        return {
            "n": np.empty(0, dtype=np.int64),
            "r": [
                None if lv == h.top_level else np.empty(0, dtype=np.int32)
                for lv, h in zip(levels, hierarchies, strict=True)
            ],
            "s": None,
        }
    if len(chunks) == 1:
        return chunks[0]
    ranks = [
        None if chunks[0]["r"][j] is None else np.concatenate([c["r"][j] for c in chunks])
        for j in range(len(levels))
    ]
    sens = None if chunks[0]["s"] is None else np.concatenate([c["s"] for c in chunks])
    return {"n": np.concatenate([c["n"] for c in chunks]), "r": ranks, "s": sens}


def _stream(backend, query: exp.Select, batch: int):
    """A query's rows in batches of about ``batch`` rows, each a dict of column arrays:
    DuckDB streams Arrow record batches (the result is never whole in Python), Spark its
    partitions through ``toLocalIterator``; other engines are read whole and cut."""
    dialect = backend.dialect
    if dialect == "duckdb":
        reader = backend.con.sql(backend.sql_text(query)).to_arrow_reader(batch)
        for record in reader:
            yield {
                name: record.column(i).to_numpy(zero_copy_only=False)
                for i, name in enumerate(record.schema.names)
            }
        return
    if dialect == "spark":
        frame = backend._sql(backend.sql_text(query))
        names = frame.columns
        rows: list = []
        for row in frame.toLocalIterator():
            rows.append(tuple(row))
            if len(rows) >= batch:
                yield _columns(names, rows)
                rows = []
        if rows:
            yield _columns(names, rows)
        return
    got = backend.fetch_columns(query)
    total = len(got["n"])
    for start in range(0, max(total, 1), batch):
        yield {name: col[start : start + batch] for name, col in got.items()}


def _columns(names: list[str], rows: list) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, name in enumerate(names):
        values = [r[i] for r in rows]
        out[name] = np.array(values, dtype=object if name == "s" else np.int64)
    return out


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


def _drop_relation(name: str, dialect: str) -> exp.Expr:
    from anonsql.backend.sql_templates import drop

    return drop("table", name)  # as the histogram's relation (a cached view on Spark)


def _insert(name: str, query: exp.Select) -> exp.Expression:
    return exp.Insert(this=table(name), expression=query)


def is_in_engine(hist: Histogram) -> TypeGuard[EngineHistogram]:
    return isinstance(hist, EngineHistogram)


# with the memory policy's names (memory.py), importable from here as before the split
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
    "resident_bytes",
]
