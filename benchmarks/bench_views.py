"""Benchmark of reading self-guarding views (issue 12): what a read of an anonymized view costs
against the same reads of its source and one GROUP BY over the source's QIs.

Every view anonsql writes re-applies the run's transformation and privacy models at read time
(anonsql/output/guard.py). For each data set and engine this script publishes two views with
``anonymize`` (k = 5 alone; k = 5 with distinct 2-diversity, whose guard also groups by the
sensitive value and runs the model's SQL per class), then measures, after one warm-up run,
the best of N runs of:

1. a full scan of the source,
2. ``count(*)`` of the source,
3. one GROUP BY over the view's QIs on the source (the histogram any method must build),
4. a full scan of the view,
5. ``count(*)`` of the view,

and prints the ratio view scan / GROUP BY against the issue's target (at most 3x), by the
wall clock (best of N) and by CPU time (the mean over the N runs: on DuckDB the process's CPU,
DuckDB's threads included; on PostgreSQL the server's, every backend and parallel worker of
the cluster, read from /proc). The reads of one view are interleaved (GROUP BY, view scan,
view count, GROUP BY, ...), so a change of the machine's load hits all of them alike; the load
average (``os.getloadavg``, 1 minute) is printed beside every row.

How a full scan is forced: a scan is the aggregate ``SELECT COUNT(*), SUM(LENGTH(CAST(c AS
VARCHAR))), ... FROM rel`` over every column ``c`` of the relation, run inside the engine. It
reads every value of every row (each column feeds an aggregate, so no column is pruned, and a
sum of lengths cannot be answered from statistics), while no row leaves the engine, so the
figure is the engine's work and not the client's transfer. The same aggregate reads the source
and the view. ``count(*)`` is what it says: an engine may skip work the count does not need
(DuckDB drops the join to the guard's verdicts, which is unique on its keys).

Data sets:

* Adult (../shared/data/adult, 30,162 rows, ARX hierarchies), QIs all columns but
  occupation (8), occupation sensitive, 5% suppression;
* the synthetic table of benchmarks/bench_lattice.py (default 10 million rows, the demo's
  hierarchies): the k view over its 8 QIs (as bench_backends.py), the 2-diverse view over the
  7 QIs but occupation, occupation sensitive; 5% suppression.

Engines: DuckDB for both; PostgreSQL (a throw-away cluster, as bench_backends.py) at Adult
size, and for the synthetic table with ``--pg-rows N`` (a table of N rows generated and copied
by COPY; 0, the default, skips it: at 10 million rows the PostgreSQL part alone takes about
7 minutes on 2 cores with ``--repeat-scale 1``). The data are fixed: Adult's file, and the
synthetic rows drawn from DuckDB's hash of the row number (no random state).

    python benchmarks/bench_views.py [--rows 10000000] [--repeat 10] [--repeat-scale 3]
        [--engines duckdb,postgres] [--pg-rows 0] [--skip-scale]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlglot import exp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_lattice import ADULT, SCALE_QIS, generate  # noqa: E402

from anonsql.backend.sql_templates import column, table  # noqa: E402
from anonsql.io import import_file  # noqa: E402

TARGET = 3.0
K = 5
L = 2
SUPPRESSION = 0.05


@dataclass
class Row:
    """One view's figures (seconds): wall (best of N) and CPU (mean of N)."""

    data: str
    engine: str
    view: str
    rows: int
    src_scan: float
    src_count: float
    group_by: float
    view_scan: float
    view_count: float
    suppressed: int
    classes: int
    group_by_cpu: float
    view_scan_cpu: float
    load: float

    @property
    def ratio(self) -> float:
        return self.view_scan / self.group_by

    @property
    def cpu_ratio(self) -> float:
        return self.view_scan_cpu / self.group_by_cpu if self.group_by_cpu else float("nan")


def scan_query(relation: str, columns: list[str]) -> exp.Select:
    """Every value of every row read inside the engine (see the module docstring)."""
    sums = [exp.Sum(this=exp.Length(this=exp.cast(column(c), "VARCHAR"))) for c in columns]
    return exp.select(exp.Count(this=exp.Star()), *sums).from_(table(relation))


def count_query(relation: str) -> exp.Select:
    return exp.select(exp.Count(this=exp.Star())).from_(table(relation))


