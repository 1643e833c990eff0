"""Benchmark of the optimal lattice search (issue: ARX-grade search, materialized in place).

Part 1, Adult (../shared/data/adult, 30,162 rows, 9 QIs, ARX hierarchies), k = 5, Loss:
for suppression limits 0%, 5% and 100%, wall time of the search alone and of search +
materialization (histogram, search, CREATE VIEW), nodes checked, the optimum; beside them,
measured in the same run, one DuckDB GROUP BY over the QIs (the floor) and the exhaustive
search (every node), plus ARX 3.9.2's published times on this machine type.

Part 2, scale: a synthetic table of N rows (default 10 million) with 8 QIs generated in
DuckDB: the floor (one GROUP BY over the QIs) and, in the same process, histogram + search +
materialization (view, then table unless ``--skip-table``), each in wall and CPU time with
its ratio to the floor's, the load average and the peak memory of the process. Run part 2
alone with ``--scale-only``; ``--db FILE`` keeps the generated table for the next run.

Part 3, models not monotone with suppression (issue 13): Adult, 8 QIs (all but occupation),
occupation sensitive, k = 5, 4% suppression, with distinct 2-diversity and with 0.2-closeness
(hierarchical EMD over the occupation hierarchy), metrics Loss and monotone entropy: the
default (exact) search, the search with ``assume_monotone`` and the exhaustive scan side by
side in one process after a warm-up, beside ARX 3.9.2's times from the issue. Run part 3
alone with ``--monotonicity-only``.

Part 4, issue 13's other figures, in the same process: Adult, 8 QIs, k = 5 with each new
privacy model at 0% and 5% suppression (time, nodes checked, optimum;
``benchmarks/bench_models.py``'s two tables, with ``--exhaustive`` the exhaustive scan beside
each), and the 12-QI heuristic search (time, steps, score) against the exhaustive optimum on
the first 6 and 8 QIs (``benchmarks/bench_heuristic.py``'s part 1, 2,000 rows). Run parts 3
and 4 alone with ``--issue13``.

    python benchmarks/bench_lattice.py [--rows 10000000] [--repeat 3] [--skip-scale]
    python benchmarks/bench_lattice.py --scale-only [--rows N] [--skip-table] [--db FILE]
    python benchmarks/bench_lattice.py --monotonicity-only [--repeat 5]
    python benchmarks/bench_lattice.py --issue13 [--repeat 3] [--exhaustive] [--cpu-time]

``--cpu-time`` times parts 3 and 4 by the process's CPU time instead of the wall clock, for a
machine shared with other jobs (the searches run in one thread).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADULT = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]
ARX_REFERENCE = {0.0: ("~36-43 ms", 181), 0.05: ("~0.72 s", 1217), 1.0: ("~2.3-2.5 s", 4749)}


#: the clock of parts 3 and 4: wall time, or with ``--cpu-time`` the process's CPU time (on a
#: machine shared with other jobs; the searches run in one thread)
CLOCK = {"now": time.perf_counter}


def best_of(fn, repeat: int):
    times = []
    out = None
    for _ in range(repeat):
        t = CLOCK["now"]()
        out = fn()
        times.append(CLOCK["now"]() - t)
    return min(times), statistics.median(times), out


def adult(repeat: int) -> None:
    from anonsql.algorithms.lattice.searches import Exhaustive, Flash
    from anonsql.data.histogram import Histogram
    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file
    from anonsql.metrics.quality import quality_model
    from anonsql.models import KAnonymity
    from anonsql.models.requirements import Requirements
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        print(f"Adult skipped: {folder} not found")
        return
    db = Database.open(":memory:")
    import_file(db, "adult", folder / "adult.csv", sep=";")
    for c in ADULT:
        db.hierarchies.save(read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv"))
    cols = ", ".join(db.backend.quote(c) for c in ADULT)
    floor, _, _ = best_of(
        lambda: db.backend.fetchall(
            f"SELECT COUNT(*) FROM (SELECT {cols}, COUNT(*) FROM adult GROUP BY ALL)"
        ),
        repeat,
    )
    hist = Histogram.from_database(db, "adult", ADULT, ADULT)
    print(
        f"Adult: {hist.rows} rows, {len(hist.counts)} distinct QI combinations, "
        f"lattice 12,960; k = 5, metric Loss"
    )
    print(f"floor: one DuckDB GROUP BY over the 9 QIs: {floor * 1000:.1f} ms")
    print()
    header = (
        f"{'suppression':>11} | {'search':>9} | {'search+mat.':>11} | {'checked':>7} | "
        f"{'optimum':<27} | {'suppr.':>6} | {'classes':>7} | ARX 3.9.2 (checked)"
    )
    print(header)
    print("-" * len(header))
    for limit in (0.0, 0.05, 1.0):
        req = Requirements([KAnonymity(5)], limit)
        s_min, _, res = best_of(
            lambda req=req: Flash(frontier=False).run(hist, req, quality_model("loss")), repeat
        )
        spec = Spec(qis=ADULT, k=5, suppression=limit, output="adult_k5")
        t_min, _, full = best_of(lambda spec=spec: anonymize(db, "adult", spec), repeat)
        arx_t, arx_n = ARX_REFERENCE[limit]
        print(
            f"{limit:>11.0%} | {s_min:>7.3f} s | {t_min:>9.3f} s | {res.checked:>7} | "
            f"{list(res.optimum.levels)!s:<27} | {full.measures['suppressed_rows']:>6} | "
            f"{full.measures['classes']:>7} | {arx_t} ({arx_n})"
        )
    t_ex, _, ex = best_of(
        lambda: Exhaustive().run(hist, Requirements([KAnonymity(5)], 1.0), quality_model("loss")),
        1,
    )
    print(
        f"baseline, exhaustive search at 100% (every node): {t_ex:.3f} s, {ex.checked} nodes, "
        f"optimum {list(ex.optimum.levels)}"
    )


# ARX 3.9.2 on this machine type, in one process after a warm-up (issue 13): 8 QIs, k = 5, 4%
ARX_NON_MONOTONE = {"distinct 2-diversity": "0.42 s", "0.2-closeness (hier. EMD)": "0.83 s"}


def monotonicity(repeat: int) -> None:
    """Part 3: exact search against assume_monotone and the exhaustive scan."""
    from anonsql.algorithms.lattice.searches import Exhaustive, Flash
    from anonsql.data.histogram import Histogram
    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file
    from anonsql.metrics.quality import quality_model
    from anonsql.models import DistinctLDiversity, HierarchicalEMD, KAnonymity
    from anonsql.models.requirements import Requirements

    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        print(f"Part 3 skipped: {folder} not found")
        return
    db = Database.open(":memory:")
    import_file(db, "adult", folder / "adult.csv", sep=";")
    for c in ADULT:
        db.hierarchies.save(read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv"))
    qis = [q for q in ADULT if q != "occupation"]
    hist = Histogram.from_database(db, "adult", qis, qis, "occupation")
    occupation = db.hierarchies.load("occupation")
    limit = 0.04
    cases = {
        "distinct 2-diversity": [KAnonymity(5), DistinctLDiversity(2)],
        "0.2-closeness (hier. EMD)": [KAnonymity(5), HierarchicalEMD(0.2, occupation)],
    }
    print(
        f"Adult, {hist.rows} rows, 8 QIs (all but occupation), occupation sensitive, "
        f"lattice 4,320; k = 5, {limit:.0%} suppression; best of {repeat} after a warm-up"
    )
    header = (
        f"{'model':<26} | {'metric':<7} | {'search':<15} | {'time':>8} | {'checked':>7} | "
        f"{'ms/node':>7} | {'optimum':<26} | {'suppr.':>6} | exact? | ARX 3.9.2"
    )
    print(header)
    print("-" * len(header))
    for label, models in cases.items():
        req = Requirements(models, limit, occupation)
        for metric in ("loss", "entropy"):
            runs = {
                "default (exact)": lambda req=req, metric=metric: Flash(frontier=False).run(
                    hist, req, quality_model(metric)
                ),
                "assume_monotone": lambda req=req, metric=metric: Flash(
                    frontier=False, assume_monotone=True
                ).run(hist, req, quality_model(metric)),
                "exhaustive": lambda req=req, metric=metric: Exhaustive().run(
                    hist, req, quality_model(metric)
                ),
            }
            results = {}
            for name, fn in runs.items():
                fn()  # warm-up
                results[name] = best_of(fn, repeat if name != "exhaustive" else 1)
            truth = results["exhaustive"][2].optimum
            for name, (t_min, _, res) in results.items():
                opt = res.optimum
                same = opt is not None and opt.levels == truth.levels
                print(
                    f"{label:<26} | {metric:<7} | {name:<15} | {t_min:>6.3f} s | "
                    f"{res.checked:>7} | {t_min / res.checked * 1000:>7.3f} | "
                    f"{list(opt.levels)!s:<26} | {opt.suppressed_rows:>6} | "
                    f"{'yes' if same else 'NO':<6} | {ARX_NON_MONOTONE[label]}"
                )
    print(
        "ARX 3.9.2 (issue 13): 0.42 s with distinct 2-diversity, 0.83 s with 0.2-closeness "
        "(hierarchical EMD); about 0.2 ms per node"
    )


def issue13(repeat: int, exhaustive: bool) -> None:
    """Part 4: each new model at 0% and 5%, and the 12-QI heuristic against the optimum."""
    from argparse import Namespace

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_heuristic
    import bench_models

    args = Namespace(repeat=repeat, exhaustive=exhaustive)
    bench_models.CLOCK["now"] = CLOCK["now"]

    def timed(fn):
        t = CLOCK["now"]()
        out = fn()
        return CLOCK["now"]() - t, out

    bench_heuristic.timed = timed
    if CLOCK["now"] is time.process_time:
        print("times: CPU time of the process (--cpu-time)")
    print("Part 4a: ARX's further models (benchmarks/bench_models.py)")
    bench_models.further_models(args)
    print()
    print("Part 4b: population models (benchmarks/bench_models.py --population)")
    bench_models.population_models(args)
    print()
    print("Part 4c: the heuristic search (benchmarks/bench_heuristic.py, part 1)")
    bench_heuristic.synthetic(2000, [1000, 5000, 20000])


SCALE_QIS = ["age", "sex", "race", "marital_status", "education", "zip", "country", "occupation"]


def generate(rows: int, path: str) -> None:
    """Write the synthetic table and its hierarchies into a DuckDB file (own process)."""
    from anonsql.database import Database
    from anonsql.demo.census import COUNTRY, EDUCATION, OCCUPATION, RACE
    from anonsql.demo.setup import load_manifest_hierarchies

    db = Database.open(path)

    def u(salt: int) -> str:
        # a uniform number in [0, 1) per row and salt, from DuckDB's hash
        return f"((hash(i * 1000003 + {salt}) % 1000000) / 1000000.0)"

    def pick(values, expr: str) -> str:
        lst = "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"
        return f"list_extract({lst}, 1 + LEAST(CAST(floor({expr}) AS BIGINT), {len(values) - 1}))"

    # census-like dependencies, as in anonsql.demo.census: education on age, marital status
    # on age, occupation on education, zip codes clustered in 40 regions of unequal size
    t = time.perf_counter()
    db.backend.execute(f"""
        CREATE TABLE big AS
        WITH base AS (
          SELECT i,
            17 + CAST(floor(73 * ({u(1)} + {u(2)} + {u(3)}) / 3 * (0.6 + 0.8 * {u(4)})) AS BIGINT)
              AS age,
            {u(5)} AS ue, {u(6)} AS um, {u(7)} AS uz1, {u(8)} AS uz2
          FROM range({rows}) AS r(i)
        )
        SELECT
          LEAST(age, 90) AS age,
          {pick(["female", "male"], f"2 * {u(9)}")} AS sex,
          {pick(RACE, f"6 * pow({u(10)}, 3)")} AS race,
          CASE WHEN age < 25 AND um < 0.9 THEN 'Never married'
               ELSE {
        pick(
            ["Married", "Never married", "Divorced", "Separated", "Widowed", "Civil union"],
            "6 * pow(um, 1.8)",
        )
    } END AS marital_status,
          CASE WHEN age < 23 THEN {pick(EDUCATION[2:7], "5 * ue")}
               ELSE {pick(EDUCATION, "11 * (0.15 + 0.85 * pow(ue, 0.8))")} END AS education,
          CAST(10000 + 1000 * CAST(floor(40 * pow(uz1, 2.5)) AS BIGINT)
               + CAST(floor(12 * pow(uz2, 2)) AS BIGINT) AS VARCHAR) AS zip,
          CASE WHEN {u(11)} < 0.9 THEN 'United States'
               ELSE {pick(COUNTRY[1:], f"21 * {u(12)}")} END AS country,
          CASE WHEN ue > 0.55 THEN {pick(OCCUPATION[:6], f"6 * {u(13)}")}
               ELSE {pick(OCCUPATION[6:], f"9 * {u(13)}")} END AS occupation,
          CASE WHEN {u(14)} < 0.1 + 0.3 * ue THEN '>50K' ELSE '<=50K' END AS income
        FROM base
    """)
    gen_time = time.perf_counter() - t
    load_manifest_hierarchies(db, "census", "big")
    age = db.hierarchies.load("age")  # the demo's age hierarchy covers 17..90
    if set(map(str, range(17, 91))) - set(age.leaf_labels):
        raise SystemExit("age hierarchy does not cover the synthetic ages")
    print(f"generated {rows:,} rows in {gen_time:.1f} s into {path}")
    db.close()


def _timed(fn):
    """``fn()``'s result, wall seconds and CPU seconds of this process (every thread: DuckDB's
    workers and the roll-ups' run inside it)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux


