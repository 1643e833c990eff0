"""Optimal full-domain search with pruning, in the spirit of ARX's Flash.

Guarantee: the returned transformation has the lowest score of the chosen quality model
among all anonymous nodes (ties: lower total level, then lexically lower levels).

Why it is exact:

* every privacy model here is monotone (a class that satisfies k-anonymity, any l-diversity
  or any t-closeness variant still does after merging with another), so *predictive
  tagging* is sound: a node found anonymous makes all its generalizations anonymous, a node
  found not anonymous makes all its specializations not anonymous;
* nodes are visited in increasing order of a lower bound of the score that holds for the
  node and every generalization of it (the generalization-only part of the metric, as in
  ARX); the search stops when the next bound exceeds the best score found;
* for monotone scores (and for every metric when no suppression is allowed), an anonymous
  node with an anonymous direct specialization is never better than that one and is
  skipped.

Unknown nodes are resolved by a binary search along an upward path (Flash's idea): one
non-anonymous node on the path settles the start node and every specialization of it.
"""

from __future__ import annotations

import numpy as np

from anonsql.data.histogram import Histogram
from anonsql.metrics.quality import QualityModel
from anonsql.models.k_anonymity import KAnonymity
from anonsql.models.requirements import Requirements
from anonsql.search.base import NodeEvaluator, Progress, Search, SearchResult, Solution, better
from anonsql.search.lattice import Lattice

UNKNOWN, ANONYMOUS, NOT_ANONYMOUS = 0, 1, -1


