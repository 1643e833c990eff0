"""Quality models the search minimizes, with the bounds that make pruning safe.

Every model scores a transformation from its equivalence classes and the set of suppressed
classes; lower is better. ``level_bound`` gives, for every lattice node at once, a value that
is <= the score of the node and of every generalization of it (its successors), so the search
never prunes the optimum. ``partition_bound`` does the same from a checked node's classes.

ARX's models follow ARX 3.9's definitions (``MetricMDNMLoss``, ``MetricMDNMPrecision``,
``MetricMDHeight``, ``MetricMDNUEntropyPrecomputed`` / ``MetricMDNUNMEntropyPrecomputed``,
``MetricSDAECS``, ``MetricSDNMDiscernability``): a suppressed record counting as fully
generalized; Loss takes ARX's gsFactor (default 0.5: generalization and suppression weigh the
same; see :class:`Loss`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from anonsql.metrics.unified import METRICS as UNIFIED_METRICS
from anonsql.metrics.unified import UnifiedMetric


def _gs_factors(gs: float) -> tuple[float, float]:
    """ARX's generalization and suppression factors for a gsFactor in [0, 1]
    (``MetricMDNMLoss(gsFactor, ...)``): gFactor = 1 up to 0.5, then falling linearly to 0 at
    1; sFactor = 2 gsFactor below 0.5, else 1."""
    ok = isinstance(gs, (int, float, np.integer, np.floating)) and not isinstance(gs, bool)
    if not ok or not 0 <= gs <= 1:  # NaN fails both comparisons
        raise InputError(f"gs_factor must be a number in [0, 1], got {gs!r}")
    s_factor = 2 * gs if gs < 0.5 else 1.0
    g_factor = 1.0 if gs <= 0.5 else 1.0 - 2 * (gs - 0.5)
    return g_factor, s_factor


class QualityModel(ABC):
    #: the metric's name: a class's own, or per instance (Alteration: one of seven metrics)
    name: str
    #: score never decreases from an anonymous node to its successors: the search may skip
    #: anonymous nodes that have an anonymous predecessor
    monotone: ClassVar[bool] = False

    def prepare(self, hist: Histogram) -> None:
        self.hist = hist

    @abstractmethod
    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        """Score of a transformation; ``suppressed`` flags the suppressed classes."""

    def level_bound(self, levels: np.ndarray) -> np.ndarray | None:
        return None

    def partition_bound(self, part: Partition) -> float | None:
        return None

    def suppression_bound(self, levels: np.ndarray, suppressed: np.ndarray) -> np.ndarray | None:
        """A lower bound of each node's score when at least ``suppressed[node]`` records are
        suppressed in it (need not hold for its generalizations)."""
        return None

    def per_qi(self, part: Partition, suppressed: np.ndarray) -> dict[str, float] | None:
        return None


def arx_round(values):
    """ARX keeps the first 10 decimals of a per-QI value (``Metric.round``: floor). A value
    within 1e-14 of a multiple of 1e-10 counts as that multiple, so the floor does not
    depend on the order of a floating-point sum."""
    return np.floor(np.asarray(values, dtype=np.float64) * 1e10 + 1e-4) / 1e10


def _leaf_counts(hist: Histogram, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct leaves of QI j in the data and their record counts."""
    dense = hist.marginal(j)  # computed in the engine for a histogram kept there
    leaves = np.flatnonzero(dense)
    return leaves, dense[leaves]


