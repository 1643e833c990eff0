"""Spark Connect targets (``sc://host:port``, or a SparkSession built with ``.remote()``)
against a real Spark Connect server that this module starts (the one pyspark ships: class
``SparkConnectServer`` of ``jars/spark-connect_*.jar``, as ``sbin/start-connect-server.sh``
runs it). A representative subset of the engine tests runs through it: the same run as
DuckDB with the histogram kept in the engine (hierarchies, closure-table GROUP BYs, search,
the self-guarding view), the Python API on the ``.remote()`` session object, the CLI, an
unreachable server; Spark Connect pays seconds per statement, so the rest of
``test_backends`` stays with the local session."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest
from click.testing import CliRunner

from anonsql.algorithms.lattice import engine_classes
from anonsql.database import Database
from anonsql.errors import BackendError
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.engines import (
    QIS,
    TEST_JVM_OPTIONS,
    TEST_SQL_CONF,
    output_rows,
    people,
    roles,
    setup,
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@pytest.fixture(scope="session")
def connect_url(tmp_path_factory):
    """Starts a local Spark Connect server for the session; skips, saying why, where Java,
    pyspark or its Connect client (grpcio) are missing."""
    pytest.importorskip("pyspark", reason="pyspark is not installed (anonsql[spark])")
    pytest.importorskip("grpc", reason="the Spark Connect client needs grpcio (anonsql[spark])")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 (Debian's openjdk-17-jre-headless); none found")
    home = _spark_home()
    if not list((home / "jars").glob("spark-connect_*.jar")):
        pytest.skip(f"pyspark at {home} ships no Spark Connect server jar")
    root = tmp_path_factory.mktemp("spark_connect")
    port = _free_port()
    log = open(root / "server.log", "wb")  # noqa: SIM115 - open while the server runs
    command = [
        str(home / "bin" / "spark-submit"),
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--name",
        "anonsql-test-connect",
        "--master",
        "local[2]",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.ui.enabled=false",
        *[arg for key, value in TEST_SQL_CONF.items() for arg in ("--conf", f"{key}={value}")],
        "--conf",
        f"spark.sql.warehouse.dir={root / 'warehouse'}",
        "--conf",
        f"spark.driver.extraJavaOptions=-Dderby.system.home={root} {TEST_JVM_OPTIONS}",
    ]
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_NO_DAEMONIZE": "1"}
    server = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            if server.poll() is not None:
                tail = (root / "server.log").read_text(errors="replace")[-2000:]
                pytest.skip(f"the Spark Connect server did not start: {tail}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline:
                pytest.skip("the Spark Connect server did not open its port within 180 s")
            time.sleep(0.5)
        url = f"sc://127.0.0.1:{port}"
        yield url
        # the client releases its session at exit, retrying for minutes when the server
        # is gone: release it while the server is up
        from pyspark.sql.connect.session import SparkSession as RemoteSession

        RemoteSession.builder.remote(url).getOrCreate().stop()
    finally:
        # this fixture's own server only: its process group, by id
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:  # a throw-away server: a few seconds to stop, then killed
            server.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)
        log.close()


@pytest.fixture
def connect_db(connect_url):
    """The URL, with a fresh database (schema) as the Connect session's current one."""
    db = Database.open(connect_url)
    name = f"anonsql_connect_{uuid.uuid4().hex[:8]}"
    db.backend.session.sql(f"CREATE DATABASE {name}")
    db.backend.session.catalog.setCurrentDatabase(name)
    return connect_url


def test_nothing_starts_locally(connect_db):
    db = Database.open(connect_db)
    assert db.backend.remote and db.backend.dialect == "spark"
    assert type(db.backend.session).__module__.startswith("pyspark.sql.connect")


def test_same_answers_through_connect(connect_db):
    """The engine path end to end on the server (hierarchies, the histogram kept in the
    engine: a cached temporary view and closure-table GROUP BYs, the search, the
    self-guarding view, provenance), through the Python API on a ``.remote()`` session,
    against DuckDB's in-memory answer. test_backends' fuller engine tests run on the local
    session: Spark Connect pays the same seconds per statement, and the suite's budget is
    shared."""
    import anonsql

    frame = people(300, seed=4)
    ref = Database.open(":memory:")
    setup(ref, frame)
    db = Database.open(connect_db)
    setup(db, frame)
    # 'id', the tests' row key, and the other columns: roles() of test_backends
    others = roles(sensitive="disease")
    spec = Spec(qis=QIS, sensitive="disease", k=4, l=2, suppression=0.05, output="out", **others)
    expected = anonymize(ref, "people", spec)
    # through the Python API, on the session object the Connect client built (.remote());
    # 30 kB hold the search's partitions, not the histogram: it stays in the engine
    session = db.backend.session
    assert type(session).__module__.startswith("pyspark.sql.connect")
    options = {"qi": QIS, "sensitive": "disease", "k": 4, "l": 2, "suppression": 0.05, **others}
    # every node written to the engine first (a cached view), the nodes above it grouped
    # from it, as on a large table (MATERIALIZE_ROWS)
    with mock.patch.object(engine_classes, "MATERIALIZE_ROWS", 0):
        got = anonsql.anonymize(
            (session, "people"), {**options, "output": "out"}, memory_budget=30_000
        )
    assert got.measures["nodes_in_engine"] >= 1
    assert got.measures["nodes_written_in_engine"] >= 1
    assert got.levels == expected.levels
    for key in ("classes", "suppressed_rows"):
        assert got.measures[key] == expected.measures[key]
    pd.testing.assert_frame_equal(output_rows(db, "out"), output_rows(ref, "out"))
    assert not [t for t in db.backend.relation_names() if t.startswith("__anonsql")]


def test_cli_on_connect_is_quiet(connect_db):
    from anonsql.cli.main import cli

    res = CliRunner().invoke(cli, ["sql", "--db", connect_db, "SELECT 1 AS one"])
    assert res.exit_code == 0, res.output
    assert "WARN" not in res.output and "log4j" not in res.output
    assert "one" in res.output


def test_unreachable_server_is_a_clear_error():
    pytest.importorskip("grpc", reason="the Spark Connect client needs grpcio (anonsql[spark])")
    port = _free_port()
    t0 = time.monotonic()
    with pytest.raises(BackendError, match=f"cannot reach Spark Connect at sc://127.0.0.1:{port}"):
        Database.open(f"sc://127.0.0.1:{port}")
    assert time.monotonic() - t0 < 60


def test_verbose_switch(monkeypatch):
    from anonsql.backend import backend_name
    from anonsql.backend.spark_backend import verbose

    assert backend_name("sc://host:15002") == "spark"
    monkeypatch.delenv("ANONSQL_VERBOSE", raising=False)
    assert not verbose()
    monkeypatch.setenv("ANONSQL_VERBOSE", "1")
    assert verbose()
    monkeypatch.setenv("ANONSQL_VERBOSE", "0")
    assert not verbose()
