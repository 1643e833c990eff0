"""``anonsql import`` and ``anonsql demo``: getting data in."""

from __future__ import annotations

import click

from anonsql.backend import redact
from anonsql.cli.common import (
    _print_result,
    algorithm_options,
    db_option,
    friendly,
    model_options,
    open_db,
    role_options,
    split_list,
)


@click.command("import")
@click.argument("table")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--sep", default=",", show_default=True, help="CSV field separator.")
@click.option("--replace", is_flag=True, help="Replace the table if it exists.")
@db_option
@friendly
def import_cmd(table: str, file: str, sep: str, replace: bool, db_path: str) -> None:
    """Load a CSV (with a header row) or Parquet FILE into TABLE, in one transaction.

    \b
    Example:
      anonsql import adult ../shared/data/adult/adult.csv --sep ';'
    """
    from anonsql.io import import_file

    n = import_file(open_db(db_path), table, file, sep=sep, replace=replace)
    click.echo(f"imported {n} rows into {table!r}")


#: fewest rows ``anonsql demo`` accepts: on fewer its goal (5-anonymity, 2-diversity of
#: income) often has no solution, and the demo would fail after writing its table
DEMO_MIN_ROWS = 100


def _check_demo_arguments(rows: int, seed: int) -> None:
    """Checked before the database is opened, so a bad argument writes nothing."""
    from anonsql.errors import InputError

    if rows < DEMO_MIN_ROWS:
        raise InputError(f"--rows {rows}: the demo needs at least {DEMO_MIN_ROWS} rows")
    if seed < 0:
        raise InputError(f"--seed {seed}: the seed is a whole number >= 0")


@click.command()
@click.option("--rows", default=30_000, show_default=True, help="Rows of the demo table.")
@click.option("--seed", default=7, show_default=True, help="Random seed.")
@click.option(
    "--replace",
    is_flag=True,
    help="Replace a census table, hierarchies or census_anonymized that the demo did not write.",
)
@db_option
@friendly
def demo(rows: int, seed: int, replace: bool, db_path: str) -> None:
    """Create the seeded census demo table, store its shipped hierarchies, anonymize it
    (5-anonymity and distinct 2-diversity of income, at most 5% suppressed) into the view
    census_anonymized, and show the result. Run again, it replaces what it wrote itself;
    a table or hierarchy of the user's is replaced only with --replace.

    \b
    Examples:
      anonsql demo
      anonsql demo --rows 2000 --seed 1 --db small.duckdb
    """
    from anonsql.demo.setup import DEMO_KEEP, DEMO_OUTPUT, DEMO_QIS, setup_demo
    from anonsql.output.naming import check_may_replace, check_output_name
    from anonsql.run import anonymize as run
    from anonsql.spec import Spec

    _check_demo_arguments(rows, seed)
    db = open_db(db_path)
    spec = Spec(
        qis=DEMO_QIS,
        sensitive="income",
        keep=DEMO_KEEP,
        k=5,
        l=2,
        suppression=0.05,
        output=DEMO_OUTPUT,
        replace=replace,
    )
    # the output is checked before the table is written, so a refusal leaves all as it was
    check_output_name(DEMO_OUTPUT, "census", db.backend)
    check_may_replace(db, DEMO_OUTPUT, replace)
    # one transaction: a failure leaves the table, hierarchies and output as they were
    with db.backend.transaction():
        # the previous output reads census: PostgreSQL refuses to drop a table a view
        # depends on, so the output (anonsql's, or the user's with --replace) goes first
        db.drop_relation(DEMO_OUTPUT)
        result = setup_demo(db, rows=rows, seed=seed, replace=replace)
        res = run(db, result.table, spec)
    click.echo(f"created table {result.table!r} with {result.rows} rows in {redact(db_path)}")
    cat = db.hierarchies.catalog()
    cat = cat[cat["name"].isin(result.hierarchies)]
    click.echo(cat.drop(columns=["created_at"]).to_string(index=False))
    click.echo()
    click.echo(
        f"anonymized {result.table!r}: QIs {', '.join(DEMO_QIS)}; sensitive income; kept as "
        f"they are {', '.join(DEMO_KEEP)}; 5-anonymity, distinct 2-diversity of income, at "
        f"most 5% suppressed, metric loss"
    )
    _print_result(res)
    click.echo()
    from sqlglot import exp

    from anonsql.backend.sql_templates import column, table

    kept = exp.not_(exp.and_(*[column(q).eq(exp.convert("*")) for q in DEMO_QIS]))
    query = exp.select("*").from_(table(DEMO_OUTPUT)).where(kept).limit(8)
    click.echo("first released rows (suppressed rows hold * in every QI):")
    click.echo(db.backend.fetch_df(query).to_string(index=False))


@click.command("export")
@click.argument("relation")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--sep", default=",", show_default=True, help="CSV field separator.")
@db_option
@friendly
def export_cmd(relation: str, file: str, sep: str, db_path: str) -> None:
    """Write RELATION (a table, or an anonymized view as its readers see it) to FILE:
    Parquet for .parquet/.pq, else CSV with a header row. All or nothing.

    \b
    Example (on the demo database):
      anonsql export census_anonymized census_anonymized.csv
    """
    from anonsql.io import export_file

    n = export_file(open_db(db_path, create=False), relation, file, sep=sep)
    click.echo(f"exported {n} rows of {relation!r} to {file}")


