"""Backends run SQL. Everything else in anonsql only *builds* SQL (sqlglot expressions).

:data:`BACKENDS` maps a target's scheme to its backend class (imported lazily, so the
optional drivers are only needed by the engines in use):

* a path or ``:memory:`` - DuckDB, the embedded default;
* ``postgresql://user:password@host:port/database`` (or ``postgres://``), or a libpq
  keyword/value string (``host=... dbname=... user=...``) - PostgreSQL;
* ``spark:WAREHOUSE_DIR`` - Spark SQL in local mode, tables kept under the folder;
* ``sc://HOST:PORT`` - a running Spark Connect server (nothing starts locally).

A target may carry a password; :func:`redact` and :func:`scrub` keep it out of every message
anonsql writes, whatever form the password takes.
"""

from __future__ import annotations

import re
from importlib import import_module
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from anonsql.errors import AnonsqlError, BackendError

if TYPE_CHECKING:
    from anonsql.backend.base import Backend

BACKENDS: dict[str, str] = {
    "duckdb": "anonsql.backend.duckdb_backend:DuckDBBackend",
    "postgres": "anonsql.backend.postgres_backend:PostgresBackend",
    "spark": "anonsql.backend.spark_backend:SparkBackend",
}

#: keywords that make a string of ``keyword=value`` pairs a libpq connection string (a
#: DuckDB file name of that shape is not a realistic name); other keywords may follow, and
#: libpq itself reports the unknown ones
LIBPQ_KEYWORDS = frozenset(
    ["host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service"]
)
# one keyword=value pair; a value is a single-quoted string (with \ escapes) or a bare word
_PAIR = re.compile(r"\s*([A-Za-z_]+)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']*)\s*", re.S)
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)(.*)$", re.S)
# a password value in a URL query (ends at the next parameter) or a keyword string
_QUERY_PASSWORD = re.compile(r"([?&]\s*password\s*=)([^&]*)", re.I)
_KEYWORD_PASSWORD = re.compile(r"(?<![A-Za-z0-9_])(password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)", re.I)
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
# secret parts that libpq may echo on their own: a password split where a URL parser would
_SPLIT = re.compile(r"[@/?#&=:\s]+")
MASK = "***"


def is_libpq_string(target: str) -> bool:
    """True for ``host=db.example user=me password=...``: it starts with a connection
    keyword of libpq's (libpq reports what is wrong further on), or is keyword/value pairs
    only with one such keyword among them."""
    first = _PAIR.match(target)
    if first is not None and first.group(1).lower() in LIBPQ_KEYWORDS:
        return True
    pos, found = 0, False
    while pos < len(target):
        m = _PAIR.match(target, pos)
        if m is None or m.end() == pos:
            return False
        found = found or m.group(1).lower() in LIBPQ_KEYWORDS
        pos = m.end()
    return found


def backend_name(target: Any) -> str:
    """Which backend a target (URL, path, or open connection/session) belongs to."""
    if isinstance(target, str):
        lowered = target.lower()
        if lowered.startswith(("postgresql://", "postgres://")) or is_libpq_string(target):
            return "postgres"
        if lowered.startswith(("spark:", "sc://")):
            return "spark"
        return "duckdb"
    module = type(target).__module__
    if module.startswith("psycopg"):
        return "postgres"
    if module.startswith("pyspark"):
        return "spark"
    return "duckdb"


def _split_url(target: str) -> tuple[str, str | None, str] | None:
    """(scheme://, userinfo or None, rest) of a URL. The userinfo runs to the *last* ``@``:
    a password with an unencoded ``@`` (or ``/``, ``?``) stays in it, so it is masked whole
    although libpq would cut it at its first ``@``."""
    m = _URL.match(target)
    if m is None:
        return None
    scheme, rest = m.groups()
    at = rest.rfind("@")
    if at < 0:
        return scheme, None, rest
    return scheme, rest[:at], rest[at + 1 :]


def _unquote_keyword_value(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def secrets(target: str) -> list[str]:
    """Every reading of the password(s) in ``target``, and the pieces a driver might echo
    alone (a password cut at an ``@`` by libpq's URL parser)."""
    found: list[str] = []
    parts = _split_url(target)
    if parts is not None:
        _, userinfo, rest = parts
        if userinfo is not None and ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
        found += [m.group(2) for m in _QUERY_PASSWORD.finditer(rest)]
    else:
        found += [_unquote_keyword_value(m.group(2)) for m in _KEYWORD_PASSWORD.finditer(target)]
        found += [m.group(2) for m in _KEYWORD_PASSWORD.finditer(target)]
    out: set[str] = set()
    for secret in found:
        for form in (secret, unquote(secret)):
            if form:
                out.add(form)
                out.update(piece for piece in _SPLIT.split(form) if piece)
    return sorted(out, key=len, reverse=True)


def redact(target: Any) -> str:
    """``target`` for a message: a URL's or keyword string's passwords replaced by ``***``
    (user, host, port, database and the other parameters stay, for the reader to check)."""
    text = str(target)
    parts = _split_url(text)
    if parts is None:
        return _KEYWORD_PASSWORD.sub(lambda m: m.group(1) + MASK, text)
    scheme, userinfo, rest = parts
    rest = _QUERY_PASSWORD.sub(lambda m: m.group(1) + MASK, rest)
    if userinfo is None:
        return scheme + rest
    user = userinfo.split(":", 1)[0] + (":" + MASK if ":" in userinfo else "")
    return f"{scheme}{user}@{rest}"


def scrub(message: str, target: Any) -> str:
    """A driver's message about ``target`` without any of its secrets: a quoted fragment
    that holds one, or a piece of one, is masked whole (libpq quotes what it echoes), and
    secrets of three characters or more are masked wherever they appear (a shorter one
    would mask half the message's letters)."""
    if not isinstance(target, str):
        return message
    found = secrets(target)
    if not found:
        return message

    def quoted(m: re.Match[str]) -> str:
        inner = m.group(0)[1:-1]
        if any(s in inner for s in found):
            return m.group(0)[0] + MASK + m.group(0)[-1]
        return m.group(0)

    message = _QUOTED.sub(quoted, message)
    for secret in found:
        if len(secret) >= 3:
            message = message.replace(secret, MASK)
    return message


def connect(target: Any) -> Backend:
    """The backend for ``target``: a DuckDB path, a PostgreSQL URL or keyword string,
    ``spark:DIR``, or an open duckdb connection, psycopg connection or SparkSession."""
    name = backend_name(target)
    module, _, cls = BACKENDS[name].partition(":")
    backend_class = getattr(import_module(module), cls)
    if name != "postgres" or not isinstance(target, str):
        return backend_class(target)
    try:
        return backend_class(target)
    except AnonsqlError as e:
        e.args = (scrub(str(e), target),)
        raise e from None
    except Exception as e:  # whatever the driver raises may quote the connection string
        detail = scrub(" ".join(str(e).split()), target)
        raise BackendError(f"cannot connect to PostgreSQL at {redact(target)}: {detail}") from None


__all__ = ["BACKENDS", "backend_name", "connect", "is_libpq_string", "redact", "scrub", "secrets"]
