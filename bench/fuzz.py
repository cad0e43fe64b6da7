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

`run() -> dict` returns {"figures": [...], "pass": bool, ...} for `python -m bench`;
`python -m bench.fuzz` runs it alone and prints the figures.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import random
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import websockets

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
FLOOD_S = 5.0  # seconds a measurement
ROUNDS = 3  # busy-loop and flood measurements, alternating; the median ratio is reported
LAB = "linear-regression"
TIMEOUT_S = 60.0

VALID: list[dict[str, Any]] = [
    {"type": "control", "action": "step", "count": 2},
    {"type": "control", "action": "play", "speed": 50},
    {"type": "control", "action": "pause"},
    {"type": "control", "action": "reset"},
    {"type": "set", "params": {"lr": 0.05}},
    {"type": "set", "params": {"features": "zscore", "batch": "mini"}},
    {"type": "seek", "step": 1},
    {"type": "infer", "input": {"x": 1.5}},
    {"type": "subscribe", "tensors": ["grad"], "max_fps": 10},
    {"type": "subscribe", "tensors": "*"},
    {"type": "view", "state": {"layer": 1, "hover": 2}},
    {"type": "share"},
    {"type": "open", "lab": LAB},
    {"type": "join", "session": "abc", "token": "def"},
]
EXTREMES: list[Any] = [0, -1, 1e308, -1e308, 2**64, 10**400, math.nan, math.inf, -math.inf]
EXTREMES += ["", "x" * 300, None, True, [], {}, [[[[]]]]]


