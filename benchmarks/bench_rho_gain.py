"""Benchmark of rho-Gain (issue 14, seed 002): the passes over the outliers against one plain
lattice run.

Part 1, Adult (../shared/data/adult, 30,162 rows), seed 002's setting: QIs age, education,
marital-status, native-country, race, sex, workclass, sensitive salary-class, k = 5, distinct
2-diversity, suppression 100%, Loss, rho = 2: wall time of each pass (its histogram in the
database + Flash) and of the whole run (with CREATE VIEW), against one plain Flash run, best
of ``--repeat`` after a warm-up, in one process.

Part 2, scale: the synthetic table of ``benchmarks/bench_lattice.py`` (default 10 million
rows, 8 QIs) in a DuckDB file, k = 5, 5% suppression, rho = 2: the total against one DuckDB
GROUP BY over the QIs (the floor), and the time of each pass.

    nice -n 19 python benchmarks/bench_rho_gain.py [--rows 10000000] [--repeat 3]
    nice -n 19 python benchmarks/bench_rho_gain.py --scale-only --rows 1000000
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "experiments"))

QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]


def best(fn, repeat: int):
    fn()  # warm-up
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        r = fn()
        runs.append((time.perf_counter() - t, r))
    return min(runs, key=lambda x: x[0])


def passes_line(r) -> str:
    return ", ".join(
        f"pass {p['pass']} {p['seconds']:.3f} s ({p['input_rows']:,} rows in, "
        f"{p['nodes_checked']} nodes)"
        for p in r.measures["passes"]
    )


def adult(repeat: int) -> None:
    from _common import adult_db

    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db = adult_db()
    # the outputs hold the QIs and the sensitive attribute (occupation has no role here)
    base = dict(
        qis=QIS,
        sensitive="salary-class",
        k=5,
        l=2,
        suppression=1.0,
        columns=[*QIS, "salary-class"],
    )
    t_plain, plain = best(lambda: anonymize(db, "adult", Spec(**base, output="plain")), repeat)
    t_rho, rho = best(
        lambda: anonymize(db, "adult", Spec(**base, algorithm="rho-gain", rho=2, output="rho")),
        repeat,
    )
    print(f"Adult, k = 5, distinct 2-diversity, 100%, Loss (best of {repeat}, after a warm-up):")
    print(
        f"plain Flash + CREATE VIEW: {t_plain:.3f} s (search {plain.timings['search']:.3f} s, "
        f"{plain.checked} nodes)"
    )
    print(
        f"rho-gain rho = 2 + CREATE VIEW: {t_rho:.3f} s ({t_rho / t_plain:.1f}x; "
        f"{passes_line(rho)}; writing {rho.timings['materialize']:.3f} s)"
    )
    db.close()


def scale(rows: int, path: str, memory_limit: str) -> None:
    from bench_lattice import SCALE_QIS

    from anonsql.database import Database
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db = Database.open(path)
    db.backend.execute(f"SET memory_limit = '{memory_limit}'")
    cols = ", ".join(SCALE_QIS)
    floors = []
    for _ in range(3):
        t = time.perf_counter()
        db.backend.fetchall(f"SELECT COUNT(*) FROM (SELECT {cols}, COUNT(*) FROM big GROUP BY ALL)")
        floors.append(time.perf_counter() - t)
    floor = statistics.median(floors)
    # the outputs hold the QIs alone (the synthetic income has no role here)
    base = dict(qis=SCALE_QIS, k=5, suppression=0.05, columns=SCALE_QIS)
    spec = Spec(**base, algorithm="rho-gain", rho=2, output="rho")
    t = time.perf_counter()
    r = anonymize(db, "big", spec)
    total = time.perf_counter() - t
    plain = Spec(**base, output="plain")
    t = time.perf_counter()
    anonymize(db, "big", plain)
    t_plain = time.perf_counter() - t
    print(f"scale: {rows:,} synthetic rows (bench_lattice's table), 8 QIs, k = 5, 5%, rho = 2")
    print(f"floor: one DuckDB GROUP BY over the 8 QIs: {floor:.2f} s (median of 3)")
    print(
        f"rho-gain total (histograms, passes, CREATE VIEW): {total:.2f} s "
        f"({total / floor:.1f}x the floor); plain Flash run: {t_plain:.2f} s"
    )
    t = r.timings
    print(
        f"of which: passes (histograms + searches) {t['search']:.2f} s, union and recoding "
        f"{t['union']:.2f} s, writing the recoding and the view {t['materialize']:.2f} s"
    )
    print(passes_line(r))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of the process (RSS): {peak:,.0f} MiB")
    m = r.measures
    print(
        f"outliers {m['before']['suppressed_rows']:,} -> {m['suppressed_rows']:,}; classes "
        f"{m['before']['classes']:,} -> {m['classes']:,}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-scale", action="store_true")
    ap.add_argument("--scale-only", action="store_true")
    ap.add_argument("--memory-limit", default="1GB")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        scale(args.rows, args.measure, args.memory_limit)
        return
    if not args.scale_only:
        adult(args.repeat)
        if args.skip_scale:
            return
        print()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "scale.duckdb")
        lattice = str(ROOT / "benchmarks" / "bench_lattice.py")
        subprocess.run(
            [sys.executable, lattice, "--generate", path, "--rows", str(args.rows)], check=True
        )
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--measure",
                path,
                "--rows",
                str(args.rows),
                "--memory-limit",
                args.memory_limit,
            ],
            check=True,
        )


if __name__ == "__main__":
    main()
