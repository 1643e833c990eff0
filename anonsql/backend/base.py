"""What every backend offers. Library code talks to this interface only, so a second engine
(PostgreSQL, Spark) is one more subclass, not a rewrite."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, UnsupportedError

from anonsql.backend import caches
from anonsql.backend.sql_templates import drop, ident, table, template
from anonsql.errors import AnonsqlError, BackendError, InputError, UnsupportedDialectError

if TYPE_CHECKING:
    import pandas as pd

E = TypeVar("E", bound=exp.Expression)


#: the mark of a statement whose caller does not use its tree again (:func:`handed_over`)
_HANDED_OVER = "anonsql_handed_over"


def handed_over(statement: E) -> E:
    """Mark ``statement`` as never used again by its caller: DuckDB's SQL text is then
    generated from the tree itself, without the defensive copy sqlglot makes first (most of
    the generation's cost for a large statement such as a guarded view). Other dialects keep
    the copy (their backends may generate a statement more than once)."""
    statement.meta[_HANDED_OVER] = True
    return statement


def generate(statement: exp.Expr, dialect: str) -> str:
    """``statement`` as SQL text of ``dialect``; a construct the dialect cannot express is an
    error raised before anything runs (sqlglot would otherwise emit a best guess)."""
    from anonsql.backend.dialects import check_constructs

    if dialect != "duckdb":
        check_constructs(statement, dialect)
    # a handed-over tree is generated once, as it is (the mark is taken off first)
    copy = not (
        dialect == "duckdb" and statement._meta and statement._meta.pop(_HANDED_OVER, False)
    )
    try:
        return statement.sql(dialect=dialect, unsupported_level=ErrorLevel.RAISE, copy=copy)
    except UnsupportedError as e:
        raise UnsupportedDialectError(
            f"the {dialect} dialect cannot express this statement: {e}"
        ) from None


class Rendered(str):
    """SQL text generated for one dialect (:func:`static`): the backend of that dialect runs
    it as it is; any other backend refuses it."""

    dialect: str

    def __new__(cls, text: str, dialect: str) -> Rendered:
        out = super().__new__(cls, text)
        out.dialect = dialect
        return out


@cache
def _static(name: str, dialect: str) -> Rendered:
    # a template with placeholders raises KeyError in template(): they would need values
    return Rendered(generate(template(name, dialect), dialect), dialect)


def static(name: str, /, dialect: str = "duckdb") -> exp.Expr | Rendered:
    """Template ``name``, which has no placeholder, as SQL text of ``dialect``: generated once
    per process. The statements every connection or run makes of anonsql's own tables (its
    ``CREATE TABLE IF NOT EXISTS``, the next run's id) cost one template fill and one SQL
    generation each otherwise, about a millisecond, every time."""
    if not caches.ENABLED:
        return template(name, dialect)
    return _static(name, dialect)


class Backend(ABC):
    """Runs SQL built by the rest of anonsql on one database connection."""

    #: sqlglot dialect the backend's SQL is written in.
    dialect: str = "duckdb"
    #: ``CREATE OR REPLACE`` replaces any view or table by one of the same kind
    create_or_replace: bool = True
    #: closure tables are derived by the recursive query (else written from Python)
    recursive_closure: bool = True

    #: seconds a writer waits for another one (``--wait``; 0: fail at once, naming it)
    wait_seconds: float = 0.0

    #: no other process can write the database while this connection is open (DuckDB locks
    #: its file), so what anonsql read of its own tables stays true until anonsql writes
    #: them: the hierarchy store then keeps its lookups (anonsql.backend.caches)
    sole_writer: bool = False

    def __init__(self) -> None:
        self._tx_depth = 0
        #: anonsql schemas known to exist on this connection ("provenance", "hierarchy");
        #: forgotten on rollback, which may have undone their CREATE TABLE
        self.schemas_ready: set[str] = set()

    # -- running SQL ---------------------------------------------------------------------
    def sql_text(self, statement: exp.Expr | str) -> str:
        """SQL text for this engine. Expressions are generated for the backend's dialect;
        strings are library SQL written in DuckDB's dialect (with ``?`` parameters) and are
        transpiled for other engines."""
        if isinstance(statement, str):
            if isinstance(statement, Rendered):
                if statement.dialect != self.dialect:
                    raise AssertionError(
                        f"SQL generated for {statement.dialect} given to the {self.dialect} backend"
                    )
                return str(statement)
            if self.dialect == "duckdb":
                return statement
            statement = sqlglot.parse_one(statement, read="duckdb")
        return generate(statement, self.dialect)

    @abstractmethod
    def execute(self, statement: exp.Expr | str, params: list[Any] | None = None) -> None:
        """Run one statement for its effect."""

    @abstractmethod
    def fetchall(self, statement: exp.Expr | str, params: list[Any] | None = None) -> list[tuple]:
        """Run one query and return its rows."""

    @abstractmethod
    def fetch_df(self, statement: exp.Expr | str, params: list[Any] | None = None) -> pd.DataFrame:
        """Run one query and return a pandas DataFrame."""

    def fetch_columns(
        self, statement: exp.Expr | str, params: list[Any] | None = None
    ) -> dict[str, Any]:
        """Run a query and return its columns as arrays (no DataFrame is built)."""
        df = self.fetch_df(statement, params)
        return {c: df[c].to_numpy() for c in df.columns}

    @abstractmethod
    def run_user_sql(self, sql: str) -> pd.DataFrame | None:
        """A user's statement in the engine's own dialect, run verbatim (the ``anonsql sql``
        surface): its rows, or None for a statement without a result."""

    @abstractmethod
    def write_frame(self, name: str, frame: pd.DataFrame, temporary: bool = False) -> None:
        """Create table ``name`` from a DataFrame (replacing a table of that name)."""

    def insert_frame(self, statement: Callable[[exp.Table], exp.Expr], frame) -> None:
        """Run ``statement(staging)``, an INSERT ... SELECT reading ``frame`` staged as a
        temporary table (the frame's values never become SQL text)."""
        staging = "__anonsql_staging"
        self.write_frame(staging, frame, temporary=True)
        try:
            self.execute(statement(table(staging)))
        finally:
            self.execute(drop("table", staging))

    def appends(self, name: str, where: exp.Expr) -> None:
        """Declare that what the current transaction does to table ``name`` next is add rows
        matching ``where`` that no row matched before (a new run's id, a new hierarchy
        version's key). Engines with transactions need nothing (a no-op here); an engine
        that emulates them by copying a table before its first change (Spark) undoes the
        addition by deleting those rows instead, and copies nothing."""
        return None

    def refresh_statistics(self, *names: str) -> None:
        """Tell the planner about tables anonsql just filled (no-op where the engine keeps
        its statistics itself)."""
        return None

    def lock_output(self, name: str) -> None:
        """Hold the right to write relation ``name`` until the transaction ends, so that two
        runs into one output write one after the other (engines whose database file has one
        writer at a time need nothing more: a no-op here)."""
        return None

    def restrict_access(self, *names: str) -> None:
        """Keep anonsql's side tables from readers who were not granted them (where the
        engine has per-table privileges; a no-op elsewhere)."""
        return None

    # -- transactions ----------------------------------------------------------------------
    @abstractmethod
    def _begin(self) -> None: ...

    @abstractmethod
    def _commit(self) -> None: ...

    @abstractmethod
    def _rollback(self) -> None: ...

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing: nested uses join the outermost transaction."""
        if self._tx_depth:
            self._tx_depth += 1
            try:
                yield
            finally:
                self._tx_depth -= 1
            return
        self._begin()
        self._tx_depth = 1
        try:
            yield
        except BaseException:
            self._tx_depth = 0
            self.schemas_ready.clear()
            caches.catalog_changed()  # what was read inside the transaction may be undone
            self._rollback()
            raise
        self._tx_depth = 0
        try:
            self._commit()
        except AnonsqlError:
            raise
        except Exception as e:
            # a full disk or a lost connection shows up here, as the engine's own error
            # class; the engine has rolled back, and the user gets one line, not a traceback
            caches.catalog_changed()
            with contextlib.suppress(Exception):
                self._rollback()
            detail = " ".join(str(e).split()) or type(e).__name__
            raise BackendError(
                f"{self.dialect}: the transaction could not be committed, so nothing was "
                f"written: {detail}"
            ) from None

    # -- catalog -----------------------------------------------------------------------------
    @abstractmethod
    def relation_kind(self, name: str) -> str | None:
        """``'table'``, ``'view'`` or None when no relation has that name."""

    def relation_names(self) -> list[str]:
        """Tables and views of the current schema (temporary ones included)."""
        rows = self.fetchall(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() ORDER BY 1"
        )
        return [r[0] for r in rows]

    def table_exists(self, name: str) -> bool:
        return self.relation_kind(name) is not None

    def stored_name(self, name: str) -> str | None:
        """The name under which the relation that ``name`` resolves to is stored (``adult``
        for "ADULT" on DuckDB), or None when there is none."""
        if self.relation_kind(name) is None:
            return None
        for stored in self.relation_names():
            if self.same_relation(stored, name):
                return stored
        return name  # a temporary relation: not in the schema's listing

    # -- names as the engine resolves them -----------------------------------------------------
    def canonical_name(self, name: str) -> str:
        """The key under which the engine finds relation ``name`` (anonsql always quotes it):
        two names with the same key are one relation. The default is an engine whose quoted
        identifiers are compared exactly."""
        return name

    def same_relation(self, a: str, b: str) -> bool:
        """Whether names ``a`` and ``b`` denote the same relation on this engine."""
        return self.canonical_name(a) == self.canonical_name(b)

    def check_name(self, name: str) -> None:
        """Raise :class:`InputError` when the engine would not keep ``name`` as given (so a
        write under it would land on another relation). Engines that refuse a name
        themselves, with a clear error, keep this default."""
        if not isinstance(name, str) or not name:
            raise InputError("a relation needs a non-empty name")

    @abstractmethod
    def columns(self, name: str) -> list[str]:
        """Column names of a table or view, in order."""

    @abstractmethod
    def column_types(self, name: str) -> dict[str, str]:
        """Column -> the engine's type name, from its catalog."""

    def require_table(self, name: str) -> list[str]:
        if not self.table_exists(name):
            raise InputError(f"no table or view named {name!r} in the database")
        return self.columns(name)

    def require_columns(self, name: str, wanted: list[str]) -> None:
        self.check_columns(name, wanted, self.require_table(name))

    def check_columns(self, name: str, wanted: list[str], cols: list[str]) -> None:
        """:meth:`require_columns` against the columns ``cols`` the caller read already."""
        unknown = [c for c in wanted if c not in cols]
        if unknown:
            raise InputError(
                f"table {name!r} has no column {', '.join(map(repr, unknown))}; "
                f"its columns are {', '.join(map(repr, cols))}"
            )

    def quote(self, name: str) -> str:
        """A name as a quoted identifier of this backend's dialect."""
        return ident(name).sql(self.dialect)

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""
