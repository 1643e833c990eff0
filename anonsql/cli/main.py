"""The ``anonsql`` command line: thin click commands over the library, one module per
command group. Heavy modules (duckdb, pandas, numpy) are imported inside the commands so
``anonsql --help`` starts instantly."""

from __future__ import annotations

import click

from anonsql import __version__
from anonsql.cli import anonymize, budget, data, hierarchy, inspect, runs, sql


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="anonsql")
@click.option(
    "--verbose", is_flag=True, help="Show the engines' own logs (Spark's, quiet by default)."
)
def cli(verbose: bool) -> None:
    """anonsql: anonymization that lives inside the database.

    Start with `anonsql demo`, or `anonsql anonymize-file FILE --qi ... --k 5 --hierarchies
    DIR --out OUT` for a file in and a file out. `anonsql COMMAND --help` shows each
    command's options and an example. The papers behind the methods are listed on
    the documentation's References page.
    """
    if verbose:
        import os

        os.environ["ANONSQL_VERBOSE"] = "1"


for command in (
    data.import_cmd,
    data.export_cmd,
    data.anonymize_file,
    hierarchy.hierarchy,
    inspect.check,
    inspect.profile,
    inspect.algorithms_cmd,
    inspect.metrics,
    anonymize.anonymize,
    sql.sql_cmd,
    anonymize.run_cmd,
    anonymize.status,
    budget.budget,
    runs.runs_cmd,
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
    main()
