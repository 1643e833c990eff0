"""Benchmark of GAA (issue: greedy class merging): Adult with the eight QIs of seed 000
(30,162 rows, ARX hierarchies), NLLM, strategy S1 - the time of GAA for k = 3, 10 and 100
and of the whole sweep k in {3, 4, 5, 10, 20, 50, 100, 250, 500, 1000, 2000}; beside them,
measured in the same run, the optimal lattice search (Flash, Loss, no suppression) for the
same k as a baseline, and one DuckDB GROUP BY over the QIs as the floor.

    python benchmarks/bench_greedy.py [--sweep]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QIS = [
    "age",
    "sex",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
]
SWEEP = [3, 4, 5, 10, 20, 50, 100, 250, 500, 1000, 2000]


def main() -> None:
    from anonsql.algorithms.greedy.gaa import GreedyModel, gaa
    from anonsql.algorithms.lattice.searches import Flash
    from anonsql.data.histogram import Histogram
    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file
    from anonsql.metrics.quality import quality_model
    from anonsql.models import KAnonymity
    from anonsql.models.requirements import Requirements

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", action="store_true", help="also time the whole sweep")
    args = ap.parse_args()
    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        raise SystemExit(f"Adult not found at {folder}")
    db = Database.open(":memory:")
    import_file(db, "adult", folder / "adult.csv", sep=";")
    for c in QIS:
        db.hierarchies.save(read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv"))
    cols = ", ".join(db.backend.quote(c) for c in QIS)
    t = time.perf_counter()
    db.backend.fetchall(f"SELECT COUNT(*) FROM (SELECT {cols}, COUNT(*) FROM adult GROUP BY ALL)")
    floor = time.perf_counter() - t
    hist = Histogram.from_database(db, "adult", QIS, QIS)
    print(f"Adult: {hist.rows} rows, {len(hist.counts)} distinct QI combinations, 8 QIs")
    print(f"floor: one DuckDB GROUP BY over the QIs: {floor * 1000:.1f} ms\n")
    print("    k |  GAA NLLM S1 | merges | classes | Flash (Loss, 0%) | lattice classes")
    print("-" * 78)
    for k in (3, 10, 100):
        t = time.perf_counter()
        r = gaa(hist, GreedyModel(k), "nllm", "s1")
        g = time.perf_counter() - t
        t = time.perf_counter()
        res = Flash().run(hist, Requirements([KAnonymity(k)], 0.0), quality_model("loss"))
        f = time.perf_counter() - t
        print(
            f"{k:5d} | {g:10.2f} s | {r.merges:6d} | {r.classes:7d} | {f:14.2f} s | "
            f"{res.optimum.classes:7d}"
        )
    if args.sweep:
        t = time.perf_counter()
        for k in SWEEP:
            gaa(hist, GreedyModel(k), "nllm", "s1")
        print(f"\nsweep over k in {SWEEP}: {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
