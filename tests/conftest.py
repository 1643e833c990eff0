from __future__ import annotations

import pytest

#: test files of the slow tier as a whole: the server engines, a paper's reproduction, dbt
#: builds, every README example in a fresh folder, the report in a headless browser
SLOW_FILES = {
    "test_backends.py",
    "test_spark_connect.py",
    "test_seed004_paper.py",
    "test_etl_examples.py",
    "test_readme_examples.py",
    "test_report_browser.py",
}
#: the fixtures that start a server engine (a throw-away PostgreSQL or a Spark session)
ENGINE_FIXTURES = {"pg_url", "spark_session", "spark_db", "engine"}


def pytest_collection_modifyitems(config, items):
    """Mark the slow tier (``-m "not slow"`` leaves it out): the files above, and every test
    that runs on a server engine (those fixtures, or postgres/spark in its id)."""
    for item in items:
        name = item.nodeid.lower()
        if {"spark_session", "spark_db"} & set(getattr(item, "fixturenames", ())):
            # pytest_xdist_make_scheduler below finds the Spark tests by their ids
            assert "spark" in name, f"{item.nodeid} runs on Spark: say so in its name"
        if (
            item.path.name in SLOW_FILES
            or ENGINE_FIXTURES & set(getattr(item, "fixturenames", ()))
            or "spark" in name
            or "postgres" in name
        ):
            item.add_marker(pytest.mark.slow)


def pytest_collection_finish(session):
    """Once the tests are collected, the objects alive (modules, collected items, pandas,
    sqlglot, hypothesis) are frozen out of the cyclic garbage collector and its youngest
    generation is collected less often. The tests allocate millions of short-lived sqlglot
    nodes; each full collection used to walk every object of the process again. In one
    sitting, alternating (`pytest -n 0 -m "not slow" tests/output tests/surfaces
    tests/hierarchy`, load 1.0): 93.0 and 90.3 s with these settings, 102.0 and 101.9 s
    with Python's defaults. The product does
    not change the collector's settings: a user's process keeps them."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 50)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Files stay on one worker (``--dist loadfile``: a file's throw-away PostgreSQL
    database and module fixtures are made once), except that every Spark test, from any
    file, goes to one worker: one local JVM for the session instead of one per worker,
    started and warmed once (its first statements run interpreted for tens of seconds), and
    no second 4 GB driver competing for the two cores."""
    from xdist.scheduler import LoadFileScheduling

    class SparkOnOneWorker(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "spark" if "spark" in nodeid.lower() else super()._split_scope(nodeid)

    return SparkOnOneWorker(config, log)


@pytest.fixture
def db():
    from anonsql.database import Database

    d = Database.open(":memory:")
    yield d
    d.close()


# -- real engines: a throw-away PostgreSQL server and a local Spark session ------------------
_counter = {"n": 0}


def _unique(prefix: str) -> str:
    _counter["n"] += 1
    return f"{prefix}{_counter['n']}"


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server for the session: $ANONSQL_TEST_POSTGRES_URL when set, else a
    cluster started from the machine's binaries in a temporary directory."""
    import os

    pytest.importorskip("psycopg", reason="psycopg is not installed (anonsql[postgres])")
    from anonsql.backend import local_postgres

    url = os.environ.get("ANONSQL_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    if local_postgres.find_binaries() is None:
        pytest.skip("no PostgreSQL server binaries (Debian's postgresql package) on this machine")
    server = local_postgres.start(statement_timeout="300s")
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server) -> str:
    """A fresh, empty database on the session's server."""
    import psycopg

    if isinstance(pg_server, str):
        name = _unique("anonsql_test_")
        with psycopg.connect(pg_server, autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return pg_server.rsplit("/", 1)[0] + f"/{name}"
    return pg_server.create_database(_unique("t"))


@pytest.fixture(scope="session")
def spark_session(tmp_path_factory):
    import shutil

    pytest.importorskip("pyspark", reason="pyspark is not installed (anonsql[spark])")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 (Debian's openjdk-17-jre-headless); none found")
    from anonsql.backend.spark_backend import local_session
    from tests.helpers.engines import TEST_JVM_OPTIONS, TEST_SQL_CONF

    session = local_session(
        tmp_path_factory.mktemp("spark"),
        master="local[2]",
        java_options=TEST_JVM_OPTIONS,
    )
    for key, value in TEST_SQL_CONF.items():
        session.conf.set(key, value)
    yield session
    session.stop()


@pytest.fixture
def spark_db(spark_session):
    """A fresh Spark database (schema) as the session's current one."""
    name = _unique("anonsql_test_")
    spark_session.sql(f"CREATE DATABASE {name}")
    spark_session.catalog.setCurrentDatabase(name)
    return spark_session


@pytest.fixture(params=["postgres", "spark"])
def engine(request):
    """Opens a Database on a fresh target of each server engine."""
    from anonsql.database import Database

    if request.param == "postgres":
        target = request.getfixturevalue("pg_url")
    else:
        target = request.getfixturevalue("spark_db")
    opened = []

    def open_db():
        d = Database.open(target)
        opened.append(d)
        return d

    open_db.name = request.param
    open_db.target = target
    yield open_db
    for d in opened:
        d.close()
