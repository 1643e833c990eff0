"""Secrets and client files (issue 12, item 6): no password in any message whatever form the
connection string takes; spec files name server targets; hierarchy files named in SQL text
are read only where the caller allows it, and a refused or failing statement stores
nothing."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import anonsql
from anonsql.backend import backend_name, is_libpq_string, redact, scrub, secrets
from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.errors import AnonsqlError, BackendError, InputError
from anonsql.spec_file import load_spec_file

#: every piece of the passwords below; none may appear in a message
PIECES = ("Sup3r", "ecret", "Secret", "%24", "%40", "Pw9")


def closed_port() -> int:
    """A loopback port nothing listens on (bound and released: refused on connect)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def url_forms(port: int) -> list[str]:
    return [
        f"postgresql://anonsql:Sup3rSecret@127.0.0.1:{port}/db",  # userinfo password
        f"postgresql://anonsql:Sup3r%24ecret%40Pw9@127.0.0.1:{port}/db",  # percent-encoded
        f"postgresql://anonsql:Sup3r$ecret@Pw9@127.0.0.1:{port}/db",  # unencoded @
        f"postgresql://anonsql:Sup3r/Secret@127.0.0.1:{port}/db",  # unencoded /
        f"postgresql://anonsql@127.0.0.1:{port}/db?password=Sup3rSecret",  # query parameter
        f"postgresql://anonsql@127.0.0.1:{port}/db?sslmode=disable&password=Sup3r%24ecret",
        f"postgresql://anonsql:Sup3rSecret@127.0.0.1:{port}/db?bogus=1",  # unknown parameter
        f"postgresql://anonsql:Sup3rSecret@127.0.0.1:{port}/db?sslmode=nonsense",  # bad value
        f"postgresql://anonsql:Sup3r%zzSecret@127.0.0.1:{port}/db",  # bad percent escape
        f"postgres://anonsql:Sup3rSecret@127.0.0.1:{port}/db",
        f"host=127.0.0.1 port={port} user=anonsql password=Sup3rSecret dbname=db",  # libpq
        f"host=127.0.0.1 port={port} password='Sup3r Secret' bogus=1",  # quoted, unknown key
        f"host=127.0.0.1 port={port} password = Sup3rSecret sslmode=nonsense",
        f"dbname=db password=Sup3rSecret host=127.0.0.1 port={port} garbage",  # not a pair
    ]


def assert_no_secret(text: str) -> None:
    for piece in PIECES:
        assert piece not in text, text


# -- redaction without a server ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "shown"),
    [
        ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u:a/b?c@h/db", "postgresql://u:***@h/db"),
        (
            "postgresql://u@h/db?password=pw&sslmode=require",
            "postgresql://u@h/db?password=***&sslmode=require",
        ),
        ("postgresql://h/db?PASSWORD=pw", "postgresql://h/db?PASSWORD=***"),
        ("postgresql://h/db", "postgresql://h/db"),
        ("host=h password=pw user=u", "host=h password=*** user=u"),
        ("host=h password='p w\\'x' user=u", "host=h password=*** user=u"),
        ("host=h password = pw", "host=h password = ***"),
        ("warehouse.duckdb", "warehouse.duckdb"),
    ],
)
def test_redact(target, shown):
    assert redact(target) == shown


def test_secrets_cover_every_reading():
    assert {"p@ss", "p", "ss"} <= set(secrets("postgresql://u:p@ss@h/db"))
    assert {"a%40b", "a@b"} <= set(secrets("postgresql://u:a%40b@h/db"))
    assert "p w'x" in secrets("host=h password='p w\\'x'")
    assert secrets("postgresql://u@h/db") == []
    message = 'failed to resolve host "ss@h": invalid token "a%40b", user "u"'
    assert scrub(message, "postgresql://u:p@ss@h/db") == (
        'failed to resolve host "***": invalid token "a%40b", user "u"'
    )
    assert "Sup3rSecret" not in scrub("x Sup3rSecret y", "host=h password=Sup3rSecret")


