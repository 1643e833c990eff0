"""The Spark SQL backend (``spark:WAREHOUSE_DIR``, or an open ``SparkSession``), through
pyspark (the ``anonsql[spark]`` extra; Spark needs Java 17).

A target ``spark:DIR`` starts a local session (``local[*]``, or ``ANONSQL_SPARK_MASTER``)
whose tables live under ``DIR`` with a Derby metastore beside them, so they persist from one
command to the next. A target ``sc://HOST:PORT`` (or a SparkSession built with
``.remote()``) talks to a running Spark Connect server: nothing starts on this machine, the
cluster's catalog holds the tables (the ``anonsql[spark]`` extra brings the Connect client).

Logs are quiet by default: a local session's JVM writes its console output to
``DIR/spark.log`` instead of the terminal, and its log level is OFF; ``--verbose`` (or
``ANONSQL_VERBOSE=1``) shows them.

Spark's built-in tables (parquet, Hive) have no transactions, no ``DELETE`` and no
``CREATE OR REPLACE TABLE``. This backend gives anonsql the semantics it needs on top:

* ``DELETE FROM t WHERE c`` becomes a rewrite of ``t`` without the rows (``EXCEPT ALL``, so
  rows where ``c`` is NULL stay, as DELETE keeps them);
* ``CREATE OR REPLACE TABLE`` becomes create-under-a-new-name, then swap;
* a transaction keeps a journal: a relation is renamed to a backup before its first change
  and renamed back on rollback (relations created in the transaction are dropped), so a
  failed run leaves the catalog as it found it. Commit drops the backups. The journal lives
  in this process: a crash of the driver mid-transaction can leave ``__anonsql_undo_*``
  relations behind (the previous versions, to rename back by hand).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from anonsql.backend.base import Backend
from anonsql.backend.sql_templates import table
from anonsql.errors import BackendError

if TYPE_CHECKING:
    import pandas as pd

UNDO_PREFIX = "__anonsql_undo_"
#: the journal's mark of a table that a transaction has only added rows to (see appends)
_APPENDED = ""


def _error(e: Exception) -> BackendError:
    text = str(e).strip()
    return BackendError(f"Spark: {text.splitlines()[0] if text else type(e).__name__}")


def delete_as_rewrite(statement: exp.Delete, staging: str) -> list[exp.Expr]:
    """``DELETE FROM t WHERE c`` for tables without DELETE: copy the rows to keep into
    ``staging`` (``EXCEPT ALL`` keeps rows where ``c`` is NULL, as DELETE does), drop ``t``,
    rename the copy."""
    name = statement.this.name
    where = statement.args.get("where")
    rows = exp.select("*").from_(table(name))
    keep: exp.Query
    if where is not None:
        keep = exp.except_(
            rows, exp.select("*").from_(table(name)).where(where.this), distinct=False
        )
    else:
        keep = rows.where(exp.false())
    create = exp.Create(
        this=table(staging),
        kind="TABLE",
        expression=keep,
        properties=exp.Properties(expressions=[exp.FileFormatProperty(this=exp.var("parquet"))]),
    )
    rename = exp.Alter(
        this=table(staging), kind="TABLE", actions=[exp.AlterRename(this=table(name))]
    )
    return [create, exp.Drop(tables=[table(name)], kind="TABLE"), rename]


def verbose() -> bool:
    """Whether Spark's own logs are shown (``--verbose`` sets ``ANONSQL_VERBOSE``)."""
    return os.environ.get("ANONSQL_VERBOSE", "").strip().lower() not in ("", "0", "false", "no")


def _quiet_python_warnings() -> None:
    # pyspark warns about pandas 3 on every import and conversion: noise for a user of
    # anonsql, whose conversions go through Arrow
    if not verbose():
        import warnings

        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )


def is_connect_url(target: Any) -> bool:
    """``sc://HOST:PORT...``: a Spark Connect server."""
    return isinstance(target, str) and target.lower().startswith("sc://")


