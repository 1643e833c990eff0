"""The ``anonsql`` SQL dialect: DuckDB's, plus two anonymization statements.

* SAP HANA's anonymized views (the one in-database precedent)::

    CREATE [OR REPLACE] VIEW|TABLE out AS SELECT * FROM src
    WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' PARAMETERS '{"k": 5}'
      COLUMN age PARAMETERS '{"is_quasi_identifier": true, "hierarchy": "age"}' ...)

* a short form::

    ANONYMIZE TABLE src INTO out WITH (k = 5, qi = (age, sex), suppression = 0.05)

Everything else is parsed as DuckDB. The statements parse into :class:`Anonymize` and
:class:`AnonymizedCreate` expressions and generate back to the same text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.tokens import TokenType

if TYPE_CHECKING:
    # sqlglot binds DuckDB.Parser and DuckDB.Generator as class attributes, which a type
    # checker reads as variables, not as the classes they name
    from sqlglot.generators.duckdb import DuckDBGenerator as _DuckDBGenerator
    from sqlglot.parsers.duckdb import DuckDBParser as _DuckDBParser
else:
    _DuckDBParser, _DuckDBGenerator = DuckDB.Parser, DuckDB.Generator


class Anonymize(exp.Expression):
    """``ANONYMIZE TABLE this INTO output WITH (options)``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "output": True, "options": False}


class AnonymizationOption(exp.Expression):
    """``name = value`` inside ``WITH (...)``; a value is a literal, a name, or a
    parenthesized list of names or of nested options."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expression": True}


class AnonymizedCreate(exp.Expression):
    """``CREATE ... AS SELECT ... WITH ANONYMIZATION (...)``."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "kind": True,
        "replace": False,
        "expression": True,
        "algorithm": True,
        "parameters": False,
        "columns": False,
    }


