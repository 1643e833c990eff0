"""The PostgreSQL backend (``postgresql://user:password@host:port/database``), through
psycopg 3 (the ``anonsql[postgres]`` extra).

The connection runs in autocommit mode; :meth:`Backend.transaction` opens an explicit
transaction, and PostgreSQL's DDL is transactional, so an output, its provenance and its
hierarchy tables appear together or not at all. Large results (the histogram) and large
frames (imports) move through ``COPY`` in CSV, read and written by pandas' C parser.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from anonsql.backend import redact, scrub
from anonsql.backend.base import Backend
from anonsql.backend.sql_templates import drop, table
from anonsql.errors import BackendError, InputError

if TYPE_CHECKING:
    import pandas as pd

# type OIDs of PostgreSQL's integer and floating-point types (pg_type)
_INTEGER_OIDS = {20, 21, 23, 26}
_FLOAT_OIDS = {700, 701, 1700}
_NULL = r"\N"


def _pg_type(series: pd.Series) -> str:
    import pandas as pd

    kind = series.dtype.kind
    if kind == "b":
        return "BOOLEAN"
    if kind in "iu":
        return "BIGINT"
    if kind == "f":
        return "DOUBLE PRECISION"
    if kind == "M":
        return "TIMESTAMP"
    first = series.dropna()
    if len(first) and isinstance(first.iloc[0], (list, tuple, np.ndarray)):
        items = [x for v in first for x in v]
        if items and all(isinstance(x, (int, np.integer)) for x in items):
            return "BIGINT[]"
        return "TEXT[]"
    if pd.api.types.is_bool_dtype(series):
        return "BOOLEAN"
    return "TEXT"


class PostgresBackend(Backend):
    dialect = "postgres"
    create_or_replace = False

    def __init__(self, target: Any) -> None:
        super().__init__()
        try:
            import psycopg
        except ImportError:
            raise BackendError(
                "the PostgreSQL backend needs psycopg: pip install 'anonsql[postgres]'"
            ) from None
        self._psycopg = psycopg
        if isinstance(target, psycopg.Connection):
            self.con = target
            self.url = None
        else:
            self.url = str(target)
            try:
                self.con = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
            except psycopg.Error as e:
                # libpq echoes pieces of a connection string it cannot parse (a password
                # with an unencoded '@', a bad percent escape), so the detail is scrubbed too
                detail = scrub(" ".join(str(e).split()), self.url)
                raise BackendError(
                    f"cannot connect to PostgreSQL at {redact(self.url)}: {detail}"
                ) from None
        self.con.autocommit = True

    # -- running SQL -----------------------------------------------------------------------
    def _run(self, statement: exp.Expr | str, params: list[Any] | None):
        sql = self.sql_text(statement)
        try:
            return self.con.execute(sql, params or None, prepare=False)
        except self._psycopg.Error as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise BackendError(f"PostgreSQL: {first}") from e

    def execute(self, statement: exp.Expr | str, params: list[Any] | None = None) -> None:
        self._run(statement, params)

    def fetchall(self, statement: exp.Expr | str, params: list[Any] | None = None) -> list[tuple]:
        return [tuple(r) for r in self._run(statement, params).fetchall()]

    def fetch_df(self, statement: exp.Expr | str, params: list[Any] | None = None) -> pd.DataFrame:
        import pandas as pd

        cur = self._run(statement, params)
        names = [d.name for d in cur.description or []]
        return pd.DataFrame(cur.fetchall(), columns=names)

    def fetch_columns(
        self, statement: exp.Expr | str, params: list[Any] | None = None
    ) -> dict[str, Any]:
        """COPY the result out as CSV and parse it with pandas: row-by-row adaptation would
        dominate the run on a histogram of millions of rows. Integer columns with NULLs come
        back with -1 in their place, as the DuckDB backend gives them."""
        import pandas as pd

        if params:
            return super().fetch_columns(statement, params)
        query = self.sql_text(statement)
        probe = self._run(f"SELECT * FROM ({query}) AS q LIMIT 0", None)
        described = [(d.name, d.type_code) for d in probe.description or []]
        buf = io.BytesIO()
        copy_sql = f"COPY ({query}) TO STDOUT WITH (FORMAT csv, NULL '{_NULL}')"
        try:
            with self.con.cursor() as cur, cur.copy(copy_sql) as copy:
                for block in copy:
                    buf.write(block)
        except self._psycopg.Error as e:
            raise BackendError(f"PostgreSQL: {str(e).strip().splitlines()[0]}") from e
        buf.seek(0)
        names = [n for n, _ in described]
        dtypes = {n: object for n, oid in described if oid not in _INTEGER_OIDS | _FLOAT_OIDS}
        if buf.getbuffer().nbytes == 0:
            return {n: np.empty(0, dtype=object if n in dtypes else np.int64) for n in names}
        frame = pd.read_csv(
            buf,
            header=None,
            names=names,
            dtype=dtypes,
            na_values=[_NULL],
            keep_default_na=False,
        )
        out: dict[str, Any] = {}
        for name, oid in described:
            col = frame[name]
            if oid in _INTEGER_OIDS:
                out[name] = col.fillna(-1).to_numpy(np.int64)
            elif oid in _FLOAT_OIDS:
                out[name] = col.to_numpy(np.float64)
            else:
                out[name] = col.astype(object).where(col.notna(), None).to_numpy(object)
        return out

    def run_user_sql(self, sql: str) -> pd.DataFrame | None:
        import pandas as pd

        try:
            cur = self.con.execute(sql, prepare=False)
        except self._psycopg.Error as e:
            raise BackendError(f"PostgreSQL: {str(e).strip().splitlines()[0]}") from None
        if cur.description is None:
            return None
        return pd.DataFrame(cur.fetchall(), columns=[d.name for d in cur.description])

    def write_frame(self, name: str, frame: pd.DataFrame, temporary: bool = False) -> None:
        types = [_pg_type(frame[c]) for c in frame.columns]
        columns = [
            exp.ColumnDef(
                this=exp.to_identifier(str(c), quoted=True),
                kind=exp.DataType.build(t, dialect="postgres"),
            )
            for c, t in zip(frame.columns, types, strict=True)
        ]
        create = exp.Create(
            this=exp.Schema(this=table(name), expressions=columns),
            kind="TABLE",
            properties=exp.Properties(expressions=[exp.TemporaryProperty()]) if temporary else None,
        )
        target = self.quote(name)
        with self.transaction():
            self.execute(drop("table", name))
            self.execute(create)
            has_lists = any(t.endswith("[]") for t in types)
            try:
                with self.con.cursor() as cur:
                    if has_lists:
                        # psycopg adapts Python lists to PostgreSQL arrays row by row;
                        # only the small provenance frames carry lists
                        with cur.copy(f"COPY {target} FROM STDIN") as copy:
                            for row in frame.itertuples(index=False, name=None):
                                copy.write_row([_plain(v) for v in row])
                    else:
                        with cur.copy(
                            f"COPY {target} FROM STDIN WITH (FORMAT csv, NULL '{_NULL}')"
                        ) as copy:
                            step = 200_000
                            for start in range(0, max(len(frame), 1), step):
                                chunk = frame.iloc[start : start + step]
                                copy.write(chunk.to_csv(index=False, header=False, na_rep=_NULL))
            except self._psycopg.Error as e:
                raise BackendError(f"PostgreSQL: {str(e).strip().splitlines()[0]}") from e

    def refresh_statistics(self, *names: str) -> None:
        # tables filled a moment ago have no statistics until autovacuum gets to them, and
        # the planner then takes them for nearly empty
        for name in names:
            self.run_user_sql(f"ANALYZE {self.quote(name)}")  # PostgreSQL text, run as is

    def lock_output(self, name: str) -> None:
        # a transaction-level advisory lock keyed by the output's name: a second run into
        # the same output waits (--wait) or stops naming the first, instead of failing with
        # "tuple concurrently updated" midway through its DDL
        import hashlib
        import time

        digest = hashlib.sha256(f"anonsql output {self.canonical_name(name)}".encode()).digest()
        key = int.from_bytes(digest[:8], "big", signed=True)
        deadline = time.monotonic() + self.wait_seconds
        delay = 0.05
        while True:
            if self.fetchall("SELECT pg_try_advisory_xact_lock(?)", [key])[0][0]:
                return
            if time.monotonic() + delay > deadline:
                holders = self.fetchall(
                    "SELECT a.pid, COALESCE(a.application_name, ''), "
                    "COALESCE(a.client_addr::text, 'local') FROM pg_locks AS l "
                    "JOIN pg_stat_activity AS a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND "
                    "((l.classid::bigint << 32) | l.objid::bigint) = ? AND a.pid <> "
                    "pg_backend_pid()",
                    [key],
                )
                who = (
                    ", ".join(
                        f"process {p} ({app or 'no name'}, {addr})" for p, app, addr in holders
                    )
                    or "another session"
                )
                waited = f" after waiting {self.wait_seconds:g} s" if self.wait_seconds else ""
                raise InputError(
                    f"another run is writing {name!r}{waited}: {who or 'another session'}; "
                    f"try again when it is "
                    f"done, or pass --wait SECONDS"
                )
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    def restrict_access(self, *names: str) -> None:
        # anonsql's side tables hold raw values (recodings map original tuples, hierarchies
        # list every leaf): no PUBLIC privilege on them. A published view runs with its
        # owner's rights (PostgreSQL's default, security_invoker off), so a reader granted
        # SELECT on the view alone reads it without any right on these tables or the source.
        for name in names:
            self.run_user_sql(f"REVOKE ALL ON TABLE {self.quote(name)} FROM PUBLIC")

    # -- transactions ------------------------------------------------------------------------
    def _begin(self) -> None:
        self.con.execute("BEGIN")

    def _commit(self) -> None:
        self.con.execute("COMMIT")

    def _rollback(self) -> None:
        if not self.con.closed:
            self.con.execute("ROLLBACK")

    # -- catalog -------------------------------------------------------------------------------
    def identifier_limit(self) -> int:
        """Bytes PostgreSQL keeps of an identifier (NAMEDATALEN - 1, 63 unless the server
        was built otherwise); it silently truncates longer ones."""
        limit = getattr(self, "_identifier_limit", None)
        if limit is None:
            setting = "SELECT current_setting('max_identifier_length')"
            limit = int(self.fetchall(setting)[0][0])
            self._identifier_limit = limit
        return limit

    def canonical_name(self, name: str) -> str:
        # quoted identifiers are case-sensitive, but cut to the limit (at a character
        # boundary, as the server's pg_mbcliplen does): a longer name *is* its prefix
        return name.encode("utf-8")[: self.identifier_limit()].decode("utf-8", "ignore")

    def check_name(self, name: str) -> None:
        super().check_name(name)
        size, limit = len(name.encode("utf-8")), self.identifier_limit()
        if size > limit:
            raise InputError(
                f"the name {name!r} is {size} bytes long; PostgreSQL keeps only {limit} bytes "
                f"of a name and would use {self.canonical_name(name)!r}; choose a shorter name"
            )

    def relation_kind(self, name: str) -> str | None:
        # a longer name would be truncated onto another relation: refused, not looked up
        self.check_name(name)
        # to_regclass resolves the name as the search path would (temporary tables
        # included); the argument is a quoted identifier, so any string is just a name
        rows = self.fetchall(
            "SELECT c.relkind FROM pg_catalog.pg_class AS c WHERE c.oid = to_regclass(?)",
            [self.quote(name)],
        )
        if not rows:
            return None
        return "view" if rows[0][0] in ("v", "m") else "table"

    def columns(self, name: str) -> list[str]:
        self.check_name(name)
        cur = self._run(exp.select("*").from_(table(name)).limit(0), None)
        return [d.name for d in cur.description or []]

    def column_types(self, name: str) -> dict[str, str]:
        # the catalog's types (an empty result frame carries none): each column's type OID,
        # named by the server's format_type
        self.check_name(name)
        cur = self._run(exp.select("*").from_(table(name)).limit(0), None)
        cols = [(d.name, d.type_code) for d in cur.description or []]
        names = {}
        for oid in {c[1] for c in cols}:
            names[oid] = self.fetchall("SELECT format_type(?, NULL)", [int(oid)])[0][0]
        return {c: str(names[oid]) for c, oid in cols}

    def close(self) -> None:
        self.con.close()


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
