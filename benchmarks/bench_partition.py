"""Benchmark of Mondrian-l and TA_DA (issue 15): Bank (45,211 rows, ../shared/data) and a
synthetic table of --rows rows, one run each with its time per phase - the histogram (one
GROUP BY in DuckDB, read into numpy), phase 1 (TA_DA's tree or clustering), Mondrian, and
materialization (recodings table, guarded view, provenance) - beside one DuckDB GROUP BY over
the QIs as the floor. k = 10, l = 2 (distinct).

    nice -n 19 python benchmarks/bench_partition.py [--rows 1000000] [--cluster]

TA_DA's clustering (--cluster) runs constrained k-means over n / (2k) clusters, a min-cost
flow with n^2 / 2k arcs (10^8 on Bank at k = 10): it did not finish in minutes on Bank here;
the experiments run it per data controller on a few thousand rows.

The peer, on Bank in the same run: anonypy (``pip install anonsql[bench]``; skipped when it
is not installed), a Python Mondrian on the rows of a pandas DataFrame, with the same QIs, k
and (distinct) l. Beside each run: its partitions and their normalized certainty penalty
(NCP, the score anonsql reports: per row and QI the partition's range over the table's -
numbers by value, categorical values by distinct values minus one - averaged), computed for
anonypy's partitions here with the same definition.
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


K, L = 10, 2


def measure(db, table: str, qis: list[str], sensitive: str, label: str, runs: list[dict]):
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    cols = ", ".join(f'"{q}"' for q in qis)
    t0 = time.perf_counter()
    db.backend.fetchall(f"SELECT COUNT(*) FROM (SELECT {cols}, COUNT(*) FROM {table} GROUP BY ALL)")
    floor = time.perf_counter() - t0
    print(f"{table}: one GROUP BY over the QIs {floor:.3f} s")
    # each run's output holds the QIs and the sensitive attribute alone (the other columns,
    # the label of the Mondrian runs among them, have no role)
    released = [*qis, sensitive]
    for extra in runs:
        spec = Spec(
            qis=qis,
            sensitive=sensitive,
            k=K,
            l=L,
            output=f"{table}_out",
            columns=released,
            **extra,
        )
        r = anonymize(db, table, spec)
        t = r.timings
        print(
            f"  {r.algorithm:24s} histogram {t['histogram']:.3f} s, phase 1 {t['grouping']:.3f}"
            f" s, Mondrian {t['mondrian']:.3f} s, recoding {t['release']:.3f} s, measures "
            f"{t['measures']:.3f} s, materialize {t['materialize']:.3f} s, total "
            f"{t['total']:.3f} s; {r.measures['classes']} classes, "
            f"{r.measures['partitions']} partitions, NCP {r.measures['ncp']:.4f}"
        )


def ncp(frame: pd.DataFrame, qis: list[str], parts: list) -> float:
    """The normalized certainty penalty of row partitions, as anonsql's ``measures``
    computes it: per partition and QI its range over the table's (numbers: max - min;
    other values: distinct values - 1), weighted by rows, averaged over rows and QIs."""
    numeric = {q: pd.api.types.is_numeric_dtype(frame[q]) for q in qis}

    def width(values: pd.Series, q: str) -> float:
        if numeric[q]:
            return float(values.max() - values.min())
        return float(values.nunique() - 1)

    spans = {q: width(frame[q], q) for q in qis}
    pen = 0.0
    for idx in parts:
        block = frame.loc[idx]
        for q in qis:
            if spans[q] > 0:
                pen += len(block) * width(block[q], q) / spans[q]
    return pen / (len(frame) * len(qis))


def anonypy_peer(frame: pd.DataFrame, qis: list[str], sensitive: str) -> None:
    """anonypy's Mondrian with the same QIs, k and distinct l, on the rows in pandas."""
    try:
        from anonypy import mondrian as anonypy_mondrian
        from anonypy.anonypy import anonymize as anonypy_anonymize
    except ImportError:
        print("  anonypy: not installed (pip install anonsql[bench]): peer skipped")
        return
    df = frame.copy()
    for c in [*qis, sensitive]:
        if not pd.api.types.is_numeric_dtype(df[c]):
            df[c] = df[c].astype("category")  # anonypy's mark of a categorical column
    t0 = time.perf_counter()
    model = anonypy_mondrian.Mondrian(df, qis, sensitive)
    parts = model.partition(k=K, l=L)
    t_part = time.perf_counter() - t0
    t1 = time.perf_counter()
    anonypy_anonymize(df, parts, qis, sensitive)  # its release: one row per class and value
    t_release = time.perf_counter() - t1
    sizes = [len(p) for p in parts]
    diverse = min(df.loc[p, sensitive].nunique() for p in parts)
    print(
        f"  {'anonypy (peer)':24s} partitioning {t_part:.3f} s, release {t_release:.3f} s, "
        f"total {t_part + t_release:.3f} s; {len(parts)} partitions (smallest {min(sizes)} "
        f"rows, {diverse} sensitive values at least), NCP {ncp(frame, qis, parts):.4f}"
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
        frame = pd.read_csv(bank, sep=";")
        db.backend.write_frame("bank", frame)
        extra = [{"algorithm": "tada", "cluster": True, "label": "y"}] if args.cluster else []
        qis = ["age", "job", "marital", "education"]
        measure(db, "bank", qis, "default", "y", runs + extra)
        anonypy_peer(frame, qis, "default")
    else:
        print(f"Bank not found at {bank}: skipped")
    db.backend.write_frame("synthetic", synthetic(args.rows))
    measure(db, "synthetic", ["age", "zip", "sex", "job"], "disease", "y", runs)


if __name__ == "__main__":
    main()
