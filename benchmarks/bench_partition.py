"""Benchmark of Mondrian-l and TA_DA (issue 15): Bank (45,211 rows, ../shared/data) and a
synthetic table of --rows rows, one run each with its time per phase - the histogram (one
GROUP BY in DuckDB, read into numpy), phase 1 (TA_DA's tree or clustering), Mondrian, and
materialization (recodings table, guarded view, provenance) - beside one DuckDB GROUP BY over
the QIs as the floor. k = 10, l = 2.

    nice -n 19 python benchmarks/bench_partition.py [--rows 1000000] [--cluster]

TA_DA's clustering (--cluster) runs constrained k-means over n / (2k) clusters, a min-cost
flow with n^2 / 2k arcs (10^8 on Bank at k = 10): it did not finish in minutes on Bank here;
the experiments run it per data controller on a few thousand rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(17, 91, n)
    return pd.DataFrame(
        {
            "age": age,
            "zip": rng.integers(10000, 10999, n),
            "sex": rng.choice(["f", "m"], n),
            "job": rng.choice([f"job{i}" for i in range(12)], n),
            "disease": rng.choice([f"d{i}" for i in range(6)], n),
            "y": np.where(rng.random(n) < 0.3 + 0.004 * (age - 17), "yes", "no"),
        }
    )


def measure(db, table: str, qis: list[str], sensitive: str, label: str, runs: list[dict]):
    from anonsql.anonymization import Spec, anonymize

    cols = ", ".join(f'"{q}"' for q in qis)
    t0 = time.perf_counter()
    db.backend.fetchall(f"SELECT COUNT(*) FROM (SELECT {cols}, COUNT(*) FROM {table} GROUP BY ALL)")
    floor = time.perf_counter() - t0
    print(f"{table}: one GROUP BY over the QIs {floor:.3f} s")
    for extra in runs:
        spec = Spec(qis=qis, sensitive=sensitive, k=10, l=2, output=f"{table}_out", **extra)
        r = anonymize(db, table, spec)
        t = r.timings
        print(
            f"  {r.algorithm:24s} histogram {t['histogram']:.3f} s, phase 1 {t['grouping']:.3f}"
            f" s, Mondrian {t['mondrian']:.3f} s, recoding {t['release']:.3f} s, measures "
            f"{t['measures']:.3f} s, materialize {t['materialize']:.3f} s, total "
            f"{t['total']:.3f} s; {r.measures['classes']} classes"
        )


def main() -> None:
    from anonsql.database import Database

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cluster", action="store_true", help="also TA_DA clustering on Bank")
    args = ap.parse_args()
    runs = [{"algorithm": "mondrian"}, {"algorithm": "tada", "label": "y"}]
    db = Database.open(":memory:")
    bank = ROOT.parent / "shared" / "data" / "bank" / "bank-full.csv"
    if bank.exists():
        db.backend.write_frame("bank", pd.read_csv(bank, sep=";"))
        extra = [{"algorithm": "tada", "cluster": True, "label": "y"}] if args.cluster else []
        measure(db, "bank", ["age", "job", "marital", "education"], "default", "y", runs + extra)
    else:
        print(f"Bank not found at {bank}: skipped")
    db.backend.write_frame("synthetic", synthetic(args.rows))
    measure(db, "synthetic", ["age", "zip", "sex", "job"], "disease", "y", runs)


if __name__ == "__main__":
    main()
