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
    except TokenError as e:
        if "anonymiz" in text.lower():
            raise InputError(f"cannot read the statements: {' '.join(str(e).split())}") from None
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
    if _refresh_target(tokens) is not None:
        return True
    return first.token_type == TokenType.CREATE and has_anonymization_clause(tokens)


def _refresh_target(tokens: list) -> str | None:
    """The output named by ``REFRESH VIEW|TABLE name ANONYMIZATION`` (SAP HANA's statement
    for re-running an anonymized view), else None."""
    from sqlglot.tokens import TokenType

    words = [t.text.upper() for t in tokens]
    if (
        len(tokens) == 4
        and words[0] == "REFRESH"
        and words[1] in ("VIEW", "TABLE")
        and words[3] == "ANONYMIZATION"
        and tokens[2].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
    ):
        return tokens[2].text
    return None


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
    except RecursionError:
        # sqlglot's parser recurses per nested parenthesis
        raise InputError("the anonymization statement is nested too deeply to parse") from None


class Connection:
    """A database connection for SQL users (and the ``anonsql sql`` command).

    ``allow_files``: may anonymization statements name hierarchy files (``{"file": ...}``)?
    Such a file is read here, on the client, and stored in the database. That is what a
    DuckDB user expects (client and database are one process), so None allows it on
    DuckDB; against a server (PostgreSQL, Spark) SQL text that names a client file is
    refused unless the caller allows it, since whoever writes the SQL need not be the one
    whose files they are."""

    def __init__(self, database, allow_files: bool | None = None) -> None:
        self.database = database
        self.allow_files = allow_files

    @property
    def files_allowed(self) -> bool:
        if self.allow_files is not None:
            return self.allow_files
        return self.database.backend.dialect == "duckdb"

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
        from anonsql.dialect.anonsql_dialect import AnonymizedCreate
        from anonsql.dialect.statements import plan

        target = _refresh_target(list(_tokens(sql)))
        if target is not None:
            from anonsql.run import refresh

            return Run(refresh(self.database, target), self.database)

        p = plan(parse_anonymization(sql))
        # before anything is read, checked against the database or stored
        self.check_files(p.options)
        output = p.options.spec.output
        if p.must_not_exist:
            from anonsql.output.naming import existing_relation

            # resolved as the engine resolves it: "ADULT" exists when adult does on DuckDB
            self.database.backend.check_name(output)
            assert output is not None  # check_name refuses a missing name
            existing = existing_relation(self.database.backend, output)
            if existing is not None:
                also = "" if existing == output else f" (as {existing!r})"
                raise InputError(
                    f"{output!r} exists already{also}; use CREATE OR REPLACE to replace it"
                )
        elif isinstance(p.statement, AnonymizedCreate):
            # CREATE OR REPLACE VIEW over a user's table (or TABLE over a user's view): the
            # engines' own statement refuses to replace one kind of relation by the other, and
            # so does this. An output anonsql wrote may change kind (a view becomes a table).
            from anonsql.output.naming import written_by

            backend = self.database.backend
            backend.check_name(output)
            assert output is not None  # check_name refuses a missing name
            kind = backend.relation_kind(output)
            wanted = p.options.spec.materialize
            if kind is not None and kind != wanted and written_by(self.database, output) is None:
                raise InputError(
                    f"{output!r} is a {kind}: CREATE OR REPLACE {wanted.upper()} does not "
                    f"replace a {kind} (as in DuckDB and PostgreSQL); drop it first, or choose "
                    f"another name"
                )
        return Run(run(self.database, p.source, p.options), self.database, p.options.spec.qis)

    def check_files(self, options) -> None:
        """Refuse a statement whose hierarchy definitions name files, unless allowed."""
        files = {qi: d["file"] for qi, d in options.hierarchies.items() if "file" in d}
        if not files or self.files_allowed:
            return
        named = ", ".join(f"{f!r} (for {qi!r})" for qi, f in files.items())
        raise InputError(
            f"the statement names the hierarchy file(s) {named}: files named in SQL are read "
            f"on this client and stored in the {self.database.backend.dialect} database only "
            f"when allowed (anonsql.connect(..., allow_files=True), anonsql sql "
            f"--allow-files); nothing was read or stored"
        )

    def close(self) -> None:
        self.database.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(path: str | Path = ":memory:", allow_files: bool | None = None) -> Connection:
    """Open (or create) a database for SQL with anonymization statements: a DuckDB file,
    a PostgreSQL URL, ``spark:DIR`` or ``sc://host:port`` (see
    :meth:`anonsql.database.Database.open`); an open connection, dbt-duckdb's ``session``
    included, is used as it is. ``allow_files``: may statements name hierarchy files to
    read on this client (default: yes on DuckDB, no against a server; see
    :class:`Connection`)."""
    from anonsql.api import unwrap_connection
    from anonsql.database import Database

    if allow_files is not None and not isinstance(allow_files, bool):
        raise InputError(f"allow_files is True, False or None, not {allow_files!r}")
    source = unwrap_connection(path)
    if isinstance(source, Database):
        return Connection(source, allow_files)  # an open anonsql Database, used as it is
    return Connection(Database.open(source), allow_files)


__all__ = ["Connection", "connect", "parse_anonymization", "split_statements"]
