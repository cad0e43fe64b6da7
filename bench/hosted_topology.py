"""The hosted topology for a bench: PostgreSQL, Redis, two replicas and nginx on loopback,
started by the hosted tests' own code (tests/hosted/servers.py) and always stopped."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Topology:
    replicas: list
    nginx: object

    @property
    def ws_url(self) -> str:
        return self.nginx.url.replace("http://", "ws://") + "/ws"


@contextlib.contextmanager
def topology(env: dict[str, str], prefix: str = "b") -> Iterator[Topology]:
    from tests.hosted import postgres, servers

    pg = postgres.Postgres()
    rd = servers.Redis()
    replicas, nginx = [], None
    try:
        db = pg.url()
        replicas = [servers.Replica(f"{prefix}{i}", rd.url, db, **env) for i in (1, 2)]
        nginx = servers.Nginx([r.port for r in replicas])
        yield Topology(replicas, nginx)
    finally:
        if nginx is not None:
            nginx.stop()
        for r in replicas:
            r.stop()
        rd.stop()
        pg.close()
