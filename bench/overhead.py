"""Scenarios 1 (overhead) and 2 (latency): the default `gpt` lab through a real server and a
real websocket client in another process, beside the bare torch loop in this process.

Overhead: rounds of [bare loop, session, lab stepped directly], interleaved so that the
machine's noise hits all three alike; each round's ratio is session / bare of that round.
Latency: `control step` sent → that step's frame received, one step at a time with a short
gap (a teacher pressing "step"); overhead = latency − the bare step's median time. Beside
it: the same over the steps on which the lab does not evaluate its held-out set, and
latency − the lab's own step (+ capture + encoding) time, quantile by quantile.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench import baseline
from bench.procs import Child
from bench.report import Figure, Result, median, percentiles
from bench.server import Server

S = "overhead"
L = "latency"


def rate(times: list[float]) -> float:
    """Steps per second of timed steps."""
    return len(times) / sum(times)


def interleaved_rounds(
    srv: Server,
    params: dict[str, Any],
    n: int,
    rounds: int,
    bare: Callable[[], float],
    lab: Callable[[], float],
    lab_id: str = "gpt",
) -> list[dict[str, Any]]:
    """Rounds of [bare loop, a fresh session playing n steps through `srv` to one client
    receiving every frame, the lab stepped directly], interleaved so that the machine's
    noise hits all three alike. `bare` and `lab` run theirs and return steps/s."""
    play = Child(
        "play",
        {"url": srv.ws_url, "lab": lab_id, "params": {**params, "steps": n}, "timeout": 600},
    )
    rows = []
    try:
        play.read(120)
        for _ in range(rounds):
            bare_rate = bare()
            play.tell("go")
            rnd = play.read(900)["round"]
            lab_rate = lab()
            session = rnd["steps"] / rnd["seconds"]
            rows.append({"bare": bare_rate, "lab": lab_rate, **rnd, "session": session})
        play.tell("stop")
        play.result(30)
    finally:
        play.close()
    return rows


def round_figures(
    s: str,
    rows: list[dict[str, Any]],
    session: tuple[str, float | None, str],
    bare_note: str,
    ratio_target: float,
    lab_note: str,
) -> list[Figure]:
    """The figures of interleaved rounds: the session's steps/s (name, target, note), the
    bare loop's, their ratio, the engine's share, the lab's own work, frames received."""
    ratios = [r["session"] / r["bare"] for r in rows]
    engine = [r["session"] / r["lab"] for r in rows]
    bare_med = median([r["bare"] for r in rows])
    name, target, note = session
    return [
        Figure(
            s,
            name,
            median([r["session"] for r in rows]),
            "steps/s",
            None if target is None else ("≥", target),
            note=note,
        ),
        Figure(s, "bare torch loop steps/s", bare_med, "steps/s", note=bare_note),
        Figure(
            s,
            "session / bare (median of rounds)",
            median(ratios),
            "",
            ("≥", ratio_target),
            baseline=f"bare {bare_med:.1f} steps/s",
            note="rounds: " + ", ".join(f"{x:.2f}" for x in ratios),
        ),
        Figure(
            s,
            "session / lab stepped directly (engine's share)",
            median(engine),
            "",
            baseline=f"lab.step loop {median([r['lab'] for r in rows]):.1f} steps/s",
            note="rounds: " + ", ".join(f"{x:.2f}" for x in engine),
        ),
        Figure(
            s,
            "lab stepped directly / bare (the lab's own work)",
            median([r["lab"] / r["bare"] for r in rows]),
            "",
            note=lab_note,
        ),
        Figure(
            s,
            "frames received by the client",
            median([r["frames"] / r["seconds"] for r in rows]),
            "fps",
            note=f"{rows[-1]['bytes'] // max(1, rows[-1]['frames'])} B each",
        ),
    ]