def is_connect_session(session: Any) -> bool:
    """A SparkSession of the Spark Connect client (built with ``.remote()``)."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def connect_session(url: str):
    """A session on the Spark Connect server at ``url`` (``sc://host:port``); nothing is
    started locally."""
    _quiet_python_warnings()
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise BackendError(
            "the Spark backend needs pyspark: pip install 'anonsql[spark]'"
        ) from None
    host, port = _connect_address(url)
    try:
        # the client retries an unreachable server for minutes: a closed port is said now
        socket.create_connection((host, port), timeout=10).close()
    except OSError as e:
        raise BackendError(
            f"cannot reach Spark Connect at {url}: nothing answers on {host}:{port} "
            f"({e.strerror or e})"
        ) from None
    try:
        # the Connect client's own builder: pyspark's generic one would switch the whole
        # process to Connect mode (SPARK_CONNECT_MODE_ENABLED), and a local session opened
        # later in it would fail; without grpcio the import fails, said below
        from pyspark.sql.connect.session import SparkSession as RemoteSession

        session = RemoteSession.builder.remote(url).getOrCreate()
        session.sql("SELECT 1").collect()  # reach the server now, not at the first query
    except Exception as e:  # no Connect client (grpcio), or no server at the address
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise BackendError(f"cannot reach Spark Connect at {url}: {first}") from None
    return session


def _connect_address(url: str) -> tuple[str, int]:
    """Host and port of ``sc://host[:port][/;params]`` (Spark Connect's default port is
    15002)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit("http://" + url[len("sc://") :].split("/", 1)[0].split(";", 1)[0])
        host, port = parts.hostname, parts.port or 15002
    except ValueError as e:
        raise BackendError(f"not a Spark Connect URL (sc://host:port): {url}: {e}") from None
    if not host:
        raise BackendError(f"not a Spark Connect URL (sc://host:port): {url}")
    return host, port


def local_session(warehouse: str | Path, master: str | None = None, java_options: str = ""):
    """A local SparkSession keeping its tables (and metastore) under ``warehouse``;
    ``java_options`` are added to the driver JVM's options (the tests' short-lived sessions
    take the quick-starting JIT)."""
    _quiet_python_warnings()
    try:
        from pyspark import SparkConf
        from pyspark.sql import SparkSession
    except ImportError:
        raise BackendError(
            "the Spark backend needs pyspark: pip install 'anonsql[spark]'"
        ) from None
    root = Path(warehouse).resolve()
    root.mkdir(parents=True, exist_ok=True)
    master = master or os.environ.get("ANONSQL_SPARK_MASTER", "local[*]")
    metastore = root / "metastore_db"
    conf = SparkConf().setAll(
        [
            ("spark.master", master),
            ("spark.app.name", "anonsql"),
            ("spark.sql.warehouse.dir", str(root / "tables")),
            (
                "spark.hadoop.javax.jdo.option.ConnectionURL",
                f"jdbc:derby:;databaseName={metastore};create=true",
            ),
            ("spark.driver.extraJavaOptions", f"-Dderby.system.home={root} {java_options}".strip()),
            ("spark.ui.enabled", "false"),
            ("spark.ui.showConsoleProgress", "false"),
            ("spark.sql.execution.arrow.pyspark.enabled", "true"),
            ("spark.sql.shuffle.partitions", "8"),
            ("spark.driver.memory", os.environ.get("ANONSQL_SPARK_MEMORY", "4g")),
            ("spark.sql.catalogImplementation", "hive"),
        ]
    )
    try:
        if not verbose():
            _quiet_gateway(conf, root / "spark.log")
        session = SparkSession.builder.config(conf=conf).getOrCreate()
    except Exception as e:  # no Java, or the JVM failed to start
        raise BackendError(f"cannot start Spark: {str(e).strip().splitlines()[0]}") from None
    session.sparkContext.setLogLevel("WARN" if verbose() else "OFF")
    return session


