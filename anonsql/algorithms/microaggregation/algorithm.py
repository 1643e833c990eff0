"""``algorithm="mdav" | "ktca" | "ctca" | "kde"``: microaggregation (seed 001), optionally
supervised by wLVQ2 with ``label`` (the paper's "++" variants).

Each method groups the *distinct* QI tuples of the source weighted by their record counts, so
equal tuples always share a group and the release is a function of the original QI tuple:
the :class:`~anonsql.algorithms.recoding.TableRecoding` maps each tuple to its group's prototype
(the released labels) and its node ids (the group id for every QI; for attribute-oriented KDE
each attribute's own group id). The guard's classes are the node-id tuples, so for MDAV,
C-TCA and every "++" variant they are the groups, each of >= k records, and the guard
suppresses nothing at publication; for k-TCA (whose map decides its k) and KDE (k per
attribute only) the guard suppresses the classes below k at every read.
Record-level microaggregation may split equal tuples between groups; grouping tuples does
not, which the guard needs (README "Microaggregation").
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection
from typing import Any, ClassVar

import numpy as np

from anonsql.algorithms.base import Algorithm, Outcome, RunContext
from anonsql.algorithms.catalog import SEE
from anonsql.algorithms.microaggregation.grouping import Grouping, group_means
from anonsql.algorithms.recoding import Coded, TableRecoding
from anonsql.data.tuples import WeightedTuples, read_tuples
from anonsql.errors import InputError
from anonsql.metrics.risk import risk_measures
from anonsql.models import KAnonymity
from anonsql.spec import Spec, Spell

#: how released prototypes are written (the output's QI columns hold labels)
LABEL_FORMAT = "{:.10g}"


def check_spec(spec: Spec) -> int:
    """The k of a microaggregation run; every other privacy model is refused."""
    if spec.k is None or spec.k < 1:
        raise InputError(f"{spec.algorithm} microaggregation needs k >= 1 (groups of >= k records)")
    others = {
        "l": spec.l,
        "t": spec.t,
        "beta": spec.beta,
        "delta": spec.delta,
        "k_map": spec.k_map,
        "delta_min": spec.delta_min,
        "delta_max": spec.delta_max,
        "max_average_risk": spec.max_average_risk,
        "max_sample_uniqueness": spec.max_sample_uniqueness,
        "max_population_uniqueness": spec.max_population_uniqueness,
    }
    given = [name for name, v in others.items() if v is not None]
    if given:
        raise InputError(
            f"microaggregation ({spec.algorithm}) guarantees k-anonymity only; "
            f"leave out {', '.join(given)} or use a generalization algorithm {SEE}"
        )
    if spec.metric not in (None, "sse"):
        raise InputError("microaggregation reports its information loss as metric 'sse'")
    block = getattr(spec, "mdav_block", None)
    if block is not None and block < 2 * spec.k:  # checked before the table is read
        raise InputError(
            f"mdav_block {block} is too small: blocks of at least 2k = {2 * spec.k} tuples "
            f"keep every block's records >= k"
        )
    return int(spec.k)


class Microaggregation(Algorithm):
    """One of seed 001's methods; subclasses say how the tuples are grouped."""

    name: ClassVar[str]
    #: wLVQ2's label (the "++" variants) and the seed of the maps and of wLVQ2
    options: ClassVar[tuple[str, ...]] = ("label", "seed")
    hierarchies_optional: ClassVar[bool] = True
    #: does the method itself give every class >= k records?
    joint_k: ClassVar[bool] = True

    def group(self, data: WeightedTuples, z: np.ndarray, k: int, seed: int) -> Grouping:
        raise NotImplementedError

    def summary_lines(self, result: Any) -> list[str]:
        m = result.measures
        util: tuple[str, ...] = (
            "silhouette",
            "davies_bouldin",
            "structural_utility",
            "separability",
        )
        util += ("combined_utility",)
        return [
            f"microaggregation ({result.algorithm}): {m['groups']} groups, smallest "
            f"{m['smallest_group']} records",
            "utility: " + ", ".join(f"{u} {m[u]:.4f}" for u in util if isinstance(m.get(u), float)),
        ]

    def guarantee(self, k: int, g: Grouping, natural: int) -> str:
        return (
            f"every group holds >= {k} records ({self.name}); records with equal QI tuples "
            f"share a group; each record's QIs are its group's prototype"
        )

    def run(self, ctx: RunContext) -> Outcome:
        spec = ctx.spec
        k = check_spec(spec)
        seed = int(getattr(spec, "seed", 0) or 0)
        data, originals, dropped = read_tuples(
            ctx.db, ctx.source, list(spec.qis), spec.label, spec.missing
        )
        if data.records < k:
            raise InputError(f"{ctx.source!r} has {data.records} records, fewer than k = {k}")
        ctx.timings["histogram"] = time.perf_counter() - ctx.t0
        t1 = time.perf_counter()
        z = data.standardized()
        grouping = self.group(data, z, k, seed)
        ctx.timings["clustering"] = time.perf_counter() - t1
        name = self.name
        if spec.label is not None:
            t2 = time.perf_counter()
            grouping = supervised(data, z, grouping, k, seed)
            ctx.timings["wlvq2"] = time.perf_counter() - t2
            name += "++"
        sizes = grouping.class_sizes(data.counts)
        natural = int(sizes.min())
        guarantee = self.guarantee(k, grouping, natural)
        if spec.label is not None:
            guarantee = (
                f"every group holds >= {k} records ({name}: {self.name}'s prototypes supervised "
                f"by wLVQ2 with label {spec.label!r}, groups re-formed around them, those below "
                f"k moved to the nearest); each record's QIs are its group's codeword"
            )
        t3 = time.perf_counter()
        measures = release_measures(data, z, grouping, k, dropped, spec.label is not None, seed)
        ctx.timings["measures"] = time.perf_counter() - t3
        codes = code_like(list(spec.qis), data.values)
        if codes:
            measures["warnings"] = [
                f"{', '.join(map(repr, codes))} look(s) like codes (zip codes, identifiers), "
                f"not quantities: microaggregation releases group means such as 32435.4, "
                f"which mean nothing for a code. Generalize it with a hierarchy instead "
                f"(anonsql hierarchy build COL --mask 1 ..., and a lattice algorithm)"
            ]
        limit = float(spec.suppression)
        if measures["suppressed_share"] > limit + 1e-12:
            raise InputError(
                f"{name} leaves {measures['suppressed_rows']} rows "
                f"({measures['suppressed_share']:.2%}) in classes of fewer than k = {k} records "
                f"(or with NULL QIs), which the output would suppress; allow it with suppression "
                f">= {measures['suppressed_share']:.4f}, or use mdav or ctca (every group >= k)"
            )
        return Outcome(
            recoding=recoding_of(originals, grouping),
            models=[KAnonymity(k)],
            metric="sse",
            score=measures["sse"],
            per_qi=dict(zip(spec.qis, measures.pop("sse_per_qi"), strict=True)),
            measures=measures,
            checked=int(grouping.classes().max()) + 1,
            algorithm=name,
            guarantee=guarantee,
        )