# -- the messages ---------------------------------------------------------------------------
def _json_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([rng.randint(-(10**6), 10**6), rng.randint(-(2**70), 2**70)])
    if kind == 3:
        return rng.choice([rng.uniform(-1e6, 1e6), math.nan, math.inf, -math.inf, 1e308])
    if kind in (4, 5):
        return "".join(chr(rng.randint(1, 0x2FFF)) for _ in range(rng.randint(0, 20)))
    if kind == 6:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {str(_json_value(rng, 3)): _json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _char(rng: random.Random) -> str:
    """Any character but a lone surrogate (which UTF-8 cannot carry)."""
    return chr(rng.randint(1, 0xD7FF) if rng.random() < 0.9 else rng.randint(0xE000, 0x10FFFF))


def _near_valid(rng: random.Random) -> dict[str, Any]:
    msg = json.loads(json.dumps(rng.choice(VALID)))
    for _ in range(rng.randint(0, 2)):
        key = rng.choice(list(msg) or ["type"])
        how = rng.randrange(6)
        if how == 0:
            msg[key] = _json_value(rng)
        elif how == 1:
            inner = msg.get(key)
            if isinstance(inner, dict) and inner:
                inner[rng.choice(list(inner))] = rng.choice(EXTREMES)
            else:
                msg[key] = rng.choice(EXTREMES)
        elif how == 2:
            msg[str(_json_value(rng, 3))] = _json_value(rng)
        elif how == 3:
            msg.pop(key, None)
        elif how == 4:
            msg["type"] = rng.choice([*(m["type"] for m in VALID), "OPEN", 7, "fork "])
        else:
            depth = rng.randint(10, 900)
            msg[key] = json.loads("[" * depth + "]" * depth)
    return msg


def message(rng: random.Random, i: int) -> str | bytes:
    """The i-th hostile message (text or binary)."""
    if i % 2000 == 500:
        return json.dumps({"type": "save", "name": "x" * 10_000_000})  # 10 MB
    if i % 500 == 300:
        return "x" * 1_000_000
    kind = rng.randrange(10)
    if kind < 4:
        return json.dumps(_near_valid(rng))
    if kind == 4:
        return json.dumps(_json_value(rng))
    if kind == 5:
        return json.dumps(_near_valid(rng))[: rng.randint(0, 40)]  # truncated
    if kind == 6:
        return rng.randbytes(rng.randint(0, 256))
    if kind == 7:
        return "".join(_char(rng) for _ in range(rng.randint(0, 200)))
    if kind == 8:
        n = rng.randint(1000, 30_000)
        return "[" * n + "]" * n
    return rng.choice(
        [
            '{"type":"control","action":"play","speed":NaN}',
            '{"type":"set","params":{"lr":-Infinity}}',
            '{"type":"seek","step":' + "9" * 5000 + "}",
            "null",
            "",
            '"open"',
        ]
    )


# -- a client that reads everything ---------------------------------------------------------
class Reader:
    """Reads a connection continuously (so the fuzzer is never a slow client itself)."""

    def __init__(self, ws):
        self.ws = ws
        self.errors: dict[str, int] = {}
        self.answered: set[int] = set()
        self.events: dict[int, asyncio.Event] = {}
        self.step = 0  # the session's latest step, from scalars, history and status
        self.statuses: list[dict[str, Any]] = []
        self.closed: str | None = None
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            async for raw in self.ws:
                if isinstance(raw, bytes):
                    continue
                msg = json.loads(raw)
                if msg["type"] == "status":
                    self.statuses.append(msg)
                if msg["type"] in ("status", "scalars"):
                    self.step = msg["step"]
                elif msg["type"] == "history" and msg["steps"]:
                    self.step = msg["steps"][-1]
                if msg["type"] != "error":
                    continue
                self.errors[msg["code"]] = self.errors.get(msg["code"], 0) + 1
                text = msg["message"]
                if "'probe-" in text:
                    n = int(text.split("'probe-", 1)[1].split("'", 1)[0])
                    self.answered.add(n)
                    self.events.setdefault(n, asyncio.Event()).set()
        except websockets.ConnectionClosed as exc:
            self.closed = repr(exc)

    async def probe(self, n: int) -> bool:
        event = self.events.setdefault(n, asyncio.Event())
        await self.ws.send(json.dumps({"type": f"probe-{n}"}))
        try:
            await asyncio.wait_for(event.wait(), TIMEOUT_S)
        except TimeoutError:
            return False
        return True


async def _dial(url: str):
    return await websockets.connect(url, max_size=None, compression=None, ping_interval=None)


async def _open(ws, params: dict | None = None) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "open", "lab": LAB, "params": params or {}}))
    async with asyncio.timeout(TIMEOUT_S):
        while True:
            raw = await ws.recv()
            if isinstance(raw, str) and json.loads(raw)["type"] == "ready":
                return json.loads(raw)


# -- part 1: a flood does not slow another session ------------------------------------------
# A flooder that sends as fast as it can and reads nothing: the server answers `busy`, and
# once 512 answers wait unread it closes the connection (1008); the flooder dials again.
FLOODER = """
import asyncio, json, sys, time, websockets
async def main(url, seconds):
    msg = json.dumps({"type": "control", "action": "step", "count": 5})
    end, sent, dials = time.monotonic() + seconds, 0, 0
    while time.monotonic() < end:
        dials += 1
        ws = None
        try:
            # A server that stops reading blocks our sends: the deadline still holds.
            async with asyncio.timeout(max(0.01, end - time.monotonic())):
                ws = await websockets.connect(url, compression=None, ping_interval=None)
                await ws.send(json.dumps({"type": "open", "lab": "linear-regression"}))
                while True:
                    await ws.send(msg)
                    sent += 1
        except (websockets.ConnectionClosed, OSError, TimeoutError):
            pass
        finally:
            if ws is not None:
                ws.transport.abort()
    print(json.dumps({"sent": sent, "dials": dials}))
asyncio.run(main(sys.argv[1], float(sys.argv[2])))
"""


async def _victim_rate(ws, reader: Reader, seconds: float) -> float:
    """The victim's steps per second over `seconds`, from its status messages."""
    await ws.send(json.dumps({"type": "control", "action": "pause"}))
    await asyncio.sleep(0.3)
    start = reader.step
    await ws.send(json.dumps({"type": "control", "action": "play", "speed": 100_000}))
    await asyncio.sleep(seconds)
    await ws.send(json.dumps({"type": "control", "action": "pause"}))
    await asyncio.sleep(0.5)
    return (reader.step - start) / seconds


