"""Scenario 5 (concurrency): 20 independent `gpt` sessions playing at once in one server.

First one session plays alone; then 20 are opened (their idle memory is the server's RSS
before and after, per session) and all play together. Steps are counted from the scalars
each driver receives, between two marks after a warm-up, so every session is measured over
the same window. Aggregate = the 20 sessions' steps/s together, against the one alone
(the two cores are shared: 1.0 means no throughput lost to running many at once).
"""

from __future__ import annotations

import time

from bench.procs import Child, ready_all, tell_all
from bench.report import Figure, Result, median
from bench.server import Server

S = "concurrency"
N, PROCS = 20, 2
PARAMS = {"steps": 20000}  # long enough never to end while measured


def measure(kids: list[Child], warm: float, seconds: float) -> list[float]:
    """Steps/s of every session of these drivers between two marks."""
    tell_all(kids, "go")
    time.sleep(warm)
    tell_all(kids, "mark")
    for k in kids:
        k.read(60)
    t0 = time.monotonic()
    time.sleep(seconds)
    tell_all(kids, "mark")
    for k in kids:
        k.read(60)
    window = time.monotonic() - t0
    tell_all(kids, "stop")
    rates = []
    for k in kids:
        a, b = k.result(60)["marks"]
        # Each driver's own clock stamps its marks: rate over its exact window.
        rates += [
            (sb - sa) / max(tb - ta, 1e-9) if tb > ta else (sb - sa) / window
            for (sa, ta), (sb, tb) in zip(a, b, strict=True)
        ]
    return rates


def run(opts) -> Result:
    seconds = 5.0 if opts.quick else 10.0
    res = Result()
    with Server(name="concurrency") as srv:
        rss_idle = srv.rss()
        one = Child(
            "drivers", {"url": srv.ws_url, "lab": "gpt", "params": PARAMS, "n": 1}, name="conc-one"
        )
        try:
            one.read(90)
            alone = measure([one], 2.0, seconds)[0]
        finally:
            one.close()
        time.sleep(1.0)
        rss_before = srv.rss()
        kids = [
            Child(
                "drivers",
                {"url": srv.ws_url, "lab": "gpt", "params": PARAMS, "n": N // PROCS},
                name=f"conc-many{i}",
            )
            for i in range(PROCS)
        ]
        try:
            ready_all(kids, 300)
            time.sleep(3.0)  # idle: the sessions' workers trim their memory after 2 s
            rss_open = srv.rss()
            rates = measure(kids, 3.0, seconds)
        finally:
            for k in kids:
                k.close()
    total = sum(rates)
    per_session = (rss_open - rss_before) / N
    res.figures += [
        Figure(S, "one session alone", alone, "steps/s", note=f"{seconds:.0f} s window"),
        Figure(
            S,
            f"{N} sessions together / one alone",
            total / alone,
            "",
            ("≥", 0.8),
            baseline=f"alone {alone:.1f} steps/s",
            note=f"together {total:.1f} steps/s; each {median(rates):.1f} (median)",
        ),
        Figure(
            S,
            "fairness: slowest / fastest session",
            min(rates) / max(rates),
            "",
            ("≥", 0.7),
            note=f"{min(rates):.1f} – {max(rates):.1f} steps/s",
        ),
        Figure(
            S,
            "idle memory per session",
            per_session,
            "MB",
            ("≤", 20.0),
            baseline=f"server idle {rss_idle:.0f} MB",
            note=f"{N} paused gpt sessions: +{rss_open - rss_before:.0f} MB",
        ),
    ]
    res.raw = {
        "alone": alone,
        "rates": rates,
        "rss_idle": rss_idle,
        "rss_before": rss_before,
        "rss_open": rss_open,
    }
    return res