def run(opts) -> Result:
    n = 100 if opts.quick else 200
    rounds = 2 if opts.quick else 9  # the machine is shared: a median of 9 is steadier
    n_lat = 50 if opts.quick else 200
    res = Result()
    check = baseline.same_model_check()
    with Server(name="overhead") as srv:
        # -- latency first: it also warms the server (first session, first steps) --------
        lat = Child(
            "latency", {"url": srv.ws_url, "lab": "gpt", "params": {}, "n": n_lat, "gap_s": 0.03}
        )
        try:
            lat.read(90)
            lat.tell("go")
            steps = lat.result(600)["steps"]
        finally:
            lat.close()
        bare_t = baseline.bare_loop(n_lat, warmup=20)
        lab_t = baseline.lab_loop(n_lat, capture=True)

        # -- overhead: interleaved rounds ------------------------------------------------
        # From a fresh model's first step, as the session and the lab run theirs
        rows = interleaved_rounds(
            srv,
            {},
            n,
            rounds,
            lambda: rate(baseline.bare_loop(n)),
            lambda: rate(baseline.lab_loop(n, capture=False)),
        )

    res.figures += round_figures(
        S,
        rows,
        session=("session steps/s (play, 1 client)", None, f"{len(rows)} rounds of {n} steps"),
        bare_note="same model, data, AdamW; 1 torch thread; no hooks, no eval",
        ratio_target=0.90,
        lab_note="held-out eval (256) every 200 steps and once to confirm solved, grad norms, train accuracy",
    )
    if not check["same"]:
        res.figures.append(Figure(S, "bare loop trains the lab's model", 0.0, "", ("≥", 1.0)))

    ms = [s["seconds"] * 1000 for s in steps]
    plain = [s["seconds"] * 1000 for s in steps if not s["evaluated"]]
    bare_ms = median([t * 1000 for t in bare_t])
    p, pq = percentiles(ms), percentiles(plain)
    lab_p = percentiles([t * 1000 for t in lab_t])
    delivery = [s["delivery"] * 1000 for s in steps if s["delivery"] is not None]
    pd = percentiles(delivery)
    base = f"bare step {bare_ms:.1f} ms (median)"
    res.figures += [
        Figure(L, "step → frame received p50", p["p50"], "ms", note=f"{len(ms)} steps"),
        Figure(L, "step → frame received p95", p["p95"], "ms"),
        Figure(L, "step → frame received p99", p["p99"], "ms"),
        Figure(L, "minus bare step, p50", p["p50"] - bare_ms, "ms", baseline=base),
        Figure(
            L,
            "minus bare step, p95",
            p["p95"] - bare_ms,
            "ms",
            ("≤", 15.0),
            baseline=base,
            note=f"{len(ms) - len(plain)} of the steps also evaluated 256 held-out samples",
        ),
        Figure(L, "minus bare step, p99", p["p99"] - bare_ms, "ms", baseline=base),
        Figure(
            L,
            "minus bare step, p95 of steps without evaluation",
            pq["p95"] - bare_ms,
            "ms",
            baseline=base,
            note=f"{len(plain)} steps; p50 {pq['p50'] - bare_ms:.1f} ms",
        ),
        Figure(
            L,
            "minus the lab's own step, p50 / p95",
            p["p50"] - lab_p["p50"],
            "ms",
            baseline=f"lab step+capture p50 {lab_p['p50']:.1f}, p95 {lab_p['p95']:.1f} ms",
            note=f"p95: {p['p95'] - lab_p['p95']:.1f} ms (lab stepped back to back here)",
        ),
        Figure(
            L,
            "frame encoded → received p95",
            pd["p95"],
            "ms",
            note=f"p50 {pd['p50']:.2f} ms" if pd["p50"] is not None else "",
        ),
    ]
    res.raw = {
        "rounds": rows,
        "latency_ms": ms,
        "bare_step_ms": [t * 1000 for t in bare_t],
        "lab_step_ms": [t * 1000 for t in lab_t],
        "delivery_ms": delivery,
        "evaluated": [s["evaluated"] for s in steps],
        "model": check,
        "started": time.time(),
    }
    return res
