"""Seed 004, Section 4.3 on Adult with Age and with Marital status as the sensitive
attribute (the other eight attributes as QIs, ARX hierarchies): GAA with NLLM and each of
the strategies S1-S7 (and the pure references ldiv / tclo with --references), for each k;
the alteration for NLLM, the l-diversity value (Def. 11) and the t-closeness value (Def. 14)
of each k-anonymous table, and their NAUC like the paper's Table 4 (alteration: mean value;
l_div: mean over the largest l_div value observed, in percent; t_clo: mean x 100).

    python experiments/seed004_strategies.py [--ks 3,5,10,20,100,500,2000] [--references]
"""

from __future__ import annotations

import argparse
import json
import time

from _common import ADULT, adult_db, nauc

KS = [3, 4, 5, 10, 20, 100, 250, 500, 1000, 2000, 5000, 10000, 15000]
STRATEGIES = ["s1", "s2", "s3", "s4", "s5", "s6", "s7"]


def main() -> None:
    from anonsql.algorithms.greedy import greedy_measures
    from anonsql.data.histogram import Histogram
    from anonsql.greedy.gaa import GreedyModel, gaa

    ap = argparse.ArgumentParser()
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--sensitive", default="age,marital-status")
    ap.add_argument("--references", action="store_true", help="also Strategy ldiv and tclo")
    ap.add_argument("--json", help="also write the raw figures here")
    args = ap.parse_args()
    ks = [int(x) for x in args.ks.split(",")]
    strategies = STRATEGIES + (["ldiv", "tclo"] if args.references else [])
    db = adult_db()
    out: dict = {"ks": ks}
    for sensitive in args.sensitive.split(","):
        qis = [a for a in ADULT if a != sensitive]
        hist = Histogram.from_database(db, "adult", qis, qis, sensitive)
        rows: dict[str, dict[str, list[float]]] = {}
        for strategy in strategies:
            fig = {"alteration": [], "l_div": [], "t_clo": []}
            for k in ks:
                t = time.perf_counter()
                r = gaa(hist, GreedyModel(k), "nllm", strategy)
                m = greedy_measures(hist, r, "nllm")
                for key in fig:
                    fig[key].append(m[key])
                print(
                    f"{sensitive:14s} {strategy:4s} k={k:5d}  alteration {m['alteration']:6.2f}%"
                    f"  l_div {m['l_div']:7.3f}  t_clo {m['t_clo']:.4f}"
                    f"  ({time.perf_counter() - t:.1f} s)",
                    flush=True,
                )
            rows[strategy] = fig
        out[sensitive] = rows
        lo, hi = min(ks), max(ks)
        l_max = max(max(f["l_div"]) for f in rows.values())
        print(f"\n{sensitive}: NAUC over [{lo}, {hi}] like seed 004 Table 4")
        table = {
            "alteration": {s: nauc(ks, rows[s]["alteration"], lo, hi) for s in rows},
            "l_div": {s: 100 * nauc(ks, rows[s]["l_div"], lo, hi) / l_max for s in rows},
            "t_clo": {s: 100 * nauc(ks, rows[s]["t_clo"], lo, hi) for s in rows},
        }
        for key, best_high in (("alteration", False), ("l_div", True), ("t_clo", False)):
            ranked = sorted(table[key], key=table[key].get, reverse=best_high)
            print(f"  {key:10s} " + ", ".join(f"{s} {table[key][s]:.2f}" for s in ranked))
        print(flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
