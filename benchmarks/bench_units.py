"""Benchmark of privacy units (docs/models/units.md, issue 28).

One DuckDB file, generated here: ``persons`` (N people, default 1 million, with the census-like
quasi-identifiers of ``benchmarks/bench_lattice.py``'s generator) and ``visits`` (each person
repeated 1 to 20 times by a hash of their id, about 10.5 rows per person). Measured in one
process, interleaved, each the median of ``--repeat`` runs, by wall clock and by the process's
CPU time (DuckDB's threads included), with the load average:

* the floor: one GROUP BY over the quasi-identifiers of ``visits``;
* ``--unit pid`` over ``visits``: k = 5 people, 5% of the people suppressed at most, Loss
  (histogram of one row per person, search, CREATE VIEW of the self-guarding output);
* the same search over ``persons`` (one row per person), the speed of the plain search;
* the row-counting run over ``visits`` (no unit): what the same k means counted in rows;
* ``--unit pid`` over ``visits_moved``, where one person in five moved half-way (their later
  visits have another zip code): units of several QI tuples, counted per class by the search.

    python benchmarks/bench_units.py [--persons 1000000] [--qis age,sex,zip] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def build(path: str, persons: int) -> None:
    from bench_lattice import generate

    from anonsql.database import Database

    generate(persons, path)  # table big: one row per person, with the census hierarchies
    db = Database.open(path)
    be = db.backend
    be.execute("ALTER TABLE big RENAME TO persons_raw")
    be.execute(
        "CREATE TABLE persons AS SELECT 'p' || CAST(row_number() OVER () AS VARCHAR) AS pid, * "
        "FROM persons_raw"
    )
    be.execute("DROP TABLE persons_raw")
    # 1 to 20 visits per person, from a hash of the person's id (fixed, no RNG state)
    be.execute(
        "CREATE TABLE visits AS SELECT p.*, v.i AS visit_no FROM persons AS p, "
        "range(20) AS v(i) WHERE v.i <= hash(p.pid) % 20"
    )
    # one person in five moved half-way: their later visits carry the zip code of the person
    # numbered after them (their QI tuples vary; docs/models/units.md)
    be.execute(
        "CREATE TABLE visits_moved AS SELECT v.pid, v.age, v.sex, CASE WHEN hash(v.pid) % 5 = 0 "
        "AND v.visit_no >= hash(v.pid) % 20 / 2 THEN COALESCE(n.zip, v.zip) ELSE v.zip END AS "
        "zip, v.visit_no FROM visits AS v LEFT JOIN persons AS n ON n.pid = 'p' || CAST("
        "CAST(substr(v.pid, 2) AS BIGINT) + 1 AS VARCHAR)"
    )
    rows, units = be.fetchall("SELECT COUNT(*), COUNT(DISTINCT pid) FROM visits")[0]
    print(f"visits: {rows:,} rows of {units:,} persons ({rows / units:.2f} rows per person)")
    db.close()


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--persons", type=int, default=1_000_000)
    ap.add_argument("--qis", default="age,sex,zip")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--db", help="reuse a DuckDB file built by an earlier run")
    args = ap.parse_args()
    from anonsql.database import Database
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    path = args.db or str(Path(tempfile.mkdtemp()) / "units.duckdb")
    if not args.db or not Path(path).exists():
        build(path, args.persons)
    qis = args.qis.split(",")
    db = Database.open(path)
    be = db.backend
    cols = ", ".join(qis)

    def floor():
        q = f"SELECT COUNT(*) FROM (SELECT {cols}, COUNT(*) FROM visits GROUP BY ALL)"
        return be.fetchall(q)

    def run(source: str, unit: str | None, out: str):
        keep = [c for c in be.columns(source) if c not in qis and c != "pid"]
        allow = None
        if unit is None:
            # kept here only to count the people in each class of a row-counting release
            keep, allow = [*keep, "pid"], ["pid"]
        spec = Spec(qis=qis, k=5, suppression=0.05, unit=unit, output=out, replace=True,
                    keep=keep, allow_identifying=allow)  # fmt: skip
        return anonymize(db, source, spec)

    cases = {
        "floor: GROUP BY over the QIs of visits": floor,
        "visits, --unit pid (search + view)": lambda: run("visits", "pid", "v_units"),
        "persons, one row per person (search + view)": lambda: run("persons", None, "p_rows"),
        "visits, counted in rows (search + view)": lambda: run("visits", None, "v_rows"),
        "visits, 20% moved, --unit pid (search + view)": lambda: run(
            "visits_moved", "pid", "m_units"
        ),
    }
    times: dict[str, list[tuple[float, float]]] = {c: [] for c in cases}
    results = {}
    for _ in range(args.repeat):  # interleaved: the machine's load weighs on every case alike
        for name, fn in cases.items():
            out, w, c = timed(fn)
            times[name].append((w, c))
            results[name] = out
    load = os.getloadavg()[0]
    base = times["floor: GROUP BY over the QIs of visits"]
    base_w, base_c = statistics.median(w for w, _ in base), statistics.median(c for _, c in base)
    print(f"QIs {qis}, k = 5, suppression 5%, Loss; median of {args.repeat}; load {load:.2f}")
    print(f"{'case':48} {'wall s':>8} {'x floor':>8} {'CPU s':>8} {'x floor':>8}")
    for name in cases:
        w = statistics.median(x for x, _ in times[name])
        c = statistics.median(y for _, y in times[name])
        print(f"{name:48} {w:8.2f} {w / base_w:8.1f} {c:8.2f} {c / base_c:8.1f}")
    for name in list(cases)[1:]:
        r = results[name]
        m = r.measures
        what = f"{m['units']:,} units" if m.get("unit") else f"{m['rows']:,} rows"
        if m.get("unit_records"):
            what += f" ({m['unit_records']:,} distinct unit records)"
        print(
            f"{name}: levels {r.levels}, {what}, {m['classes']:,} classes, "
            f"suppressed {m['suppressed_rows']:,}, smallest class {m['min_class_size']}"
        )
    # what k = 5 rows means in people: released classes of the row-counting run with fewer
    # than 5 distinct persons
    starred = " AND ".join(f"{q} = '*'" for q in qis)
    few = be.fetchall(
        f"SELECT COUNT(*), COALESCE(SUM(n), 0) FROM (SELECT {cols}, COUNT(DISTINCT pid) AS p, "
        f"COUNT(*) AS n FROM v_rows WHERE NOT ({starred}) GROUP BY ALL) WHERE p < 5"
    )[0]
    print(
        f"the row-counting release: {few[0]:,} released classes hold fewer than 5 persons "
        f"({few[1]:,} rows); the unit release: none (its guard counts persons)"
    )
    db.close()


if __name__ == "__main__":
    main()
