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
    try:
        with servers.behind_nginx(pg.url(), prefix, **env) as (_, replicas, nginx):
            yield Topology(replicas, nginx)
    finally:
        pg.close()
