"""``anonsql sql``, ``install-macros`` and ``transpile``: the SQL surface."""

from __future__ import annotations

import click

from anonsql.cli.common import _echo_relation, _echo_result, db_option, friendly, open_db


@click.command("sql")
@click.argument("statements", required=False)
@click.option(
    "-f",
    "--file",
    "sql_file",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Read the statements from a file ('-': standard input).",
)
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
@click.option(
    "--allow-files/--no-allow-files",
    default=None,
    help="May anonymization statements name hierarchy files, read here and stored in the "
    "database? Default: yes on DuckDB, no against a server.",
)
@db_option
@friendly
def sql_cmd(
    statements: str | None,
    sql_file: str | None,
    as_json: bool,
    allow_files: bool | None,
    db_path: str,
) -> None:
    """Run SQL: the engine's own statements (DuckDB, PostgreSQL or Spark SQL, as --db says)
    and anonymization statements (ANONYMIZE TABLE ... INTO ... WITH (...), or CREATE VIEW
    ... AS SELECT ... WITH ANONYMIZATION (...)).

    \b
    Examples (on the demo database):
      anonsql sql "SELECT count(*) FROM census_anonymized"
      anonsql sql "ANONYMIZE TABLE census INTO census_k10 WITH (k = 10, qi = (age, sex))"
      echo "SELECT 42" | anonsql sql -f -
    """
    from pathlib import Path

    from anonsql.connection import Connection, split_statements
    from anonsql.errors import InputError

    if bool(statements) == bool(sql_file):
        raise InputError("give the statements or -f FILE (one of them)")
    if statements:
        text = statements
    elif sql_file == "-":
        text = click.get_text_stream("stdin").read()
    else:
        assert sql_file is not None  # one of the two, checked above
        try:
            # bytes, not read_text: universal newlines would turn a \r\n inside a quoted
            # name or string into \n
            text = Path(sql_file).read_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"SQL file {sql_file!r} is not UTF-8 text: {e}") from None
        except OSError as e:
            raise InputError(f"cannot read SQL file {sql_file!r}: {e.strerror or e}") from None
    import duckdb

    con = Connection(open_db(db_path), allow_files=allow_files)
    for sql, anonymization in split_statements(text):
        if anonymization:
            run = con.run_anonymization(sql)
            _echo_result(run.result, as_json, run.qis)
            continue
        try:
            _echo_relation(con.plain(sql), as_json)
        except duckdb.Error as e:  # DuckDB's own message, without a traceback
            raise click.ClickException(str(e)) from None


@click.command("install-macros")
@db_option
@friendly
def install_macros_cmd(db_path: str) -> None:
    """Store anonsql's table macros (anonsql_classes, anonsql_k, anonsql_l, anonsql_t) in the
    database, for connections that do not go through anonsql (a dbt post-hook, a BI tool).

    \b
    Examples:
      anonsql install-macros
      anonsql sql "SELECT * FROM anonsql_k('census_anonymized', ['age', 'sex'])"
    """
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


@click.command()
@click.argument("run_id", type=int, required=False)
@click.option(
    "--dialect",
    "-d",
    required=True,
    help="Target SQL dialect: duckdb, postgres, spark, snowflake, bigquery (or another of "
    "sqlglot's dialects that can express the run).",
)
@click.option("--out", "out_file", type=click.Path(dir_okay=False), help="Write to a file.")
@click.option("--output", help="Instead of RUN_ID: the latest run that wrote this output.")
@db_option
@friendly
def transpile(
    run_id: int | None, dialect: str, out_file: str | None, output: str | None, db_path: str
) -> None:
    """Print the SQL that rebuilds RUN_ID's output (default: the latest run with one) in
    another engine: hierarchy tables, the run's suppressed classes or recodings, the view.
    The target needs the source table under the same name.

    \b
    Example (on the demo database):
      anonsql transpile --output census_anonymized --dialect postgres --out deploy.sql
    """
    from anonsql.cli.runs import list_runs
    from anonsql.errors import InputError
    from anonsql.output.deploy import deployment_script
    from anonsql.output.files import write_text_atomic

    db = open_db(db_path, create=False)
    if output is not None:
        if run_id is not None:
            raise InputError("give RUN_ID or --output, not both")
        runs = list_runs(db, output)
        if not runs:
            raise InputError(f"no run wrote an output named {output!r} in this database")
        run_id = runs[-1]["run_id"]
    script = deployment_script(db, run_id, dialect.lower())
    if out_file:
        write_text_atomic(out_file, script)  # a full disk leaves no half-written script
        click.echo(out_file)
    else:
        click.echo(script, nl=False)
