"""``anonymize(..., algorithm="greedy")``: GAA on the table's histogram, materialized in
place like the lattice search (one transaction, provenance recorded), the output reading
each row's class values from ``anonsql_recodings``."""

from __future__ import annotations

import time

import numpy as np

from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from anonsql.greedy.gaa import GreedyModel, GreedyResult, _ldiv, _tclo, gaa
from anonsql.metrics.risk import risk_measures
from anonsql.metrics.unified import METRICS, UnifiedMetric
from anonsql.output.materialize import replace_output
from anonsql.output.provenance import Provenance
from anonsql.output.recoding import recoding_query

GUARANTEE = (
    "heuristic (seed 004's GAA): every class satisfies the model; the generalization cost "
    "is greedily, not globally, minimal"
)


def greedy_model(spec) -> GreedyModel:
    if spec.k is None:
        raise InputError("GAA needs k (seed 004 anonymizes with k-anonymity, optionally with l/t)")
    if spec.suppression:
        raise InputError("GAA merges classes instead of suppressing records: use suppression 0")
    if spec.l is not None and spec.l_variant != "entropy-l":
        raise InputError("GAA uses entropy l-diversity (seed 004 Def. 10): l_variant entropy-l")
    if spec.t is not None and spec.t_variant != "l1":
        raise InputError(
            "GAA uses t-closeness with the L1 distance (seed 004 Def. 13): t_variant l1"
        )
    return GreedyModel(spec.k, spec.l, spec.t)


def anonymize_greedy(db, source, spec, columns, names, progress, t0, timings):
    from anonsql.anonymization import Result

    model = greedy_model(spec)
    metric = spec.metric or "nllm"
    if metric not in METRICS:
        raise InputError(f"GAA uses seed 004's metrics ({', '.join(METRICS)}), not {metric!r}")
    hist = Histogram.from_database(db, source, spec.qis, names, spec.sensitive)
    if hist.rows == 0:
        raise InputError(f"table {source!r} is empty")
    timings["histogram"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    result = gaa(hist, model, metric, spec.strategy, progress)
    timings["search"] = time.perf_counter() - t1
    measures = greedy_measures(hist, result, metric)
    run_id = None
    if spec.output is not None:
        t2 = time.perf_counter()
        run_id = _write(db, source, columns, spec, names, hist, result, measures, timings)
        timings["materialize"] = time.perf_counter() - t2
    timings["total"] = time.perf_counter() - t0
    return Result(
        run_id,
        source,
        spec.output,
        spec.materialize if spec.output else None,
        {},
        metric,
        measures["alteration"],
        None,
        measures,
        result.merges,
        0,
        f"greedy/{spec.strategy}",
        GUARANTEE,
        timings,
        [],
    )


def greedy_measures(hist: Histogram, result: GreedyResult, metric: str) -> dict:
    """Risk measures, the alteration for the chosen metric (seed 004 Def. 7) and, with a
    sensitive attribute, the table's l_div and t_clo values (Defs. 11 and 14)."""
    m = len(hist.qis)
    out = risk_measures(result.sizes, np.zeros(result.classes, dtype=bool)).to_dict()
    gen = result.nodes[result.row_class]
    original = [hist.codes[:, j] for j in range(m)]
    generalized = [gen[:, j] for j in range(m)]
    out["alteration"] = UnifiedMetric(metric, hist.hierarchies).alteration(
        original, generalized, hist.counts
    )
    out["merges"] = result.merges
    if result.sens_counts is not None:
        sizes = result.sizes.astype(float)
        out["l_div"] = float(_ldiv(result.sens_counts, sizes).min())
        out["t_clo"] = float(_tclo(result.sens_counts, sizes, hist.overall_distribution()).max())
    return out


def _write(db, source, columns, spec, names, hist, result, measures, timings) -> int:
    backend = db.backend
    prov = Provenance(backend)
    hs = hist.hierarchies
    labels = [np.asarray(h.labels, dtype=object) for h in hs]
    seen: set[tuple] = set()
    original, generalized, node_ids = [], [], []
    for r in range(len(hist.counts)):
        key = tuple(labels[j][hist.codes[r, j]] for j in range(len(hs)))
        if key in seen:  # histogram rows differ by sensitive value only
            continue
        seen.add(key)
        cls = result.row_class[r]
        original.append(list(key))
        generalized.append([labels[j][result.nodes[cls, j]] for j in range(len(hs))])
        node_ids.append([int(x) for x in result.nodes[cls]])
    with backend.transaction():
        run_id = prov.next_run_id()
        prov.replace_suppressed(run_id, spec.output, [])
        prov.replace_recodings(run_id, spec.output, original, generalized, node_ids)
        query = recoding_query(source, columns, list(spec.qis), run_id)
        replace_output(db, spec.materialize, spec.output, query)
        params = spec.to_dict()
        params["hierarchies"] = dict(zip(spec.qis, names, strict=True))
        params["models"] = [result.model]
        prov.record_run(
            run_id,
            source=source,
            output=spec.output,
            materialize=spec.materialize,
            algorithm=f"greedy/{spec.strategy}",
            parameters=params,
            levels=None,
            measures={"score": measures["alteration"], "metric": result.metric, **measures},
            timings={k: round(v, 6) for k, v in timings.items()},
            checked=result.merges,
            lattice_size=None,
        )
    return run_id


__all__ = ["anonymize_greedy", "greedy_measures", "greedy_model"]
