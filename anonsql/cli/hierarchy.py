"""``anonsql hierarchy ...``: load, build, list, show, validate and drop hierarchies."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from anonsql.cli.common import db_option, friendly, open_db, split_list


@click.group()
def hierarchy() -> None:
    """Store, build, inspect and check generalization hierarchies.

    \b
    Examples:
      anonsql hierarchy load-dir ../shared/data/adult
      anonsql hierarchy list
    """


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
    """Read a hierarchy from FILE and store it as NAME (replacing a stored one).

    \b
    Examples:
      anonsql hierarchy load age ../shared/data/adult/adult_hierarchy_age.csv
      anonsql hierarchy load race race.csv --format parent-child
    """
    from anonsql.hierarchy.loaders import load_file

    h = load_file(name, file, fmt, sep)  # read and checked before the database is opened
    h = open_db(db_path).hierarchies.save(h)
    click.echo(_describe(h))


#: ARX's file names: ``adult_hierarchy_age.csv`` is the hierarchy of column ``age``
ARX_PATTERN = "*_hierarchy_{column}.csv"


def hierarchy_files(directory: str, pattern: str = ARX_PATTERN) -> list[tuple[str, Path]]:
    """(column, file) for every file of ``directory`` whose name matches ``pattern``: a glob
    (``*`` any text) with one ``{column}`` that names the column, e.g. the default
    ``*_hierarchy_{column}.csv`` (ARX's naming) or ``{column}.json``. Sorted by column."""
    import re

    from anonsql.errors import InputError

    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(f"{directory!r} is not a folder")
    if pattern.count("{column}") != 1:
        raise InputError(f"--pattern {pattern!r}: name the column with exactly one {{column}}")
    head, tail = pattern.split("{column}")

    def glob(part: str) -> str:
        return ".*".join(re.escape(p) for p in part.split("*"))

    rx = re.compile(f"^{glob(head)}(?P<column>.+?){glob(tail)}$")
    found: dict[str, Path] = {}
    for f in sorted(folder.iterdir()):
        m = rx.match(f.name)
        if not f.is_file() or m is None:
            continue
        column = m.group("column")
        if column in found:
            raise InputError(
                f"two files for column {column!r} in {directory!r}: {found[column].name} and "
                f"{f.name}; narrow --pattern"
            )
        found[column] = f
    if not found:
        raise InputError(f"no file in {directory!r} matches --pattern {pattern!r}")
    return sorted(found.items())


@hierarchy.command("load-dir")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--pattern",
    default=ARX_PATTERN,
    show_default=True,
    help="File names to load: a glob with {column} where the column name stands; each file "
    "is stored under that name (the QI's default hierarchy).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["arx", "parent-child", "json"]),
    help="Input format of every file (default: json for .json files, else arx).",
)
@click.option("--sep", default=None, help="CSV separator (default: guessed, ';' or ',').")
@db_option
@friendly
def hierarchy_load_dir(
    directory: str, pattern: str, fmt: str | None, sep: str | None, db_path: str
) -> None:
    """Store every hierarchy file of DIRECTORY, named after its column, in one transaction
    (a bad file stores none).

    \b
    Examples:
      anonsql hierarchy load-dir ../shared/data/adult          # adult_hierarchy_age.csv -> age
      anonsql hierarchy load-dir hierarchies/ --pattern '{column}.json'
    """
    from anonsql.hierarchy.loaders import load_file

    # every file is read and checked before the database is opened
    loaded = [
        load_file(column, str(f), fmt, sep) for column, f in hierarchy_files(directory, pattern)
    ]
    db = open_db(db_path)
    with db.backend.transaction():
        saved = [db.hierarchies.save(h) for h in loaded]
    for h in saved:
        click.echo(_describe(h))


