"""Optimal full-domain search with pruning, in the spirit of ARX's Flash.

Guarantee: the returned transformation has the lowest score of the chosen quality model
among all anonymous nodes (ties: lower total level, then lexically lower levels), unless
``assume_monotone`` is set for models that are not monotone with suppression (below).

Why it is exact. Every pruning step uses a property that holds for the requested models with
the requested suppression limit (``monotone_without_suppression`` /
``monotone_with_suppression`` in :mod:`anonsql.models.base`; a node's classes are unions of
the classes of each of its specializations):

* *predictive tagging* (an anonymous node makes all its generalizations anonymous, a
  non-anonymous one all its specializations non-anonymous) only when
  :meth:`Requirements.monotone` holds: every model is monotone with suppression
  (k-anonymity, distinct l-diversity), or nothing may be suppressed and every model is
  monotone without suppression (all of them here), or everything may be suppressed;
* otherwise (entropy or recursive l-diversity, t-closeness, with suppression) a check proves
  less (:meth:`Requirements.screen`): records in classes failing the monotone models, plus a
  share of each class failing the others, are suppressed in every specialization, so a node
  whose bound exceeds the limit makes every specialization non-anonymous; an anonymous node
  whose every class passes the non-monotone models makes its generalizations anonymous;
  nothing else is tagged;
* projections onto one or two QIs prove nodes non-anonymous before any check (k-anonymity
  alone, sound in both cases: see :meth:`Flash._presieve`);
* nodes are visited in increasing order of a lower bound of the score that holds for the
  node and every generalization of it (the generalization-only part of the metric, as in
  ARX); the search stops when the next bound exceeds the best score found. A node is also
  skipped, unchecked or after the monotone models only, when its bound charged with the
  records proven suppressed in it exceeds the best score;
* for monotone scores (and for every metric when no suppression is allowed), a node with an
  anonymous direct specialization is never better than that one and is skipped.

``assume_monotone`` (ARX's "practical monotonicity") tags as if every model were monotone
with suppression. It is faster and may miss the optimum; the result's guarantee says so.

Unknown nodes are resolved by a binary search along an upward path (Flash's idea): with
predictive tagging, one non-anonymous node on the path settles the start node and every
specialization of it; otherwise the path is searched downwards for a node whose check proves
the start node non-anonymous before the start node itself is checked.
"""

from __future__ import annotations

import time

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
from anonsql.algorithms.lattice.lattice import Lattice
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.metrics.quality import QualityModel
from anonsql.models.k_anonymity import KAnonymity
from anonsql.models.requirements import Assessment, Requirements

UNKNOWN, ANONYMOUS, NOT_ANONYMOUS = 0, 1, -1

#: assessments of anonymous nodes kept for scoring them without a second assessment
_KEEP_ASSESSMENTS = 64