def _quiet_gateway(conf, log: Path) -> None:
    """Start the JVM with its console output going to ``log``: the launcher, log4j's start
    banner and Hadoop's warnings are printed before any log level can be set, a dozen
    lines per command otherwise. A JVM already running (a session in this process) stays."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    with open(log, "ab") as out:  # the child keeps its own descriptor
        gateway = launch_gateway(conf, popen_kwargs={"stdout": out, "stderr": out})
    SparkContext._gateway = gateway
    SparkContext._jvm = gateway.jvm


class SparkBackend(Backend):
    dialect = "spark"
    # each step of a recursive query is a Spark job over the node table (6 s for a
    # four-level hierarchy): the closure rows are computed in Python and written instead
    recursive_closure = False

    def __init__(self, target: Any) -> None:
        super().__init__()
        if is_connect_url(target):
            self.session = connect_session(target)
        elif isinstance(target, str):
            location = target.split(":", 1)[1] if target.lower().startswith("spark:") else target
            self.session = local_session(location or "spark-warehouse")
        else:
            self.session = target
        #: a Spark Connect session: the driver runs on the server, not in this process
        self.remote = is_connect_session(self.session)
        self._journal: list[tuple[str, str, str | None]] = []  # (action, name, backup)
        self._backups: dict[str, str] = {}
        self._added: dict[str, exp.Expr] = {}  # table -> the rows this transaction added
        self._counter = 0

    # -- running SQL -----------------------------------------------------------------------
    def _sql(self, sql: str, params: list[Any] | None = None):
        try:
            return self.session.sql(sql, args=list(params)) if params else self.session.sql(sql)
        except Exception as e:  # pyspark's AnalysisException, ParseException, Py4JJavaError
            raise _error(e) from e

    def _collect(self, sql: str, params: list[Any] | None = None) -> list:
        """Run a statement to the end; errors at analysis or at run time become one-line
        :class:`BackendError` messages."""
        frame = self._sql(sql, params)
        try:
            return frame.collect()
        except Exception as e:
            raise _error(e) from e

    def execute(self, statement: exp.Expr | str, params: list[Any] | None = None) -> None:
        if isinstance(statement, exp.Expression):
            if isinstance(statement, exp.Delete):
                return self._delete(statement)
            if isinstance(statement, exp.Create):
                return self._create(statement, params)
            if isinstance(statement, exp.Drop):
                return self._drop(statement)
            if isinstance(statement, exp.Insert):
                target = statement.this.find(exp.Table)
                # rows added to a table declared by appends() are undone by deleting them;
                # an INSERT OVERWRITE replaces the rest too, so it is copied first
                if (
                    target is None
                    or statement.args.get("overwrite")
                    or not self._only_added(target.name)
                ):
                    self._protect(target)
        self._collect(self.sql_text(statement), params)

    def fetchall(self, statement: exp.Expr | str, params: list[Any] | None = None) -> list[tuple]:
        return [tuple(r) for r in self._collect(self.sql_text(statement), params)]

    def fetch_df(self, statement: exp.Expr | str, params: list[Any] | None = None) -> pd.DataFrame:
        return self._to_pandas(self._sql(self.sql_text(statement), params))

    @staticmethod
    def _to_pandas(frame) -> pd.DataFrame:
        try:
            return frame.toPandas()
        except Exception as e:
            raise _error(e) from e

    def fetch_columns(
        self, statement: exp.Expr | str, params: list[Any] | None = None
    ) -> dict[str, Any]:
        from pyspark.sql.types import IntegralType

        frame = self._sql(self.sql_text(statement), params)
        integral = {f.name for f in frame.schema.fields if isinstance(f.dataType, IntegralType)}
        df = self._to_pandas(frame)
        out: dict[str, Any] = {}
        for name in df.columns:
            col = df[name]
            if name in integral:
                # an integer column with NULLs arrives as float: -1 marks the NULLs, as the
                # DuckDB backend gives them
                out[name] = col.fillna(-1).to_numpy(np.int64)
            elif col.dtype.kind in "iuf":
                out[name] = col.to_numpy()
            else:
                out[name] = col.astype(object).where(col.notna(), None).to_numpy(object)
        return out

    def run_user_sql(self, sql: str) -> pd.DataFrame | None:
        frame = self._sql(sql)  # a command (CREATE, INSERT, ...) runs here, once
        if not frame.columns:
            return None
        return self._to_pandas(frame)

    def write_frame(self, name: str, frame: pd.DataFrame, temporary: bool = False) -> None:
        import pyarrow as pa

        data = self.session.createDataFrame(pa.Table.from_pandas(frame, preserve_index=False))
        if temporary:
            data.createOrReplaceTempView(name)
            return
        # through a private temporary view and CREATE TABLE AS, so the table gets the same
        # journal as any other, and column names are only ever quoted identifiers
        staging = self._fresh("__anonsql_frame_")
        data.createOrReplaceTempView(staging)
        try:
            self.execute(
                exp.Create(
                    this=table(name),
                    kind="TABLE",
                    replace=True,
                    expression=exp.select("*").from_(table(staging)),
                )
            )
        finally:
            self.session.catalog.dropTempView(staging)

    # -- statements Spark's built-in tables lack -----------------------------------------------
    def _fresh(self, stem: str) -> str:
        self._counter += 1
        return f"{stem}{os.getpid()}_{id(self)}_{self._counter}"

    def _rename(self, kind: str, old: str, new: str) -> None:
        self._collect(f"ALTER {kind} {self.quote(old)} RENAME TO {self.quote(new)}")

    def _kind_keyword(self, name: str) -> str:
        return "VIEW" if self.relation_kind(name) == "view" else "TABLE"

    def _protect(self, target: exp.Table | None) -> None:
        """Before the first change of a relation in a transaction, keep a copy to restore."""
        if not self._tx_depth or target is None:
            return
        name = target.name
        if self._copied(name):
            return  # copied or set aside already
        if name not in self._backups and (self._is_temp(name) or not self.table_exists(name)):
            return
        if self._kind_keyword(name) == "VIEW":
            return  # views are only ever replaced whole, which _create journals
        backup = self._fresh(UNDO_PREFIX)
        if self.fetchall(exp.select("1").from_(table(name)).limit(1)):
            self._collect(
                f"CREATE TABLE {self.quote(backup)} USING parquet AS "
                f"SELECT * FROM {self.quote(name)}"
            )
        else:
            # an empty table is set aside and recreated empty: catalog operations only,
            # no Spark job
            self._rename("TABLE", name, backup)
            self._collect(
                f"CREATE TABLE {self.quote(name)} LIKE {self.quote(backup)} USING parquet"
            )
            self._journal.append(("renamed", name, f"TABLE:{backup}"))
            self._backups[name] = backup
            return
        self._backups[name] = backup
        self._journal.append(("copied", name, f"TABLE:{backup}"))

    def _copied(self, name: str) -> bool:
        """Whether this transaction holds a copy of ``name`` to restore (or set it aside)."""
        return self._backups.get(name, _APPENDED) != _APPENDED

    def _only_added(self, name: str) -> bool:
        """Whether ``name`` is declared by :meth:`appends` and not copied since."""
        return self._backups.get(name) == _APPENDED

    def appends(self, name: str, where: exp.Expr) -> None:
        """Inside a transaction, a table that only gains rows matching ``where`` is not
        copied: rollback deletes those rows. Should the transaction change the table
        otherwise later, it is copied then, and rollback restores that copy before deleting
        the rows (the journal is undone newest first)."""
        if not self._tx_depth or name in self._backups:
            return
        if self._is_temp(name) or not self.table_exists(name):
            return  # a table created in this transaction is dropped whole on rollback
        self._backups[name] = _APPENDED
        self._added[name] = where.copy()
        self._journal.append(("appended", name, None))

    def _created(self, name: str) -> None:
        if self._tx_depth and not self._is_temp(name):
            self._journal.append(("created", name, None))

    def _set_aside(self, name: str) -> None:
        """Remove relation ``name``: inside a transaction it is renamed to a backup that
        rollback restores, outside it is dropped."""
        kind = self._kind_keyword(name)
        if self._tx_depth and not self._copied(name):
            backup = self._fresh(UNDO_PREFIX)
            self._rename(kind, name, backup)
            self._backups[name] = backup
            self._journal.append(("renamed", name, f"{kind}:{backup}"))
        else:
            self._collect(f"DROP {kind} {self.quote(name)}")

    def _drop_if_exists(self, name: str) -> None:
        if self._is_temp(name):
            self._collect(f"DROP VIEW IF EXISTS {self.quote(name)}")
        elif self.table_exists(name):
            self._set_aside(name)

    def _drop(self, statement: exp.Drop) -> None:
        found = statement.find(exp.Table)
        target = found.name if found else ""
        if not self.table_exists(target):
            if statement.args.get("exists"):
                return
            raise BackendError(f"Spark: no table or view named {target!r}")
        self._drop_if_exists(target)

    def _create(self, statement: exp.Create, params: list[Any] | None = None) -> None:
        target = statement.this.find(exp.Table)
        name = target.name if target else ""
        exists = bool(name) and self.table_exists(name)
        if exists and statement.args.get("exists"):  # IF NOT EXISTS
            return
        kind = (statement.args.get("kind") or "").upper()
        if exists and (statement.args.get("replace") or kind == "TABLE"):
            self._set_aside(name)
        statement = statement.copy()
        statement.set("replace", False)
        if kind == "TABLE" and statement.expression is not None:
            # CTAS as parquet: the default Hive text format cannot hold arrays or NULLs
            props = statement.args.get("properties") or exp.Properties(expressions=[])
            props.append("expressions", exp.FileFormatProperty(this=exp.var("parquet")))
            statement.set("properties", props)
        self._collect(self.sql_text(statement), params)
        self._created(name)

    def _delete(self, statement: exp.Delete) -> None:
        name = statement.this.name
        where = statement.args.get("where")
        source = table(name)
        # rewriting a table costs a Spark job or three: skip it when no row matches
        probe = exp.select("1").from_(source).limit(1)
        if where is not None:
            probe = probe.where(where.this)
        if not self.fetchall(probe):
            return
        self._protect(statement.this)
        for step in delete_as_rewrite(statement, self._fresh("__anonsql_rewrite_")):
            self._collect(self.sql_text(step))

    # -- transactions ------------------------------------------------------------------------
    def _begin(self) -> None:
        self._journal = []
        self._backups, self._added = {}, {}

    def _commit(self) -> None:
        for action, _name, backup in self._journal:
            if action in ("copied", "renamed") and backup:
                kind, _, bname = backup.partition(":")
                self._collect(f"DROP {kind} IF EXISTS {self.quote(bname)}")
        self._journal, self._backups, self._added = [], {}, {}

    def _rollback(self) -> None:
        for action, name, backup in reversed(self._journal):
            try:
                if action == "appended" and self.table_exists(name):
                    where = exp.Where(this=self._added[name])
                    self._delete(exp.Delete(this=table(name), where=where))
                elif action == "created" and self.table_exists(name):
                    self._collect(f"DROP {self._kind_keyword(name)} {self.quote(name)}")
                elif action in ("copied", "renamed") and backup:
                    kind, _, bname = backup.partition(":")
                    if self.table_exists(name):
                        self._collect(f"DROP {self._kind_keyword(name)} {self.quote(name)}")
                    self._rename(kind, bname, name)
            except BackendError:
                continue  # restore what can be restored; the backups stay visible
        self._journal, self._backups, self._added = [], {}, {}

    # -- catalog -------------------------------------------------------------------------------
    def _is_temp(self, name: str) -> bool:
        # one catalog lookup: listTables() reads every table's metadata from the metastore
        # (0.1-0.3 s with a few dozen tables), and a temporary view shadows a table of the
        # same name in getTable as in queries
        try:
            return bool(self.session.catalog.getTable(self.quote(name)).isTemporary)
        except Exception:  # no such relation
            return False

    def relation_names(self) -> list[str]:
        # SHOW TABLES lists the current database's tables and the session's temporary views
        # from the catalog's names alone (listTables() also fetches each one's metadata)
        return sorted(str(r[1]) for r in self._collect("SHOW TABLES"))

    def canonical_name(self, name: str) -> str:
        # the session catalog (and the Hive metastore behind it) stores table names in
        # lower case and, with Spark's default spark.sql.caseSensitive=false, resolves any
        # spelling to them
        return name.lower()

    def relation_kind(self, name: str) -> str | None:
        catalog = self.session.catalog
        try:
            if not catalog.tableExists(self.quote(name)):
                return None
            info = catalog.getTable(self.quote(name))
        except Exception:
            return None
        return "view" if (info.tableType or "").upper() in ("VIEW", "TEMPORARY") else "table"

    def columns(self, name: str) -> list[str]:
        return list(self._sql(self.sql_text(exp.select("*").from_(table(name)).limit(0))).columns)

    def column_types(self, name: str) -> dict[str, str]:
        df = self._sql(self.sql_text(exp.select("*").from_(table(name)).limit(0)))
        return {c: str(t) for c, t in df.dtypes}

    def close(self) -> None:
        """Leaves the session running: it may be shared (``getOrCreate``)."""
