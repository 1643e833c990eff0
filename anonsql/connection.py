"""``anonsql.connect(path)``: a DuckDB connection whose ``sql()`` also runs anonymization
statements (see :mod:`anonsql.dialect.anonsql_dialect`).

Plain statements are handed to DuckDB as written, never re-generated, so every DuckDB feature
keeps working; only the anonymization statements are parsed by anonsql.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from anonsql.errors import InputError

_UNDERLINE = re.compile(r"\x1b\[4m(.*?)\x1b\[0m", re.S)


def _tokens(text: str):
    from anonsql.dialect.anonsql_dialect import AnonSQL

    return AnonSQL().tokenize(text)


def split_statements(text: str) -> list[tuple[str, bool]]:
    """The statements of ``text`` as (source text, is an anonymization statement)."""
    from sqlglot.errors import TokenError
    from sqlglot.tokens import TokenType

    try:
        tokens = _tokens(text)
    except TokenError:
        if "anonymiz" in text.lower():
            raise
        return [(text, False)]  # DuckDB will report what is wrong with it
    out: list[tuple[str, bool]] = []
    chunk: list = []
    for token in [*tokens, None]:
        if token is None or token.token_type == TokenType.SEMICOLON:
            if chunk:
                sql = text[chunk[0].start : chunk[-1].end + 1]
                out.append((sql, _is_anonymization(chunk)))
            chunk = []
        else:
            chunk.append(token)
    return out


def _is_anonymization(tokens: list) -> bool:
    from sqlglot.tokens import TokenType

    from anonsql.dialect.anonsql_dialect import has_anonymization_clause

    first = tokens[0]
    if first.token_type == TokenType.VAR and first.text.upper() == "ANONYMIZE":
        return True
    return first.token_type == TokenType.CREATE and has_anonymization_clause(tokens)


def parse_anonymization(sql: str):
    """The statement's expression; a syntax error becomes an InputError that marks the
    offending token with >>> <<<."""
    import sqlglot
    from sqlglot.errors import ParseError

    from anonsql.dialect.anonsql_dialect import AnonSQL

    try:
        return sqlglot.parse_one(sql, dialect=AnonSQL)
    except ParseError as e:
        raise InputError(_UNDERLINE.sub(r">>>\1<<<", str(e))) from None


class Connection:
    """A database connection for SQL users (and the ``anonsql sql`` command)."""

    def __init__(self, database) -> None:
        self.database = database

    @property
    def duckdb(self):
        """The underlying DuckDB connection."""
        if self.database.backend.dialect != "duckdb":
            raise InputError("this connection is not a DuckDB database")
        return self.database.backend.con

    def plain(self, sql: str) -> Any:
        """A plain statement, run verbatim in the engine's own dialect: a DuckDB relation on
        DuckDB, a pandas DataFrame (or None) on PostgreSQL and Spark."""
        if self.database.backend.dialect == "duckdb":
            return self.duckdb.sql(sql)
        return self.database.backend.run_user_sql(sql)

    def sql(self, text: str) -> Any:
        """Run one or more statements; returns the last one's result: a DuckDB relation (a
        DataFrame on other engines) for a query, an :class:`anonsql.api.Run` for an
        anonymization statement, else None."""
        result: Any = None
        for sql, anonymization in split_statements(text):
            result = self.run_anonymization(sql) if anonymization else self.plain(sql)
        return result

    def run_anonymization(self, sql: str):
        from anonsql.api import Run, run
        from anonsql.dialect.statements import plan

        p = plan(parse_anonymization(sql))
        output = p.options.spec.output
        if p.must_not_exist and self.database.backend.relation_kind(output):
            raise InputError(f"{output!r} exists already; use CREATE OR REPLACE to replace it")
        return Run(run(self.database, p.source, p.options), self.database)

    def close(self) -> None:
        self.database.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(path: str | Path = ":memory:") -> Connection:
    """Open (or create) a database for SQL with anonymization statements: a DuckDB file,
    a PostgreSQL URL or ``spark:DIR`` (see :meth:`anonsql.database.Database.open`)."""
    from anonsql.database import Database

    return Connection(Database.open(path))


__all__ = ["Connection", "connect", "parse_anonymization", "split_statements"]
