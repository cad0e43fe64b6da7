"""Fuzz scenario (docs/security.md, promises 1 and 4): hostile traffic against a real server.

Part 1, the flood: a session plays as fast as it can, alone; then, in alternating rounds,
beside a process that only burns a core, and beside a flooder that sends on its own
connection as fast as it can under the default limits (nearly all of it refused `busy`)
and reads nothing. The target is on what the flood costs the server's event loop (its main
thread's CPU, flooded minus beside the busy loop): that is the app's doing. The session's
slowdown is reported beside it; on one 2-core machine it also holds the flooder's CPU and
the kernel's loopback work, which a flooder on another machine would not cost.

Part 2, the fuzz: 10,000 generated messages (garbage, random JSON, near-valid protocol
messages with a field wrong or extreme, truncated JSON, binary frames, deep nesting, NaN
literals, strings up to 10 MB) on one connection with an open session, with the server's
message rate lifted so every message is parsed. A numbered probe every 100 messages must be
answered; the server's RSS after the first 1,000 messages and at the end must be about the
same; at the end the process is alive and the fuzzed session still steps.

Part 1 is bench/fuzz_flood.py, the messages bench/fuzz_messages.py, the client that reads
everything bench/fuzz_client.py; this file runs the fuzz and makes the figures.

`run() -> dict` returns {"figures": [...], "pass": bool, ...} for `python -m bench`;
`python -m bench.fuzz` runs it alone and prints the figures.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import time
import urllib.request
from typing import Any

from bench.fuzz_client import TIMEOUT_S, Reader, dial, open_session
from bench.fuzz_flood import ROUNDS, flood_part
from bench.fuzz_messages import message
from bench.server import Server

log = logging.getLogger("bench.fuzz")

N_MESSAGES = 10_000
WARMUP = 1_000  # RSS is measured from here: the first messages warm caches and allocators
PROBE_EVERY = 100
RSS_GROWTH_MAX_MB = 16.0  # "flat": allocator noise, not a leak (a leak of 1 kB a message is 10 MB)
# What a throttled flood may add to the server's event loop (parsing, throttling, replies),
# in percentage points of one core: the app's own cost, which the victim's slowdown on a
# 2-core loopback box mixes with the flooder's and the kernel's.
LOOP_ADDED_MAX = 10.0


# -- part 2: 10,000 hostile messages ---------------------------------------------------------
async def fuzz_part(srv: Server, n: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    rss: dict[str, float] = {}
    rss_samples: list[float] = []
    probes_sent = probes_ok = 0
    t0 = time.perf_counter()
    async with await dial(srv.ws_url) as ws:
        await open_session(ws)
        reader = Reader(ws)
        for i in range(n):
            if reader.closed:
                break
            await ws.send(message(rng, i))
            if (i + 1) % PROBE_EVERY == 0:  # answered: the server has read everything so far
                probes_sent += 1
                probes_ok += await reader.probe(i + 1)
            if (i + 1) % 1000 == 0:  # away from the big messages (at 300, 500, 800 of each 1000)
                rss_samples.append(srv.rss())
        rss["warm"], rss["end"] = rss_samples[WARMUP // 1000 - 1], rss_samples[-1]
        # The fuzzed session still steps. The flood may have left its 64-command inbox full
        # (the commands are refused `busy` then, by design): ask again every few seconds.
        stepped, attempts = False, 0
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and not reader.closed and not stepped:
            attempts += 1
            for action in ("pause", "reset"):
                await ws.send(json.dumps({"type": "control", "action": action}))
            mark = len(reader.statuses)
            await ws.send(json.dumps({"type": "control", "action": "step", "count": 2}))
            again = min(deadline, time.monotonic() + 5.0)
            while time.monotonic() < again and not reader.closed and not stepped:
                await asyncio.sleep(0.05)
                stepped = any(m["step"] == 2 for m in reader.statuses[mark:])
        reader.task.cancel()
    with urllib.request.urlopen(f"{srv.url}/api/health", timeout=10) as r:
        healthy = json.loads(r.read())["status"] == "ok"
    return {
        "messages": n,
        "seconds": time.perf_counter() - t0,
        "probes_sent": probes_sent,
        "probes_answered": probes_ok,
        "errors_by_code": reader.errors,
        "closed": reader.closed,
        "rss_warm_mb": rss.get("warm", math.nan),
        "rss_end_mb": rss.get("end", math.nan),
        "rss_growth_mb": rss.get("end", math.nan) - rss.get("warm", math.nan),
        "rss_every_1000_mb": [round(x, 1) for x in rss_samples],
        "still_steps": stepped,
        "still_steps_attempts": attempts,
        "alive": healthy and srv.proc.poll() is None,
    }


def _fig(name, value, unit="", target=None, note="", ok=None) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "target": target, "note": note, "ok": ok}


def run(n: int = N_MESSAGES, seed: int = 7) -> dict[str, Any]:
    with Server(name="fuzz-flood") as srv:
        flood = asyncio.run(flood_part(srv))
    # Every message parsed (no rate limit); short commands; the session's own history capped
    # (a few hundred steps, a small timeline), so what RSS shows is the handling of messages.
    lifted = {
        "SHAOMAI_MESSAGES_PER_S": "1000000",
        "SHAOMAI_MAX_STEP_COUNT": "20",
        "SHAOMAI_MAX_STEPS": "300",
        "SHAOMAI_TIMELINE_MB": "2",
    }
    with Server(lifted, name="fuzz") as srv:
        fuzz = asyncio.run(fuzz_part(srv, n, seed))
    survived = (
        fuzz["alive"]
        and fuzz["closed"] is None
        and fuzz["still_steps"]
        and fuzz["probes_answered"] == fuzz["probes_sent"]
    )
    figures = [
        _fig(
            "10k hostile messages: alive, answered, still steps",
            1.0 if survived else 0.0,
            target=("≥", 1.0),
            note=f"{fuzz['probes_answered']}/{fuzz['probes_sent']} probes; {fuzz['seconds']:.0f} s",
        ),
        _fig(
            "server RSS growth over the fuzz",
            fuzz["rss_growth_mb"],
            "MB",
            ("≤", RSS_GROWTH_MAX_MB),
            note=f"{fuzz['rss_warm_mb']:.0f} → {fuzz['rss_end_mb']:.0f} MB after {WARMUP:,}",
        ),
        _fig(
            "event-loop CPU a flood adds",
            100 * (flood["event_loop_cpu_flooded"] - flood["event_loop_cpu_quiet"]),
            "% of a core",
            ("≤", LOOP_ADDED_MAX),
            note=f"{100 * flood['event_loop_cpu_quiet']:.0f}% → "
            f"{100 * flood['event_loop_cpu_flooded']:.0f}%; flood "
            f"{flood['flood_messages_s']:,.0f} msg/s offered",
        ),
        _fig(
            "a session's slowdown beside a flood",
            flood["slowdown_by_the_server"],
            "×",
            note=f"median of {ROUNDS}, vs beside a busy loop; loopback: includes the "
            "kernel's work for the flooder on the same cores",
        ),
        _fig(
            "… against the session alone",
            flood["slowdown"],
            "×",
            note=f"{flood['victim_alone_steps_s']:.0f} steps/s alone, "
            f"{min(flood['victim_flooded_steps_s'])}–{max(flood['victim_flooded_steps_s'])} flooded",
        ),
    ]
    for f in figures:
        if f["target"] is None:
            continue
        op, bound = f["target"]
        v = f["value"]
        f["ok"] = v is not None and math.isfinite(v) and (v >= bound if op == "≥" else v <= bound)
    return {
        "figures": figures,
        "pass": all(f["ok"] is not False for f in figures),
        "flood": flood,
        "fuzz": fuzz,
    }


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    result = run()
    for f in result["figures"]:
        verdict = {True: "pass", False: "MISS", None: "info"}[f["ok"]]
        log.info("%s: %.2f %s (%s) %s", f["name"], f["value"], f["unit"], verdict, f["note"])
    log.info("%s", json.dumps({k: result[k] for k in ("flood", "fuzz")}, indent=1, default=str))