def _table_name(file: str) -> str:
    """The file's stem when it is a plain name (so messages name the data as the user
    does), else ``data``."""
    import re
    from pathlib import Path

    stem = Path(file).stem
    ok = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", stem) and not stem.lower().startswith("anonsql")
    return stem if ok else "data"


@click.command("anonymize-file")
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
@click.option("--qi", required=True, help="Quasi-identifiers, comma-separated.")
@click.option(
    "--sa",
    help="Sensitive attribute(s) for l-diversity, t-closeness, beta-likeness and "
    "delta-disclosure, comma-separated: each model applies to each.",
)
@model_options
@click.option(
    "--hierarchies",
    "hierarchy_dir",
    type=click.Path(file_okay=False, exists=True),
    help="Folder of hierarchy files, named as ARX names them (<data>_hierarchy_<column>.csv) "
    "unless --pattern says otherwise.",
)
@click.option(
    "--pattern",
    default="*_hierarchy_{column}.csv",
    show_default=True,
    help="Hierarchy file names in --hierarchies, {column} standing for the column.",
)
@click.option("--out", "out_file", required=True, help="Output file: .csv, or .parquet/.pq.")
@click.option("--sep", default=",", show_default=True, help="Field separator of a CSV FILE.")
@click.option("--out-sep", default=None, help="Field separator of a CSV output (default: --sep).")
@click.option(
    "--suppression",
    type=float,
    default=0.0,
    show_default=True,
    help="Share of records that may be suppressed, in [0, 1].",
)
@click.option("--metric", default=None, help="Quality model, as for anonymize.")
@click.option(
    "--algorithm",
    default="flash",
    show_default=True,
    help="As for anonymize (flash, exhaustive, heuristic, greedy, ..., safepub; "
    "`anonsql algorithms` lists them).",
)
@algorithm_options
@role_options
@click.option("--columns", help="Columns of the output, comma-separated (default: all the file's).")
@click.option(
    "--missing",
    type=click.Choice(["error", "suppress"]),
    default="error",
    show_default=True,
    help="A QI value its hierarchy lacks: an error, or suppress those rows.",
)
@click.option("--drop-suppressed", is_flag=True, help="Leave suppressed rows out of the file.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@friendly
def anonymize_file(
    file,
    qi,
    sa,
    hierarchy_dir,
    pattern,
    out_file,
    sep,
    out_sep,
    suppression,
    metric,
    algorithm,
    columns,
    missing,
    drop_suppressed,
    as_json,
    **goal,
) -> None:
    """Anonymize a CSV or Parquet FILE into --out in one go: the file is loaded into a
    throw-away in-memory database with the hierarchies of --hierarchies, anonymized as
    `anonsql anonymize` would, and the released rows written to --out (suppressed rows
    hold * in every QI unless --drop-suppressed). Nothing is kept but --out.

    \b
    Example (Adult and its ARX hierarchies):
      anonsql anonymize-file ../shared/data/adult/adult.csv --sep ';' \\
          --qi sex,age,race,marital-status,education --k 5 --suppression 0.05 \\
          --hierarchies ../shared/data/adult --out adult_k5.csv
    """
    from anonsql.cli.common import (
        ROLE_PARAMS,
        _echo_result,
        _progress,
        _spec,
        progress_label,
        role_values,
    )
    from anonsql.cli.hierarchy import hierarchy_files
    from anonsql.errors import InputError
    from anonsql.hierarchy.loaders import load_file
    from anonsql.io import check_output_suffix, export_file, file_columns, import_file
    from anonsql.run import anonymize as run

    roles = role_values(**{k: goal.pop(k) for k in ROLE_PARAMS})
    spec = _spec(
        qi,
        sa,
        **goal,
        suppression=suppression,
        metric=metric,
        algorithm=algorithm,
        output="anonymized",
        columns=split_list(columns) or None,
        **roles,
        missing=missing,
        materialize="table",
        drop_suppressed=drop_suppressed,
    )
    # the names are checked against the file's header, and the hierarchy files read and
    # checked, before the data are loaded
    check_output_suffix(out_file)
    from anonsql.spec import sensitive_columns

    header = file_columns(file, sep)
    named = [*spec.qis, *sensitive_columns(spec), *(spec.keep or []),
             *spec.masks, *(spec.identifiers or []), *(spec.columns or []),
             *(spec.allow_identifying or [])]  # fmt: skip
    unknown = [c for c in dict.fromkeys(named) if c not in header]
    if unknown:
        raise InputError(
            f"{file!r} has no column {', '.join(map(repr, unknown))}; its columns are "
            f"{', '.join(map(repr, header))}"
        )
    loaded = (
        [load_file(c, str(f), None, None) for c, f in hierarchy_files(hierarchy_dir, pattern)]
        if hierarchy_dir
        else []
    )
    db = open_db(":memory:")
    try:
        name = _table_name(file)
        import_file(db, name, file, sep=sep)
        for h in loaded:
            db.hierarchies.save(h)
        with _progress(as_json, progress_label(spec.algorithm)) as progress:
            result = run(db, name, spec, progress)
        export_file(db, "anonymized", out_file, sep=out_sep or sep)
    finally:
        db.close()
    _echo_result(result, as_json, spec.qis)
    if not as_json:
        click.echo(f"wrote {out_file}")
