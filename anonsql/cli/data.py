"""``anonsql import`` and ``anonsql demo``: getting data in."""

from __future__ import annotations

import click

from anonsql.backend import redact
from anonsql.cli.common import _print_result, db_option, friendly, open_db


@click.command("import")
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
    a table or hierarchy of the user's is replaced only with --replace."""
    from anonsql.anonymization import Spec
    from anonsql.anonymization import anonymize as run
    from anonsql.demo.setup import DEMO_OUTPUT, DEMO_QIS, setup_demo
    from anonsql.output.naming import check_may_replace, check_output_name

    _check_demo_arguments(rows, seed)
    db = open_db(db_path)
    spec = Spec(
        qis=DEMO_QIS,
        sensitive="income",
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
        f"anonymized {result.table!r}: QIs {', '.join(DEMO_QIS)}; 5-anonymity, "
        f"distinct 2-diversity of income, at most 5% suppressed, metric loss"
    )
    _print_result(res)
    click.echo()
    from sqlglot import exp

    from anonsql.backend.sql_templates import column, table

    kept = exp.not_(exp.and_(*[column(q).eq(exp.convert("*")) for q in DEMO_QIS]))
    query = exp.select("*").from_(table(DEMO_OUTPUT)).where(kept).limit(8)
    click.echo("first released rows (suppressed rows hold * in every QI):")
    click.echo(db.backend.fetch_df(query).to_string(index=False))