@pytest.mark.parametrize(
    ("target", "name"),
    [
        ("host=db.example dbname=x", "postgres"),
        ("dbname=x", "postgres"),
        ("user=me password='a b' application_name=etl", "postgres"),
        ("POSTGRESQL://h/db", "postgres"),
        ("spark:/tmp/w", "spark"),
        ("data/run=3.duckdb", "duckdb"),
        ("run=3", "duckdb"),  # keyword-shaped, but no connection keyword of libpq's
        ("my file.duckdb", "duckdb"),
        (":memory:", "duckdb"),
    ],
)
def test_backend_of_a_target(target, name):
    assert backend_name(target) == name
    assert is_libpq_string(target) == (name == "postgres" and "://" not in target.lower())


# -- connection errors to a closed port: every form, API and CLI ------------------------------
@pytest.mark.parametrize("index", range(len(url_forms(1))))
def test_no_password_in_connection_errors(index):
    pytest.importorskip("psycopg", reason="psycopg is not installed (anonsql[postgres])")
    target = url_forms(closed_port())[index]
    with pytest.raises(BackendError, match="cannot connect to PostgreSQL at ") as e:
        Database.open(target)
    assert_no_secret(str(e.value))
    assert e.value.__cause__ is None and e.value.__suppress_context__
    with pytest.raises(BackendError) as e:
        anonsql.connect(target)
    assert_no_secret(str(e.value))
    with pytest.raises(BackendError) as e:
        anonsql.anonymize((target, "t"), {"qi": ["a"], "k": 2})
    assert_no_secret(str(e.value))
    result = CliRunner().invoke(cli, ["hierarchy", "list", "--db", target])
    assert_one_line(result, "cannot connect to PostgreSQL")
    assert_no_secret(result.output)
    env = CliRunner().invoke(cli, ["sql", "SELECT 1"], env={"ANONSQL_DB": target})
    assert_one_line(env, "cannot connect to PostgreSQL")
    assert_no_secret(env.output)


def assert_one_line(result: Result, fragment: str) -> None:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in result.output


# -- spec files name targets -----------------------------------------------------------------
def test_spec_file_targets(tmp_path):
    base = 'table = "t"\nqi = ["a"]\nk = 2\n'
    cases = {
        "postgresql://u:pw@db.example:5432/warehouse": None,
        "host=db.example dbname=warehouse": None,
        "spark:/data/warehouse": None,
        "spark:relative/warehouse": None,
        ":memory:": None,
        "/abs/w.duckdb": None,
        "w.duckdb": str(tmp_path / "w.duckdb"),
    }
    for database, expected in cases.items():
        spec = tmp_path / "s.toml"
        spec.write_text(f"database = {database!r}\n{base}".replace("'", '"'))
        assert load_spec_file(spec).database == (expected or database)
    spec.write_text(f"database = 5\n{base}")
    with pytest.raises(InputError, match="'database' must be a DuckDB file path, a URL"):
        load_spec_file(spec)


def test_spec_file_with_a_url_connects_to_it_and_hides_the_password(tmp_path):
    pytest.importorskip("psycopg", reason="psycopg is not installed (anonsql[postgres])")
    spec = tmp_path / "s.toml"
    url = f"postgresql://anonsql:Sup3r$ecret@Pw9@127.0.0.1:{closed_port()}/db?bogus=1"
    spec.write_text(f'database = "{url}"\ntable = "t"\nqi = ["a"]\nk = 2\n')
    result = CliRunner().invoke(cli, ["run", str(spec)])
    assert_one_line(result, "cannot connect to PostgreSQL at postgresql://anonsql:***@")
    assert_no_secret(result.output)
    assert str(tmp_path) not in result.output  # not taken for a path beside the spec file


# -- hierarchy files named in SQL ------------------------------------------------------------
PEOPLE = "CREATE TABLE people AS SELECT * FROM (VALUES ('m', 1), ('f', 2), ('m', 3)) t(sex, n)"
# n numbers the rows, a direct identifier: dropped (every column of an output has a role)
FILE_STATEMENT = (
    "ANONYMIZE TABLE people INTO p2 WITH (k = 2, qi = (sex), mask = (n = 'drop'), "
    'hierarchy = (sex = \'{{"file": "{path}", "name": "sex_h"}}\'))'
)