class AnonymizationColumn(exp.Expression):
    """``COLUMN name PARAMETERS 'json'``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "parameters": True}


def _word(token, text: str) -> bool:
    return token is not None and token.text.upper() == text


def has_anonymization_clause(tokens, start: int = 0) -> bool:
    """Is there a top-level ``WITH ANONYMIZATION`` in these tokens (one statement's)?"""
    depth = 0
    for i in range(start, len(tokens)):
        kind = tokens[i].token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
        elif (
            kind == TokenType.WITH
            and depth == 0
            and i + 1 < len(tokens)
            and _word(tokens[i + 1], "ANONYMIZATION")
        ):
            return True
    return False


class AnonSQL(DuckDB):
    class Parser(_DuckDBParser):
        def _parse_statement(self) -> exp.Expr | None:
            if _word(self._curr, "ANONYMIZE") and self._curr.token_type == TokenType.VAR:
                return self._parse_anonymize()
            if self._curr and self._curr.token_type == TokenType.CREATE and self._ahead():
                return self._parse_anonymized_create()
            return super()._parse_statement()

        def _ahead(self) -> bool:
            return has_anonymization_clause(self._tokens, self._index)

        def _expect_word(self, text: str) -> None:
            if not _word(self._curr, text):
                self.raise_error(f"Expected {text}")
            self._advance()

        def _parse_anonymize(self) -> Anonymize:
            start = self._curr
            self._advance()
            if not self._match(TokenType.TABLE):
                self.raise_error("Expected TABLE after ANONYMIZE")
            source = self._parse_table_parts()
            if not self._match(TokenType.INTO):
                self.raise_error("Expected INTO <output name>")
            output = self._parse_table_parts()
            options: list[exp.Expression] = []
            if self._match(TokenType.WITH):
                self._match_l_paren()
                options = self._parse_csv(self._parse_anonymization_option)
                self._match_r_paren()
            return self.expression(
                Anonymize(this=source, output=output, options=options), token=start
            )

        def _parse_anonymization_option(self) -> AnonymizationOption:
            token = self._curr
            name = self._parse_id_var(any_token=True)
            if name is None:
                self.raise_error("Expected an option name")
            # raise_error raised: the dialect parses at sqlglot's default, immediate level
            assert name is not None
            if not self._match(TokenType.EQ):
                self.raise_error(f"Expected = after option {name.name!r}")
            value = self._parse_anonymization_value()
            return self.expression(AnonymizationOption(this=name, expression=value), token=token)

        def _parse_anonymization_value(self) -> exp.Expr:
            if self._match(TokenType.L_PAREN):
                items = self._parse_csv(self._parse_anonymization_item)
                self._match_r_paren()
                return exp.Tuple(expressions=items)
            if self._match(TokenType.DASH):
                number = self._parse_primary()
                if not isinstance(number, exp.Literal) or number.is_string:
                    self.raise_error("Expected a number after -")
                return exp.Neg(this=number)
            value = self._parse_primary()
            if value is None:
                value = self._parse_id_var(any_token=True)
            if value is None:
                self.raise_error("Expected a value")
            assert value is not None  # raise_error raised (the immediate level)
            return value

        def _parse_anonymization_item(self) -> exp.Expr:
            if self._next and self._next.token_type == TokenType.EQ:
                return self._parse_anonymization_option()
            return self._parse_anonymization_value()

        def _parse_anonymized_create(self) -> AnonymizedCreate:
            start = self._curr
            self._advance()  # CREATE
            replace = self._match_pair(TokenType.OR, TokenType.REPLACE)
            if not self._match_set((TokenType.VIEW, TokenType.TABLE)):
                self.raise_error("Expected VIEW or TABLE: anonymization creates a view or table")
            kind = self._prev.text.upper()
            this = self._parse_table_parts()
            if not self._match(TokenType.ALIAS):
                self.raise_error("Expected AS SELECT ...")
            select = self._parse_select()
            if not isinstance(select, exp.Select):
                self.raise_error("Expected SELECT ... FROM <table>")
            if not self._match(TokenType.WITH):
                self.raise_error("Expected WITH ANONYMIZATION (...)")
            self._expect_word("ANONYMIZATION")
            self._match_l_paren()
            self._expect_word("ALGORITHM")
            algorithm = self._parse_string()
            if algorithm is None:
                self.raise_error("Expected the algorithm as a string, e.g. 'K-ANONYMITY'")
            parameters = None
            if _word(self._curr, "PARAMETERS"):
                self._advance()
                parameters = self._parse_string()
                if parameters is None:
                    self.raise_error("Expected PARAMETERS as a JSON string")
            columns = []
            while _word(self._curr, "COLUMN"):
                token = self._curr
                self._advance()
                name = self._parse_id_var(any_token=False)
                if name is None:
                    self.raise_error("Expected a column name after COLUMN")
                assert name is not None  # raise_error raised (the immediate level)
                self._expect_word("PARAMETERS")
                params = self._parse_string()
                if params is None:
                    self.raise_error(f"Expected PARAMETERS of column {name.name!r} as JSON")
                columns.append(
                    self.expression(AnonymizationColumn(this=name, parameters=params), token=token)
                )
            self._match_r_paren()
            return self.expression(
                AnonymizedCreate(
                    this=this,
                    kind=kind,
                    replace=replace,
                    expression=select,
                    algorithm=algorithm,
                    parameters=parameters,
                    columns=columns,
                ),
                token=start,
            )

    class Generator(_DuckDBGenerator):
        # custom expressions are dispatched through TRANSFORMS (sqlglot maps *_sql methods
        # only for its own expression classes)
        TRANSFORMS: ClassVar[dict] = {
            **DuckDB.Generator.TRANSFORMS,
            Anonymize: lambda self, e: self.anonymize_sql(e),
            AnonymizationOption: lambda self, e: self.anonymizationoption_sql(e),
            AnonymizedCreate: lambda self, e: self.anonymizedcreate_sql(e),
            AnonymizationColumn: lambda self, e: self.anonymizationcolumn_sql(e),
        }

        def anonymize_sql(self, e: Anonymize) -> str:
            sql = f"ANONYMIZE TABLE {self.sql(e, 'this')} INTO {self.sql(e, 'output')}"
            options = e.args.get("options") or []
            if options:
                sql += f" WITH ({', '.join(self.sql(o) for o in options)})"
            return sql

        def anonymizationoption_sql(self, e: AnonymizationOption) -> str:
            return f"{self.sql(e, 'this')} = {self.sql(e, 'expression')}"

        def anonymizedcreate_sql(self, e: AnonymizedCreate) -> str:
            replace = " OR REPLACE" if e.args.get("replace") else ""
            parts = [f"ALGORITHM {self.sql(e, 'algorithm')}"]
            if e.args.get("parameters") is not None:
                parts.append(f"PARAMETERS {self.sql(e, 'parameters')}")
            parts += [self.sql(c) for c in e.args.get("columns") or []]
            return (
                f"CREATE{replace} {e.args['kind']} {self.sql(e, 'this')} AS "
                f"{self.sql(e, 'expression')} WITH ANONYMIZATION ({' '.join(parts)})"
            )

        def anonymizationcolumn_sql(self, e: AnonymizationColumn) -> str:
            return f"COLUMN {self.sql(e, 'this')} PARAMETERS {self.sql(e, 'parameters')}"


def is_anonymization(statement: Any) -> bool:
    return isinstance(statement, Anonymize | AnonymizedCreate)


__all__ = [
    "AnonSQL",
    "AnonymizationColumn",
    "AnonymizationOption",
    "Anonymize",
    "AnonymizedCreate",
    "has_anonymization_clause",
    "is_anonymization",
]
