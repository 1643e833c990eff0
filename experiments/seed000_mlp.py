"""Seed 000, Section IV on Adult: GAA (NLLM, S1) over the eight QIs, salary-class as the
target; for each k, an MLP trained on the original table (the paper's architecture and
training protocol, see anonsql/utility.py) is evaluated by AUC-ROC on each encoding of the
k-anonymous table - proportional, oneClass, fillParent, fillChild - over 10 seeds.

    python experiments/seed000_mlp.py [--ks 3,10,100,1000] [--seeds 10]

The paper's list of k is 3,4,5,10,20,50,100,250,500,1000,2000,5000,10000,15000.
"""

from __future__ import annotations

import argparse
import json
import time

from _common import ADULT, adult_db


def main() -> None:
    from anonsql.anonymization import Spec, anonymize
    from anonsql.utility import evaluate_run

    ap = argparse.ArgumentParser()
    ap.add_argument("--ks", default="3,10,100,1000")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--json")
    args = ap.parse_args()
    db = adult_db()
    qis = [a for a in ADULT if a != "salary-class"]
    results = {}
    wins = 0
    ks = [int(x) for x in args.ks.split(",")]
    for k in ks:
        t = time.perf_counter()
        spec = Spec(qis=qis, k=k, algorithm="greedy", metric="nllm", output=f"adult_gaa_{k}")
        run = anonymize(db, "adult", spec)
        scores = evaluate_run(db, run.run_id, "salary-class", args.seeds)
        results[k] = {s.representation: [s.mean_auc, s.std_auc] for s in scores}
        best = max(scores, key=lambda s: s.mean_auc)
        wins += best.representation == "proportional"
        cells = "  ".join(f"{s.representation} {s.mean_auc:.4f}±{s.std_auc:.4f}" for s in scores)
        print(f"k={k:5d}  {cells}  best: {best.representation}  ({time.perf_counter() - t:.0f} s)",
              flush=True)  # fmt: skip
    print(f"\nproportional has the best mean AUC-ROC for {wins} of {len(ks)} values of k")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
