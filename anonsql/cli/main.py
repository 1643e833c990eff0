"""``anonsql`` commands. Each is a few lines over the library; heavy modules (duckdb, pandas,
numpy) are imported inside the commands so ``anonsql --help`` starts instantly."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from anonsql import __version__

DB_HELP = (
    "Database: a DuckDB file (':memory:' for a throw-away one), a PostgreSQL URL "
    "(postgresql://user:password@host:port/db) or a Spark warehouse (spark:DIR)."
)


def db_option(fn: Callable) -> Callable:
    return click.option(
        "--db",
        "db_path",
        default="anonsql.duckdb",
        show_default=True,
        envvar="ANONSQL_DB",
        help=DB_HELP,
    )(fn)


def friendly(fn: Callable) -> Callable:
    """Turn the library's user errors into a one-line message and exit status 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from anonsql.errors import AnonsqlError

        try:
            return fn(*args, **kwargs)
        except AnonsqlError as e:
            raise click.ClickException(str(e)) from None

    return wrapper


def open_db(path: str):
    from anonsql.database import Database

    return Database.open(path)


def split_list(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="anonsql")
def cli() -> None:
    """anonsql: anonymization that lives inside the database."""


@cli.command("import")
@click.argument("table")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--sep", default=",", show_default=True, help="CSV field separator.")
@click.option("--replace", is_flag=True, help="Replace the table if it exists.")
@db_option
@friendly
def import_cmd(table: str, file: str, sep: str, replace: bool, db_path: str) -> None:
    """Load a CSV (with a header row) or Parquet FILE into TABLE, in one transaction."""
    n = open_db(db_path).import_file(table, file, sep=sep, replace=replace)
    click.echo(f"imported {n} rows into {table!r}")


@cli.group()
def hierarchy() -> None:
    """Store, build, inspect and check generalization hierarchies."""


@hierarchy.command("load")
@click.argument("name")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["arx", "parent-child", "json"]),
    help="Input format (default: json for .json files, else arx).",
)
@click.option("--sep", default=None, help="CSV separator (default: guessed, ';' or ',').")
@db_option
@friendly
def hierarchy_load(name: str, file: str, fmt: str | None, sep: str | None, db_path: str) -> None:
    """Read a hierarchy from FILE and store it as NAME (replacing a stored one)."""
    from anonsql.hierarchy.loaders import load_file

    db = open_db(db_path)
    h = db.hierarchies.save(load_file(name, file, fmt, sep))
    click.echo(_describe(h))


def _values_for_builder(db, values, value_range, table, column) -> list[str] | list[int]:
    from anonsql.errors import InputError

    given = [bool(values), bool(value_range), bool(table)]
    if sum(given) != 1:
        raise InputError("give the values with exactly one of --values, --range, --table/--column")
    if values:
        return split_list(values)
    if value_range:
        try:
            lo, hi = (int(x) for x in value_range.split(":"))
        except ValueError:
            raise InputError(f"--range {value_range!r}: use LOW:HIGH, e.g. 0:99") from None
        return list(range(lo, hi + 1))
    if not column:
        raise InputError("--table needs --column")
    from anonsql.hierarchy.definitions import column_values

    return column_values(db, table, column)