@pytest.fixture
def people(tmp_path) -> tuple[Path, Path]:
    """A DuckDB file with a small table, and a hierarchy file for its column."""
    db = tmp_path / "p.duckdb"
    con = anonsql.connect(db)
    con.sql(PEOPLE)
    con.close()
    h = tmp_path / "sex.csv"
    h.write_text("m;*\nf;*\n")
    return db, h


def catalog(db: Path) -> set[str]:
    d = Database.open(db)
    try:
        return set(d.hierarchies.catalog()["name"])
    finally:
        d.close()


def test_files_in_sql_are_allowed_on_duckdb_by_default(people):
    db, h = people
    with anonsql.connect(db) as con:
        run = con.sql(FILE_STATEMENT.format(path=h))
        assert run.output == "p2"
    assert "sex_h" in catalog(db)


def test_files_in_sql_refused_when_not_allowed(people, tmp_path):
    db, _ = people
    missing = tmp_path / "not-there.csv"  # refused before it is read: no "does not exist"
    statement = FILE_STATEMENT.format(path=missing)
    with anonsql.connect(db, allow_files=False) as con:
        with pytest.raises(InputError, match="allow_files=True") as e:
            con.sql(statement)
        assert "does not exist" not in str(e.value) and "nothing was read or stored" in str(e.value)
    result = CliRunner().invoke(cli, ["sql", statement, "--no-allow-files", "--db", str(db)])
    assert_one_line(result, "--allow-files")
    assert "sex_h" not in catalog(db)
    with pytest.raises(InputError, match="allow_files is True, False or None"):
        anonsql.connect(db, allow_files="yes")


def test_a_failing_statement_stores_no_hierarchy(people):
    db, h = people
    statement = (
        "ANONYMIZE TABLE people INTO p3 WITH (k = 2, qi = (sex, nowhere), "
        f'hierarchy = (sex = \'{{"file": "{h}", "name": "sex_h"}}\'))'
    )
    with anonsql.connect(db) as con, pytest.raises(AnonsqlError, match="nowhere"):
        con.sql(statement)
    result = CliRunner().invoke(cli, ["sql", statement, "--db", str(db)])
    assert_one_line(result, "nowhere")
    assert "sex_h" not in catalog(db)


def test_files_in_sql_against_postgres(pg_url, people):
    """Refused by default against a server, allowed when asked; wrong credentials in every
    form keep the password out of the message."""
    _, h = people
    con = anonsql.connect(pg_url)
    con.sql(PEOPLE)
    statement = FILE_STATEMENT.format(path=h)
    with pytest.raises(InputError, match="stored in the postgres database only when allowed"):
        con.sql(statement)
    assert "sex_h" not in set(con.database.hierarchies.catalog()["name"])
    con.close()
    result = CliRunner().invoke(cli, ["sql", statement, "--db", pg_url])
    assert_one_line(result, "anonsql sql --allow-files")
    result = CliRunner().invoke(cli, ["sql", statement, "--allow-files", "--db", pg_url])
    assert result.exit_code == 0, result.output
    with anonsql.connect(pg_url, allow_files=True) as con:
        assert "sex_h" in set(con.database.hierarchies.catalog()["name"])

    # wrong credentials, once per form, against the running server
    rest = pg_url.split("@", 1)[1]  # host:port/db
    host, port = rest.split("/")[0].rsplit(":", 1)
    user = pg_url.split("://", 1)[1].split(":", 1)[0]
    for wrong in (
        f"postgresql://{user}:Sup3r$ecret@Pw9@{rest}",
        f"postgresql://{user}@{rest}?password=Sup3rSecret",
        f"host={host} port={port} user={user} password='Sup3r Secret' dbname=postgres",
    ):
        with pytest.raises(BackendError) as e:
            Database.open(wrong)
        message = str(e.value)
        assert "password authentication failed" in message or "failed to resolve" in message
        assert_no_secret(message)