def scale(rows: int, path: str, memory_limit: str, table: bool = True) -> None:
    """The measured run, in its own process so peak memory is this workload's alone. The
    data lives in a DuckDB file; DuckDB's buffer pool is capped at ``memory_limit``.

    The floor is one GROUP BY over the 8 QIs, median of three runs (the first one warms the
    cache); the default run (histogram, search, CREATE VIEW) and, unless ``table`` is off,
    the same with CREATE TABLE follow in the same process. Each is given in wall and in CPU
    time of the process (on a machine shared with other jobs the wall clock waits on them;
    the CPU time counts DuckDB's threads and the roll-ups' as well), against the floor's,
    with the load average before and after."""
    from anonsql.database import Database
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db = Database.open(path)
    db.backend.execute(f"SET memory_limit = '{memory_limit}'")
    cols = ", ".join(SCALE_QIS)
    group_by = f"SELECT COUNT(*) FROM (SELECT {cols}, COUNT(*) FROM big GROUP BY ALL)"
    load_before = _load()
    floors = [_timed(lambda: db.backend.fetchall(group_by)) for _ in range(3)]
    distinct = floors[0][0][0][0]
    floor = statistics.median(f[1] for f in floors)
    floor_cpu = statistics.median(f[2] for f in floors)
    # the output holds the QIs alone (the synthetic income has no role here)
    spec = Spec(qis=SCALE_QIS, k=5, suppression=0.05, output="big_k5", columns=SCALE_QIS)
    r_view, view_time, view_cpu = _timed(lambda: anonymize(db, "big", spec))
    view_peak, load_view = _peak_mib(), _load()
    print(
        f"scale: {rows:,} synthetic rows in a DuckDB file (memory_limit {memory_limit}), 8 QIs, "
        f"{distinct:,} distinct QI combinations, lattice {r_view.lattice_size:,}; "
        f"k = 5, 5% suppression, Loss"
    )
    print(
        f"floor: one DuckDB GROUP BY over the 8 QIs: {floor:.2f} s, CPU {floor_cpu:.2f} s "
        f"(median of 3; load average {load_before} before)"
    )
    print(
        f"histogram + search + CREATE VIEW : {view_time:.2f} s ({view_time / floor:.2f}x the "
        f"floor), CPU {view_cpu:.2f} s ({view_cpu / floor_cpu:.2f}x the floor's CPU); "
        f"histogram {r_view.timings['histogram']:.2f} s, search {r_view.timings['search']:.2f} "
        f"s, view {r_view.timings['materialize']:.2f} s, {r_view.checked} nodes checked; "
        f"peak RSS {view_peak:,.0f} MiB; load average {load_view} after"
    )
    print(
        f"optimum {r_view.levels}, suppressed {r_view.measures['suppressed_rows']:,}, "
        f"classes {r_view.measures['classes']:,}"
    )
    if not table:
        return
    spec_t = Spec(
        qis=SCALE_QIS,
        k=5,
        suppression=0.05,
        output="big_k5_table",
        materialize="table",
        columns=SCALE_QIS,
    )
    r_table, table_time, table_cpu = _timed(lambda: anonymize(db, "big", spec_t))
    print(
        f"histogram + search + CREATE TABLE: {table_time:.2f} s ({table_time / floor:.2f}x), "
        f"CPU {table_cpu:.2f} s ({table_cpu / floor_cpu:.2f}x); materialize "
        f"{r_table.timings['materialize']:.2f} s; peak RSS of the process {_peak_mib():,.0f} "
        f"MiB; load average {_load()} after"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-scale", action="store_true")
    ap.add_argument("--scale-only", action="store_true")
    ap.add_argument("--monotonicity-only", action="store_true", help="part 3 only")
    ap.add_argument("--issue13", action="store_true", help="parts 3 and 4 only")
    ap.add_argument("--exhaustive", action="store_true", help="part 4: the exhaustive scans")
    ap.add_argument("--cpu-time", action="store_true", help="parts 3 and 4: the process's CPU time")
    ap.add_argument("--memory-limit", default="1GB", help="DuckDB buffer pool in the scale run")
    ap.add_argument(
        "--skip-table", action="store_true", help="scale run: the view only (no CREATE TABLE)"
    )
    ap.add_argument(
        "--db",
        help="scale run: the generated DuckDB file, kept for the next run (generated when "
        "missing; e.g. under /tmp, delete it after)",
    )
    ap.add_argument("--generate", help=argparse.SUPPRESS)
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate:
        generate(args.rows, args.generate)
        return
    if args.measure:
        scale(args.rows, args.measure, args.memory_limit, not args.skip_table)
        return
    if args.cpu_time:
        CLOCK["now"] = time.process_time
        print("times: CPU time of the process (--cpu-time)")
    if args.monotonicity_only:
        monotonicity(args.repeat)
        return
    if args.issue13:
        monotonicity(args.repeat)
        print()
        issue13(args.repeat, args.exhaustive)
        return
    if not args.scale_only:
        adult(args.repeat)
        print()
        monotonicity(args.repeat)
        print()
        issue13(args.repeat, args.exhaustive)
        if args.skip_scale:
            return
        print()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or str(Path(tmp) / "scale.duckdb")
        steps = ["--measure"] if args.db and Path(args.db).exists() else ["--generate", "--measure"]
        for step in steps:
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    step,
                    path,
                    "--rows",
                    str(args.rows),
                    "--memory-limit",
                    args.memory_limit,
                    *(["--skip-table"] if args.skip_table else []),
                ],
                check=True,
            )


if __name__ == "__main__":
    main()
