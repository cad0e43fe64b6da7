"""Scenario 6 (start): process start → /api/health answers, and page load → first `gpt`
frame drawn in headless Chromium.

Each round starts a fresh server; the first page load comes right after /api/health
answers (a cold server: its first session), then two more (a warm server). Two more
fresh servers time their first session without a browser (websocket open → first frame). Every load is
in a fresh browser context, so nothing is cached. The time of a load is from navigation
start to the animation frame after the shell first shows a frame's step.
"""

from __future__ import annotations

import asyncio
import time

from bench import wsproto as w
from bench.browser import chromium, new_page, wait_js
from bench.report import Figure, Result, median
from bench.server import Server

S = "start"
LAB_URL = "/lab.html?lab=gpt&lang=en"


def page_load(browser, url: str) -> float:
    """Seconds from navigation start to the first frame drawn."""
    context, page = new_page(browser)
    try:
        page.goto(url + LAB_URL)
        first = wait_js(page, "window.__bench && window.__bench.first")
        if page.console_errors:
            raise RuntimeError(f"console errors: {page.console_errors}")
        return first / 1000
    finally:
        context.close()


async def _first_frame(url: str) -> float:
    t0 = time.perf_counter()
    ws = await w.dial(url)
    try:
        await w.open_lab(ws, "gpt")
        return time.perf_counter() - t0
    finally:
        await ws.close()


def ws_first_frame(url: str) -> float:
    """Seconds from connecting to a `gpt` session's first frame (no browser)."""
    return asyncio.run(_first_frame(url))


def run(opts) -> Result:
    rounds = 2 if opts.quick else 3
    health, cold, warm = [], [], []
    with chromium() as browser:
        for i in range(rounds):
            with Server(name=f"start{i}") as srv:
                health.append(srv.start_s)
                cold.append(page_load(browser, srv.url))
                for _ in range(2):
                    warm.append(page_load(browser, srv.url))
    ws_cold = []
    for i in range(2):
        with Server(name=f"start-ws{i}") as srv:
            health.append(srv.start_s)
            ws_cold.append(ws_first_frame(srv.ws_url))
            ws_warm = ws_first_frame(srv.ws_url)
    res = Result(
        raw={
            "health_s": health,
            "cold_server_s": cold,
            "warm_server_s": warm,
            "ws_cold_s": ws_cold,
            "ws_warm_s": ws_warm,
        }
    )
    res.figures += [
        Figure(
            S,
            "process start → /api/health",
            median(health),
            "s",
            ("≤", 3.0),
            note=f"{len(health)} starts, max {max(health):.2f} s",
        ),
        Figure(
            S,
            "page load → first frame drawn (fresh server)",
            median(cold),
            "s",
            ("≤", 1.5),
            note="the server's first session; loads: " + ", ".join(f"{x:.2f}" for x in cold),
        ),
        Figure(
            S,
            "page load → first frame drawn",
            median(warm),
            "s",
            ("≤", 1.5),
            note=f"{len(warm)} loads, empty cache; max {max(warm):.2f} s",
        ),
    ]
    return res
