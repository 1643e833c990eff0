"""Benchmark of the backends (issue: run where the data lives): the same anonymization on
DuckDB, PostgreSQL and Spark local, side by side, in one run.

For each engine: the engine's own floor (one GROUP BY over the QIs, the least any
histogram-based method must do, measured in the same run), then histogram + search +
materialization (CREATE VIEW), with the histogram / search / materialize split; then the
same run written as a table (CREATE TABLE: every output row computed once), with the time
of that write in parentheses.

* Adult (../shared/data/adult, 30,162 rows, 9 QIs, ARX hierarchies), k = 5, 5% suppression.
* A synthetic table of N rows (default 10 million; benchmarks/bench_lattice.py's generator,
  8 QIs, the demo's hierarchies), k = 5, 5% suppression. The table is generated once in
  DuckDB and copied to the other engines (PostgreSQL: COPY; Spark: a parquet file); loading
  is timed but not part of the comparison.

PostgreSQL is a throw-away cluster from the machine's binaries (fsync off, 256 MB
shared_buffers and work_mem); Spark runs local[*] with 4 GB of driver memory.

    python benchmarks/bench_backends.py [--rows 10000000] [--engines duckdb,postgres,spark]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_lattice import ADULT, SCALE_QIS, generate  # noqa: E402


def _floor(db, table: str, qis: list[str], repeat: int = 3) -> float:
    from sqlglot import exp

    from anonsql.backend.sql_templates import column
    from anonsql.backend.sql_templates import table as tbl

    inner = (
        exp.select(*[column(q) for q in qis]).from_(tbl(table)).group_by(*[column(q) for q in qis])
    )
    query = exp.select(exp.Count(this=exp.Star())).from_(
        exp.alias_(inner.subquery(), "g", table=True)
    )
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        db.backend.fetchall(query)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _open(engine: str, work: Path, pg):
    from anonsql.database import Database

    if engine == "duckdb":
        return Database.open(work / f"duck_{time.monotonic_ns()}.duckdb")
    if engine == "postgres":
        return Database.open(pg.create_database(f"b{time.monotonic_ns()}"))
    from anonsql.backend.spark_backend import local_session

    session = local_session(work / "spark")
    name = f"b{time.monotonic_ns()}"
    session.sql(f"CREATE DATABASE {name}")
    session.catalog.setCurrentDatabase(name)
    return Database.open(session)


def _measure(db, table: str, qis: list[str], label: str, engine: str, rows: list) -> None:
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    floor = _floor(db, table, qis)
    # the outputs hold the QIs alone (the synthetic table's income has no role here)
    spec = Spec(qis=qis, k=5, suppression=0.05, output=f"{table}_k5", replace=True, columns=qis)
    t = time.perf_counter()
    r = anonymize(db, table, spec)
    total = time.perf_counter() - t
    # the whole output written as a table: what reading the view once costs the engine
    spec_t = Spec(
        qis=qis,
        k=5,
        suppression=0.05,
        output=f"{table}_k5t",
        replace=True,
        materialize="table",
        columns=qis,
    )
    t = time.perf_counter()
    as_table = anonymize(db, table, spec_t)
    total_table = time.perf_counter() - t
    rows.append(
        (
            label,
            engine,
            floor,
            total,
            r.timings["histogram"],
            r.timings["search"],
            r.timings["materialize"],
            total_table,
            as_table.timings["materialize"],
            [r.levels[q] for q in qis],
            r.measures["suppressed_rows"],
            r.measures["classes"],
        )
    )
    print(f"  {label} on {engine}: {total:.2f} s (floor {floor:.2f} s)", flush=True)


def adult(engines: list[str], work: Path, pg, rows: list) -> None:
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file

    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        print(f"Adult skipped: {folder} not found")
        return
    for engine in engines:
        db = _open(engine, work, pg)
        import_file(db, "adult", folder / "adult.csv", sep=";")
        for c in ADULT:
            db.hierarchies.save(read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv"))
        _measure(db, "adult", ADULT, "Adult", engine, rows)
        db.close()


def scale(engines: list[str], n: int, work: Path, pg, rows: list) -> None:
    import duckdb

    from anonsql.demo.setup import load_manifest_hierarchies

    source = work / "big.duckdb"
    generate(n, str(source))
    parquet = work / "big.parquet"
    con = duckdb.connect(str(source))
    con.execute(f"COPY big TO '{parquet}' (FORMAT parquet)")
    con.close()
    for engine in engines:
        t = time.perf_counter()
        if engine == "duckdb":
            from anonsql.database import Database

            db = Database.open(source)
        else:
            db = _open(engine, work, pg)
            if engine == "postgres":
                _copy_to_postgres(db, parquet)
            else:
                db.backend.session.sql(
                    f"CREATE TABLE big USING parquet AS SELECT * FROM parquet.`{parquet}`"
                ).collect()
            load_manifest_hierarchies(db, "census", "big")
        print(f"  loaded {n:,} rows into {engine} in {time.perf_counter() - t:.1f} s", flush=True)
        _measure(db, "big", SCALE_QIS, f"synthetic {n / 1e6:g}M", engine, rows)
        db.close()


def _copy_to_postgres(db, parquet: Path) -> None:
    """CREATE TABLE + COPY FROM STDIN, streamed from the parquet file in record batches."""
    import io

    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(parquet)
    cols = [f.name for f in pf.schema_arrow]
    types = {f.name: "BIGINT" if str(f.type).startswith("int") else "TEXT" for f in pf.schema_arrow}
    be = db.backend
    be.execute("CREATE TABLE big (" + ", ".join(f"{be.quote(c)} {types[c]}" for c in cols) + ")")
    with be.con.cursor() as cur, cur.copy("COPY big FROM STDIN WITH (FORMAT csv)") as copy:
        for batch in pf.iter_batches(batch_size=500_000):
            buf = io.BytesIO()
            pacsv.write_csv(batch, buf, pacsv.WriteOptions(include_header=False))
            copy.write(buf.getvalue())
    be.execute("ANALYZE big")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--engines", default="duckdb,postgres,spark")
    ap.add_argument("--skip-scale", action="store_true")
    args = ap.parse_args()
    engines = args.engines.split(",")
    pg = None
    if "postgres" in engines:
        from anonsql.backend import local_postgres

        pg = local_postgres.start()
    rows: list = []
    try:
        with tempfile.TemporaryDirectory(prefix="anonsql-bench-") as tmp:
            work = Path(tmp)
            adult(engines, work, pg, rows)
            if not args.skip_scale:
                scale(engines, args.rows, work, pg, rows)
    finally:
        if pg is not None:
            pg.stop()
    print()
    header = (
        f"{'data':<14} | {'engine':<8} | {'floor':>8} | {'total':>8} | {'x floor':>7} | "
        f"{'histogram':>9} | {'search':>7} | {'view':>6} | {'as table':>17} | "
        "optimum (suppressed, classes)"
    )
    print(header)
    print("-" * len(header))
    for label, engine, floor, total, h, s, m, t_total, t_mat, levels, supp, classes in rows:
        print(
            f"{label:<14} | {engine:<8} | {floor:>6.2f} s | {total:>6.2f} s | "
            f"{total / floor:>6.1f}x | {h:>7.2f} s | {s:>5.2f} s | {m:>4.2f} s | "
            f"{t_total:>6.2f} s ({t_mat:>5.2f} s) | {levels} ({supp:,}, {classes:,})"
        )


if __name__ == "__main__":
    main()