def _values_for_builder(values, value_range, table, column) -> list[str] | list[int] | None:
    """The values given on the command line, or None when they come from --table/--column
    (read once the database is open)."""
    from anonsql.errors import InputError

    given = [bool(values), bool(value_range), bool(table)]
    if sum(given) != 1:
        raise InputError("give the values with exactly one of --values, --range, --table/--column")
    if values:
        return split_list(values)
    if value_range:
        from anonsql.hierarchy.builders import value_range as integers

        try:
            lo, hi = (int(x) for x in value_range.split(":"))
        except ValueError:
            raise InputError(f"--range {value_range!r}: use LOW:HIGH, e.g. 0:99") from None
        return integers(lo, hi, "--range")
    if not column:
        raise InputError("--table needs --column")
    return None


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
@click.option(
    "--auto",
    is_flag=True,
    help="Choose the builder from the column's type and values, as a run does for a QI "
    "without hierarchy (needs --table; see the Hierarchies page of the documentation).",
)
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False),
    help="Write the hierarchy to this file in ARX's format (leaf;level 1;...;*) instead of "
    "storing it: a start to edit, then `hierarchy load`.",
)
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
    auto,
    out_file,
    db_path,
) -> None:
    """Build hierarchy NAME with a builder and store it (or, with --out, write it to a file).

    \b
    Examples:
      anonsql hierarchy build age --intervals 5,10,20 --range 0:99
      anonsql hierarchy build zip --mask 1 --table census --column zip
      anonsql hierarchy build income --auto --table census --out income.csv
    """
    from anonsql.errors import InputError
    from anonsql.hierarchy import builders

    if auto:
        if any(v is not None for v in (intervals, mask, dates, groups, values, value_range)):
            raise InputError("--auto chooses the builder: leave out the builder's options")
        if not table:
            raise InputError("--auto reads the column's values: give --table (and --column)")
        from anonsql.hierarchy.auto import build_auto

        db = open_db(db_path, create=False)
        built = build_auto(db, table, column or name)
        built.hierarchy.name = name
        _store_or_write(db, built.hierarchy, out_file)
        click.echo(f"{name}: {built.how}")
        return

    chosen = [
        k
        for k, v in (("intervals", intervals), ("mask", mask), ("dates", dates), ("groups", groups))
        if v is not None  # --mask 0 is given, and wrong: the builder says why
    ]
    if len(chosen) != 1:
        raise InputError("choose exactly one of --intervals, --mask, --dates, --groups")
    kind = chosen[0]
    # the options are checked before the database is opened or the values are read
    if kind == "intervals":
        opts: dict[str, Any] = {
            "widths": _numbers("--intervals", intervals, float),
            "start": start,
            "bottom": bottom,
            "top": top,
        }
    elif kind == "mask":
        if mask < 1:
            raise InputError(f"--mask {mask}: give the characters masked per level, >= 1")
        opts = {"step": mask}
    elif kind == "dates":
        opts = {"levels": split_list(dates)}
    else:
        opts = {"sizes": _numbers("--groups", groups, int)}
    vals = _values_for_builder(values, value_range, table, column)
    db = open_db(db_path)
    if vals is None:
        from anonsql.hierarchy.definitions import column_values

        vals = column_values(db, table, column)
    _store_or_write(db, builders.build(name, kind, vals, **opts), out_file)


def _store_or_write(db, h, out_file: str | None) -> None:
    """Store ``h``, or write it in ARX's format to ``out_file`` (and store nothing)."""
    if out_file:
        from anonsql.output.files import write_text_atomic

        write_text_atomic(out_file, arx_text(h))
        click.echo(f"wrote {out_file} (not stored): {h.height} levels, {len(h.leaf_ids)} leaves")
        return
    db.hierarchies.save(h)
    click.echo(_describe(h))


def arx_text(h) -> str:
    """ARX's hierarchy format: one leaf-to-root path per line, ';'-separated (quoted where a
    label holds ';', a quote or a line break), read back by `hierarchy load`."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=";", lineterminator="\n")
    writer.writerows(h.to_rows())
    return buf.getvalue()


@hierarchy.command("export")
@click.argument("name")
@click.argument("file", type=click.Path(dir_okay=False))
@db_option
@friendly
def hierarchy_export(name: str, file: str, db_path: str) -> None:
    """Write stored hierarchy NAME (an automatic one too) to FILE in ARX's format.

    \b
    Example:
      anonsql hierarchy export zip zip.csv
    """
    from anonsql.output.files import write_text_atomic

    db = open_db(db_path, create=False)
    h = db.hierarchies.load(name)
    write_text_atomic(file, arx_text(h))
    click.echo(f"wrote {file}: {_describe(h)}")


def _numbers(flag: str, text: str, kind: type) -> list[Any]:
    """A comma-separated list of numbers of ``kind`` (float or int), each checked here:
    ``nan``, ``inf`` and zero would otherwise reach the builder's arithmetic."""
    from anonsql.errors import InputError

    out = []
    for part in split_list(text):
        try:
            x = kind(part)
        except ValueError:
            what = "whole numbers" if kind is int else "numbers"
            raise InputError(f"{flag} {text!r}: {part!r} is not a number; give {what}") from None
        if not math.isfinite(x) or x <= 0:
            raise InputError(f"{flag} {text!r}: {part!r} must be a positive number")
        out.append(x)
    if not out:
        raise InputError(f"{flag}: give at least one number")
    return out


def _describe(h) -> str:
    return (
        f"stored hierarchy {h.name!r}: {h.height} levels (0..{h.top_level}), "
        f"{len(h.leaf_ids)} leaves, {h.size} nodes, from {h.source}"
    )


@hierarchy.command("list")
@click.option(
    "--versions", is_flag=True, help="Every stored version, not only each name's current one."
)
@db_option
@friendly
def hierarchy_list(versions: bool, db_path: str) -> None:
    """List the stored hierarchies: name, version, key, size, source, and the outputs that
    read each version (a version an output uses is kept until the output is dropped or
    refreshed).

    \b
    Example:
      anonsql hierarchy list --versions
    """
    cat = open_db(db_path, create=False).hierarchies.catalog(all_versions=versions)
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
    """Print a stored hierarchy, one leaf-to-root path per line.

    \b
    Example:
      anonsql hierarchy show age --limit 5
    """
    h = open_db(db_path, create=False).hierarchies.load(name)
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
    """Check a stored hierarchy's closure table, and optionally a column against it.

    \b
    Example:
      anonsql hierarchy validate zip --table census --column zip
    """
    from anonsql.hierarchy.validate import check_invariants

    db = open_db(db_path, create=False)
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
    """Remove every version of a stored hierarchy; refused while an output reads one.

    \b
    Example:
      anonsql hierarchy drop age_5
    """
    open_db(db_path, create=False).hierarchies.drop(name)
    click.echo(f"dropped hierarchy {name!r}")
