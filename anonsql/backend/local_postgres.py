"""A throw-away PostgreSQL server from the machine's own binaries (Debian's ``postgresql``
package): a new cluster in a temporary directory, listening on loopback only. The tests and
the benchmarks use it; it is also the quickest way to try the PostgreSQL backend.

PostgreSQL refuses to run as root, so under root the cluster belongs to the ``postgres``
system user the Debian package creates.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from anonsql.errors import BackendError


def find_binaries() -> Path | None:
    """Folder holding ``initdb`` and ``pg_ctl``: $PATH first, then Debian's versioned
    folders (newest first)."""
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LocalPostgres:
    """A running cluster; :meth:`stop` removes it with its data."""

    directory: Path
    port: int
    user: str
    password: str
    bindir: Path
    run_as: str | None

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.run_as:
            cmd = ["runuser", "-u", self.run_as, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, text=True)

    def create_database(self, name: str) -> str:
        """A new database on this server; returns its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "immediate", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)


def start(password: str = "anonsql", statement_timeout: str | None = None) -> LocalPostgres:
    """initdb + pg_ctl start on a free loopback port; raises :class:`BackendError` when the
    binaries are missing or the server does not come up. ``statement_timeout`` (e.g.
    ``"300s"``) bounds every query, so a test that hangs cannot leave a busy server behind."""
    bindir = find_binaries()
    if bindir is None:
        raise BackendError(
            "no PostgreSQL server binaries (initdb) on this machine; install Debian's "
            "'postgresql' package"
        )
    run_as = None
    directory = Path(tempfile.mkdtemp(prefix="anonsql-pg-"))
    if os.geteuid() == 0:
        run_as = "postgres"
        try:
            pw = pwd.getpwnam(run_as)
        except KeyError:
            raise BackendError("running as root needs the 'postgres' system user") from None
        os.chown(directory, pw.pw_uid, pw.pw_gid)
        os.chmod(directory, 0o700)
    pwfile = directory / "pw"
    pwfile.write_text(password + "\n")
    if run_as:
        shutil.chown(pwfile, run_as)
    server = LocalPostgres(directory, _free_port(), "anonsql", password, bindir, run_as)
    data = directory / "data"
    try:
        server._run(
            "initdb", "-D", str(data), "-U", server.user, "--pwfile", str(pwfile),
            "-A", "scram-sha-256", "-E", "UTF8", "--no-locale",
        )  # fmt: skip
        server._run(
            "pg_ctl", "-D", str(data), "-w", "-t", "60", "-l", str(directory / "log"),
            "-o", f"-c listen_addresses=127.0.0.1 -p {server.port} -k {directory} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c shared_buffers=256MB -c work_mem=256MB -c max_parallel_workers_per_gather=2"
            + (f" -c statement_timeout={statement_timeout}" if statement_timeout else ""),
            "start",
        )  # fmt: skip
    except subprocess.CalledProcessError as e:
        log = directory / "log"
        detail = log.read_text()[-2000:] if log.exists() else ""
        shutil.rmtree(directory, ignore_errors=True)
        raise BackendError(f"cannot start PostgreSQL: {e.stderr or e}\n{detail}") from None
    return server
