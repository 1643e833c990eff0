"""``algorithm="safepub"``: (epsilon, delta)-differentially private microdata, as ARX's SafePub
(Bild, Kuhn, Prasser, PoPETs 2018; the References page of the documentation).

1. The budget is split: epsilon_search = dp_search_budget * epsilon chooses the
   generalization, epsilon_anon = epsilon - epsilon_search pays for the release; beta and k
   follow from (epsilon_anon, delta) (:mod:`anonsql.algorithms.dp.params`, Eqs. (1)-(6)).
2. The source's records are drawn with probability beta, once, into a stored table
   (:mod:`anonsql.algorithms.dp.sampling`).
3. The generalization: with a search budget, SafePub's walk over the lattice with the
   exponential mechanism and a private final choice (:mod:`anonsql.algorithms.dp.search`),
   every candidate scored on the sample by the engine (:mod:`anonsql.algorithms.dp.engine`)
   with a score of bounded sensitivity (:mod:`anonsql.algorithms.dp.quality`); without one
   (dp_search_budget 0), the levels given (``levels``), fixed before the data is seen.
4. The release: the sample at those levels, every class of fewer than k records suppressed and
   left out (strongly-safe k-anonymization), through the one output writer: a table, or a
   view over the stored sample whose guard enforces k at every read.

The whole release is (epsilon_anon + epsilon_search, delta)-DP by sequential composition
(SafePub section 4). Only QIs are released (the theorem covers records whose every
released attribute is generalized with the class: a sensitive or kept column would publish
a record's own value beside its class), and suppressed records are left out (their count is
not part of the DP output).
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from sqlglot import exp

from anonsql.algorithms.base import Algorithm, Outcome, RunContext
from anonsql.algorithms.dp.budget import ALGORITHM, budgets, lock_budget, refuse_beyond
from anonsql.algorithms.dp.engine import SampleScorer
from anonsql.algorithms.dp.mechanisms import Randomness
from anonsql.algorithms.dp.params import check_budget_values, safepub_parameters
from anonsql.algorithms.dp.quality import (
    NEEDS_ROWS,
    ScoreContext,
    arx_loss,
    check_metric,
    score,
)
from anonsql.algorithms.dp.sampling import ROW, draw_sample, drop_sample, new_sample_name
from anonsql.algorithms.dp.search import FINAL_SHARE, safepub_search
from anonsql.algorithms.recoding import LevelRecoding
from anonsql.backend.sql_templates import table
from anonsql.errors import InputError
from anonsql.metrics.risk import risk_measures
from anonsql.models.base import PrivacyModel
from anonsql.models.k_anonymity import KAnonymity
from anonsql.spec import Spec, Spell

#: ARX's default search budget (``ARXConfiguration.dpSearchBudget``, 0.1), here a share of
#: epsilon; and a default number of walk steps (ARX has none: its tests use 10 and 100)
DEFAULT_SEARCH_SHARE = 0.1
DEFAULT_STEPS = 100
#: the options of this algorithm alone
DP_OPTIONS = ("dp_epsilon", "dp_delta", "dp_search_budget", "dp_steps", "levels")
#: privacy models the release cannot combine with (k is derived)
_OTHER_MODELS = (
    "k", "l", "t", "beta", "delta", "k_map", "delta_min", "delta_max", "max_average_risk",
    "max_sample_uniqueness", "max_population_uniqueness", "population",
)  # fmt: skip


def dp_spec(spec: Any) -> Any:
    """A SafePub spec as it runs: every class below k is suppressed whatever the share (no
    suppression limit) and suppressed rows are left out of the output."""
    if getattr(spec, "algorithm", None) != ALGORITHM or spec.suppression not in (0.0, 1.0):
        return spec  # another algorithm, or a limit that check_dp_options refuses
    return replace(spec, suppression=1.0, drop_suppressed=True)


def check_dp_options(spec: Any, prefix: str = "", given=None, spell=repr) -> None:
    """The options of a DP release, checked before anything is read (``given`` empty: an
    option checked alone, whose combination with the others is not judged)."""
    if given is not None and not given:
        return
    algo = getattr(spec, "algorithm", None)
    set_ = [o for o in DP_OPTIONS if getattr(spec, o, None) is not None]
    if algo != ALGORITHM:
        if set_:
            raise InputError(
                f"{prefix}{', '.join(spell(o) for o in set_)}: option(s) of algorithm "
                f"'safepub' (differential privacy), not of {algo!r}"
            )
        return
    for o in ("dp_epsilon", "dp_delta"):
        if getattr(spec, o, None) is None:
            raise InputError(f"{prefix}safepub needs {spell('dp_epsilon')} and {spell('dp_delta')}")
    share = spec.dp_search_budget if spec.dp_search_budget is not None else DEFAULT_SEARCH_SHARE
    try:
        check_budget_values(spec.dp_epsilon, spec.dp_delta, share)
    except InputError as e:
        raise InputError(f"{prefix}{e}") from None
    others = [o for o in _OTHER_MODELS if getattr(spec, o, None) is not None]
    if others:
        raise InputError(
            f"{prefix}safepub derives k from {spell('dp_epsilon')} and {spell('dp_delta')}; "
            f"leave out {', '.join(spell(o) for o in others)}"
        )
    if share == 0:
        if spec.levels is None:
            raise InputError(
                f"{prefix}{spell('dp_search_budget')} 0 releases a fixed generalization: give "
                f"it with {spell('levels')} (a level for every QI)"
            )
        if spec.dp_steps is not None:
            raise InputError(f"{prefix}{spell('dp_steps')} needs a search budget above 0")
    elif spec.levels is not None:
        raise InputError(
            f"{prefix}{spell('levels')} fixes the generalization, which needs "
            f"{spell('dp_search_budget')} 0 (no budget spent on choosing it)"
        )
    steps = spec.dp_steps
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise InputError(f"{prefix}{spell('dp_steps')} must be a whole number >= 1")
    if spec.sensitive is not None or spec.keep or spec.unit is not None:
        what = (
            "a sensitive attribute"
            if spec.sensitive is not None
            else ("kept columns" if spec.keep else "a privacy unit")
        )
        raise InputError(
            f"{prefix}safepub releases quasi-identifiers only (the DP guarantee covers records "
            f"whose every released column is generalized with its class): {what} cannot be "
            f"released; leave it out with --columns"
        )
    masks = {c: m for c, m in (spec.masks or {}).items() if str(m).split(":")[0] != "drop"}
    if masks:
        raise InputError(
            f"{prefix}safepub releases quasi-identifiers only: mask(s) of "
            f"{', '.join(sorted(masks))} would publish a per-record value; drop those columns"
        )
    if getattr(spec, "recoding_mode", "global") != "global":
        raise InputError(f"{prefix}safepub releases one full-domain generalization (global)")
    if spec.suppression not in (0.0, 1.0):
        raise InputError(
            f"{prefix}safepub suppresses every class of fewer than k records, whatever their "
            f"share: leave out {spell('suppression')}"
        )
    check_metric(spec.metric)
    if spec.gs_factor != 0.5:
        raise InputError(f"{prefix}{spell('gs_factor')} does not apply to safepub's scores")
    seed = spec.seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InputError(f"{prefix}seed must be a whole number >= 0, not {seed!r}")


def fixed_levels(spec: Any, tops: list[int]) -> tuple[int, ...]:
    """``levels``: QI -> level (every QI), or a list in the QIs' order."""
    qis = list(spec.qis)
    given = spec.levels
    if isinstance(given, dict):
        unknown = sorted(set(given) - set(qis))
        lacking = [q for q in qis if q not in given]
        if unknown or lacking:
            raise InputError(
                "levels: give one level for every QI"
                + (f"; not QIs: {', '.join(unknown)}" if unknown else "")
                + (f"; missing: {', '.join(lacking)}" if lacking else "")
            )
        values = [given[q] for q in qis]
    else:
        values = list(given)
        if len(values) != len(qis):
            raise InputError(f"levels: {len(values)} level(s) for {len(qis)} QIs")
    out = []
    for q, v, top in zip(qis, values, tops, strict=True):
        try:
            lv = int(v)
        except (TypeError, ValueError):
            raise InputError(f"levels: {q}'s level must be a whole number, not {v!r}") from None
        if str(lv) != str(v).strip() or not 0 <= lv <= top:
            raise InputError(f"levels: {q}'s level must be a whole number in [0, {top}], not {v!r}")
        out.append(lv)
    return tuple(out)


