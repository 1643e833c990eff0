"""``anonsql import`` and ``anonsql demo``: getting data in."""

from __future__ import annotations

import click

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


@click.command()
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
