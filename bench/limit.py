"""Scenario 8 (the limit): what loopback websockets carry on this machine, with no app.

A bare FastAPI endpoint (bench/rawserver.py, same uvicorn settings) sends the same bytes
as fast as it can, at the sizes of real `gpt` frames, to 1 client and to 100 clients in
4 processes; and a small message's round trip through it (the floor under any latency).
Read the fan-out figure against these.
"""

from __future__ import annotations

import time

from bench.frame_bytes import gpt_frame
from bench.procs import Child, ready_all, tell_all
from bench.report import Figure, Result, percentiles
from bench.server import Server

S = "limit"
PROCS = 4


def blast(srv: Server, size: int, clients: int, seconds: float) -> dict:
    per = [clients // PROCS + (i < clients % PROCS) for i in range(PROCS)] if clients > 1 else [1]
    kids = [
        Child("raw", {"url": f"{srv.ws_url}/{size}", "n": n}, name=f"raw{i}")
        for i, n in enumerate(per)
        if n
    ]
    try:
        ready_all(kids, 60)
        tell_all(kids, "go")
        time.sleep(seconds)
        tell_all(kids, "stop")
        outs = [k.result(60) for k in kids]
    finally:
        for k in kids:
            k.close()
    rates = [c[0] / o["seconds"] for o in outs for c in o["counts"]]
    total = sum(rates)
    return {
        "msgs_per_s": total,
        "mb_per_s": total * size / 2**20,
        "min_client": min(rates),
        "max_client": max(rates),
    }


def echo(srv: Server, n: int) -> list[float]:
    kid = Child("echo", {"url": srv.ws_url.replace("/ws", "/echo"), "n": n, "gap_s": 0.01})
    try:
        kid.read(60)
        kid.tell("go")
        return kid.result(120)["seconds"]
    finally:
        kid.close()


def run(opts) -> Result:
    seconds = 2.0 if opts.quick else 3.0
    sizes = {
        "gpt default": len(gpt_frame("default (reverse, T=13)")[0]),
        "gpt text-en": len(gpt_frame("text-en (T=64)")[0]),
    }
    res = Result()
    with Server(name="rawserver", module="bench.rawserver") as srv:
        rtt = [s * 1000 for s in echo(srv, 200)]
        p = percentiles(rtt)
        res.figures.append(
            Figure(
                S,
                "loopback echo round trip p95",
                p["p95"],
                "ms",
                note=f"p50 {p['p50']:.2f}, p99 {p['p99']:.2f} ms; bare FastAPI, no app",
            )
        )
        res.raw["echo_ms"] = rtt
        for label, size in sizes.items():
            for clients in (1, 100):
                r = blast(srv, size, clients, seconds)
                res.raw[f"{label} × {clients}"] = r
                res.figures.append(
                    Figure(
                        S,
                        f"{label} frames ({size:,} B) to {clients} client"
                        + ("s" if clients > 1 else ""),
                        r["msgs_per_s"],
                        "msgs/s",
                        note=f"{r['mb_per_s']:.0f} MB/s"
                        + (
                            f"; per client {r['min_client']:.0f}–{r['max_client']:.0f}/s"
                            if clients > 1
                            else ""
                        ),
                    )
                )
    return res
