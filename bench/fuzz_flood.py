"""The fuzz scenario's part 1 (bench/fuzz.py): what a flood of refused messages costs.

A session plays as fast as it can, alone; then, in alternating rounds, beside a process that
only burns a core, and beside a flooder that sends on its own connection as fast as it can
under the default limits and reads nothing. `flood_part` returns the victim's rates and the
server's event-loop CPU share in each case.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.fuzz_client import TIMEOUT_S, Reader, dial, open_session
from bench.server import Server

FLOOD_S = 5.0  # seconds a measurement
ROUNDS = 3  # busy-loop and flood measurements, alternating; the median ratio is reported

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
    async with await dial(srv.ws_url) as ws:
        await open_session(ws, {"epochs": 100_000})
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
