"""Real servers on loopback for the hosted tests: redis-server, nginx with deploy/nginx.conf,
and app replicas (real uvicorn processes) sharing them and a PostgreSQL (tests/hosted/postgres.py).

Everything is started by the test and removed after it: temp dirs, free ports, no daemons.
nginx runs the repository's own deploy/nginx.conf with only the addresses changed (the
replicas' `server` lines, its `listen` port, its temp paths), so the routing the test checks
is the routing an operator deploys.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ARTIFACTS, ROOT, free_port, start_server, stop_server

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def require() -> None:
    """Skip where the servers are not installed (`make test` installs them with apt)."""
    for tool in (REDIS, NGINX):
        if not Path(tool).exists():
            pytest.skip(f"{tool} is not installed (make hosted)")


def _wait(what: str, ok, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not ok():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up in {seconds:.0f} s")
        time.sleep(0.05)


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1)
        return True
    except OSError:
        return False


class Redis:
    """redis-server on a free loopback port, no persistence (as deploy's compose runs it)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        import redis

        def ping() -> bool:
            try:
                return redis.Redis(port=self.port, socket_timeout=1).ping()
            except redis.RedisError:
                return False

        _wait("redis-server", ping)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


class Nginx:
    """nginx running deploy/nginx.conf in front of the given replica ports."""

    def __init__(self, replica_ports: list[int]) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="shaomai-nginx-"))
        conf = (ROOT / "deploy" / "nginx.conf").read_text()
        servers = re.findall(r"^\s*server shaomai-\d+:8000[^;]*;\n", conf, re.M)
        assert len(servers) == 2, "deploy/nginx.conf names shaomai-1 and shaomai-2"
        lines = "".join(
            f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;\n" for p in replica_ports
        )
        conf = conf.replace(servers[0], lines).replace(servers[1], "")
        conf = conf.replace("listen 8080;", f"listen 127.0.0.1:{self.port};")
        conf = conf.replace("/tmp/shaomai-nginx", str(self.dir / "nginx"))
        (self.dir / "nginx.conf").write_text(conf)
        self.log = ARTIFACTS / f"nginx-{self.port}.log"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [NGINX, "-e", "stderr", "-p", str(self.dir), "-c", str(self.dir / "nginx.conf"),
                 "-g", "daemon off;"],
                stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        _wait("nginx", lambda: _answers(f"{self.url}/api/health"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:  # SIGQUIT waits for open websockets
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Replica:
    """One app process (`python -m backend`) with the hosted settings."""

    def __init__(self, name: str, redis_url: str, database_url: str, **env: str) -> None:
        self.name = name
        self.port = free_port()
        self.env = {
            "SHAOMAI_REPLICA": name,
            "SHAOMAI_REDIS_URL": redis_url,
            "SHAOMAI_DATABASE_URL": database_url,
            **env,
        }
        self.proc, self.url, self.log = start_server(
            self.env, port=self.port, log_name=f"replica-{name}-{self.port}.log"
        )

    def health(self) -> dict:
        import json

        with urllib.request.urlopen(f"{self.url}/api/health", timeout=5) as r:
            return json.loads(r.read())

    def restart(self) -> None:
        """Start it again on its port (after a kill): where nginx looks for it."""
        self.stop()
        self.proc, self.url, self.log = start_server(
            self.env, port=self.port, log_name=f"replica-{self.name}-{self.port}-again.log"
        )

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last autosave, sockets dropped (a crashed replica)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            stop_server(self.proc)


def run_apart(coro):
    """asyncio.run in a thread of its own: the browser tests' sync Playwright keeps an event
    loop running in the main thread, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@contextlib.contextmanager
def behind_nginx(database_url: str, prefix: str = "r", **env: str) -> Iterator[tuple]:
    """A fresh Redis, two replicas ({prefix}1, {prefix}2) saving into `database_url`, and
    nginx in front of them: (redis, replicas, nginx), every one stopped on the way out."""
    rd = Redis()
    replicas: list[Replica] = []
    nginx = None
    try:
        replicas = [Replica(f"{prefix}{i}", rd.url, database_url, **env) for i in (1, 2)]
        nginx = Nginx([r.port for r in replicas])
        yield rd, replicas, nginx
    finally:
        if nginx is not None:
            nginx.stop()
        for r in replicas:
            r.stop()
        rd.stop()