#: column names that say "a code, not a quantity"
_CODE_NAMES = re.compile(
    r"zip|postal|post_?code|plz|\bcode\b|_code$|^code|_id$|^id$|phone|number|_no$", re.I
)


def code_like(qis: list[str], values: np.ndarray) -> list[str]:
    """The numeric QIs that look like codes: a code-like name, or whole numbers of one fixed
    width of at least four digits (as 5-digit zip codes are), where averaging makes no
    sense."""
    out = []
    for j, q in enumerate(qis):
        v = values[:, j]
        v = v[np.isfinite(v)]
        if not len(v):
            continue
        whole = bool(np.all(v == np.round(v)))
        widths = {len(str(int(abs(x)))) for x in v} if whole else set()
        fixed = whole and len(widths) == 1 and min(widths) >= 4 and len(np.unique(v)) > 1
        if (whole and _CODE_NAMES.search(q)) or fixed:
            out.append(q)
    return out


def supervised(data: WeightedTuples, z: np.ndarray, g: Grouping, k: int, seed: int) -> Grouping:
    """The "++" variant: wLVQ2 on the classes' prototypes, then groups re-formed around the
    adapted codewords (:func:`anonsql.algorithms.microaggregation.wlvq2.supervise`)."""
    from anonsql.algorithms.microaggregation.grouping import renumber
    from anonsql.algorithms.microaggregation.wlvq2 import supervise

    if data.labels is None:
        raise InputError("wLVQ2 needs a label")
    mu, sd = data.scale()
    classes, n = renumber(g.classes())
    protos = np.zeros((n, data.width))
    protos[classes] = g.released  # every tuple of a class has the class's prototype
    groups, codewords, info = supervise(data, z, classes, (protos - mu) / sd, k, seed)
    return Grouping.joint(groups, mu + sd * codewords, {**g.info, **info})


