"""Best-effort search for lattices too large to enumerate, after ARX's Lightning.

Lightning (Prasser, Bild, Eicher, Spengler, Kohlmayer, Kuhn: "Lightning: Utility-Driven
Anonymization of High-Dimensional Data", Transactions on Data Privacy 9(2), 2016; ARX's
``LIGHTNINGAlgorithm``) is a best-first search from the bottom of the lattice: the checked
node with the lowest score is expanded next (its direct generalizations are checked and
queued), and every ``stepping``-th expansion is a greedy climb instead, which follows the best
successor upwards until it can go no further. The climbs reach anonymous nodes early even
when every node near the bottom fails; the best-first steps then improve on them. The search
stops at a time or check limit (ARX's defaults: 30 s, no check limit).

Five changes to ARX's version, the first four measured on random tables of 7 and 8 QIs (4
levels each, 300 to 1,500 rows, random models, limits and metrics) against the optimum:

* a climb ends in a *local search* on the border of anonymous nodes (:meth:`Heuristic._improve`):
  from the first anonymous node of the climb, the search moves to a better anonymous node
  that lowers one QI (to any lower level), possibly raising another by one level, until
  there is none. Climbs stop above the border, and with a monotone score the optimum lies on
  it. Mean gap to the optimum over 40 tables: 8.1% without it and 1.1% with it at 1,000
  checks (7 QIs; optimum reached on 17 and 29 tables), 15.0% and 0.9% at 2,000 checks (8
  QIs; 14 and 28 tables);
* the search begins with a local search down from the top (when it is anonymous), where
  checks are cheap (on mach2019, 16 QIs and 73,073 distinct rows, a 5-second run scored
  0.55 instead of the top's 1.0, and 0.5% instead of 0.9% on the 8-QI tables);
* the stepping is the number of QIs instead of the top's total level, and the first
  expansion is a climb: more climbs, each followed by a local search (an earlier variant on
  8 QIs, 2,000 checks: mean gap 1.3% with a climb every 8 expansions, 2.4% every 32);
* among equal scores (near the bottom of a wide lattice every record is often suppressed)
  the queue and the climbs prefer nodes with fewer records failing the models, then fewer
  classes;
* a *perturbation phase* (:meth:`Heuristic._perturb`; an iterated local search, not in
  Lightning) restarts the local search away from the best anonymous nodes found: with even
  odds from a uniform crossover of two of the six best (each QI's level from one of them,
  as in ARX's genetic search, after Wan et al., "Expanding Access to Large-Scale Genomic
  Data While Promoting Privacy: A Game Theoretic Approach", AJHG 2017) or from one of them
  with two QIs moved one level the same way or three QIs not all the same way; a start
  that fails is raised one QI at a time until it is anonymous. It may use half of the
  checks made so far, interleaved with Lightning's steps; its random choices come from
  ``seed``, so a step-limited run is the same for a seed. Where anonymity is monotone for
  the models and the suppression limit, a node below a checked failing one is passed
  without a check (it cannot be anonymous). On ARX's Adult cases for its genetic search
  (1,000 checks) it reaches the genetic search's scores, where the search without it
  stayed up to 1.9% behind.

What it guarantees, and what it does not:

* it never materializes the lattice: nodes are level vectors, numbered as they are first
  seen, so a lattice of 10^7 or 10^20 nodes costs only what the search visits;
* the returned node is anonymous: it is one that :meth:`Requirements.assess` found
  anonymous (every class failing a model suppressed, the suppressed records within the
  limit), whatever the models' monotonicity; nothing is inferred from other nodes (a node
  proven to fail is only left unchecked, and an unchecked node is never returned);
* the top of the lattice is checked first, so when it is anonymous it is the fallback if
  nothing better is found within the limit; when every model is monotone with this
  suppression limit (:meth:`Requirements.monotone`), a failing top proves that no node is
  anonymous, as in the optimal search;
* pruning only skips nodes that cannot beat the best anonymous node found: the quality
  model's lower bound for a node and all its generalizations (``level_bound``, and
  ``partition_bound`` of a checked node), as in ARX; with a score that cannot improve by
  generalizing (``QualityModel.monotone``, or nothing may be suppressed) an anonymous node
  is not expanded. So when the queue runs empty before the limit ("exhausted"), every node
  was checked or proven unable to beat the result, and its score is the optimum (another
  node may tie with it);
* otherwise the result is the best node found, not proven optimal.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from anonsql.algorithms.lattice.base import (
    NodeEvaluator,
    Progress,
    Search,
    SearchResult,
    Solution,
    better,
    released_classes,
)
from anonsql.data.histogram import Histogram
from anonsql.data.keyed import KeyedPartition, Radix
from anonsql.errors import InputError
from anonsql.metrics.quality import QualityModel
from anonsql.models.requirements import Requirements

#: ARX's default time limit of its heuristic searches (``heuristicSearchTimeLimit``, 30 s)
DEFAULT_TIME_LIMIT = 30.0


class ImplicitLattice:
    """The lattice of level vectors without its nodes: a node gets an id when the search
    first meets it, so memory follows the nodes visited, not the lattice size. Offers what
    :class:`~anonsql.algorithms.lattice.base.NodeEvaluator` reads of a lattice (``m``,
    ``levels[node]``, ``node(levels)``)."""

    def __init__(self, heights: list[int]) -> None:
        self.heights = np.asarray(heights, dtype=np.int64)
        self.m = len(heights)
        #: the exact number of nodes (a Python int: it may exceed 64 bits)
        self.size = math.prod(int(h) for h in heights)
        self._ids: dict[tuple[int, ...], int] = {}
        self._levels = np.zeros((256, self.m), dtype=np.int64)
        self._keys: list[tuple[int, ...]] = []
        self._sums: list[int] = []
        self.bottom = self.node([0] * self.m)
        self.top = self.node([int(h) - 1 for h in heights])

    @property
    def levels(self) -> np.ndarray:
        """Levels of the nodes seen so far, one row per id."""
        return self._levels[: len(self._sums)]

    def node(self, levels) -> int:
        key = tuple(int(x) for x in levels)
        found = self._ids.get(key)
        if found is not None:
            return found
        if len(key) != self.m or any(
            not 0 <= x < h for x, h in zip(key, self.heights, strict=True)
        ):
            raise InputError(f"levels {list(key)} are outside the lattice {self.heights.tolist()}")
        node = len(self._sums)
        if node == len(self._levels):
            self._levels = np.concatenate([self._levels, np.zeros_like(self._levels)])
        self._levels[node] = key
        self._keys.append(key)
        self._sums.append(sum(key))
        self._ids[key] = node
        return node

    def level_sum(self, node: int) -> int:
        return self._sums[node]

    def key(self, node: int) -> tuple[int, ...]:
        return self._keys[node]

    def successors(self, node: int) -> list[int]:
        lv = self.key(node)
        out = []
        for j in range(self.m):
            if lv[j] + 1 < self.heights[j]:
                out.append(self.node((*lv[:j], lv[j] + 1, *lv[j + 1 :])))
        return out

    def predecessors(self, node: int) -> list[int]:
        lv = self.key(node)
        return [self.node((*lv[:j], lv[j] - 1, *lv[j + 1 :])) for j in range(self.m) if lv[j] > 0]


class _Evaluator(NodeEvaluator):
    """The shared evaluator with a cap on the number of cached partitions: it picks the
    roll-up source by a scan over the cache, which the optimal search bounds by its lattice
    but a long heuristic run would grow by one partition per check (on a 1,000-row, 12-QI
    table the scan took 60% of a 20,000-check run). The search rolls a node up from the
    node it was reached from, which is among the recently used ones the cap keeps."""

    max_parts = 2048

    def __init__(self, hist: Histogram, lattice, requirements, quality) -> None:
        super().__init__(hist, lattice, requirements, quality)
        # classes keyed over fixed radices (anonsql.data.keyed): a node one QI coarser than a
        # cached one is rolled up by a lookup per class and a hash of the keys instead of a
        # regrouping of every QI; the base partition is keyed once, its roll-ups stay keyed
        self.radix = Radix.of(hist) if self.node_classes is None else None
        if self.radix is not None and self.base in self._parts:
            base = self._parts[self.base]
            self._evict(self.base)
            self._store(self.base, KeyedPartition.wrap(base, self.radix))

    @staticmethod
    def _size(part) -> int:
        if isinstance(part, KeyedPartition):
            arrays = (part.keys, part.sizes, part.pair_class, part.pair_value, part.pair_count)
            # the codes counted as if decoded: the size stays the same from store to eviction
            return sum(a.nbytes for a in arrays if a is not None) + 4 * part.keys.size * (
                part.radix.m
            )
        return NodeEvaluator._size(part)

    def _store(self, node: int, part) -> None:
        super()._store(node, part)
        while len(self._parts) > self.max_parts:
            valid = (self._keys >= 0) & (self._keys != self.base) & (self._keys != node)
            victim = int(np.flatnonzero(valid)[np.argmin(self._used[valid])])
            self._evict(int(self._keys[victim]))


@dataclass
class _Checked:
    score: float
    suppressed_rows: int
    anonymous: bool
    classes: int  # passing the models
    partition: int  # all classes


class Heuristic(Search):
    """Lightning's best-first search with greedy climbs and a local search on the border of
    anonymous nodes, limited by time and node checks.

    ``time_limit`` is in seconds (None: :data:`DEFAULT_TIME_LIMIT`, ARX's default);
    ``steps`` bounds the node checks (None: no bound; ARX's "check limit"). The top of the
    lattice is the first check, so one step returns it when it is anonymous. ``seed`` draws
    the perturbation phase's restarts: a step-limited run is the same for a seed."""

    name = "heuristic"

    #: the perturbation phase's share of the node checks (:meth:`_perturb`)
    perturb_share = 0.5
    #: anonymous nodes kept as the perturbation's starting points (the best ones found)
    elite_size = 6
    #: the odds of a crossover start (else a move of a few QIs), and how many QIs move
    crossover_odds = 0.5
    moved_qis = (2, 3)
    #: failing nodes kept to prove others non-anonymous (the most recent ones)
    max_failing = 4096

    def __init__(
        self,
        time_limit: float | None = None,
        steps: int | None = None,
        improve: bool = True,
        seed: int = 0,
    ) -> None:
        if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
            raise InputError(
                f"the time limit must be a positive number of seconds, not {time_limit!r}"
            )
        if steps is not None and (isinstance(steps, bool) or steps < 1):
            raise InputError(f"the step limit must be at least one node check, not {steps!r}")
        self.time_limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
        self.steps = steps
        #: also return every anonymous node checked (the explored solution space)
        self.frontier = False
        #: run the local search on the anonymity border (:meth:`_improve`), and the
        #: perturbation phase that restarts it (:meth:`_perturb`)
        self.improve = improve
        #: the perturbation's random choices: a step-limited run is the same for a seed
        self.seed = seed

    def run(
        self,
        hist: Histogram,
        requirements: Requirements,
        quality: QualityModel,
        progress: Progress | None = None,
    ) -> SearchResult:
        self.t0 = time.perf_counter()
        quality.prepare(hist)
        lat = ImplicitLattice(hist.heights)
        self.lat, self.req, self.hist, self.quality = lat, requirements, hist, quality
        self.ev = _Evaluator(hist, lat, requirements, quality)
        self.progress = progress
        self.total = min(self.steps, lat.size) if self.steps else lat.size
        self.info: dict[int, _Checked] = {}
        self.expanded: set[int] = set()
        #: nodes that cannot beat the best found: neither checked nor expanded again
        self.pruned: set[int] = set()
        self.pbound: dict[int, float] = {}
        self.bounds: dict[int, float] = {}  # the quality model's level bound, per node
        self.best: Solution | None = None
        self.best_node: int | None = None
        self.cutoff = math.inf
        self.queue: list[tuple] = []
        self.stopped: str | None = None
        # a score that cannot improve by generalizing: an anonymous node's generalizations
        # are never better (and lose the tie-break on total level), so it is not expanded
        self.monotone_score = quality.monotone or requirements.allowed(hist.rows) < 1
        #: anonymity is monotone with this limit: a node below a failing one fails
        self.proven = proven = requirements.monotone(hist.rows)
        self.rng = np.random.default_rng(self.seed)
        self.elite: list[tuple] = []
        self.failing = np.zeros((0, lat.m), dtype=np.int64)
        self._failed: list[tuple[int, ...]] = []
        self.perturb_checks = 0
        self._perturbing = False
        self._idle_until = 0
        self._kicks: dict[int, list[list]] = {}
        self._move_sets: dict[int, tuple[np.ndarray, np.ndarray]] = {}

        self._check(lat.top)
        if not self.info[lat.top].anonymous and proven:
            return self._result("no node is anonymous: even the top fails", exhausted=True)
        if self.improve and self.info[lat.top].anonymous:
            # a first local search walks down from the top: near the top partitions have few
            # classes and checks are cheap, while near the bottom of a wide, near-unique table
            # each check costs a roll-up of almost every row
            self._improve(lat.top)
        if lat.bottom != lat.top and not self._limit():
            if lat.bottom not in self.info:  # the local search may have reached it
                self._check(lat.bottom)
            self._push(lat.bottom)
        # one climb (and local search) per m expansions; ARX climbs once per top level
        stepping = max(1, lat.m)
        step = 0
        while self.queue and not self._limit():
            if self._perturb_turn():
                self._perturb()
                continue
            node = heapq.heappop(self.queue)[-1]
            if self._prune(node):
                continue
            # unlike ARX, the first expansion is a climb already: an anonymous node is known
            # early, and its score bounds the rest of the search
            if step % stepping == 0:
                reached = self._climb(node)
                if self.improve and reached is not None:
                    self._improve(reached)
            else:
                self._expand(node)
            step += 1
        exhausted = self.stopped is None and not self._open()
        return self._result("", exhausted)

    # -- the search ----------------------------------------------------------------------
    def _limit(self) -> bool:
        """Whether a limit is reached (and which, in ``self.stopped``)."""
        if self.stopped is None:
            if self.steps is not None and self.ev.checked >= self.steps:
                self.stopped = f"step limit ({self.steps:,} node checks)"
            elif time.perf_counter() - self.t0 > self.time_limit:
                self.stopped = f"time limit ({self.time_limit:g} s)"
        return self.stopped is not None

    def _open(self) -> bool:
        """Whether a queued node is still to be expanded."""
        return any(not self._prune(entry[-1]) for entry in self.queue)

    def _bound(self, node: int) -> float:
        """A lower bound of the score of the node and of every generalization of it."""
        bound = self.bounds.get(node)
        if bound is None:
            b = self.quality.level_bound(self.lat.levels[node : node + 1])
            bound = self.bounds[node] = -math.inf if b is None else float(np.asarray(b)[0])
        return max(bound, self.pbound.get(node, -math.inf))

    def _prune(self, node: int) -> bool:
        """Whether the node needs no expansion: expanded already, unable to beat the best
        anonymous node (with all its generalizations), or anonymous with a monotone score."""
        if node in self.expanded or node in self.pruned:
            return True
        if node != self.best_node and self._bound(node) > self.cutoff:
            self.pruned.add(node)
            return True
        info = self.info.get(node)
        if info is not None and info.anonymous and self.monotone_score:
            self.expanded.add(node)
            return True
        return False

    def _check(self, node: int) -> _Checked:
        part, a = self.ev.assess(node)
        score = self.ev.score(part, a)
        info = _Checked(
            score, a.suppressed_rows, a.anonymous, released_classes(a), int(part.classes)
        )
        self.info[node] = info
        if self._perturbing:
            self.perturb_checks += 1
        if a.anonymous:
            entry = (info.score, self.lat.level_sum(node), self.lat.key(node), node)
            bisect.insort(self.elite, entry)
            for dropped in self.elite[self.elite_size :]:
                # a node that leaves the elite never returns (it only gets better)
                self._kicks.pop(dropped[-1], None)
            del self.elite[self.elite_size :]
        elif self.proven:
            self._failed.append(self.lat.key(node))
        pb = self.ev.partition_bound(part)
        if pb is not None:
            # the partition bound holds for the node and its generalizations: pass it on
            self.pbound[node] = max(self.pbound.get(node, -math.inf), float(pb))
        if a.anonymous:
            sol = Solution(self.lat.key(node), info.score, info.suppressed_rows, info.classes)
            if better(self.best, sol):
                self.best, self.best_node = sol, node
                self.cutoff = sol.score + 1e-12 * max(1.0, abs(sol.score))
        if self.progress:
            # the search stops at its time limit or its step limit, whichever comes first:
            # progress is the larger share of the two, in thousandths
            share = (time.perf_counter() - self.t0) / self.time_limit
            if self.steps:
                share = max(share, self.ev.checked / self.total)
            self.progress(min(int(share * 1000), 1000), 1000)
        return info

    def _priority(self, node: int) -> tuple:
        """Lightning's order: the lowest score first; among equal scores (often every node
        near the bottom of a wide lattice, where all records are suppressed) the one with
        fewer records failing the models, then fewer classes (closer to anonymity), then the
        lower total level, then lexically."""
        i, lat = self.info[node], self.lat
        return (i.score, i.suppressed_rows, i.partition, lat.level_sum(node), lat.key(node))

    def _push(self, node: int) -> None:
        heapq.heappush(self.queue, (*self._priority(node), node))

    def _expand(self, node: int) -> int | None:
        """Check and queue the node's direct generalizations; return the best of them (for a
        climb), None when there is none or a limit was reached."""
        best = None
        for s in self.lat.successors(node):
            if s in self.expanded or s in self.pruned:
                continue
            if s not in self.info:
                if s != self.best_node and self._bound(s) > self.cutoff:
                    # neither it nor any generalization can beat the best: not checked
                    self.pruned.add(s)
                    continue
                if self._limit():
                    return None
                self._check(s)
            self._push(s)
            if best is None or self._priority(s) < self._priority(best):
                best = s
        self.expanded.add(node)
        return best

    def _climb(self, node: int) -> int | None:
        """Lightning's depth-first climb without backtracking: expand, move to the best
        successor, repeat. Stops at a node that needs no expansion (e.g. an anonymous node
        with a monotone score) or at a limit. Returns the first anonymous node on the way."""
        first = None
        while node is not None and not self._limit():
            nxt = self._expand(node)
            if nxt is None:
                break
            if first is None and self.info[nxt].anonymous:
                first = nxt
            if self._prune(nxt):
                break
            node = nxt
        return first

    def _solution(self, node: int) -> Solution:
        i = self.info[node]
        return Solution(self.lat.key(node), i.score, i.suppressed_rows, i.classes)

    def _improve(self, node: int) -> None:
        """Local search on the anonymity border (not in Lightning), from an anonymous node:
        among its specializations in one QI (to any lower level) and those with one more
        level of another QI, the ones whose bound could beat the best node found are checked,
        lowest bound first, and the search moves to the first that is a better anonymous node
        than the current one; it ends where none is. With a monotone score the optimum is a
        minimal anonymous node, which a climb seldom stops at; the trades walk along the
        border of anonymous nodes."""
        lat = self.lat
        current = self._solution(node)
        while not self._limit():
            lv = current.levels
            moves = []
            for a in range(lat.m):
                for la in range(lv[a]):
                    down = (*lv[:a], la, *lv[a + 1 :])
                    moves.append(down)
                    for b in range(lat.m):
                        if b != a and lv[b] + 1 < lat.heights[b]:
                            moves.append((*down[:b], down[b] + 1, *down[b + 1 :]))
            nodes = [lat.node(x) for x in moves]
            bounds = self.quality.level_bound(lat.levels[nodes])
            order = range(len(nodes)) if bounds is None else np.argsort(bounds, kind="stable")
            moved = False
            for i in order:
                n = nodes[i]
                if n in self.pruned or (bounds is not None and bounds[i] > self.cutoff):
                    continue
                if n not in self.info:
                    if self._fails(moves[i]):
                        continue
                    if self._limit():
                        return
                    self._check(n)
                if self.info[n].anonymous and better(current, self._solution(n)):
                    current = self._solution(n)
                    moved = True
                    break
            if not moved:
                return

    # -- the perturbation phase ---------------------------------------------------------
    def _fails(self, levels: tuple[int, ...]) -> bool:
        """Whether the node is proven non-anonymous without a check: anonymity is monotone
        with this limit (:meth:`Requirements.monotone`) and a generalization of the node
        was checked and failed (every class of the node is part of one of its classes)."""
        if not self.proven:
            return False
        if self._failed:
            # recent failures only: a failure not kept proves nothing less, it just leaves
            # a node to be checked
            grown = np.concatenate([self.failing, np.asarray(self._failed, dtype=np.int64)])
            self.failing = grown[-self.max_failing :]
            self._failed = []
        if not len(self.failing):
            return False
        return bool((self.failing >= np.asarray(levels)).all(axis=1).any())

    def _perturb_turn(self) -> bool:
        """Whether the perturbation phase runs next: it may use :attr:`perturb_share` of the
        checks made so far, and rests for m checks when it found nothing new to check."""
        return (
            self.improve
            and bool(self.elite)
            and self.ev.checked >= self._idle_until
            and self.perturb_checks < self.perturb_share * self.ev.checked
        )

    def _perturb(self, tries: int = 32) -> None:
        """One restart of the local search away from the best nodes found (an iterated local
        search; not in Lightning). The start is, with even odds, a uniform crossover of two
        nodes of the elite (each QI's level from one of them, as in ARX's genetic search) or
        a node of the elite with two or three QIs moved one level (:meth:`_moves`). A start that
        was checked, cannot beat the best (its level bound), or is proven non-anonymous
        (:meth:`_fails`) is drawn again; a start found anonymous is improved by
        :meth:`_improve`. On Adult's non-monotone entropy with k = 100 (ARX's heuristic
        test cases), the local search from the top and Lightning's steps stop at 390,464 and
        366,544 within 1,000 checks; with restarts at 383,803 (the optimum) and 359,650 (the
        optimum is 353,205)."""
        lat = self.lat
        self._perturbing = True
        try:
            for _ in range(tries):
                if len(self.elite) > 1 and self.rng.random() < self.crossover_odds:
                    i, j = self.rng.choice(len(self.elite), 2, replace=False)
                    a, b = self.elite[i][2], self.elite[j][2]
                    pick = self.rng.random(lat.m) < 0.5
                    start: list[int] | None = [a[q] if pick[q] else b[q] for q in range(lat.m)]
                else:
                    anchor = self.elite[int(self.rng.integers(len(self.elite)))]
                    start = self._kick(anchor[-1], anchor[2])
                if start is None:
                    continue
                key = tuple(int(x) for x in start)
                node = lat.node(key)
                info = self.info.get(node)
                if node in self.pruned or (info is not None and info.anonymous):
                    continue
                if self._bound(node) > self.cutoff:
                    self.pruned.add(node)
                    continue
                before = self.ev.checked
                if info is None and not self._fails(key):
                    if self._limit():
                        return
                    info = self._check(node)
                reached = node if info is not None and info.anonymous else self._repair(key)
                if reached is not None:
                    self._improve(reached)
                if self.ev.checked > before or self._limit():
                    return
            # every start drawn was known: the best-first steps run for a while
            self._idle_until = self.ev.checked + lat.m
        finally:
            self._perturbing = False

    def _kick(self, node: int, levels: tuple[int, ...]) -> list[int] | None:
        """The next of the node's moves of two or three QIs by one level each (:meth:`_moves`;
        every such move once, in a random order); None when all were drawn. A node's moves
        are kept as QI and sign arrays with a shuffled order and a count of those drawn
        (about 14 bytes a move, under 1 MB for a node of 40 QIs), dropped when it leaves the
        elite."""
        moves = self._kicks.get(node)
        if moves is None:
            lat = self.lat
            at = np.asarray(levels)
            moves = []
            low, high = self.moved_qis
            for size in range(low, min(high, lat.m) + 1):
                qis, signs = self._moves(size)
                moved = at[qis] + signs
                ok = ((moved >= 0) & (moved < lat.heights[qis])).all(axis=1)
                order = np.arange(int(ok.sum()))
                self.rng.shuffle(order)
                moves.append([qis[ok], signs[ok], order, len(order)])
            self._kicks[node] = moves
        # each number of QIs with even odds (there are many more moves of three QIs)
        left = [entry for entry in moves if entry[3]]
        if not left:
            return None
        entry = left[int(self.rng.integers(len(left)))]
        qis, signs, order, n = entry
        entry[3] = n - 1
        i = order[n - 1]
        kicked = list(levels)
        for q, sign in zip(qis[i].tolist(), signs[i].tolist(), strict=True):
            kicked[q] += sign
        return kicked

    def _moves(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Every choice of ``size`` QIs (lexically) and of their signs (-1 before 1, the
        first QI slowest), as two arrays of one row per move. Two QIs move the same way (one
        up and one down is a move of the local search already); three QIs do not all move
        the same way, so the start stays near the border of anonymous nodes instead of far
        above or below it. On Adult's case 3 (non-monotone entropy, k = 100), 1,000 checks:
        18 of 20 seeds reach ARX's best heuristic score with these moves, 13 with all signs."""
        cached = self._move_sets.get(size)
        if cached is None:
            combos = np.array(list(itertools.combinations(range(self.lat.m), size)), dtype=np.int16)
            signs = np.array(list(itertools.product((-1, 1), repeat=size)), dtype=np.int8)
            total = signs.sum(axis=1)
            signs = signs[total != 0] if size == 2 else signs[np.abs(total) < size]
            qis = np.repeat(combos.reshape(-1, size), len(signs), axis=0)
            cached = (qis, np.tile(signs, (len(combos), 1)))
            self._move_sets[size] = cached
        return cached

    def _repair(self, levels: tuple[int, ...]) -> int | None:
        """From a node that fails (checked, or proven to), raise one QI at a time until a
        node is anonymous: the QI whose next level has the lowest bound, so the climb stays
        where the score may still beat the best. One check per step at most (nodes proven
        to fail are passed without one); returns the anonymous node reached, None where
        every raise is bounded out or the lattice ends."""
        lat = self.lat
        key = levels
        while not self._limit():
            options = [j for j in range(lat.m) if key[j] + 1 < lat.heights[j]]
            if not options:
                return None
            ups = [(*key[:j], key[j] + 1, *key[j + 1 :]) for j in options]
            nodes = [lat.node(u) for u in ups]
            bounds = [self._bound(n) for n in nodes]
            pick = min(range(len(nodes)), key=bounds.__getitem__)
            node = nodes[pick]
            if bounds[pick] > self.cutoff and node != self.best_node:
                return None
            key = ups[pick]
            info = self.info.get(node)
            if info is None and not self._fails(key):
                if self._limit():
                    return None
                info = self._check(node)
            if info is not None and info.anonymous:
                return node
        return None

    # -- the result ----------------------------------------------------------------------
    def _result(self, reason: str, exhausted: bool) -> SearchResult:
        lat = self.lat
        checked = self.ev.checked
        elapsed = time.perf_counter() - self.t0
        how = (
            f"heuristic (Lightning with local search): {checked:,} of {lat.size:,} nodes "
            f"checked in {elapsed:.2f} s"
        )
        if reason:
            guarantee = f"{how}, stopped: {reason}"
        elif exhausted and self.best is None:
            guarantee = f"{how}, stopped: exhausted (every node was checked): no node is anonymous"
        elif exhausted:
            guarantee = (
                f"{how}, stopped: exhausted (every other node was checked or bounded: the "
                f"score is the optimum, a tie may resolve differently)"
            )
        else:
            found = (
                "the best anonymous node found"
                if self.best is not None
                else "no anonymous node found (the top fails)"
            )
            guarantee = f"{how}, stopped by the {self.stopped}; {found}, not proven optimal"
        solutions: list[Solution] = []
        if self.best is not None:
            anonymous = {n for n, i in self.info.items() if i.anonymous}
            assert self.best_node is not None  # set with best
            keep = anonymous if self.frontier else {self.best_node}
            for n in keep:
                i = self.info[n]
                sol = (
                    self.best
                    if n == self.best_node
                    else Solution(lat.key(n), i.score, i.suppressed_rows, i.classes)
                )
                # minimal only where every direct specialization was checked and failed
                sol.minimal = all(
                    p in self.info and not self.info[p].anonymous for p in lat.predecessors(n)
                )
                solutions.append(sol)
            solutions.sort(key=lambda s: (s.score, sum(s.levels), s.levels))
        return SearchResult(
            self.name,
            self.best,
            checked,
            lat.size,
            solutions,
            guarantee,
            self.ev.result_partition(self.best_node) if self.best_node is not None else None,
        )


__all__ = ["DEFAULT_TIME_LIMIT", "Heuristic", "ImplicitLattice"]