BURNER = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end: pass"


def loop_cpu_s(pid: int) -> float:
    """CPU seconds of a process's main thread (uvicorn's event loop; sessions have their own)."""
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def _beside(ws, reader: Reader, args: list[str], pid: int) -> tuple[float, float, str]:
    """The victim's steps/s while another process runs, the server's event-loop CPU share
    over the same time, and that process's stdout."""
    await ws.send(json.dumps({"type": "control", "action": "reset"}))
    await asyncio.sleep(0.5)
    proc = subprocess.Popen([sys.executable, "-c", *args], stdout=subprocess.PIPE, text=True)
    try:
        await asyncio.sleep(1.0)  # the neighbour is in full swing
        cpu0, t0 = loop_cpu_s(pid), time.monotonic()
        rate = await _victim_rate(ws, reader, FLOOD_S)
        loop_share = (loop_cpu_s(pid) - cpu0) / (time.monotonic() - t0)
        out, _ = await asyncio.to_thread(proc.communicate, timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    return rate, loop_share, out


async def flood_part(srv: Server) -> dict[str, Any]:
    """The victim alone, beside a busy loop (the flooder's own CPU), and beside the flood."""
    async with await _dial(srv.ws_url) as ws:
        await _open(ws, {"epochs": 100_000})
        reader = Reader(ws)
        alone = await _victim_rate(ws, reader, FLOOD_S)
        pairs, loops, sent, dials = [], [], 0, 0
        for _ in range(ROUNDS):  # interleaved: a loaded machine drifts between measurements
            busy, quiet_loop, _ = await _beside(ws, reader, [BURNER, str(FLOOD_S + 2)], srv.pid)
            flood = [FLOODER, srv.ws_url, str(FLOOD_S + 2)]
            flooded, flood_loop, out = await _beside(ws, reader, flood, srv.pid)
            counts = json.loads(out.strip().splitlines()[-1])
            pairs.append((busy, flooded))
            loops.append((quiet_loop, flood_loop))
            sent, dials = sent + counts["sent"], dials + counts["dials"]
        reader.task.cancel()
    ratios = sorted(b / f if f else math.inf for b, f in pairs)
    flooded = sorted(f for _, f in pairs)[ROUNDS // 2]
    return {
        "victim_alone_steps_s": alone,
        "victim_beside_busy_loop_steps_s": [round(b) for b, _ in pairs],
        "victim_flooded_steps_s": [round(f) for _, f in pairs],
        "slowdown": alone / flooded if flooded else math.inf,
        "slowdown_by_the_server": ratios[ROUNDS // 2],  # the median round
        # The server's event loop (parsing, throttling, answering) as a share of one core.
        "event_loop_cpu_quiet": sorted(q for q, _ in loops)[ROUNDS // 2],
        "event_loop_cpu_flooded": sorted(f for _, f in loops)[ROUNDS // 2],
        "flood_messages_s": sent / (ROUNDS * (FLOOD_S + 2)),
        "flood_connections": dials,
    }


# -- part 2: 10,000 hostile messages ---------------------------------------------------------
async def fuzz_part(srv: Server, n: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    rss: dict[str, float] = {}
    rss_samples: list[float] = []
    probes_sent = probes_ok = 0
    t0 = time.perf_counter()
    async with await _dial(srv.ws_url) as ws:
        await _open(ws)
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
        # The fuzzed session still steps.
        for msg in ({"type": "control", "action": "pause"}, {"type": "control", "action": "reset"}):
            await ws.send(json.dumps(msg))
        mark = len(reader.statuses)
        await ws.send(json.dumps({"type": "control", "action": "step", "count": 2}))
        stepped = False
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and not reader.closed and not stepped:
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