def recoding_of(originals: np.ndarray, g: Grouping) -> TableRecoding:
    """``originals``: each tuple's values as the guard casts them, a (tuples, QIs) object
    array."""
    # each distinct released value is formatted once (1 M tuples share 200,000 prototypes)
    # and each QI's labels are codes into those
    codes = np.zeros(g.released.shape, dtype=np.int64)
    labels = []
    for j in range(g.released.shape[1]):
        # by bit pattern, so -0.0 and 0.0 keep their own labels
        bits = np.ascontiguousarray(g.released[:, j], dtype=np.float64).view(np.int64)
        values, inverse = np.unique(bits, return_inverse=True)
        labels.append(
            np.array([LABEL_FORMAT.format(float(v)) for v in values.view(np.float64)], dtype=object)
        )
        codes[:, j] = inverse.reshape(-1)
    generalized = Coded(codes, labels)
    return TableRecoding(Coded.of_rows(originals), generalized, np.asarray(g.nodes, np.int64))


def release_measures(
    data: WeightedTuples,
    z: np.ndarray,
    g: Grouping,
    k: int,
    dropped: int,
    labelled: bool,
    seed: int,
) -> dict[str, Any]:
    """Risk figures of the classes as the guard forms them (classes of fewer than k records
    and NULL rows suppressed), the information loss SSE/SST, and seed 001's utility measures
    of the microaggregated records (before the guard's suppression)."""
    sizes = g.class_sizes(data.counts)
    small = sizes < k
    all_sizes = np.append(sizes, dropped) if dropped else sizes
    suppressed = np.append(small, True) if dropped else small
    out: dict[str, Any] = risk_measures(all_sizes, suppressed).to_dict()
    out["groups"] = len(sizes)
    out["smallest_group"] = int(sizes.min())  # the joint k the method reached
    out["missing_rows"] = dropped
    out.update({f"info_{key}": v for key, v in g.info.items()})
    mu, sd = data.scale()
    released_z = (g.released - mu) / sd
    sst = float(data.counts @ ((z - z.T @ data.counts / data.records) ** 2).sum(axis=1))
    sse = float(data.counts @ ((z - released_z) ** 2).sum(axis=1))
    out["sse"] = sse / sst if sst > 0 else 0.0
    # the same ratio per QI (its own SSE over its own SST), for the report's per-QI loss
    centred = z - z.T @ data.counts / data.records
    sst_j = data.counts @ centred**2
    sse_j = data.counts @ (z - released_z) ** 2
    out["sse_per_qi"] = [float(a / b) if b > 0 else 0.0 for a, b in zip(sse_j, sst_j, strict=True)]
    idx, y = data.expand()
    try:
        from anonsql.algorithms.microaggregation.measures import utility_measures

        util = utility_measures(
            data.values[idx],
            z[idx],
            g.released[idx],
            g.classes()[idx],
            y if labelled else None,
            seed,
        )
    except ImportError:  # scikit-learn: the [eval] or [ml] extra
        util = {"utility": "needs scikit-learn (pip install 'anonsql[ml]')"}
    out.update(util)
    return out


