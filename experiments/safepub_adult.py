"""Utility of SafePub releases on Adult (issue 32): epsilon in {0.5, 1, 2}, delta = 1e-5
(ARX's value in its tests), the nine Adult QIs with ARX's hierarchies, the granularity
score (loss), search budget 10% of epsilon, 100 walk steps; 20 seeded runs per epsilon
(seeds 0-19: a reproduction, not a private release), mean and standard deviation of:

* Loss: ARX's Loss (gsFactor 0.5) of the release on its sample, in [0, 1] (0: nothing lost)
  - the figure ARX reports for a DP release;
* released: the share of Adult's records in the output (sampling and suppression both
  remove records);
* classes and k.

Beside it: the optimal k-anonymous release of the whole table for the same k (Flash, Loss,
suppression limit 100%, the Loss ARX computes over all records): what the same class-size
threshold costs without sampling and with a non-private search.

The SafePub paper (Bild et al. 2018, section 7) plots its quality models on Adult against
epsilon; its figures' values could not be read for this study (the paper was not available
here), so the comparison is to ARX's own expected values instead, which
``tests/algorithms/dp/test_dp_arx.py`` reproduces exactly for ARX's fixed-generalization cases.

    python experiments/safepub_adult.py [--runs 20] [--steps 100]

The committed results (experiments/results/safepub_adult.*) were run with --steps 20 on a
shared, loaded machine (the default 100 steps took about 25 s per release there).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from _common import ADULT, RESULTS, Log, adult_db

from anonsql.run import anonymize
from anonsql.spec import Spec

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "occupation", "salary-class"]  # fmt: skip
assert sorted(QIS) == sorted(ADULT)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    db = adult_db()
    n = int(db.backend.fetchall("SELECT COUNT(*) FROM adult")[0][0])
    log = Log(RESULTS / "safepub_adult.txt")
    log(f"SafePub on Adult ({n} records, 9 QIs), delta 1e-5, search 10% of epsilon, "
        f"{args.steps} steps, loss score; {args.runs} seeded runs per epsilon")  # fmt: skip
    log(f"{'epsilon':>7} {'k':>4} {'Loss mean':>10} {'Loss sd':>8} {'released':>9} "
        f"{'rel. sd':>8} {'classes':>8} | {'k-anon Loss':>11} {'released':>9}")  # fmt: skip
    out = {}
    for eps in (0.5, 1.0, 2.0):
        losses, released, classes, ks, secs = [], [], [], [], []
        for seed in range(args.runs):
            t = time.perf_counter()
            r = anonymize(db, "adult", Spec(
                qis=QIS, columns=QIS, algorithm="safepub", dp_epsilon=eps, dp_delta=1e-5,
                dp_steps=args.steps, seed=seed, output="adult_dp", materialize="table",
            ))  # fmt: skip
            secs.append(time.perf_counter() - t)
            losses.append(r.measures["loss"])
            kept = r.measures["rows"] - r.measures["suppressed_rows"]
            released.append(kept / n)
            classes.append(r.measures["classes"])
            ks.append(r.measures["dp"]["k"])
        k = ks[0]
        ref = anonymize(db, "adult", Spec(qis=QIS, k=k, suppression=1.0, metric="loss"))
        ref_released = 1 - ref.measures["suppressed_rows"] / ref.measures["rows"]
        row = {
            "k": k,
            "loss_mean": statistics.mean(losses),
            "loss_sd": statistics.stdev(losses) if len(losses) > 1 else 0.0,
            "released_mean": statistics.mean(released),
            "released_sd": statistics.stdev(released) if len(released) > 1 else 0.0,
            "classes_mean": statistics.mean(classes),
            "kanon_loss": ref.score,
            "kanon_released": ref_released,
            "kanon_levels": ref.levels,
            "losses": losses,
        }
        out[str(eps)] = row
        log(f"{eps:>7} {k:>4} {row['loss_mean']:>10.4f} {row['loss_sd']:>8.4f} "
            f"{row['released_mean']:>9.3f} {row['released_sd']:>8.3f} {row['classes_mean']:>8.1f}"
            f" | {ref.score:>11.4f} {ref_released:>9.3f}")  # fmt: skip
        print(f"  epsilon {eps}: {statistics.mean(secs):.1f} s per release", file=sys.stderr)
    (RESULTS / "safepub_adult.json").write_text(json.dumps(out, indent=2))
    log.close()


if __name__ == "__main__":
    main()