class Flash(Search):
    name = "flash"

    def __init__(self, frontier: bool = True) -> None:
        #: also resolve and score every minimal anonymous node (the solution space)
        self.frontier = frontier

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
        self.ev = NodeEvaluator(hist, lat, requirements, quality)
        self.progress = progress
        self.status = np.zeros(lat.size, dtype=np.int8)
        self.results: dict[int, tuple[int, int]] = {}  # node -> (suppressed rows, classes)
        self.pbound = np.full(lat.size, -np.inf)
        bound = quality.level_bound(lat.levels)
        self.bound = np.zeros(lat.size) if bound is None else np.asarray(bound, dtype=float)
        monotone = quality.monotone or requirements.suppression_limit == 0
        # Path heuristic, measured on Adult: with a monotone score the search hunts the
        # anonymity border, and climbing towards the successor with the most unknown
        # specializations makes each non-anonymous check settle the most nodes; otherwise
        # every anonymous node under the bound is scored anyway and staying on low bounds
        # checks fewer nodes.
        self.climb_wide = monotone

        supp_lb = self._presieve(hist, requirements)
        self.presieved = int((self.status == NOT_ANONYMOUS).sum())
        # every node checked from here on lies above a node the sieve left open (path
        # checks climb upwards), so their meet is a floor for all roll-ups: starting them
        # there instead of at the near-unique bottom is what keeps large tables fast
        open_nodes = self.status != NOT_ANONYMOUS
        if open_nodes.any():
            self.ev.rebase(lat.levels[open_nodes].min(axis=0))
        ks = [m.k for m in requirements.models if isinstance(m, KAnonymity)]
        self.k = max(ks) if ks else 0
        # records a checked generalization proves suppressed in each node (see _check)
        self.supp_lb = np.zeros(lat.size) if supp_lb is None else supp_lb.astype(float)
        if supp_lb is not None:
            # records in projected classes smaller than k are suppressed in any anonymous
            # node: a per-node bound (valid for the node itself, which is all the visiting
            # order below needs) can charge them
            refined = quality.suppression_bound(lat.levels, supp_lb)
            if refined is not None:
                self.bound = np.maximum(self.bound, refined)
        self._check(lat.top)
        if self.status[lat.top] != ANONYMOUS:
            return SearchResult(
                self.name,
                None,
                self.ev.checked,
                lat.size,
                [],
                "no node is anonymous: even the top fails",
            )

        scored: dict[int, Solution] = {}
        best: Solution | None = None
        cutoff = np.inf  # a bound above this cannot beat the best score (rounding allowed)
        order = np.lexsort((np.arange(lat.size), lat.level_sum, self.bound))
        for node in order:
            node = int(node)
            if self.bound[node] > cutoff:
                break
            if best is not None and (
                self.pbound[node] > cutoff or self._charged_bound(node) > cutoff
            ):
                continue
            if self.status[node] == NOT_ANONYMOUS:
                continue
            if self.status[node] == UNKNOWN:
                self._resolve(node)
            if self.status[node] != ANONYMOUS:
                continue
            if monotone and any(self.status[p] == ANONYMOUS for p in lat.predecessors(node)):
                continue
            sol = self._score(node)
            scored[node] = sol
            if better(best, sol):
                best = sol
                cutoff = best.score + 1e-12 * max(1.0, abs(best.score))

        if self.frontier:
            self._explore_frontier(scored)
        for node, sol in scored.items():
            sol.minimal = all(self.status[p] == NOT_ANONYMOUS for p in lat.predecessors(node))
        guarantee = (
            "exact optimum: monotone privacy models with predictive tagging and lower-bound "
            "pruning"
            + (
                " (monotone metric)"
                if monotone
                else " (every anonymous node whose bound could beat the optimum was scored)"
            )
        )
        return SearchResult(
            self.name,
            best,
            self.ev.checked,
            lat.size,
            sorted(scored.values(), key=lambda s: s.score),
            guarantee,
            self.ev.partition(lat.node(best.levels)) if best is not None else None,
        )

    # -- projections -------------------------------------------------------------------------
    def _presieve(self, hist: Histogram, requirements: Requirements) -> np.ndarray | None:
        """Tag nodes that cannot be anonymous because a projection of the table onto one or
        two QIs already has too many records in classes smaller than k.

        A class of a node lies inside one class of any projection of that node, so a
        projection class smaller than k holds only classes smaller than k: those records are
        suppressed by k-anonymity, whatever other models are added (Incognito's subset
        property). Costs a few milliseconds; no node check is spent on these nodes.
        """
        ks = [m.k for m in requirements.models if isinstance(m, KAnonymity)]
        if not ks or max(ks) <= 1:
            return None
        k = max(ks)
        allowed = requirements.suppression_limit * hist.rows
        lat = self.lat
        bound = np.zeros(lat.size)
        m = lat.m
        hs = hist.hierarchies
        # one-QI and two-QI marginals of the histogram
        for j in range(m):
            dense = np.bincount(hist.codes[:, j], hist.weights, minlength=hs[j].size)
            leaves = np.flatnonzero(dense)
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
                    pair = hist.codes[:, a] * hs[b].size + hist.codes[:, b]
                    dense = np.bincount(pair, hist.weights, minlength=span)
                    keys = np.flatnonzero(dense)
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
    def _check(self, node: int) -> None:
        part, a = self.ev.assess(node)
        self.results[node] = (a.suppressed_rows, int(a.passing.sum()))
        lat = self.lat
        unknown = self.status == UNKNOWN
        if a.anonymous:
            self.status[lat.above(node) & unknown] = ANONYMOUS
        else:
            self.status[lat.below(node) & unknown] = NOT_ANONYMOUS
        self.status[node] = ANONYMOUS if a.anonymous else NOT_ANONYMOUS
        self._learn(node, part)
        if self.progress:
            self.progress(self.ev.checked, lat.size)

    def _learn(self, node: int, part) -> None:
        """Bounds that a node's classes give its neighbours."""
        lat = self.lat
        pb = self.ev.quality.partition_bound(part)
        if pb is not None:
            mask = lat.above(node)
            self.pbound[mask] = np.maximum(self.pbound[mask], pb)
        if self.k > 1:
            # every class of a specialization lies inside one class of this node, so records
            # in classes smaller than k here are suppressed in every specialization too
            small = float(part.sizes[part.sizes < self.k].sum())
            if small:
                mask = lat.below(node)
                self.supp_lb[mask] = np.maximum(self.supp_lb[mask], small)

    def _charged_bound(self, node: int) -> float:
        """The node's bound with the records known to be suppressed in it charged."""
        if not self.supp_lb[node]:
            return -np.inf
        refined = self.ev.quality.suppression_bound(
            self.lat.levels[node : node + 1], self.supp_lb[node : node + 1]
        )
        return -np.inf if refined is None else float(refined[0])

    def _resolve(self, start: int) -> None:
        """Settle ``start`` by a binary search along an upward path of unknown nodes."""
        path = [start]
        cur = start
        while True:
            nxt = [s for s in self.lat.successors(cur) if self.status[s] == UNKNOWN]
            if not nxt:
                break
            if self.climb_wide:
                unknown = self.status == UNKNOWN
                cur = max(nxt, key=lambda s: (int((self.lat.below(s) & unknown).sum()), -s))
            else:
                cur = min(nxt, key=lambda s: (self.bound[s], s))
            path.append(cur)
        lo, hi = 0, len(path) - 1
        while lo <= hi and self.status[start] == UNKNOWN:
            mid = (lo + hi) // 2
            if self.status[path[mid]] == UNKNOWN:
                self._check(path[mid])
            if self.status[path[mid]] == ANONYMOUS:
                hi = mid - 1
            else:
                lo = mid + 1
        if self.status[start] == UNKNOWN:  # pragma: no cover - the loop settles it
            self._check(start)

    def _score(self, node: int) -> Solution:
        part, a = self.ev.assess(node) if node not in self.results else self._reassess(node)
        self.results[node] = (a.suppressed_rows, int(a.passing.sum()))
        self._learn(node, part)
        return Solution(
            tuple(int(x) for x in self.lat.levels[node]),
            self.ev.score(part, a),
            a.suppressed_rows,
            int(a.passing.sum()),
        )

    def _reassess(self, node: int):
        # already checked: reuse the cached partition without counting a new check
        part = self.ev.partition(node)
        return part, self.ev.requirements.assess(part, self.ev.hist)

    def _explore_frontier(self, scored: dict[int, Solution]) -> None:
        """Resolve every node's anonymity and score the minimal anonymous nodes."""
        for node in np.flatnonzero(self.status == UNKNOWN):
            if self.status[node] == UNKNOWN:
                self._resolve(int(node))
        anon = self.status == ANONYMOUS
        for node in np.flatnonzero(anon):
            node = int(node)
            if node in scored:
                continue
            if all(self.status[p] == NOT_ANONYMOUS for p in self.lat.predecessors(node)):
                scored[node] = self._score(node)
