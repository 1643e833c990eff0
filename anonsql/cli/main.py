"""``anonsql`` commands. Each is a few lines over the library; heavy modules (duckdb, pandas,
numpy) are imported inside the commands so ``anonsql --help`` starts instantly."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from anonsql import __version__

DB_HELP = "DuckDB database file (':memory:' for a throw-away one)."


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
    db.backend.require_columns(table, [column])
    q = db.backend.quote
    rows = db.backend.fetchall(
        f"SELECT DISTINCT CAST({q(column)} AS VARCHAR) AS v FROM {q(table)} "
        f"WHERE {q(column)} IS NOT NULL ORDER BY 1"
    )
    return [r[0] for r in rows]


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


@cli.command()
@click.option("--rows", default=30_000, show_default=True, help="Rows of the demo table.")
@click.option("--seed", default=7, show_default=True, help="Random seed.")
@db_option
@friendly
def demo(rows: int, seed: int, db_path: str) -> None:
    """Create the seeded census demo table and store its shipped hierarchies."""
    from anonsql.demo.setup import setup_demo

    db = open_db(db_path)
    result = setup_demo(db, rows=rows, seed=seed)
    click.echo(f"created table {result.table!r} with {result.rows} rows in {db_path}")
    cat = db.hierarchies.catalog()
    cat = cat[cat["name"].isin(result.hierarchies)]
    click.echo(cat.drop(columns=["created_at"]).to_string(index=False))


def main() -> None:  # pragma: no cover - console entry
    cli(prog_name="anonsql")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