class Loss(QualityModel):
    """ARX's Loss (``MetricMDNMLoss``; Iyengar's loss metric as ARX normalizes it): per QI,
    the records' domain shares (leaves below the generalized value over all leaves of the
    hierarchy), normalized to [0, 1], aggregated by geometric mean ``prod (v_j + 1)^(1/m) - 1``.

    ``gs_factor`` (ARX's gsFactor, in [0, 1]) weighs generalization against suppression through
    gFactor = min(1, 2 - 2 gs) and sFactor = min(1, 2 gs): per QI, a released class of n
    records with domain share s costs ``gFactor * n * s``; a suppressed one costs n when
    sFactor = 1, else ``n * s + sFactor * (n - n * s)``. The per-QI sum is normalized by
    ``(x - gFactor * N / leaves) / (N - gFactor * N / leaves)``, clipped at 0 and floored to 10
    decimals as ARX does. 0.5 (default) weighs both the same; 0 makes suppression cost no more
    than leaving the class generalized (favours suppression), 1 makes generalization free
    (favours generalization)."""

    name = "loss"

    def __init__(self, gs_factor: float = 0.5) -> None:
        self.g_factor, self.s_factor = _gs_factors(gs_factor)
        self.gs_factor = float(gs_factor)

    def prepare(self, hist: Histogram) -> None:
        super().prepare(hist)
        self.shares = [h.leaf_counts / len(h.leaf_ids) for h in hist.hierarchies]
        # the same shares indexed by (level, rank on the level), as partitions code classes
        self.level_shares = [
            [s[nodes] for nodes in h.level_nodes]
            for s, h in zip(self.shares, hist.hierarchies, strict=True)
        ]
        # the same as whole numbers of leaves (the shares times the hierarchy's leaves), so
        # the suppressed records' sum per QI is exact and the released classes' complement
        # gives it (:meth:`_raw`)
        self.level_leaves = [
            [h.leaf_counts[nodes] for nodes in h.level_nodes] for h in hist.hierarchies
        ]
        n = self.rows = hist.rows
        self.leaves = [len(h.leaf_ids) for h in hist.hierarchies]
        self.norm = [(self.g_factor * n / len(h.leaf_ids), float(n)) for h in hist.hierarchies]
        # the normalization's terms as arrays, one entry per QI: (raw - lo) / (hi - lo),
        # clipped at 0, where hi > lo, else 0 (elementwise, as the per-QI loop computed it)
        lo = np.array([lo for lo, _ in self.norm], dtype=np.float64)
        hi = np.array([hi for _, hi in self.norm], dtype=np.float64)
        self._norm_valid = hi > lo
        self._norm_lo = lo
        self._norm_span = np.where(self._norm_valid, hi - lo, 1.0)
        # per QI and level: the records' leaves summed (the suppressed records' sum when
        # every record is suppressed)
        self.leaf_total = []
        # generalization-only loss per QI and level (the lower bound, ARX's too)
        self.gen_table = []
        for j, h in enumerate(hist.hierarchies):
            leaves, cnt = _leaf_counts(hist, j)
            row = [
                float((cnt * self.shares[j][h.ancestors[leaves, lv]]).sum()) * self.g_factor
                for lv in range(h.height)
            ]
            self.gen_table.append(np.array(row))
            self.leaf_total.append(
                [
                    int(np.dot(cnt.astype(np.int64), h.leaf_counts[h.ancestors[leaves, lv]]))
                    for lv in range(h.height)
                ]
            )
        # per QI and level (one column per QI, padded to the tallest hierarchy): the
        # generalization-only loss and what one suppressed record adds to it at least,
        # 1 - gFactor * (largest share on the level), resp. sFactor * (1 - largest share);
        # a node's bounds then index all QIs at once
        height = max(h.height for h in hist.hierarchies)
        m = len(hist.hierarchies)
        self._gen2d = np.zeros((height, m))
        self._extra2d = np.zeros((height, m))
        for j, shares in enumerate(self.level_shares):
            top = np.array([s.max() for s in shares])
            extra = 1 - self.g_factor * top if self.s_factor == 1 else self.s_factor * (1 - top)
            self._gen2d[: len(top), j] = self.gen_table[j]
            self._extra2d[: len(top), j] = extra
        self._columns = np.arange(m)

    def _normalize(self, raw: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.maximum((raw - self._norm_lo) / self._norm_span, 0.0)
        out = np.where(self._norm_valid, out, 0.0)
        return arx_round(out)

    @staticmethod
    def _aggregate(values: np.ndarray) -> np.ndarray:
        # geometric mean of (v + 1), minus 1, multiplied out in ARX's order
        m = values.shape[-1]
        out = np.ones(values.shape[:-1])
        for j in range(m):
            out = out * np.power(values[..., j] + 1.0, 1.0 / m)
        return out - 1

    def level_bound(self, levels: np.ndarray) -> np.ndarray:
        raw = self._gen2d[levels, self._columns]
        return self._fast_aggregate(self._normalize(raw))

    @staticmethod
    def _fast_aggregate(values: np.ndarray) -> np.ndarray:
        # the geometric mean through logarithms, for bounds over the whole lattice; lowered
        # by 1e-12 so rounding never lifts a bound above the exactly computed score
        return np.expm1(np.log1p(values).mean(axis=-1)) - 1e-12

    def suppression_bound(self, levels: np.ndarray, suppressed: np.ndarray) -> np.ndarray | None:
        # a suppressed record of share x costs 1 instead of gFactor * x when sFactor = 1, and
        # x + sFactor * (1 - x) instead of x otherwise (then gFactor = 1): per QI at least
        # 1 - gFactor * (largest share on the level), resp. sFactor * (1 - largest share), more
        extra = self._extra2d[levels, self._columns]
        raw = self._gen2d[levels, self._columns] + np.asarray(suppressed)[:, None] * extra
        return self._fast_aggregate(self._normalize(raw))

    def _raw(self, part: Partition, suppressed: np.ndarray) -> np.ndarray:
        # sum over all records of share * gFactor is a per-level constant (gen_table); only
        # the suppressed classes need a pass over classes
        raw = np.array([self.gen_table[j][lv] for j, lv in enumerate(part.levels)])
        count = int(np.count_nonzero(suppressed))
        if not count:
            return raw
        # the suppressed records' leaves per QI, summed in whole numbers (exact, and free of
        # BLAS: a float dot product of a large array starts BLAS's threads, which cost 30
        # times the work in CPU time on a loaded machine); near the bottom of a wide lattice
        # almost every class is suppressed, and the sum is the total less the released
        # classes', over the smaller of the two sets
        sizes_all = part.sizes
        everything = int(sizes_all.sum())
        complement = 2 * count > len(suppressed) and everything == self.rows
        rows = np.flatnonzero(~suppressed if complement else suppressed)
        sizes = sizes_all[rows].astype(np.int64, copy=False)
        total = float(everything - int(sizes.sum()) if complement else int(sizes.sum()))
        for j, lv in enumerate(part.levels):
            leaves = int(np.dot(sizes, self.level_leaves[j][lv][part.code_column(j, rows)]))
            if complement:
                leaves = self.leaf_total[j][lv] - leaves
            share = leaves / self.leaves[j]
            supp = total if self.s_factor == 1 else share + self.s_factor * (total - share)
            raw[j] += supp - share * self.g_factor
        return raw

    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        return float(self._aggregate(self._normalize(self._raw(part, suppressed)[None, :]))[0])

    def per_qi(self, part: Partition, suppressed: np.ndarray) -> dict[str, float]:
        values = self._normalize(self._raw(part, suppressed)[None, :])[0]
        return dict(zip(self.hist.qis, map(float, values), strict=True))


class Precision(QualityModel):
    """Precision (Sweeney): per QI, the mean of level / (height - 1) over records, a
    suppressed record counting 1; arithmetic mean over QIs."""

    name = "precision"

    def prepare(self, hist: Histogram) -> None:
        super().prepare(hist)
        self.tops = np.array([max(h.top_level, 1) for h in hist.hierarchies], dtype=np.float64)

    def level_bound(self, levels: np.ndarray) -> np.ndarray:
        return (levels / self.tops).mean(axis=1)

    def _per_qi(self, part: Partition, suppressed: np.ndarray) -> np.ndarray:
        lv = np.asarray(part.levels) / self.tops
        sizes = part.sizes.astype(np.float64)
        n = sizes.sum()
        supp = sizes[suppressed].sum()
        return (lv * (n - supp) + supp) / n

    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        return float(self._per_qi(part, suppressed).mean())

    def per_qi(self, part: Partition, suppressed: np.ndarray) -> dict[str, float]:
        return dict(zip(self.hist.qis, map(float, self._per_qi(part, suppressed)), strict=True))


class Height(QualityModel):
    """Sum of the generalization levels (independent of the data)."""

    name = "height"
    monotone = True

    def level_bound(self, levels: np.ndarray) -> np.ndarray:
        return levels.sum(axis=1).astype(np.float64)

    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        return float(sum(part.levels))


class NonUniformEntropy(QualityModel):
    """Non-uniform entropy: sum over QIs and records of -log2 P(original | generalized),
    with P from the whole table (ARX's precomputed variant, summed over QIs). The monotone
    variant ignores suppression; the non-monotone one adds, per QI, the entropy of the
    suppressed records' generalized values within the suppressed set."""

    name = "entropy"
    monotone = True

    def __init__(self, monotone_variant: bool = True) -> None:
        self.monotone_variant = monotone_variant

    def prepare(self, hist: Histogram) -> None:
        super().prepare(hist)
        self.table = []
        for j, h in enumerate(hist.hierarchies):
            leaves, cnt = _leaf_counts(hist, j)
            row = []
            for lv in range(h.height):
                gen = h.ancestors[leaves, lv]
                _, inv = np.unique(gen, return_inverse=True)
                b = np.bincount(inv, cnt)[inv]
                row.append(float(-(cnt * np.log2(cnt / b)).sum()))
            self.table.append(arx_round(row))

    def level_bound(self, levels: np.ndarray) -> np.ndarray:
        return sum(self.table[j][levels[:, j]] for j in range(levels.shape[1]))

    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        base = float(sum(self.table[j][lv] for j, lv in enumerate(part.levels)))
        if self.monotone_variant or not suppressed.any():
            return base
        sizes = part.sizes[suppressed].astype(np.float64)
        total = sizes.sum()
        extra = 0.0
        for j in range(part.codes.shape[1]):
            # counts per node id, in id order: the sums and their order are np.unique's
            # without its sort (the sort was 40% of a heuristic run on Adult)
            c = np.bincount(part.node_column(j, suppressed), sizes)
            c = c[c > 0]
            extra += float(-(c * np.log2(c / total)).sum())
        return base + extra


class NonMonotoneEntropy(NonUniformEntropy):
    name = "entropy-nm"
    monotone = False

    def __init__(self) -> None:
        super().__init__(monotone_variant=False)


class AECS(QualityModel):
    """Average equivalence class size, rows / classes, suppressed records forming one more
    class (ARX)."""

    name = "aecs"

    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        classes = int((~suppressed).sum()) + (1 if suppressed.any() else 0)
        return float(part.sizes.sum()) / classes

    def partition_bound(self, part: Partition) -> float:
        # successors have at most this many classes
        return float(part.sizes.sum()) / part.classes


class Discernibility(QualityModel):
    """DM: sum of squared class sizes, each suppressed record penalized with the table size
    (ARX's non-monotone discernibility)."""

    name = "dm"

    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        sizes = part.sizes.astype(np.float64)
        n = sizes.sum()
        return float(np.where(suppressed, n * sizes, sizes * sizes).sum())

    def partition_bound(self, part: Partition) -> float:
        sizes = part.sizes.astype(np.float64)
        return float((sizes * sizes).sum())


class DiscernibilityStar(QualityModel):
    """DM*: sum of squared class sizes, suppressed classes included as they are (ARX)."""

    name = "dm-star"
    monotone = True

    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        sizes = part.sizes.astype(np.float64)
        return float((sizes * sizes).sum())

    def partition_bound(self, part: Partition) -> float:
        return self.score(part, np.zeros(part.classes, dtype=bool))


class Alteration(QualityModel):
    """Seed 004's alteration (Definition 7) for one of its seven metrics, on a full-domain
    transformation; a suppressed record counts as generalized to the root in every QI."""

    monotone = False

    def __init__(self, metric: str) -> None:
        self.name = metric
        self.metric = metric

    def prepare(self, hist: Histogram) -> None:
        super().prepare(hist)
        self.unified = UnifiedMetric(self.metric, hist.hierarchies)
        self.table = []
        self.worst = 0.0
        for j, h in enumerate(hist.hierarchies):
            leaves, cnt = _leaf_counts(hist, j)
            W = self.unified.to_root[j]
            self.worst += float((W[leaves] * cnt).sum())
            self.table.append(
                np.array(
                    [
                        float(((W[leaves] - W[h.ancestors[leaves, lv]]) * cnt).sum())
                        for lv in range(h.height)
                    ]
                )
            )

    def level_bound(self, levels: np.ndarray) -> np.ndarray:
        cost = sum(self.table[j][levels[:, j]] for j in range(levels.shape[1]))
        return 100.0 * cost / self.worst if self.worst else np.zeros(len(levels))

    def score(self, part: Partition, suppressed: np.ndarray) -> float:
        cost = float(sum(self.table[j][lv] for j, lv in enumerate(part.levels)))
        if suppressed.any():
            # suppressed records go to the root: add W(generalized value) for them
            sizes = part.sizes[suppressed].astype(np.float64)
            for j in range(part.codes.shape[1]):
                cost += float(
                    (self.unified.to_root[j][part.node_column(j, suppressed)] * sizes).sum()
                )
        return 100.0 * cost / self.worst if self.worst else 0.0


QUALITY: dict[str, type[QualityModel] | tuple] = {
    "loss": Loss,
    "precision": Precision,
    "height": Height,
    "entropy": NonUniformEntropy,
    "entropy-nm": NonMonotoneEntropy,
    "aecs": AECS,
    "dm": Discernibility,
    "dm-star": DiscernibilityStar,
}


def quality_model(name: str, gs_factor: float = 0.5) -> QualityModel:
    """The quality model ``name``; ``gs_factor`` is Loss's (ARX's gsFactor, see
    :class:`Loss`), an error for any other model unless it is the default 0.5."""
    if name == "loss":
        return Loss(gs_factor)
    if gs_factor != 0.5:
        raise InputError(
            f"gs_factor weighs the Loss metric's generalization against suppression; "
            f"metric {name!r} does not take it"
        )
    if name in QUALITY:
        return QUALITY[name]()  # type: ignore[operator]
    if name in UNIFIED_METRICS:
        return Alteration(name)
    known = ", ".join([*QUALITY, *UNIFIED_METRICS])
    raise InputError(f"unknown metric {name!r}; use one of {known}")


def release_score(
    model: QualityModel,
    hist: Histogram,
    nodes: np.ndarray,
    released: np.ndarray,
    class_sizes: np.ndarray,
) -> tuple[float | None, list[float] | None]:
    """The score of a release whose records are generalized to different levels (a local
    recoding: the passes of rho-Gain or ARX's local recoding), on the scale of
    :meth:`QualityModel.score`: a release in which every record has the same levels scores
    what ``score`` gives its transformation.

    ``nodes[i, j]``: the node of QI j that histogram row i is generalized to (for a suppressed
    row, the node of the class it was suppressed in); ``released[i]``: whether it is published;
    ``class_sizes``: the released classes' sizes. Record-additive models (Loss, Precision,
    non-uniform entropy, seed 004's alterations) sum each record's cost with the suppressed
    records' costs of each model's definition above; the class models (AECS, DM, DM*) read
    the classes. Height has no meaning when records differ in their levels: None. Also each
    QI's own figure, for the models that have one (else None)."""
    model.prepare(hist)
    counts = hist.weights
    supp = ~released
    n = float(counts.sum())
    hs = hist.hierarchies
    sizes = class_sizes.astype(np.float64)
    if isinstance(model, Loss):
        raw = np.empty(len(hs))
        for j in range(len(hs)):
            share = model.shares[j][nodes[:, j]]
            if model.s_factor == 1:
                lost = np.ones_like(share)
            else:
                lost = share + model.s_factor * (1 - share)
            raw[j] = float(counts @ np.where(released, model.g_factor * share, lost))
        norm = model._normalize(raw[None, :])
        return float(model._aggregate(norm)[0]), [float(v) for v in norm[0]]
    if isinstance(model, Precision):
        per_qi = [
            float(counts @ np.where(released, h.levels[nodes[:, j]] / model.tops[j], 1.0)) / n
            for j, h in enumerate(hs)
        ]
        return float(np.mean(per_qi)), per_qi
    if isinstance(model, NonUniformEntropy):
        # -log2 P(original | generalized), P from the whole table's records under the node;
        # the monotone variant counts a suppressed record at its class's node, as score does
        per_qi = []
        for j, h in enumerate(hs):
            leaf = hist.marginal(j)
            under = np.zeros(h.size)
            for lv in range(h.height):
                np.add.at(under, h.ancestors[h.leaf_ids, lv], leaf[h.leaf_ids])
            p = leaf[hist.codes[:, j]] / under[nodes[:, j]]
            own = float(arx_round(-(counts * np.log2(p)).sum()))
            if not model.monotone_variant and supp.any():
                _, inv = np.unique(nodes[supp, j], return_inverse=True)
                c = np.bincount(inv, counts[supp])
                own += float(-(c * np.log2(c / c.sum())).sum())
            per_qi.append(own)
        return float(sum(per_qi)), per_qi
    if isinstance(model, Alteration):
        costs, worsts = [], []
        for j in range(len(hs)):
            w = model.unified.to_root[j]
            # a suppressed record goes to the root, whose cost to the root is 0
            gen = np.where(released, w[nodes[:, j]], 0.0)
            costs.append(float(counts @ (w[hist.codes[:, j]] - gen)))
            worsts.append(float(counts @ w[hist.codes[:, j]]))
        per = [100.0 * c / x if x else 0.0 for c, x in zip(costs, worsts, strict=True)]
        return (100.0 * sum(costs) / model.worst if model.worst else 0.0), per
    supp_sizes: np.ndarray = np.zeros(0)
    if supp.any():
        inv = np.unique(nodes[supp], axis=0, return_inverse=True)[1]
        supp_sizes = np.bincount(inv.ravel(), counts[supp])
    if isinstance(model, AECS):
        classes = len(sizes) + (1 if supp.any() else 0)
        return (n / classes if classes else 0.0), None
    if isinstance(model, DiscernibilityStar):
        return float((sizes * sizes).sum() + (supp_sizes * supp_sizes).sum()), None
    if isinstance(model, Discernibility):
        return float((sizes * sizes).sum() + supp_sizes.sum() * n), None
    return None, None