class Mdav(Microaggregation):
    name = "mdav"
    options = ("mdav_block", "label", "seed")

    @classmethod
    def check(
        cls,
        spec: Spec,
        prefix: str,
        given: Collection[str] | None,
        spell: Spell,
        chosen: type[Algorithm] | None,
        alone: bool = False,
    ) -> None:
        """MDAV's blocks of distinct tuples: a whole number >= 2 (>= 2k once k is known,
        :func:`check_spec`), for MDAV only."""
        block = spec.mdav_block
        if block is None:
            return
        if isinstance(block, bool) or not isinstance(block, int) or block < 2:
            raise InputError(f"{prefix}{spell('mdav_block')} must be a whole number >= 2k")
        if not alone and spec.algorithm != cls.name:
            raise InputError(
                f"{prefix}{spell('mdav_block')} is an option of algorithm 'mdav', not of "
                f"{spec.algorithm!r}"
            )

    def __init__(self, block: int | None = None) -> None:
        #: the largest block of distinct tuples run as exact MDAV (None: the default)
        self.block = block

    def run(self, ctx: RunContext) -> Outcome:
        self.block = getattr(ctx.spec, "mdav_block", None)
        return super().run(ctx)

    def group(self, data: WeightedTuples, z: np.ndarray, k: int, seed: int) -> Grouping:
        from anonsql.algorithms.microaggregation.mdav import DEFAULT_BLOCK, blocked_mdav

        groups, info = blocked_mdav(z, data.counts, k, self.block or DEFAULT_BLOCK)
        return Grouping.joint(groups, group_means(data, groups), info)

    def guarantee(self, k: int, g: Grouping, natural: int) -> str:
        how = (
            "MDAV"
            if g.info.get("mdav_exact", True)
            else f"MDAV within {g.info['mdav_blocks']} blocks of <= {g.info['mdav_block']} "
            f"distinct tuples cut by median splits"
        )
        return (
            f"every group holds >= {k} records ({how}); records with equal QI tuples share a "
            f"group; each record's QIs are its group's mean"
        )


class Ktca(Microaggregation):
    name = "ktca"
    constrained = False

    def group(self, data: WeightedTuples, z: np.ndarray, k: int, seed: int) -> Grouping:
        from anonsql.algorithms.microaggregation.ktca import tca

        try:
            groups, info = tca(z, data.counts, k, self.constrained, seed)
        except ImportError:
            raise InputError(f"{self.name} needs minisom: pip install 'anonsql[ml]'") from None
        return Grouping.joint(groups, group_means(data, groups), info)

    def guarantee(self, k: int, g: Grouping, natural: int) -> str:
        return (
            f"k-TCA's map reached k = {natural} (its smallest unit, Zouinina et al. §3.1); the "
            f"guard releases only groups of >= {k} records and suppresses the rest"
        )


class Ctca(Ktca):
    name = "ctca"
    constrained = True

    def guarantee(self, k: int, g: Grouping, natural: int) -> str:
        return (
            f"every group holds >= {k} records (C-TCA: the records of units below k moved "
            f"to the nearest units); each record's QIs are its group's mean"
        )


class Kde(Microaggregation):
    name = "kde"
    joint_k = False

    def group(self, data: WeightedTuples, z: np.ndarray, k: int, seed: int) -> Grouping:
        from anonsql.algorithms.microaggregation.kde import attribute_kde

        nodes, released, groups = attribute_kde(data.values, data.counts, k)
        per_attr = [
            int(min(c for c in np.bincount(nodes[:, j], weights=data.counts) if c > 0))
            for j in range(data.width)
        ]
        info = {
            "attribute_groups": [len(a.prototypes) for a in groups],
            "attribute_k": per_attr,
            "bandwidths": [a.bandwidth for a in groups],
        }
        return Grouping(nodes, released, info)

    def guarantee(self, k: int, g: Grouping, natural: int) -> str:
        return (
            f"per attribute every group holds >= {k} records (Zouinina et al. §3.2); jointly the "
            f"smallest class holds {natural}: the guard releases only classes of >= {k} "
            f"records and suppresses the rest"
        )


MICROAGGREGATION: tuple[type[Microaggregation], ...] = (Mdav, Ktca, Ctca, Kde)
#: the family's algorithms, for the registry (:func:`anonsql.algorithms.registry`)
ALGORITHMS: tuple[type[Algorithm], ...] = MICROAGGREGATION

__all__ = ["ALGORITHMS", "MICROAGGREGATION", "Ctca", "Kde", "Ktca", "Mdav", "Microaggregation"]