@hierarchy.command("build")
@click.argument("name")
@click.option("--intervals", help="Interval widths per level, e.g. 5,10,20.")
@click.option("--mask", type=int, help="Characters masked per level (zip codes).")
@click.option("--dates", help="Date levels to keep, from month,year,decade.")
@click.option("--groups", help="Group sizes per level for ordered values, e.g. 2,4.")
@click.option("--values", help="Comma-separated values (ordered, for --groups).")
@click.option("--range", "value_range", help="Integer values LOW:HIGH (both included).")
@click.option("--table", help="Take the values from this table ...")
@click.option("--column", help="... and this column.")
@click.option("--start", type=float, help="Interval origin (default: smallest value).")
@click.option("--bottom", type=float, help="Bottom coding: values below become '<BOTTOM'.")
@click.option("--top", type=float, help="Top coding: values from TOP up become '>=TOP'.")
@db_option
@friendly
def hierarchy_build(
    name,
    intervals,
    mask,
    dates,
    groups,
    values,
    value_range,
    table,
    column,
    start,
    bottom,
    top,
    db_path,
) -> None:
    """Build hierarchy NAME with a builder and store it."""
    from anonsql.errors import InputError
    from anonsql.hierarchy import builders

    chosen = [
        k
        for k, v in (("intervals", intervals), ("mask", mask), ("dates", dates), ("groups", groups))
        if v
    ]
    if len(chosen) != 1:
        raise InputError("choose exactly one of --intervals, --mask, --dates, --groups")
    db = open_db(db_path)
    vals = _values_for_builder(db, values, value_range, table, column)
    kind = chosen[0]
    if kind == "intervals":
        opts: dict[str, Any] = {
            "widths": [float(w) for w in split_list(intervals)],
            "start": start,
            "bottom": bottom,
            "top": top,
        }
    elif kind == "mask":
        opts = {"step": mask}
    elif kind == "dates":
        opts = {"levels": split_list(dates)}
    else:
        opts = {"sizes": [int(s) for s in split_list(groups)]}
    h = db.hierarchies.save(builders.build(name, kind, vals, **opts))
    click.echo(_describe(h))


def _describe(h) -> str:
    return (
        f"stored hierarchy {h.name!r}: {h.height} levels (0..{h.top_level}), "
        f"{len(h.leaf_ids)} leaves, {h.size} nodes, from {h.source}"
    )


@hierarchy.command("list")
@db_option
@friendly
def hierarchy_list(db_path: str) -> None:
    """List the stored hierarchies."""
    cat = open_db(db_path).hierarchies.catalog()
    if cat.empty:
        click.echo("no hierarchies stored")
    else:
        click.echo(cat.drop(columns=["created_at"]).to_string(index=False))


@hierarchy.command("show")
@click.argument("name")
@click.option("--limit", default=20, show_default=True, help="Leaves to show (0: all).")
@db_option
@friendly
def hierarchy_show(name: str, limit: int, db_path: str) -> None:
    """Print a stored hierarchy, one leaf-to-root path per line."""
    h = open_db(db_path).hierarchies.load(name)
    click.echo(_describe(h).replace("stored hierarchy", "hierarchy"))
    rows = h.to_rows()
    for row in rows[: limit or None]:
        click.echo("  " + " -> ".join(row))
    if limit and len(rows) > limit:
        click.echo(f"  ... {len(rows) - limit} more leaves")


@hierarchy.command("validate")
@click.argument("name")
@click.option("--table", help="Check that this table's column has only values of the hierarchy.")
@click.option("--column", help="The column to check (default: NAME).")
@db_option
@friendly
def hierarchy_validate(name: str, table: str | None, column: str | None, db_path: str) -> None:
    """Check a stored hierarchy's closure table, and optionally a column against it."""
    from anonsql.hierarchy.validate import check_invariants

    db = open_db(db_path)
    check_invariants(db.hierarchies, name)
    click.echo(f"hierarchy {name!r}: closure table consistent")
    if table:
        col = column or name
        db.hierarchies.check_column(table, col, name)
        click.echo(f"every value of {table}.{col} is a leaf of {name!r}")


@hierarchy.command("drop")
@click.argument("name")
@db_option
@friendly
def hierarchy_drop(name: str, db_path: str) -> None:
    """Remove a stored hierarchy."""
    open_db(db_path).hierarchies.drop(name)
    click.echo(f"dropped hierarchy {name!r}")


