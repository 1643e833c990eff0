"""Automatic hierarchies against ARX's hand-made ones on Adult (README "Automatic
hierarchies", issue 31).

Adult (``../shared/data/adult``, 30,162 rows), the nine QIs of ARX's examples, k = 5, at 0%
and 5% suppression: the optimal release with ARX's hierarchies and with the hierarchies anonsql
builds from the columns alone. Each run's own Loss depends on its hierarchies, so the
releases are compared on what they tell about the data whatever the hierarchies: the
non-uniform entropy lost (bits per record, -log2 P(original | released), the quality model
``entropy``), the number of classes, the average class size and the suppressed records.

    python benchmarks/bench_auto_hierarchies.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADULT = ROOT.parent / "shared" / "data" / "adult"
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "occupation", "salary-class"]  # fmt: skip


def main() -> None:
    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    if not ADULT.exists():
        raise SystemExit(f"{ADULT} is absent (../shared/data)")
    rows = []
    for hand in (True, False):
        db = Database.open(":memory:")
        import_file(db, "adult", ADULT / "adult.csv", sep=";")
        if hand:
            for c in QIS:
                db.hierarchies.save(read_arx_csv(c, ADULT / f"adult_hierarchy_{c}.csv"))
        for limit in (0.0, 0.05):
            for metric in ("entropy", "loss"):
                spec = Spec(qis=QIS, k=5, suppression=limit, metric=metric)
                r = anonymize(db, "adult", spec)
                m = r.measures
                rows.append((
                    "ARX's" if hand else "automatic", limit, metric, r.score, m["classes"],
                    m["rows"] / max(m["classes"], 1), m["suppressed_rows"], r.levels,
                ))  # fmt: skip
        if not hand:
            built = anonymize(db, "adult", Spec(qis=QIS, k=5)).measures.get("hierarchies_built")
            print("automatic hierarchies:")
            for q, how in (built or {}).items():
                print(f"  {q}: {how}")
        db.close()
    print(f"{'hierarchies':11} {'limit':>5} {'metric':8} {'score':>14} {'classes':>8} "
          f"{'avg size':>9} {'suppr.':>7}  levels")  # fmt: skip
    for h, lim, metric, score, cls, avg, supp, lv in rows:
        levels = ",".join(str(v) for v in lv.values())
        print(f"{h:11} {lim:5.0%} {metric:8} {score:14.6f} {cls:8d} {avg:9.1f} {supp:7d}  {levels}")
    n = 30162
    for lim in (0.0, 0.05):
        a = next(r for r in rows if r[0] == "ARX's" and r[1] == lim and r[2] == "entropy")
        b = next(r for r in rows if r[0] == "automatic" and r[1] == lim and r[2] == "entropy")
        print(
            f"{lim:.0%}: entropy lost {a[3] / n:.3f} bits per record with ARX's hierarchies, "
            f"{b[3] / n:.3f} with the automatic ones ({b[3] / a[3]:.2f}x)"
        )


if __name__ == "__main__":
    main()
