"""The ``anonsql`` command line: thin click commands over the library, one module per
command group. Heavy modules (duckdb, pandas, numpy) are imported inside the commands so
``anonsql --help`` starts instantly."""

from __future__ import annotations

import sys

import click

from anonsql import __version__
from anonsql.cli import anonymize, data, hierarchy, inspect, sql


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="anonsql")
def cli() -> None:
    """anonsql: anonymization that lives inside the database."""


for command in (
    data.import_cmd,
    hierarchy.hierarchy,
    inspect.check,
    inspect.metrics,
    anonymize.anonymize,
    sql.sql_cmd,
    anonymize.run_cmd,
    anonymize.status,
    anonymize.refresh,
    inspect.represent,
    inspect.evaluate,
    sql.install_macros_cmd,
    inspect.report,
    sql.transpile,
    data.demo,
):
    cli.add_command(command)


def main() -> None:  # pragma: no cover - console entry
    cli(prog_name="anonsql")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