def group_by_query(relation: str, qis: list[str]) -> exp.Select:
    """One GROUP BY over the QIs with each group's size, its groups counted."""
    keys = [column(q) for q in qis]
    inner = (
        exp.select(*keys, exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(table(relation))
        .group_by(*[k.copy() for k in keys])
    )
    return exp.select(exp.Count(this=exp.Star())).from_(
        exp.alias_(inner.subquery(), "g", table=True)
    )


def server_cpu(pg) -> Callable[[], float]:
    """The PostgreSQL cluster's CPU seconds so far: the postmaster's own and its reaped
    children's (a parallel worker's time counts there once it exits), plus its live children
    (the backends), from /proc; clock ticks of 10 ms, so a figure is a mean over repeats."""
    import os

    pid = int((pg.directory / "data" / "postmaster.pid").read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")

    def stat(p: str) -> list[str]:
        with open(f"/proc/{p}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()

    def read() -> float:
        own = stat(str(pid))
        total = sum(int(x) for x in own[11:15])  # utime, stime, cutime, cstime
        for p in os.listdir("/proc"):
            if p.isdigit() and p != str(pid):
                try:
                    f = stat(p)
                except OSError:
                    continue  # exited meanwhile: its time is in the postmaster's cutime
                if int(f[1]) == pid:
                    total += int(f[11]) + int(f[12])
        return total / tick

    return read


def interleaved(
    fns: dict[str, Callable[[], Any]], repeat: int, cpu: Callable[[], float]
) -> dict[str, tuple[float, float, Any]]:
    """One warm-up run of each, then ``repeat`` rounds running each once in turn; per name
    the best wall time, the mean CPU time and the last result."""
    out = {name: fn() for name, fn in fns.items()}
    walls: dict[str, list[float]] = {name: [] for name in fns}
    cpus: dict[str, float] = dict.fromkeys(fns, 0.0)
    for _ in range(repeat):
        for name, fn in fns.items():
            c, t = cpu(), time.perf_counter()
            out[name] = fn()
            walls[name].append(time.perf_counter() - t)
            cpus[name] += cpu() - c
    return {name: (min(walls[name]), cpus[name] / repeat, out[name]) for name in fns}


def measure(
    db,
    data: str,
    engine: str,
    source: str,
    views: list[tuple[str, Any]],
    repeat: int,
    cpu: Callable[[], float],
) -> list[Row]:
    """Publish each ``(label, Spec)`` view of ``source`` and time the five reads."""
    from anonsql.run import anonymize

    be = db.backend
    columns = be.columns(source)
    base = interleaved(
        {
            "scan": lambda: be.fetchall(scan_query(source, columns)),
            "count": lambda: be.fetchall(count_query(source)),
        },
        repeat,
        cpu,
    )
    rows = int(base["count"][2][0][0])
    assert int(base["scan"][2][0][0]) == rows
    out = []
    for label, spec in views:
        t = time.perf_counter()
        result = anonymize(db, source, spec)
        print(
            f"  {data} on {engine}, {label}: anonymize {time.perf_counter() - t:.1f} s, "
            f"levels {list(result.levels.values())}",
            flush=True,
        )
        group_by = group_by_query(source, list(spec.qis))
        view_cols = be.columns(spec.output)
        got = interleaved(
            {
                "group_by": lambda q=group_by: be.fetchall(q),
                "view_scan": lambda o=spec.output, c=view_cols: be.fetchall(scan_query(o, c)),
                "view_count": lambda o=spec.output: be.fetchall(count_query(o)),
            },
            repeat,
            cpu,
        )
        assert int(got["view_scan"][2][0][0]) == int(got["view_count"][2][0][0]) == rows
        row = Row(
            data,
            engine,
            label,
            rows,
            base["scan"][0],
            base["count"][0],
            got["group_by"][0],
            got["view_scan"][0],
            got["view_count"][0],
            int(result.measures["suppressed_rows"]),
            int(result.measures["classes"]),
            got["group_by"][1],
            got["view_scan"][1],
            os.getloadavg()[0],
        )
        print(
            f"    GROUP BY {row.group_by:.3f} s, view scan {row.view_scan:.3f} s "
            f"({row.ratio:.2f}x wall, {row.cpu_ratio:.2f}x CPU), view count(*) "
            f"{row.view_count:.3f} s; load {row.load:.2f}",
            flush=True,
        )
        out.append(row)
    return out


def specs(
    prefix: str, columns: list[str], qis: list[str], l_qis: list[str], sensitive: str
) -> list[tuple[str, Any]]:
    """The two views of a source with ``columns``; each one keeps the columns that are no QI
    or sensitive attribute of it as they are, so that a view scan reads every column of the
    source, as the source scan does."""
    from anonsql.spec import Spec

    def others(*named: str) -> list[str]:
        return [c for c in columns if c not in named]

    return [
        (
            f"k={K}",
            Spec(
                qis=qis,
                k=K,
                suppression=SUPPRESSION,
                output=f"{prefix}_k",
                replace=True,
                keep=others(*qis),
            ),
        ),
        (
            f"k={K}, distinct {L}-div.",
            Spec(
                qis=l_qis,
                sensitive=sensitive,
                k=K,
                l=L,
                l_variant="distinct-l",
                suppression=SUPPRESSION,
                output=f"{prefix}_kl",
                replace=True,
                keep=others(*l_qis, sensitive),
            ),
        ),
    ]


def cpu_clock(engine: str, pg) -> Callable[[], float]:
    return time.process_time if engine == "duckdb" else server_cpu(pg)


def open_db(engine: str, work: Path, pg):
    from anonsql.database import Database

    if engine == "duckdb":
        return Database.open(work / f"duck_{time.monotonic_ns()}.duckdb")
    return Database.open(pg.create_database(f"b{time.monotonic_ns()}"))


def adult(engines: list[str], work: Path, pg, repeat: int) -> list[Row]:
    from anonsql.hierarchy.loaders import read_arx_csv

    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        print(f"Adult skipped: {folder} not found")
        return []
    qis = [q for q in ADULT if q != "occupation"]
    out = []
    for engine in engines:
        db = open_db(engine, work, pg)
        import_file(db, "adult", folder / "adult.csv", sep=";")
        for c in ADULT:
            db.hierarchies.save(read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv"))
        views = specs("adult", db.backend.columns("adult"), qis, qis, "occupation")
        out += measure(db, "Adult", engine, "adult", views, repeat, cpu_clock(engine, pg))
        db.close()
    return out


def synthetic(engines: list[str], n: int, pg_rows: int, work: Path, pg, repeat: int) -> list[Row]:
    from anonsql.database import Database
    from anonsql.demo.setup import load_manifest_hierarchies

    l_qis = [q for q in SCALE_QIS if q != "occupation"]
    out = []
    if "duckdb" in engines:
        path = work / "big.duckdb"
        generate(n, str(path))
        db = Database.open(path)
        label = f"synthetic {n / 1e6:g}M"
        views = specs("big", db.backend.columns("big"), SCALE_QIS, l_qis, "occupation")
        out += measure(db, label, "duckdb", "big", views, repeat, time.process_time)
        db.close()
    if "postgres" in engines and pg_rows > 0:
        from bench_backends import _copy_to_postgres

        path = work / f"pg_{pg_rows}.duckdb"
        generate(pg_rows, str(path))
        parquet = work / f"pg_{pg_rows}.parquet"
        db = Database.open(path)
        db.backend.con.table("big").write_parquet(str(parquet))  # DuckDB's relational API
        db.close()
        t = time.perf_counter()
        db = open_db("postgres", work, pg)
        _copy_to_postgres(db, parquet)
        load_manifest_hierarchies(db, "census", "big")
        print(f"  loaded {pg_rows:,} rows into postgres in {time.perf_counter() - t:.1f} s")
        label = f"synthetic {pg_rows / 1e6:g}M"
        views = specs("big", db.backend.columns("big"), SCALE_QIS, l_qis, "occupation")
        out += measure(db, label, "postgres", "big", views, repeat, server_cpu(pg))
        db.close()
    return out


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms" if seconds < 1 else f"{seconds:9.2f} s"


def report(rows: list[Row]) -> None:
    header = (
        f"{'data':<14} | {'engine':<8} | {'view':<22} | {'src scan':>11} | {'src count':>11} | "
        f"{'GROUP BY':>11} | {'view scan':>11} | {'view count':>11} | "
        f"{'scan/GROUP BY':>13} | {'GROUP BY CPU':>12} | {'view CPU':>11} | "
        f"{'CPU ratio':>9} | {'<= 3x':<5} | {'load':>5} | suppressed, classes"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        met = "yes" if max(r.ratio, r.cpu_ratio) <= TARGET else "no"
        print(
            f"{r.data:<14} | {r.engine:<8} | {r.view:<22} | {fmt(r.src_scan)} | "
            f"{fmt(r.src_count)} | {fmt(r.group_by)} | {fmt(r.view_scan)} | "
            f"{fmt(r.view_count)} | {r.ratio:>12.2f}x | {fmt(r.group_by_cpu):>12} | "
            f"{fmt(r.view_scan_cpu)} | {r.cpu_ratio:>8.2f}x | {met:<5} | {r.load:>5.2f} | "
            f"{r.suppressed:,}, {r.classes:,}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000, help="synthetic rows (DuckDB)")
    ap.add_argument("--repeat", type=int, default=10, help="timed runs per read on Adult")
    ap.add_argument("--repeat-scale", type=int, default=3, help="timed runs on the large table")
    ap.add_argument("--engines", default="duckdb,postgres")
    ap.add_argument("--pg-rows", type=int, default=0, help="synthetic rows on PostgreSQL")
    ap.add_argument("--skip-scale", action="store_true")
    args = ap.parse_args()
    engines = args.engines.split(",")
    pg = None
    if "postgres" in engines:
        from anonsql.backend import local_postgres

        pg = local_postgres.start()
    rows: list[Row] = []
    started = time.perf_counter()
    load_before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        with tempfile.TemporaryDirectory(prefix="anonsql-bench-views-") as tmp:
            work = Path(tmp)
            rows += adult(engines, work, pg, args.repeat)
            if not args.skip_scale:
                rows += synthetic(engines, args.rows, args.pg_rows, work, pg, args.repeat_scale)
    finally:
        if pg is not None:
            pg.stop()
    print()
    print(
        f"best of {args.repeat} (Adult) / {args.repeat_scale} (synthetic) after a warm-up; "
        f"k = {K}, {SUPPRESSION:.0%} suppression; whole run {time.perf_counter() - started:.0f} s"
    )
    load_after = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) before: {load_before}; after: {load_after}")
    report(rows)


if __name__ == "__main__":
    main()