class Flash(Search):
    name = "flash"

    def __init__(self, frontier: bool = True, assume_monotone: bool = False) -> None:
        #: also resolve and score every minimal anonymous node (the solution space)
        self.frontier = frontier
        #: tag predictively even for models that are not monotone with suppression (ARX's
        #: practical monotonicity): faster, may miss the optimum
        self.assume_monotone = assume_monotone

    def run(
        self,
        hist: Histogram,
        requirements: Requirements,
        quality: QualityModel,
        progress: Progress | None = None,
    ) -> SearchResult:
        lat = Lattice(hist.heights)
        quality.prepare(hist)
        self.lat = lat
        self.req = requirements
        self.hist = hist
        self.ev = NodeEvaluator(hist, lat, requirements, quality)
        self.progress = progress
        self._order = None
        self._position = 0
        self._progress_at = -np.inf
        self._progress_done = 0
        self.allowed = requirements.allowed(hist.rows)
        proven = requirements.monotone(hist.rows)
        #: predictive tagging in both directions (sound when ``proven``)
        self.tagging = proven or self.assume_monotone
        self.status = np.zeros(lat.size, dtype=np.int8)
        #: nodes checked so far (a node may be checked and still unknown, see _check)
        self.checked = np.zeros(lat.size, dtype=bool)
        self.assessments: dict[int, Assessment | None] = {}  # None: not every class assessed
        #: generalizations of checked nodes that did not prove their specializations
        #: non-anonymous: the bound of suppressed records only falls as classes merge, so
        #: checks there rarely prove more (a heuristic for choosing paths, never for tagging)
        self.barren = np.zeros(lat.size, dtype=bool)
        self.pbound = np.full(lat.size, -np.inf)
        bound = quality.level_bound(lat.levels)
        self.bound = np.zeros(lat.size) if bound is None else np.asarray(bound, dtype=float)
        monotone = quality.monotone or self.allowed < 1
        # Path heuristic, measured on Adult: with a monotone score the search hunts the
        # anonymity border, and climbing towards the successor with the most unknown
        # specializations makes each non-anonymous check settle the most nodes; otherwise
        # every anonymous node under the bound is scored anyway and staying on low bounds
        # checks fewer nodes. Without predictive tagging, checks only ever settle
        # specializations, so the search always climbs wide.
        self.climb_wide = monotone or not self.tagging

        supp_lb = self._presieve(hist, requirements)
        self.presieved = int((self.status == NOT_ANONYMOUS).sum())
        # every node checked from here on lies above a node the sieve left open (path
        # checks climb upwards), so their meet is a floor for all roll-ups: starting them
        # there instead of at the near-unique bottom is what keeps large tables fast
        open_nodes = self.status != NOT_ANONYMOUS
        if open_nodes.any():
            self.ev.rebase(lat.levels[open_nodes].min(axis=0))
        # records proven suppressed in each node, by projections and checked generalizations
        self.supp_lb = np.zeros(lat.size) if supp_lb is None else supp_lb.astype(float)
        if supp_lb is not None:
            # records in projected classes smaller than k are suppressed in any anonymous
            # node: a per-node bound (valid for the node itself, which is all the visiting
            # order below needs) can charge them
            refined = quality.suppression_bound(lat.levels, supp_lb)
            if refined is not None:
                self.bound = np.maximum(self.bound, refined)
        self.cutoff = np.inf  # a bound above this cannot beat the best score (rounding allowed)
        self._check(lat.top)
        if (self.status == NOT_ANONYMOUS).all():
            # with predictive tagging, a failing top tags every node; otherwise the top's
            # check proved that every node suppresses more than the limit
            return SearchResult(
                self.name,
                None,
                self.ev.checked,
                lat.size,
                [],
                "no node is anonymous: even the top fails"
                if proven or not self.tagging
                else "no node found: the top fails, and assume_monotone takes that to hold "
                "for every node",
            )

        scored: dict[int, Solution] = {}
        best: Solution | None = None
        order = np.lexsort((np.arange(lat.size), lat.level_sum, self.bound))
        #: for progress: the visiting order (nodes ahead of the loop may still need work)
        self._order = order
        # nodes proven non-anonymous before the loop are skipped without a look: the loop
        # would pass over them anyway, and its break (the bound above the cutoff) comes at
        # the next node left, whose bound is no lower (the order is by bound; the cutoff
        # only falls)
        open_at = np.flatnonzero(self.status[order] != NOT_ANONYMOUS)
        for position, node in zip(open_at.tolist(), order[open_at].tolist(), strict=True):
            self._position = position
            if self.bound[node] > self.cutoff:
                break
            if self.status[node] == NOT_ANONYMOUS:
                continue  # proven by a check made in this loop
            if best is not None and (
                self.pbound[node] > self.cutoff or self._charged_bound(node) > self.cutoff
            ):
                continue
            # a proven anonymous direct specialization scores no worse (monotone score) and
            # wins the tie-break (lower total level)
            if monotone and any(self.status[p] == ANONYMOUS for p in lat.predecessors(node)):
                continue
            if self.status[node] == UNKNOWN:
                self._resolve(node, give_up=True)
            if self.status[node] != ANONYMOUS:
                continue
            sol = self._score(node)
            if sol is None:
                continue
            scored[node] = sol
            if better(best, sol):
                best = sol
                self.cutoff = best.score + 1e-12 * max(1.0, abs(best.score))

        self._position = lat.size
        if self.progress:
            self.progress(lat.size, lat.size)
        if self.frontier:
            self._explore_frontier(scored)
        for node, sol in scored.items():
            sol.minimal = all(self.status[p] == NOT_ANONYMOUS for p in lat.predecessors(node))
        return SearchResult(
            self.name,
            best,
            self.ev.checked,
            lat.size,
            sorted(scored.values(), key=lambda s: s.score),
            self._guarantee(proven, monotone),
            self.ev.result_partition(lat.node(best.levels)) if best is not None else None,
        )

    def _guarantee(self, proven: bool, monotone_score: bool) -> str:
        scoring = (
            "(monotone metric)"
            if monotone_score
            else "(every anonymous node whose bound could beat the optimum was scored)"
        )
        if proven:
            return (
                "exact optimum: privacy models monotone with this suppression limit, "
                f"predictive tagging and lower-bound pruning {scoring}"
            )
        names = ", ".join(m.describe() for m in self.req.not_monotone_with_suppression)
        if self.assume_monotone:
            return (
                f"not proven optimal: {names} not monotone with suppression, searched "
                f"assuming monotonicity (assume_monotone); a better transformation may exist"
            )
        return (
            f"exact optimum: {names} not monotone with suppression, so only sound pruning "
            f"(tagging by the monotone models, suppression lower bounds, score bounds) "
            f"{scoring}"
        )

    # -- projections -------------------------------------------------------------------------
    def _presieve(self, hist: Histogram, requirements: Requirements) -> np.ndarray | None:
        """Tag nodes that cannot be anonymous because a projection of the table onto one or
        two QIs already has too many records in classes smaller than k.

        A class of a node lies inside one class of any projection of that node, so a
        projection class smaller than k holds only classes smaller than k: those records are
        suppressed by k-anonymity, whatever other models are added (Incognito's subset
        property), and whether or not these are monotone with suppression. Costs a few
        milliseconds; no node check is spent on these nodes.
        """
        ks = [m.k for m in requirements.models if isinstance(m, KAnonymity)]
        if not ks or max(ks) <= 1 or not getattr(requirements, "additive", True):
            # counts of units holding several records do not add up over a projection's
            # classes (anonsql.models.unit_requirements): no sieve
            return None
        k = max(ks)
        allowed = self.allowed
        lat = self.lat
        bound = np.zeros(lat.size)
        m = lat.m
        hs = hist.hierarchies
        # one-QI and two-QI marginals of the histogram
        for j in range(m):
            dense = hist.marginal(j)
            # through a boolean mask: numpy finds the set entries of one several times faster
            leaves = np.flatnonzero(dense != 0)
            cnt = dense[leaves]
            table = np.zeros(hs[j].height)
            for lv in range(hs[j].height):
                gen = hs[j].ancestor_column(lv)[leaves]
                per = np.bincount(gen, cnt, minlength=hs[j].size)
                table[lv] = per[(per > 0) & (per < k)].sum()
            bound = np.maximum(bound, table[lat.levels[:, j]])
        if m <= 16:
            for a in range(m):
                for b in range(a + 1, m):
                    span = hs[a].size * hs[b].size
                    if span > 4_000_000:
                        continue
                    dense = hist.pair_marginal(a, b)
                    keys = np.flatnonzero(dense != 0)
                    cnt = dense[keys]
                    ca, cb = keys // hs[b].size, keys % hs[b].size
                    table = np.zeros((hs[a].height, hs[b].height))
                    for la in range(hs[a].height):
                        ga = hs[a].ancestor_column(la)[ca] * hs[b].size
                        for lb in range(hs[b].height):
                            per = np.bincount(
                                ga + hs[b].ancestor_column(lb)[cb], cnt, minlength=span
                            )
                            table[la, lb] = per[(per > 0) & (per < k)].sum()
                    bound = np.maximum(bound, table[lat.levels[:, a], lat.levels[:, b]])
        doomed = (bound > allowed) & (self.status == UNKNOWN)
        self.status[doomed] = NOT_ANONYMOUS
        return bound

    # -- node checks -----------------------------------------------------------------------
    def _check(self, node: int, give_up: bool = False) -> None:
        """Check a node and tag what the check proves.

        With ``give_up``, a node whose bound, charged with the records the monotone models
        suppress in it, cannot beat the best score is left unknown without assessing the
        other models (it cannot be the optimum, whatever its anonymity)."""
        part = self.ev.partition(node)
        self.ev.checked += 1
        self.checked[node] = True
        stop = None
        if give_up:
            # records the monotone models suppress here, or proven suppressed before
            def stop(below: float) -> bool:
                return self._charged(node, max(below, self.supp_lb[node])) > self.cutoff

        s = self.ev.screen(part, stop)
        lat = self.lat
        unknown = self.status == UNKNOWN
        if s.anonymous:
            self.status[node] = ANONYMOUS
            if self.tagging or s.clean:
                self.status[lat.above(node) & unknown] = ANONYMOUS
            self.assessments[node] = s.assessment
            if len(self.assessments) > _KEEP_ASSESSMENTS:
                del self.assessments[next(iter(self.assessments))]
        elif s.anonymous is not None:
            self.status[node] = NOT_ANONYMOUS
            if self.tagging or s.below > self.allowed:
                self.status[lat.below(node) & unknown] = NOT_ANONYMOUS
        if not self.tagging and s.anonymous is not None and s.below <= self.allowed:
            self.barren |= lat.above(node)
        self._learn(node, part, s.below)
        if self.progress:
            self.progress(self._settled(), lat.size)

    def _settled(self) -> int:
        """Nodes the search is done with, for progress: all but those that may still cost
        work, i.e. nodes not proven non-anonymous whose bound could still beat the best
        score, and (in the visiting loop) that lie ahead of its position. The count only
        grows: tags, a falling cutoff and the loop's advance all shrink what is pending.
        Recounted at most every 0.2 s (a pass over the lattice)."""
        now = time.perf_counter()
        if now - self._progress_at < 0.2:
            return self._progress_done
        self._progress_at = now
        ahead = np.arange(self.lat.size) if self._order is None else self._order[self._position :]
        pending = (self.status[ahead] != NOT_ANONYMOUS) & (self.bound[ahead] <= self.cutoff)
        self._progress_done = max(self._progress_done, self.lat.size - int(pending.sum()))
        return self._progress_done

    def _learn(self, node: int, part: Partition, below: float) -> None:
        """Bounds that a node's classes give its neighbours."""
        lat = self.lat
        pb = self.ev.partition_bound(part)
        if pb is not None:
            mask = lat.above(node)
            self.pbound[mask] = np.maximum(self.pbound[mask], pb)
        if below:
            # records proven suppressed in every specialization (Requirements.screen)
            mask = lat.below(node)
            self.supp_lb[mask] = np.maximum(self.supp_lb[mask], below)

    def _charged(self, node: int, suppressed: float) -> float:
        """A lower bound of the node's score when at least ``suppressed`` records are
        suppressed in it."""
        if not suppressed:
            return -np.inf
        refined = self.ev.quality.suppression_bound(
            self.lat.levels[node : node + 1], np.array([float(suppressed)])
        )
        return -np.inf if refined is None else float(refined[0])

    def _charged_bound(self, node: int) -> float:
        """The node's bound with the records known to be suppressed in it charged."""
        return self._charged(node, self.supp_lb[node])

    def _resolve(self, start: int, give_up: bool = False) -> None:
        """Settle ``start`` along an upward path of unknown nodes. With predictive tagging, a
        binary search (Flash). Otherwise the path avoids generalizations of nodes whose check
        proved nothing below them, and is searched downwards from its middle for a node whose
        check proves ``start`` non-anonymous; then ``start`` itself is checked (``give_up``:
        see :meth:`_check`)."""
        path = [start]
        cur = start
        # no node is checked while the path is built: the unknown nodes stay the same
        unknown = self.status == UNKNOWN if self.climb_wide else None
        while True:
            nxt = [
                s
                for s in self.lat.successors(cur)
                if self.status[s] == UNKNOWN and (self.tagging or not self.barren[s])
            ]
            if not nxt:
                break
            if unknown is not None:
                # count_nonzero: the same count as a sum of the mask, a third of the time
                below = self.lat.below
                cur = max(nxt, key=lambda s: (np.count_nonzero(below(s) & unknown), -s))
            else:
                cur = min(nxt, key=lambda s: (self.bound[s], s))
            path.append(cur)
        if self.tagging:
            lo, hi = 0, len(path) - 1
            while lo <= hi and self.status[start] == UNKNOWN:
                mid = (lo + hi) // 2
                if self.status[path[mid]] == UNKNOWN:
                    self._check(path[mid])
                if self.status[path[mid]] == ANONYMOUS:
                    hi = mid - 1
                else:
                    lo = mid + 1
        else:
            # a check proves non-anonymity only downwards: look for a node on the path whose
            # check settles the start node, halving the distance each time, then check it
            hi = len(path) - 1
            while hi > 0 and self.status[start] == UNKNOWN:
                mid = (hi + 1) // 2
                if self.status[path[mid]] == UNKNOWN:
                    self._check(path[mid])
                hi = mid - 1
        if self.status[start] == UNKNOWN and not (give_up and self.checked[start]):
            self._check(start, give_up)

    def _score(self, node: int) -> Solution | None:
        """The node's solution; None when a node tagged anonymous is not (only possible with
        ``assume_monotone``: the result is anonymous even when the assumption fails)."""
        a = self.assessments.pop(node, None)
        if a is None and not self.checked[node]:
            # anonymous by tagging: checked for the first time, which also gives its bounds
            self._check(node)
            a = self.assessments.pop(node, None)
        elif a is None:  # checked before, its assessment no longer kept
            a = self.ev.assess_partition(self.ev.partition(node))
        if a is None or not a.anonymous:
            self.status[node] = NOT_ANONYMOUS
            return None
        part = self.ev.partition(node)
        return Solution(
            tuple(int(x) for x in self.lat.levels[node]),
            self.ev.score(part, a),
            a.suppressed_rows,
            released_classes(a),
        )

    def _explore_frontier(self, scored: dict[int, Solution]) -> None:
        """Resolve every node's anonymity and score the minimal anonymous nodes."""
        for pending in np.flatnonzero(self.status == UNKNOWN):
            if self.status[pending] == UNKNOWN:
                self._resolve(int(pending))
        anon = self.status == ANONYMOUS
        for found in np.flatnonzero(anon):
            node = int(found)
            if node in scored:
                continue
            if all(self.status[p] == NOT_ANONYMOUS for p in self.lat.predecessors(node)):
                sol = self._score(node)
                if sol is not None:
                    scored[node] = sol
