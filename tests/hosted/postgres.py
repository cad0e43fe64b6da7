"""A real, temporary PostgreSQL cluster for the tests (Debian's postgresql 15).

`Postgres()` runs initdb in a temporary directory and starts the server on a free loopback
port; `url()` makes a fresh database and answers its SQLAlchemy URL
(postgresql+psycopg://shaomai:PASSWORD@127.0.0.1:PORT/NAME); `stop()` and `start()` take the
server away and bring it back (an outage mid-test); `close()` stops it and removes the
directory. PostgreSQL refuses to run as root, so as root initdb and pg_ctl run as the
`postgres` user (runuser) in a directory chowned to it.

`shared()` is one cluster for the whole test process (started on first use, removed at exit),
so the store tests of several modules pay for one initdb.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

BIN = Path(os.environ.get("SHAOMAI_PG_BIN", "/usr/lib/postgresql/15/bin"))
USER = "shaomai"


def available() -> bool:
    return (BIN / "initdb").exists() and (BIN / "pg_ctl").exists()


def require() -> None:
    """Skip the test where PostgreSQL is not installed (`apt-get install postgresql`)."""
    if not available():
        pytest.skip(f"PostgreSQL is not installed ({BIN}/initdb missing)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="shaomai-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.password = secrets.token_urlsafe(12)
        self.port = _free_port()
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.dir, "postgres", "postgres")
        pwfile = self.dir / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as:
            shutil.chown(pwfile, "postgres", "postgres")
        try:
            self._run(
                "initdb", "-D", self.data, "-U", USER, f"--pwfile={pwfile}", "-E", "UTF8",
                "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--no-instructions",
            )  # fmt: skip
            pwfile.unlink()
            self.start()
        except BaseException:
            self.close()
            raise

    def _run(self, tool: str, *args) -> None:
        cmd = [*self._as, str(BIN / tool), *map(str, args)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.dir)
        if done.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr}\n{log}")

    def start(self) -> None:
        opts = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c full_page_writes=off -c max_connections=100"
        )
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-o", opts, "-w", "-t", "60", "start")

    def stop(self, mode: str = "immediate") -> None:
        """Take the server away (immediate: as a crash or a cut cable looks to a client)."""
        self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def url(self, database: str | None = None) -> str:
        """A new, empty database's SQLAlchemy URL (with the password: never log it)."""
        import psycopg

        name = database or f"t_{secrets.token_hex(6)}"
        dsn = f"host=127.0.0.1 port={self.port} user={USER} password={self.password}"
        with psycopg.connect(f"{dsn} dbname=postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://{USER}:{self.password}@127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        try:
            if self.running():
                self.stop("fast")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


_shared: Postgres | None = None


def shared() -> Postgres:
    """The test process's one cluster (skips the test when PostgreSQL is not installed)."""
    global _shared
    require()
    if _shared is None:
        _shared = Postgres()
        atexit.register(_shared.close)
    if not _shared.running():  # a test stopped it and failed before starting it again
        _shared.start()
    return _shared
