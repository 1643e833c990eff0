"""A differentially private release (SafePub) against a k-anonymity release of the same
data on the same engine, in one run (issue 32).

Both release Adult's nine QIs with ARX's hierarchies into a table: SafePub with epsilon 1,
delta 1e-5 (search 10%, 100 steps, OS randomness), and Flash's optimal k-anonymous
generalization for the same k (the one SafePub derives), Loss, suppression limit 100%.
``--scale N`` replicates Adult N times first (N = 332 gives 10 M rows): the sample is drawn
by the engine and the candidates scored there, so the cost grows with the rows, not
the process's memory.

    python benchmarks/bench_dp.py [--scale 1] [--steps 100] [--engine duckdb]

Figures (time of each release, its Loss and released share) are printed as a table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from anonsql.database import Database  # noqa: E402
from anonsql.hierarchy.loaders import read_arx_csv  # noqa: E402
from anonsql.io import import_file  # noqa: E402
from anonsql.run import anonymize  # noqa: E402
from anonsql.spec import Spec  # noqa: E402

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "occupation", "salary-class"]  # fmt: skip
DATA = ROOT.parent / "shared" / "data" / "adult"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=int, default=1, help="replicate Adult this many times")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--db", default=":memory:", help="a DuckDB file, postgresql://..., spark:DIR")
    args = ap.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"Adult not found at {DATA} (../shared is absent)")
    db = Database.open(args.db)
    import_file(db, "adult_base", DATA / "adult.csv", sep=";")
    for c in QIS:
        db.hierarchies.save(read_arx_csv(c, DATA / f"adult_hierarchy_{c}.csv"))
    quoted = ", ".join(f'"{c}"' for c in QIS)
    copies = "" if args.scale == 1 else f", range({args.scale}) AS r(i)"  # DuckDB's range
    db.backend.execute(f"CREATE TABLE adult AS SELECT {quoted} FROM adult_base{copies}")
    n = int(db.backend.fetchall("SELECT COUNT(*) FROM adult")[0][0])
    load_before = os.getloadavg()
    t, c = time.perf_counter(), time.process_time()
    dp = anonymize(db, "adult", Spec(
        qis=QIS, columns=QIS, algorithm="safepub", dp_epsilon=args.epsilon, dp_delta=1e-5,
        dp_steps=args.steps, output="adult_dp", materialize="table",
    ))  # fmt: skip
    t_dp, c_dp = time.perf_counter() - t, time.process_time() - c
    k = dp.measures["dp"]["k"]
    t, c = time.perf_counter(), time.process_time()
    ka = anonymize(db, "adult", Spec(
        qis=QIS, columns=QIS, k=k, suppression=1.0, metric="loss", output="adult_k",
        materialize="table",
    ))  # fmt: skip
    t_k, c_k = time.perf_counter() - t, time.process_time() - c
    dp_out = int(db.backend.fetchall("SELECT COUNT(*) FROM adult_dp")[0][0])
    k_out = ka.measures["rows"] - ka.measures["suppressed_rows"]  # '*' rows are suppressed
    print(f"Adult x{args.scale}: {n:,} rows, 9 QIs, engine {db.backend.dialect}, k = {k}")
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print(f"{'release':<34} {'wall s':>8} {'CPU s':>8} {'Loss':>8} {'released':>9}  levels")
    print(
        f"{'SafePub eps ' + str(args.epsilon) + ', delta 1e-5':<34} {t_dp:>8.1f} {c_dp:>8.1f} "
        f"{dp.measures['loss']:>8.4f} {dp_out / n:>9.3f}  {list(dp.levels.values())}"
    )
    print(
        f"{'k-anonymity (Flash, k = ' + str(k) + ')':<34} {t_k:>8.1f} {c_k:>8.1f} "
        f"{ka.score:>8.4f} {k_out / n:>9.3f}  {list(ka.levels.values())}"
    )
    print(f"SafePub / k-anonymity: {t_dp / t_k:.1f}x wall, {c_dp / c_k:.1f}x CPU")
    print(f"  SafePub phases: { {p: round(v, 2) for p, v in dp.timings.items()} }")
    db.close()


if __name__ == "__main__":
    main()