def _source_rows(db, source: str) -> int:
    return int(
        db.backend.fetchall(exp.select(exp.Count(this=exp.Star())).from_(table(source)))[0][0]
    )


def _previous_release(db, output: str) -> dict | None:
    from anonsql.provenance import Provenance

    if not db.backend.table_exists("anonsql_runs"):
        return None
    for name, run in Provenance(db.backend).latest_runs().items():
        if db.backend.same_relation(name, output) and run["algorithm"] == ALGORITHM:
            return run
    return None


class SafePub(Algorithm):
    """SafePub: sampling, a differentially private choice of generalization, strongly-safe
    k-anonymization of the sample."""

    name = ALGORITHM
    options: ClassVar[tuple[str, ...]] = (*DP_OPTIONS, "seed")

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
        """Its options belong to it alone; their values and how they combine
        (:func:`check_dp_options`)."""
        if not alone:  # checked once the options are together: how they combine
            check_dp_options(spec, prefix, None, spell)

    def guard_models(self, spec: Spec, sensitive_key: str | None) -> list[PrivacyModel]:
        """k-anonymity with the k derived from epsilon and delta (the run's own), enforced
        at every read of the stored sample."""
        share = spec.dp_search_budget if spec.dp_search_budget is not None else DEFAULT_SEARCH_SHARE
        # a safepub run's spec has both (check_dp_options before it ran)
        assert spec.dp_epsilon is not None and spec.dp_delta is not None
        return [KAnonymity(safepub_parameters(spec.dp_epsilon, spec.dp_delta, share).k)]

    def run(self, ctx: RunContext) -> Outcome:
        spec, db, source = ctx.spec, ctx.db, ctx.source
        check_dp_options(spec)
        if spec.output is None:
            raise InputError(
                "safepub spends privacy budget on every run: give --out NAME (a run without "
                "an output would spend it and publish nothing)"
            )
        share = spec.dp_search_budget if spec.dp_search_budget is not None else DEFAULT_SEARCH_SHARE
        steps = spec.dp_steps if spec.dp_steps is not None else DEFAULT_STEPS
        assert spec.dp_epsilon is not None and spec.dp_delta is not None  # checked above
        params = safepub_parameters(spec.dp_epsilon, spec.dp_delta, share)
        refuse_beyond(db, source, params.epsilon, params.delta)
        metric = check_metric(spec.metric)
        hierarchies = [db.hierarchies.load(key) for key in ctx.pinned_keys]
        tops = [h.top_level for h in hierarchies]
        levels = fixed_levels(spec, tops) if share == 0 else None
        previous = _previous_release(db, spec.output)
        rnd = Randomness(spec.seed)
        sample = new_sample_name(db)

        def drop_on_failure(exc_type, exc, tb) -> bool:
            if exc_type is not None:
                drop_sample(db, sample)
            return False

        ctx.after.push(drop_on_failure)
        t0 = time.perf_counter()
        order = db.backend.columns(source) if spec.seed is not None else None
        draw_sample(db, source, sample, rnd.sample_key(), params.threshold, order)
        ctx.timings["sample"] = time.perf_counter() - t0
        with SampleScorer(db, list(spec.qis), ctx.pinned_keys, tops) as scorer:
            t1 = time.perf_counter()
            scorer.prepare(sample, spec.missing)
            rows = _source_rows(db, source) if metric in NEEDS_ROWS else 0
            sctx = ScoreContext(
                metric,
                params.k,
                len(spec.qis),
                tuple(len(h.leaf_ids) for h in hierarchies),
                tuple(tops),
                rows,
            )
            ctx.timings["histogram"] = time.perf_counter() - t1
            t2 = time.perf_counter()
            pivots: list = []
            if levels is not None:
                chosen = levels
                agg = scorer.aggregates([levels], params.k, metric == "entropy")[0]
                checked = 1
            else:
                walk = safepub_search(
                    scorer, sctx, tops, steps, params.epsilon_search, rnd, ctx.progress
                )
                chosen, agg, checked, pivots = (
                    walk.chosen,
                    walk.aggregates,
                    walk.scored,
                    walk.pivots,
                )
            ctx.timings["search"] = time.perf_counter() - t2
            sizes = np.asarray(scorer.class_sizes(chosen), dtype=np.int64)
            missing = scorer.missing_rows
            sample_rows = scorer.rows
        suppressed = sizes < params.k
        measures = risk_measures(
            np.append(sizes, missing) if missing else sizes,
            np.append(suppressed, True) if missing else suppressed,
        ).to_dict()
        if missing:
            measures["missing_rows"] = missing
        loss, per_qi = arx_loss(agg, sctx)
        dp: dict[str, Any] = {
            **params.to_dict(),
            "search_share": share,
            "steps": steps if levels is None else 0,
            "final_share": FINAL_SHARE if levels is None else None,
            "metric": metric,
            "sample": sample,
            "sample_rows": sample_rows,
            "randomness": rnd.kind,
            "seed": spec.seed,
            "rows_public": rows if metric in NEEDS_ROWS else None,
        }
        measures["dp"] = {k: v for k, v in dp.items() if k != "sample"}
        measures["loss"] = loss  # ARX's Loss (gsFactor 0.5) of the release, on the sample
        measures["sample_rows"] = sample_rows
        spent = budgets(db, source)[0]
        measures.setdefault("warnings", []).append(
            f"differential privacy: this release spends epsilon {params.epsilon:g}, delta "
            f"{params.delta:g} of table {source!r}'s budget (spent before: epsilon "
            f"{spent.epsilon_spent:g}, delta {spent.delta_spent:g})"
            + (
                f"; it replaces run {previous['run_id']}'s release of {spec.output!r} with a "
                f"new sample, and the budget of both counts"
                if previous
                else ""
            )
        )
        if spec.seed is not None:
            measures["warnings"].append(
                f"seed {spec.seed}: the sample and the mechanism are a function of the seed "
                f"(for tests and reproductions only, not a private release)"
            )
        if not agg.released_rows:
            measures["warnings"].append(
                f"every class of the sample has fewer than k = {params.k} records: the "
                f"release is empty (a larger epsilon or delta lowers k)"
            )
        guarantee = (
            f"({params.epsilon:g}, {params.delta:g})-differential privacy (SafePub): sample "
            f"with beta = {params.beta:.6g}, every class below k = {params.k} suppressed"
            + (
                f", generalization chosen with epsilon {params.epsilon_search:g} "
                f"({steps} exponential-mechanism steps and a private final choice)"
                if levels is None
                else ", generalization fixed beforehand"
            )
            + (
                f"; {metric}'s sensitivity treats the table's row count as public"
                if metric in NEEDS_ROWS
                else ""
            )
            + ("; SEEDED: for tests and reproductions only" if spec.seed is not None else "")
        )

        def before_write(db_) -> None:
            # inside the output's transaction: releases of one table are checked and recorded
            # one after the other, so two cannot both pass a limit that holds one
            lock_budget(db_, source)
            refuse_beyond(db_, source, params.epsilon, params.delta)

        lattice = math.prod(t + 1 for t in tops)
        outcome = Outcome(
            recoding=LevelRecoding(ctx.pinned_keys, list(chosen)),
            models=[KAnonymity(params.k)],
            metric=metric,
            score=score(agg, sctx),
            measures=measures,
            checked=checked,
            algorithm=ALGORITHM,
            guarantee=guarantee,
            levels=dict(zip(spec.qis, chosen, strict=True)),
            per_qi=dict(zip(spec.qis, per_qi, strict=True)),
            lattice_size=lattice,
        )
        outcome.release_source = sample
        outcome.parameters = {"dp": {**dp, "pivots": [list(p) for p in pivots]}}
        outcome.before_write = before_write
        return outcome


__all__ = ["DP_OPTIONS", "ROW", "SafePub", "check_dp_options", "dp_spec", "fixed_levels"]