def _parse_pairs(values: tuple[str, ...], what: str) -> dict[str, str]:
    from anonsql.errors import InputError

    out: dict[str, str] = {}
    for item in values:
        for part in split_list(item):
            if "=" not in part:
                raise InputError(f"{what} {part!r}: use COLUMN=VALUE")
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def model_options(fn: Callable) -> Callable:
    """The privacy goal, shared by check and anonymize."""
    opts = [
        click.option("--k", type=int, help="k-anonymity: classes of at least k records."),
        click.option(
            "--l", "l_value", type=float, help="l-diversity (distinct unless --l-variant)."
        ),
        click.option(
            "--l-variant",
            type=click.Choice(["distinct-l", "entropy-l", "recursive-cl"]),
            default="distinct-l",
            show_default=True,
        ),
        click.option(
            "--c",
            "c_value",
            type=float,
            default=3.0,
            show_default=True,
            help="c of recursive (c,l)-diversity.",
        ),
        click.option(
            "--t",
            "t_value",
            type=float,
            help="t-closeness (equal-distance EMD unless --t-variant).",
        ),
        click.option(
            "--t-variant",
            default="equal-emd",
            show_default=True,
            type=click.Choice(["equal-emd", "hierarchical-emd", "ordered-emd", "l1"]),
        ),
        click.option(
            "--sa-hierarchy",
            help="Hierarchy of the sensitive attribute "
            "(hierarchical EMD; default: the one named after it).",
        ),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _spec(qi, sa, k, l_value, l_variant, c_value, t_value, t_variant, sa_hierarchy, **extra):
    from anonsql.anonymization import Spec

    return Spec(
        qis=split_list(qi),
        sensitive=sa,
        k=k,
        l=l_value,
        l_variant=l_variant,
        c=c_value,
        t=t_value,
        t_variant=t_variant,
        sensitive_hierarchy=sa_hierarchy,
        **extra,
    )


def _print_evaluation(ev, as_json: bool) -> None:
    import json

    if as_json:
        click.echo(json.dumps(ev.to_dict(), indent=2, default=float))
        return
    click.echo(f"rows {ev.rows}, classes {ev.classes}, suppressed rows {ev.suppressed_rows}")
    for m in ev.models:
        state = "holds" if m.holds else "DOES NOT HOLD"
        click.echo(
            f"  {m.description}: {state} (failing classes {m.failing_classes}, failing rows "
            f"{m.failing_rows}, values {m.min_value:.6g}..{m.max_value:.6g})"
            if m.min_value is not None
            else f"  {m.description}: {state}"
        )
    click.echo("risk:")
    for k, v in ev.risk.items():
        if v is not None:
            click.echo(f"  {k} = {v:.6g}" if isinstance(v, float) else f"  {k} = {v}")
    if ev.loss:
        click.echo("loss:")
        for k, v in ev.loss.items():
            click.echo(f"  {k} = {v:.10g}")


@cli.command()
@click.argument("table")
@click.option("--qi", required=True, help="Quasi-identifiers, comma-separated.")
@click.option("--sa", help="Sensitive attribute.")
@model_options
@click.option("--levels", help="Check a transformation of TABLE instead: QI=LEVEL,...")
@click.option(
    "--suppression",
    type=float,
    default=0.0,
    show_default=True,
    help="With --levels: share of records that may be suppressed.",
)
@click.option("--hierarchy", "hierarchy_pairs", multiple=True, help="QI=NAME (with --levels).")
@click.option("--population", help="With --levels: population table for journalist risk.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@db_option
@friendly
def check(
    table, qi, sa, levels, suppression, hierarchy_pairs, population, as_json, db_path, **goal
) -> None:
    """Check privacy models on TABLE's classes and print risk figures; exit 1 when a
    requested model does not hold."""
    from anonsql.anonymization import build_models
    from anonsql.errors import InputError
    from anonsql.evaluate import check_table, evaluate_levels

    spec = _spec(qi, sa, **goal)
    models = build_models(spec)
    db = open_db(db_path)
    if levels:
        pairs = _parse_pairs((levels,), "--levels")
        missing = [q for q in spec.qis if q not in pairs]
        if missing:
            raise InputError(f"--levels lacks {', '.join(missing)}")
        ev = evaluate_levels(
            db,
            table,
            spec.qis,
            [int(pairs[q]) for q in spec.qis],
            models,
            sa,
            suppression,
            _parse_pairs(hierarchy_pairs, "--hierarchy"),
            population,
            goal["sa_hierarchy"],
        )
    else:
        ev = check_table(db, table, spec.qis, models, sa, goal["sa_hierarchy"])
    _print_evaluation(ev, as_json)
    if not all(m.holds for m in ev.models) or (levels and not ev.anonymous):
        sys.exit(1)


@cli.command()
@click.argument("original")
@click.argument("generalized", required=False)
@click.option("--qi", required=True, help="Quasi-identifiers, comma-separated.")
@click.option("--levels", help="Instead of GENERALIZED: a transformation QI=LEVEL,...")
@click.option("--hierarchy", "hierarchy_pairs", multiple=True, help="QI=NAME.")
@click.option("--json", "as_json", is_flag=True)
@db_option
@friendly
def metrics(original, generalized, qi, levels, hierarchy_pairs, as_json, db_path) -> None:
    """Information loss of GENERALIZED (or of --levels) against ORIGINAL: seed 004's seven
    alterations and quality criteria, ARX's Loss and Precision (and with --levels every ARX
    quality model)."""
    import json

    from anonsql.errors import InputError
    from anonsql.evaluate import evaluate_levels, loss_of_tables
    from anonsql.models import KAnonymity

    qis = split_list(qi)
    hier = _parse_pairs(hierarchy_pairs, "--hierarchy")
    db = open_db(db_path)
    if bool(generalized) == bool(levels):
        raise InputError("give either GENERALIZED or --levels")
    if levels:
        pairs = _parse_pairs((levels,), "--levels")
        ev = evaluate_levels(
            db,
            original,
            qis,
            [int(pairs.get(q, -1)) for q in qis],
            [KAnonymity(1)],
            hierarchies=hier,
        )
        figures = ev.loss
    else:
        figures = loss_of_tables(db, original, generalized, qis, hier)
    if as_json:
        click.echo(json.dumps(figures, indent=2, default=float))
    else:
        for k, v in figures.items():
            click.echo(f"{k} = {v:.10g}")


@cli.command()
@click.argument("table")
@click.option("--qi", required=True, help="Quasi-identifiers, comma-separated.")
@click.option("--sa", help="Sensitive attribute (for l-diversity and t-closeness).")
@model_options
@click.option(
    "--suppression",
    type=float,
    default=0.0,
    show_default=True,
    help="Share of records that may be suppressed, in [0, 1].",
)
@click.option(
    "--metric",
    default=None,
    help="Quality model: loss (default), precision, height, entropy, entropy-nm, aecs, dm, "
    "dm-star, or seed 004's distortion, ncp, total, llm, nllm, wllm, wnllm (with greedy: "
    "one of those seven, default nllm).",
)
@click.option(
    "--algorithm",
    default="flash",
    show_default=True,
    type=click.Choice(["flash", "exhaustive", "greedy"]),
    help="flash/exhaustive: optimal full-domain recoding; greedy: seed 004's GAA.",
)
@click.option(
    "--strategy",
    default="s1",
    show_default=True,
    type=click.Choice(["s1", "s2", "s3", "s4", "s5", "s6", "s7", "ldiv", "tclo"]),
    help="GAA's merging strategy (seed 004 Def. 17; ldiv/tclo: the pure references).",
)
@click.option(
    "--hierarchy",
    "hierarchy_pairs",
    multiple=True,
    help="QI=NAME when a QI's hierarchy is not named after it (repeatable).",
)
@click.option("--out", "output", help="Name of the output view or table.")
@click.option(
    "--materialize", type=click.Choice(["view", "table"]), default="view", show_default=True
)
@click.option("--drop-suppressed", is_flag=True, help="Leave suppressed rows out.")
@click.option(
    "--solution-space",
    is_flag=True,
    help="Also find and score every minimal anonymous transformation.",
)
@click.option("--replace", is_flag=True, help="Replace --out even if anonsql did not create it.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@db_option
@friendly
def anonymize(
    table,
    qi,
    sa,
    suppression,
    metric,
    algorithm,
    strategy,
    hierarchy_pairs,
    output,
    materialize,
    drop_suppressed,
    solution_space,
    replace,
    as_json,
    db_path,
    **goal,
) -> None:
    """Find the optimal generalization of TABLE and materialize it as --out."""
    import json

    from anonsql.anonymization import anonymize as run

    spec = _spec(
        qi,
        sa,
        **goal,
        suppression=suppression,
        metric=metric,
        algorithm=algorithm,
        strategy=strategy,
        hierarchies=_parse_pairs(hierarchy_pairs, "--hierarchy"),
        output=output,
        materialize=materialize,
        drop_suppressed=drop_suppressed,
        solutions=solution_space,
        replace=replace,
    )
    db = open_db(db_path)
    with _progress(as_json) as progress:
        result = run(db, table, spec, progress)
    if as_json:
        click.echo(json.dumps(result.summary(), indent=2, default=float))
    else:
        _print_result(result)


class _progress:
    """A progress bar on stderr for searches that take a while (hidden for --json)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bar = None
        self.start = 0.0

    def __enter__(self):
        import time

        self.start = time.perf_counter()
        return self.update

    def update(self, checked: int, total: int) -> None:
        import time

        if self.quiet or checked % 25:
            return
        if self.bar is None:
            if time.perf_counter() - self.start < 1.0:
                return
            self.bar = click.progressbar(length=total, label="nodes checked", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(checked - self.bar.pos)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _print_result(r) -> None:
    if r.levels:
        click.echo(
            f"transformation ({r.algorithm}, {r.checked} of {r.lattice_size} nodes checked):"
        )
        for q, lv in r.levels.items():
            click.echo(f"  {q}: level {lv}")
    else:
        click.echo(f"multidimensional recoding ({r.algorithm}, {r.checked} class merges)")
    m = r.measures
    click.echo(
        f"classes {m['classes']}, suppressed rows {m['suppressed_rows']} "
        f"({m['suppressed_share']:.2%}), smallest class {m['min_class_size']}"
    )
    click.echo(
        f"risk: prosecutor max {m['prosecutor_max']:.4g}, avg {m['prosecutor_avg']:.4g}; "
        f"marketer {m['marketer']:.4g}"
    )
    click.echo(f"{r.metric} = {r.score:.10g}")
    if r.per_qi:
        click.echo("  per QI: " + ", ".join(f"{q} {v:.4f}" for q, v in r.per_qi.items()))
    if r.output:
        click.echo(
            f"wrote {r.materialize} {r.output!r} (run {r.run_id}) in {r.timings['total']:.3f} s"
        )


@cli.command("sql")
@click.argument("statements", required=False)
@click.option("-f", "--file", "sql_file", type=click.Path(dir_okay=False), help="Read a file.")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
@db_option
@friendly
def sql_cmd(statements: str | None, sql_file: str | None, as_json: bool, db_path: str) -> None:
    """Run SQL: the engine's own statements (DuckDB, PostgreSQL or Spark SQL, as --db says)
    and anonymization statements (ANONYMIZE TABLE ... INTO ... WITH (...), or CREATE VIEW
    ... AS SELECT ... WITH ANONYMIZATION (...))."""
    from pathlib import Path

    from anonsql.connection import Connection, split_statements
    from anonsql.errors import InputError

    if bool(statements) == bool(sql_file):
        raise InputError("give the statements or -f FILE (one of them)")
    text = statements if statements else Path(sql_file).read_text(encoding="utf-8")
    import duckdb

    con = Connection(open_db(db_path))
    for sql, anonymization in split_statements(text):
        if anonymization:
            run = con.run_anonymization(sql)
            _echo_result(run.result, as_json)
            continue
        try:
            _echo_relation(con.plain(sql), as_json)
        except duckdb.Error as e:  # DuckDB's own message, without a traceback
            raise click.ClickException(str(e)) from None


def _echo_relation(relation, as_json: bool) -> None:
    if relation is None:
        return
    frame = relation if hasattr(relation, "to_json") else None
    if as_json:
        frame = frame if frame is not None else relation.df()
        click.echo(frame.to_json(orient="records", date_format="iso"))
        return
    click.echo(frame.to_string(index=False) if frame is not None else str(relation))


def _echo_result(result, as_json: bool) -> None:
    if as_json:
        import json

        click.echo(json.dumps(result.summary(), indent=2, default=float))
    else:
        _print_result(result)


@cli.command("run")
@click.argument("spec_file", type=click.Path(dir_okay=False))
@click.option("--db", "db_path", default=None, envvar="ANONSQL_DB", help=DB_HELP + " "
              "Default: the spec file's 'database', else anonsql.duckdb.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@friendly
def run_cmd(spec_file: str, db_path: str | None, as_json: bool) -> None:
    """Run the anonymization a spec file (TOML or JSON) describes."""
    from anonsql.api import run
    from anonsql.spec_file import load_spec_file

    spec = load_spec_file(spec_file)
    db = open_db(db_path or spec.database or "anonsql.duckdb")
    with _progress(as_json) as progress:
        result = run(db, spec.table, spec.options, spec.path.parent, progress)
    _echo_result(result, as_json)


@cli.command()
@click.argument("run_id", type=int)
@click.option(
    "--kind",
    type=click.Choice(["proportional", "oneclass", "fillparent", "fillchild"]),
    default="proportional",
    show_default=True,
    help="Seed 000's proportional representation, or one of its Table II baselines.",
)
@click.option("--out", "name", help="Name of the view/table (default: <output>_<kind>).")
@click.option(
    "--materialize", type=click.Choice(["view", "table"]), default="view", show_default=True
)
@db_option
@friendly
def represent(run_id: int, kind: str, name: str | None, materialize: str, db_path: str) -> None:
    """Materialize a data-mining encoding of RUN_ID's output: one column <qi>__<node> per
    hierarchy node (seed 000)."""
    from anonsql.output.representation import materialize_representation

    made = materialize_representation(open_db(db_path), run_id, kind, name, materialize)
    click.echo(f"wrote {materialize} {made!r}")


@cli.command()
@click.argument("run_id", type=int)
@click.option("--target", required=True, help="Binary column to predict (not a QI).")
@click.option("--seeds", default=10, show_default=True, help="Training repetitions.")
@click.option("--json", "as_json", is_flag=True)
@db_option
@friendly
def evaluate(run_id: int, target: str, seeds: int, as_json: bool, db_path: str) -> None:
    """Data utility of RUN_ID's output for data mining (seed 000): an MLP trained on the
    original table, AUC-ROC on each encoding of the anonymized table. Needs anonsql[eval]."""
    import json
    from dataclasses import asdict

    from anonsql.utility import evaluate_run

    scores = evaluate_run(open_db(db_path), run_id, target, seeds)
    if as_json:
        click.echo(json.dumps([asdict(s) for s in scores], indent=2))
        return
    for s in sorted(scores, key=lambda s: -s.mean_auc):
        click.echo(f"{s.representation:12s} AUC-ROC {s.mean_auc:.4f} +- {s.std_auc:.4f}")


@cli.command("install-macros")
@db_option
@friendly
def install_macros_cmd(db_path: str) -> None:
    """Store anonsql's table macros (anonsql_classes, anonsql_k, anonsql_l, anonsql_t) in the
    database, for connections that do not go through anonsql (a dbt post-hook, a BI tool)."""
    from anonsql.backend.macros import install_macros
    from anonsql.errors import UnsupportedDialectError

    backend = open_db(db_path).backend
    if backend.dialect != "duckdb":
        raise UnsupportedDialectError(
            f"the table macros are DuckDB macros (COLUMNS lambdas); {backend.dialect} has no "
            f"equivalent, so nothing was installed"
        )
    names = install_macros(backend.con)
    click.echo("installed " + ", ".join(names))


@cli.command()
@click.argument("run_id", type=int)
@click.option("--out", "out_dir", default=".", show_default=True, help="Folder for the files.")
@click.option("--population", help="Population table, for the journalist risk.")
@db_option
@friendly
def report(run_id: int, out_dir: str, population: str | None, db_path: str) -> None:
    """Write RUN_ID's report as JSON and as a self-contained HTML page."""
    from anonsql.output.report import build_report, write_report

    paths = write_report(build_report(open_db(db_path), run_id, population), out_dir)
    for path in paths:
        click.echo(str(path))


@cli.command()
@click.argument("run_id", type=int, required=False)
@click.option(
    "--dialect",
    "-d",
    required=True,
    help="Target SQL dialect: duckdb, postgres, spark, snowflake, bigquery (or another of "
    "sqlglot's dialects that can express the run).",
)
@click.option("--out", "out_file", type=click.Path(dir_okay=False), help="Write to a file.")
@db_option
@friendly
def transpile(run_id: int | None, dialect: str, out_file: str | None, db_path: str) -> None:
    """Print the SQL that rebuilds RUN_ID's output (default: the latest run with one) in
    another engine: hierarchy tables, the run's suppressed classes or recodings, the view."""
    from anonsql.output.deploy import deployment_script

    script = deployment_script(open_db(db_path), run_id, dialect.lower())
    if out_file:
        with open(out_file, "w", encoding="utf-8") as f:
            f.write(script)
        click.echo(out_file)
    else:
        click.echo(script, nl=False)


@cli.command()
@click.option("--rows", default=30_000, show_default=True, help="Rows of the demo table.")
@click.option("--seed", default=7, show_default=True, help="Random seed.")
@db_option
@friendly
def demo(rows: int, seed: int, db_path: str) -> None:
    """Create the seeded census demo table, store its shipped hierarchies, anonymize it
    (5-anonymity and distinct 2-diversity of income, at most 5% suppressed) into the view
    census_anonymized, and show the result."""
    from anonsql.anonymization import Spec
    from anonsql.anonymization import anonymize as run
    from anonsql.demo.setup import DEMO_QIS, setup_demo

    db = open_db(db_path)
    result = setup_demo(db, rows=rows, seed=seed)
    click.echo(f"created table {result.table!r} with {result.rows} rows in {db_path}")
    cat = db.hierarchies.catalog()
    cat = cat[cat["name"].isin(result.hierarchies)]
    click.echo(cat.drop(columns=["created_at"]).to_string(index=False))
    click.echo()
    spec = Spec(
        qis=DEMO_QIS, sensitive="income", k=5, l=2, suppression=0.05, output="census_anonymized"
    )
    click.echo(
        f"anonymizing {result.table!r}: QIs {', '.join(DEMO_QIS)}; 5-anonymity, "
        f"distinct 2-diversity of income, at most 5% suppressed, metric loss"
    )
    res = run(db, result.table, spec)
    _print_result(res)
    click.echo()
    from sqlglot import exp

    from anonsql.backend.sql_templates import column, table

    kept = exp.not_(exp.and_(*[column(q).eq(exp.convert("*")) for q in DEMO_QIS]))
    query = exp.select("*").from_(table("census_anonymized")).where(kept).limit(8)
    click.echo("first released rows (suppressed rows hold * in every QI):")
    click.echo(db.backend.fetch_df(query).to_string(index=False))


def main() -> None:  # pragma: no cover - console entry
    cli(prog_name="anonsql")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
