"""Hosted (issue 18): two replicas behind nginx with Redis and PostgreSQL, real, on loopback.

- The proxy's cost: one driver plays `gpt` at 10 steps/s through nginx; 50 viewers watch it
  straight from the replica that runs it, then 50 through nginx: frame lag p95 each way.
- Sessions spread over replicas: 8 `gpt` sessions play as fast as they can through nginx on
  2 replicas, then 8 on 1 replica: steps/s together. On this 2-core machine both replicas
  share the same two cores, so the ratio says what spreading costs or gains here, not what
  two machines would give.

The topology is the hosted test's (tests/hosted/servers.py): one piece of code starts it.
"""

from __future__ import annotations

import time

from bench.concurrency import measure
from bench.hosted_topology import topology
from bench.procs import Child, ready_all, tell_all
from bench.report import Figure, Result, percentiles

S = "hosted"
VIEWERS, SPEED, SESSIONS = 50, 10.0, 8
PARAMS = {"steps": 20000}


def _watch(url: str, session: str, seconds: float, driver: Child) -> list[float]:
    """Frame lags (ms) of VIEWERS viewers of `session` through `url`, over `seconds`."""
    kids = [
        Child("viewers", {"url": url, "session": session, "n": VIEWERS // 2, "routed": True})
        for _ in range(2)
    ]
    try:
        ready_all(kids, 120)
        tell_all([driver, *kids], "go")
        time.sleep(seconds)
        tell_all(kids, "stop")
        outs = [k.result(120) for k in kids]
    finally:
        for k in kids:
            k.close()
    return [(r - t) * 1000 for o in outs for fr in o["frames"] for (_, t, r) in fr]


def _together(url: str, seconds: float) -> float:
    kids = [Child("drivers", {"url": url, "lab": "gpt", "params": PARAMS, "n": SESSIONS // 2,
                              "routed": True}) for _ in range(2)]  # fmt: skip
    try:
        ready_all(kids, 300)
        return sum(measure(kids, 3.0, seconds))
    finally:
        for k in kids:
            k.close()


def run(opts) -> Result:
    res = Result()
    seconds = 8.0 if opts.quick else 20.0
    env = {"SHAOMAI_FRAME_CLOCK": "1", "SHAOMAI_LOG_LEVEL": "warning"}
    with topology(env) as top:
        replicas, proxied = top.replicas, top.ws_url
        driver = Child(
            "viewers",
            {"url": proxied, "lab": "gpt", "params": PARAMS, "speed": SPEED, "routed": True},
        )
        try:
            session = driver.read(120)["session"]
            owner = max(replicas, key=lambda r: r.health()["sessions"])
            direct = owner.url.replace("http://", "ws://") + "/ws"
            lag_direct = percentiles(_watch(direct, session, seconds, driver))
            tell_all([driver], "stop")
            driver.result(60)
        finally:
            driver.close()
        driver = Child(
            "viewers",
            {"url": proxied, "lab": "gpt", "params": PARAMS, "speed": SPEED, "routed": True},
        )
        try:
            session = driver.read(120)["session"]
            lag_proxied = percentiles(_watch(proxied, session, seconds, driver))
            tell_all([driver], "stop")
            driver.result(60)
        finally:
            driver.close()
        spread = _together(proxied, seconds)
        one = _together(replicas[0].url.replace("http://", "ws://") + "/ws", seconds)
    res.figures += [
        Figure(S, f"{VIEWERS} viewers direct: lag p95", lag_direct["p95"], "ms",
               note=f"p50 {lag_direct['p50']:.0f} ms, gpt at {SPEED:.0f} steps/s"),
        Figure(S, f"{VIEWERS} viewers through nginx: lag p95", lag_proxied["p95"], "ms",
               baseline=f"direct {lag_direct['p95']:.0f} ms",
               note=f"p50 {lag_proxied['p50']:.0f} ms; the proxy's cost is the difference"),
        Figure(S, f"{SESSIONS} sessions on 2 replicas / on 1", spread / one if one else None,
               "", baseline=f"1 replica {one:.1f} steps/s",
               note=f"2 replicas {spread:.1f} steps/s together (one machine's 2 cores)"),
    ]  # fmt: skip
    res.raw = {"lag_direct": lag_direct, "lag_proxied": lag_proxied, "spread": spread, "one": one}
    return res
