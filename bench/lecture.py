"""Scenario `lecture` (issue 19): a lecture hall of one `gpt` session at 10 frames/s.

Four parts, each on a fresh server:
- default:  1,000 viewers (200 with --quick) of the default task for 30 s (10 s), each
            subscribed as the page on a desktop is (every tensor; `scalars: "either"`: a
            step with a frame comes in one message);
- phones:   the largest model (text-en, 6 layers × 8 heads, T=64) with every viewer
            subscribed as a phone: one layer's map plus the small tensors;
- head:     the same, each phone subscribed to one head of one layer (`layer`, `head`);
- phones10, head10, head10low (named in SHAOMAI_LECTURE_PARTS): those phones at a real 10
            steps/s: the same 6 × 8 frame with `batch` 4 (batch 64 trains ≈ 1 step/s here);
- storm:    3,000 viewers (1,000 with --quick) join at once while the driver keeps playing;
            the driver's control round trip (`share` → `shared`) and dropped connections.

The viewers are Node processes (bench/lecture_viewers.mjs, hundreds each): Python clients
on these 2 cores fall seconds behind and the bench would measure itself. Every frame
carries the server's time (`t`, SHAOMAI_FRAME_CLOCK), so lag is receipt − `t`; the oldest
latest frame is the longest a viewer waited between frames (and at the window's end).
Before each watched part the same session plays as long with no viewer, so the RSS growth
of the viewers themselves can be told from the session's own (its training, its recorded
frames: 113 MB for the 6 × 8 model at 10 steps/s here).
CPU seconds of the server and of the clients over the window are printed beside the
figures: the clients run on the same cores, so a miss says whose time it was.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from typing import Any

from bench.lecture_procs import Cpu, NodeChild, Rss, groups, lab_moved
from bench.report import Figure, Result, percentiles
from bench.server import Server

S = "lecture"
SPEED = 10.0
DEFAULT = {"steps": 20_000}
LARGEST = {"data": "text-en", "n_layers": 6, "n_heads": 8, "d_model": 128, "steps": 20_000}
AT_10 = {**LARGEST, "batch": 4}  # the same frame; a step fast enough for 10 steps/s here
PARTS = ["default", "phones", "head", "storm"]  # SHAOMAI_LECTURE_PARTS=a,b picks others
# A phone shows one layer's attention grid (or one head) and the small per-frame tensors.
PHONE_TENSORS = [
    "blocks.0.attn.hook_pattern",
    "resid_norm",
    "embed_norm",
    "next_probs",
    "target_prob",
    "grad_norm",
]
# No per-class viewer cap exists (backend/config.py): viewers of one session are limited only
# by sockets. The bench opens one session per part, under every per-address limit.
RECORDED = "shaomai_recorded_frame_bytes"  # a gauge of the server's /metrics
SERVER_ENV = {"SHAOMAI_MAX_SESSIONS_PER_IP": "1000", "SHAOMAI_SESSIONS_PER_IP_PER_MIN": "10000"}


def sizes(opts) -> dict[str, Any]:
    if getattr(opts, "tiny", False):  # the smoke test: the harness end to end, seconds
        return {"viewers": 4, "seconds": 2.0, "storm": 20, "storm_s": 3.0, "parts": ["storm"]}
    if opts.quick:
        return {"viewers": 200, "seconds": 10.0, "storm": 1000, "storm_s": 10.0}
    return {"viewers": 1000, "seconds": 30.0, "storm": 3000, "storm_s": 20.0}


def _watch(part: str, params: dict, n: int, seconds: float, subscribe: dict | None) -> dict:
    """One driver plays; n viewers (joined first) watch for `seconds`."""
    with Server(env=SERVER_ENV, name=f"lecture-{part}") as srv:
        driver = NodeChild(
            {"role": "driver", "url": srv.ws_url, "lab": "gpt", "params": params, "speed": SPEED},
            f"lecture-{part}-driver",
        )
        kids: list[NodeChild] = []
        try:
            session = driver.read(120)["session"]
            lab_moved(srv)
            rss_open = srv.rss()
            recorded_open = srv.metric(RECORDED)
            spec = {"role": "viewers", "url": srv.ws_url, "session": session}
            if subscribe:
                spec["subscribe"] = subscribe
            kids = [
                NodeChild({**spec, "n": k}, f"lecture-{part}-viewers{i}")
                for i, k in enumerate(groups(n))
            ]
            joined = sum(k.read(180)["joined"] for k in kids)
            rss = Rss(srv)
            cpu = Cpu(srv.pid, [k.proc.pid for k in [driver, *kids]])
            cpu.start()
            for k in [driver, *kids]:
                k.tell("go")
            time.sleep(seconds)
            for k in [driver, *kids]:
                k.tell("stop")
            used = cpu.stop()
            rss_values = rss.stop()
            recorded = srv.metric(RECORDED) - recorded_open
            outs = [k.result(180) for k in kids]
            mine = driver.result(60)
        finally:
            for k in [driver, *kids]:
                k.close()
    return {
        "joined": joined,
        "rss_open": rss_open,
        "rss": rss_values,
        "recorded_mb": recorded / 2**20,
        "cpu": used,
        "driver": mine,
        "viewers": _viewers(outs),
    }


def _storm(n: int, seconds: float) -> dict:
    """The driver plays; at `go` n viewers connect at once; the driver probes its round trip."""
    with Server(env=SERVER_ENV, name="lecture-storm") as srv:
        driver = NodeChild(
            {"role": "driver", "url": srv.ws_url, "lab": "gpt", "params": DEFAULT, "speed": SPEED},
            "lecture-storm-driver",
        )
        kids: list[NodeChild] = []
        try:
            session = driver.read(120)["session"]
            lab_moved(srv)
            rss_open = srv.rss()
            spec = {"role": "viewers", "url": srv.ws_url, "session": session, "storm": True}
            spec["join_timeout_s"] = 60
            kids = [
                NodeChild({**spec, "n": k}, f"lecture-storm-viewers{i}")
                for i, k in enumerate(groups(n))
            ]
            for k in kids:
                k.read(60)
            rss = Rss(srv)
            cpu = Cpu(srv.pid, [k.proc.pid for k in [driver, *kids]])
            driver.tell("go")
            time.sleep(1.0)  # the driver plays and probes before the storm
            cpu.start()
            for k in kids:
                k.tell("go")
            joined = sum(k.read(90)["joined"] for k in kids)
            time.sleep(seconds)
            for k in [driver, *kids]:
                k.tell("stop")
            used = cpu.stop()
            rss_values = rss.stop()
            outs = [k.result(180) for k in kids]
            mine = driver.result(60)
        finally:
            for k in [driver, *kids]:
                k.close()
    return {
        "joined": joined,
        "rss_open": rss_open,
        "rss": rss_values,
        "cpu": used,
        "driver": mine,
        "viewers": _viewers(outs),
    }


def _viewers(outs: list[dict]) -> list[dict]:
    """Every viewer of the Node processes; their frames' step and time read without a whole
    JSON parse must agree with the parse on the frames checked."""
    bad = sum(o["stamp_mismatches"] for o in outs)
    if bad:
        raise RuntimeError(
            f"{bad} of {sum(o['stamps_checked'] for o in outs)} frames' stamps misread"
        )
    return [v for o in outs for v in o["viewers"]]


def _cpu_note(cpu: dict[str, float]) -> str:
    return (
        f"server {cpu['server']:.1f} s, clients {cpu['clients']:.1f} s CPU in "
        f"{cpu['wall']:.0f} s × {os.cpu_count()} cores"
    )


def _watch_figures(label: str, out: dict, n: int, kbps_target: float | None) -> list[Figure]:
    d = out["driver"]
    t0, t_end = d["t0"], d["t_end"]
    window = t_end - t0
    viewers = out["viewers"]
    sent = set(d["viewer"]["steps"]).union(*(v["steps"] for v in viewers))
    fractions = [len(set(v["steps"])) / max(1, len(sent)) for v in viewers]
    lag = percentiles([x for v in viewers for x in v["lags"]])
    ages = [v["max_age_ms"] for v in viewers]
    # The step whose frame ended most viewers' longest wait: one stall for all, or many.
    ended = Counter(v.get("max_age_step") for v in viewers).most_common(1)
    where = f", most ended by step {ended[0][0]} ({ended[0][1]})" if ended else ""
    growth = _settled_growth(out)
    kbps = [v["bytes"] / window / 1000 for v in viewers]
    per_frame = [v["bytes"] / len(v["steps"]) for v in viewers if v["steps"]]
    cpu = _cpu_note(out["cpu"])
    dropped = sum(v["closed"] for v in viewers)
    p = f"{label}: "
    med = percentiles(fractions, (50,))["p50"] or 0.0
    return [
        Figure(
            S,
            p + "frames sent",
            len(sent) / window,
            "fps",
            ("≥", 9.8),
            note=f"{len(sent)} in {window:.0f} s at {SPEED:.0f} steps/s (10, less the edges)",
        ),
        Figure(
            S,
            p + "viewers connected",
            float(out["joined"] - dropped),
            "",
            ("≥", float(n)),
            note=f"{dropped} dropped",
        ),
        Figure(
            S,
            p + "fraction of frames, worst viewer",
            min(fractions) if fractions else None,
            "",
            ("≥", 0.99),
            note=f"median {med:.3f}",
        ),
        Figure(
            S,
            p + "oldest latest frame",
            max(ages) if ages else None,
            "ms",
            ("≤", 400.0),
            note=f"p50 of viewers {percentiles(ages, (50,))['p50'] or 0:.0f} ms{where}; {cpu}",
        ),
        Figure(
            S,
            p + "lag p95",
            lag["p95"],
            "ms",
            ("≤", 150.0),
            note=f"p50 {lag['p50'] or 0:.1f}, p99 {lag['p99'] or 0:.1f} ms; {cpu}",
        ),
        Figure(
            S,
            p + "server RSS growth",
            growth,
            "MB",
            ("≤", 50.0 * n / 1000),
            baseline=f"{out['rss_open']:.0f} MB with the session open",
            note=f"joined, before play +{out['rss'][0] - out['rss_open']:.0f} MB; "
            f"peak +{max(out['rss']) - out['rss_open']:.0f} MB; 50 MB per 1,000 viewers",
        ),
        Figure(
            S,
            p + "server RSS growth, less the same session with no viewer",
            growth - out["alone_mb"],
            "MB",
            ("≤", 50.0 * n / 1000),
            note=f"alone it grew {out['alone_mb']:.1f} MB playing as long (its training, "
            f"and the frames kept for seek: {out['recorded_mb']:.1f} MB with the viewers)",
        ),
        Figure(
            S,
            p + "bytes per viewer",
            percentiles(kbps, (50,))["p50"],
            "KB/s",
            ("≤", kbps_target) if kbps_target else None,
            note=f"class total {sum(kbps) / 1000:.1f} MB/s",
        ),
        Figure(
            S,
            p + "bytes per frame",
            percentiles(per_frame, (50,))["p50"],
            "B",
            note="a viewer's bytes over the frames it got (scalars and status texts included)",
        ),
    ]


def _storm_figures(out: dict, n: int) -> list[Figure]:
    d = out["driver"]
    rtts = [ms for _, ms in d["rtts"]]
    r = percentiles(rtts, (50, 95, 99))
    worst = max([*rtts, d["unanswered_s"] * 1000]) if rtts else None
    viewers = out["viewers"]
    dropped = sum(v["closed"] for v in viewers) + bool(d["viewer"]["closed"])
    ready = [v["ready_ms"] for v in viewers if v["ready_ms"] is not None]
    frames = d["viewer"]["steps"]
    window = d["t_end"] - d["t0"]
    p = "storm: "
    cpu = _cpu_note(out["cpu"])
    return [
        Figure(S, p + "viewers joined", float(out["joined"]), "", ("≥", float(n))),
        Figure(
            S,
            p + "connections dropped",
            float(dropped),
            "",
            ("≤", 0.0),
            note=f"errors: {sorted({v['error'] for v in viewers if v['error']})[:3]}",
        ),
        Figure(
            S,
            p + "driver control round trip, worst",
            worst,
            "ms",
            ("≤", 250.0),
            note=f"p50 {r['p50'] or 0:.1f}, p95 {r['p95'] or 0:.1f} ms; {len(rtts)} probes, "
            f"{d['probes_skipped']} skipped while one was out",
        ),
        Figure(
            S,
            p + "driver frames during the storm",
            len(set(frames)) / window,
            "fps",
            note=f"every viewer ready within {max(ready) / 1000 if ready else 0:.1f} s; {cpu}",
        ),
        Figure(
            S,
            p + "server RSS growth",
            _settled_growth(out),
            "MB",
            note=f"{n:,} viewers; peak +{max(out['rss']) - out['rss_open']:.0f} MB",
        ),
    ]


def run(opts) -> Result:
    size = sizes(opts)
    named = [x for x in os.environ.get("SHAOMAI_LECTURE_PARTS", "").split(",") if x]
    parts = size.get("parts", named or PARTS)
    n = size["viewers"]
    res = Result()
    phone = {"type": "subscribe", "tensors": PHONE_TENSORS}
    desktop = {"type": "subscribe", "tensors": "*", "scalars": "either"}  # as the page's
    if "default" in parts:
        out = _watched("default", DEFAULT, n, size["seconds"], desktop)
        res.figures += _watch_figures(f"default ×{n}", out, n, None)
        res.raw["default"] = _summary(out)
    if "phones" in parts:
        out = _watched("phones", LARGEST, n, size["seconds"], phone)
        res.figures += _watch_figures(f"6×8 phones ×{n}", out, n, 40.0)
        res.raw["phones"] = _summary(out)
    if "head" in parts:  # one head of one layer (subscriptions by layer and head)
        out = _watched("head", LARGEST, n, size["seconds"], {**phone, "layer": 0, "head": 0})
        res.figures += _watch_figures(f"6×8 one head ×{n}", out, n, 40.0)
        res.raw["head"] = _summary(out)
    at10 = {
        # As gpt's phone page subscribes: its next-token panel's position too, and it keeps
        # the scalars rows (a cut leaves the header's out; a frame's step comes in it).
        "phones10": ("one layer", {"layer": 0, "position": 63, "scalars": "either"}),
        "head10": ("one head", {"layer": 0, "head": 0, "position": 63, "scalars": "either"}),
        "head10low": (
            "one head, low",
            {"layer": 0, "head": 0, "position": 63, "quality": "low", "scalars": "either"},
        ),
    }
    for part, (what, sub) in at10.items():
        if part in parts:  # the phone's wire at a real 10 steps/s (batch 4: the same frame)
            out = _watched(part, AT_10, n, size["seconds"], {**phone, "tensors": "*", **sub})
            res.figures += _watch_figures(f"6×8 {what} at 10 steps/s ×{n}", out, n, 40.0)
            res.raw[part] = _summary(out)
    if "storm" in parts:
        out = _storm(size["storm"], size["storm_s"])
        res.figures += _storm_figures(out, size["storm"])
        res.raw["storm"] = {**_summary(out), "rtts": out["driver"]["rtts"]}
    return res


def _settled_growth(out: dict) -> float:
    """RSS over the last quarter of the window (its median) less RSS with the session open."""
    tail = out["rss"][-max(1, len(out["rss"]) // 4) :]
    return percentiles(tail, (50,))["p50"] - out["rss_open"]


def _watched(part: str, params: dict, n: int, seconds: float, subscribe: dict) -> dict:
    """The part with n viewers, and how much the same session grows playing alone."""
    alone = _watch(f"{part}-alone", params, 0, seconds, None)
    out = _watch(part, params, n, seconds, subscribe)
    return {**out, "alone_mb": _settled_growth(alone)}


def _summary(out: dict) -> dict:
    """What the JSON keeps: not every frame of every viewer."""
    return {
        "joined": out["joined"],
        "rss_mb": out["rss"],
        "rss_open": out["rss_open"],
        "cpu": out["cpu"],
        "viewer_bytes": [v["bytes"] for v in out["viewers"]],
        "viewer_max_age_ms": [v["max_age_ms"] for v in out["viewers"]],
    }
