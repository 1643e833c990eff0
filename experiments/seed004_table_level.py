"""Seed 004, why the paper's S3 and S6 alter less than ours: the strategies read with the
table-level measures that Definitions 15-16 write literally.

Definition 16 compares candidates by l_div(gen_T(C_s u C)) and t_clo(gen_T(C_s u C)): the
l-diversity / t-closeness value of the whole TABLE after the merging (Definition 11: the
minimum over its classes; Definition 14: the maximum). anonsql's GAA reads them as the value
of the merged class (anonsql/algorithms/greedy/gaa.py explains why). This script runs GAA with the
table-level reading, for the l_div-first and t_clo-first strategies (S3, S6) and their pure
references, so their curves and NAUC can be set beside the paper's Table 4:

* ``s3t``: minimal cost among the partners maximizing the table's l_div after the merging;
* ``s6t``: minimal cost among the partners minimizing the table's t_clo after the merging;
* ``s2t``, ``s5t``: cost first, then the table-level measure.

The strategies are registered for this script only (the library keeps the class-level
reading). Same protocol and output layout as seed004_strategies.py:

    python experiments/seed004_table_level.py [--sensitive marital-status] [--ks ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from _common import ADULT, RESULTS, Cache, Log, adult_db, canonical, nauc
from seed004_strategies import KS, PAPER_TABLE4


def _class_ldiv(ctx) -> np.ndarray:
    """l_div of every current class (Definition 11), from the kept sums of c ln c."""
    n = ctx.n
    size = ctx.sizes[:n]
    return np.exp(np.log(size) - ctx.xlogx[:n] / size)


def _class_tclo(ctx) -> np.ndarray:
    n = ctx.n
    return np.abs(ctx.counts[:n] / ctx.sizes[:n, None] - ctx.overall[None, :]).sum(axis=1)


def _table_value(ctx, idx, per_class, merged, worst) -> np.ndarray:
    """The table's value after merging C_s with each candidate: the worst (min for l_div,
    max for t_clo) of the merged class and of every class other than C_s and the candidate."""
    v = per_class.copy()
    v[ctx.s] = np.inf if worst is np.minimum else -np.inf
    order = np.argsort(v if worst is np.minimum else -v, kind="stable")[:2]
    a, b = int(order[0]), int(order[1]) if len(order) > 1 else int(order[0])
    others = np.where(idx == a, v[b], v[a])
    return worst(merged, others)


def table_ldiv(ctx, idx):
    return _table_value(ctx, idx, _class_ldiv(ctx), ctx.ldiv(idx), np.minimum)


def table_tclo(ctx, idx):
    return _table_value(ctx, idx, _class_tclo(ctx), ctx.tclo(idx), np.maximum)


def register() -> list[str]:
    from anonsql.algorithms.greedy import strategies as st

    def s2t(ctx):
        first = st.s1(ctx)
        return first[st._best(table_ldiv(ctx, first), maximize=True)]

    def s3t(ctx):
        first = ctx.cand[st._best(table_ldiv(ctx, ctx.cand), maximize=True)]
        return first[st._best(ctx.cost[first])]

    def s5t(ctx):
        first = st.s1(ctx)
        return first[st._best(table_tclo(ctx, first))]

    def s6t(ctx):
        first = ctx.cand[st._best(table_tclo(ctx, ctx.cand))]
        return first[st._best(ctx.cost[first])]

    made = []
    for name, fn, text in (
        ("s2t", s2t, "minimal cost, then maximal table l_div"),
        ("s3t", s3t, "maximal table l_div, then minimal cost"),
        ("s5t", s5t, "minimal cost, then minimal table t_clo"),
        ("s6t", s6t, "minimal table t_clo, then minimal cost"),
    ):
        st.STRATEGIES[name] = st.Strategy(name, fn, True, True, text)
        made.append(name)
    return made


def main() -> None:
    from anonsql.algorithms.greedy.algorithm import greedy_measures
    from anonsql.algorithms.greedy.gaa import GreedyModel, gaa
    from anonsql.data.histogram import Histogram

    ap = argparse.ArgumentParser()
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--sensitive", default="marital-status")
    ap.add_argument("--strategies", default="s3t,s6t")
    ap.add_argument(
        "--cache",
        help="JSON-lines file of measured points: read to skip them, appended to (a resumed "
        "run gives the same figures, GAA being deterministic)",
    )
    ap.add_argument("--name", default="seed004_table_level")
    args = ap.parse_args()
    register()
    ks = [int(x) for x in args.ks.split(",")]
    log = Log(RESULTS / f"{args.name}.txt")
    cache = Cache(args.cache)
    db = adult_db()
    out: dict = {"ks": ks}
    for sensitive in args.sensitive.split(","):
        qis = [a for a in ADULT if a != sensitive]
        hist = canonical(Histogram.from_database(db, "adult", qis, qis, sensitive))
        p = hist.overall_distribution()
        p = p[p > 0]
        l_max = float(np.exp(-(p * np.log(p)).sum()))
        rows = {}
        for strategy in args.strategies.split(","):
            fig: dict[str, list[float]] = {"alteration": [], "l_div": [], "t_clo": []}
            for k in ks:
                t = time.perf_counter()
                m = cache.get(sensitive, strategy, k)
                if m is None:
                    r = gaa(hist, GreedyModel(k), "nllm", strategy)
                    full = greedy_measures(hist, r, "nllm")
                    m = {key: float(full[key]) for key in ("alteration", "l_div", "t_clo")}
                    m["classes"] = int(r.classes)
                    cache.put(sensitive, strategy, k, m)
                for key in fig:
                    fig[key].append(m[key])
                log(
                    f"{sensitive:14s} {strategy:4s} k={k:5d}  alteration {m['alteration']:6.2f}%"
                    f"  l_div {m['l_div']:7.3f}  t_clo {m['t_clo']:.4f}"
                    f" (halved {m['t_clo'] / 2:.4f})  classes {m['classes']}"
                )
                print(f"  {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
            fig["t_clo_half"] = [v / 2 for v in fig["t_clo"]]
            rows[strategy] = fig
        lo, hi = min(ks), max(ks)
        table = {
            "alteration": {s: nauc(ks, rows[s]["alteration"], lo, hi) for s in rows},
            "l_div": {s: 100 * nauc(ks, rows[s]["l_div"], lo, hi) / l_max for s in rows},
            "t_clo_half": {s: 100 * nauc(ks, rows[s]["t_clo_half"], lo, hi) for s in rows},
        }
        out[sensitive] = {"l_max": l_max, "curves": rows, "nauc": table}
        log(f"\n{sensitive}: NAUC over [{lo}, {hi}] (t_clo halved), paper's S3 / S6 beside")
        paper = PAPER_TABLE4.get(sensitive, {})
        for key in table:
            ref = paper.get("t_clo" if key == "t_clo_half" else key, {})
            cells = ", ".join(f"{s} {v:.2f}" for s, v in table[key].items())
            refs = ", ".join(f"{s} {ref[s]:.2f}" for s in ("s3", "s5", "s6") if s in ref)
            log(f"  {key:10s} {cells}   (paper: {refs})")
        log("")
        _plot(sensitive, ks, rows, args.name)
    with open(RESULTS / f"{args.name}.json", "w") as f:
        json.dump(out, f, indent=1)
    log.close()


def _plot(sensitive: str, ks: list[int], rows: dict, name: str) -> None:
    """The table-level curves beside the class-level S1, S3, S5 and S6 of
    seed004_strategies.py (when its results are there)."""
    from _plots import curves

    series = {s: (ks, rows[s], None) for s in rows}
    path = RESULTS / "seed004_strategies.json"
    if path.exists():
        other = json.loads(path.read_text())
        if sensitive in other:  # on its own grid of k
            for s in ("s1", "s3", "s5", "s6"):
                series[s] = (other["ks"], other[sensitive]["curves"][s], None)

    def panel(key: str) -> dict:
        return {s: (x, v[key], None) for s, (x, v, _) in series.items()}

    curves(
        RESULTS / f"{name}_{sensitive}.png",
        f"Seed 004 (ours): Adult, sensitive {sensitive}, NLLM - class-level (s3, s6) and "
        f"table-level (s3t, s6t) readings of Definition 16",
        [
            ("alteration for NLLM (%)", panel("alteration")),
            ("l-diversity value", panel("l_div")),
            ("t-closeness value (halved L1)", panel("t_clo_half")),
        ],
    )


if __name__ == "__main__":
    main()
