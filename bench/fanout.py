"""Scenario 4 (fan-out): one driver plays the `gpt` lab at 10 frames/s and 100 viewers (real
websocket clients, 4 processes × 25) watch it for 60 s (15 s with --quick).

Every frame carries the server's time at encoding (`t`, SHAOMAI_FRAME_CLOCK), so each
viewer knows how late each frame arrived (lag) and how old its latest frame was just
before each new one came (age). The frames "sent" are every frame any client received
(the driver included); a viewer's fraction is its share of them. RSS is the server's, from
the session's opening (before any viewer joins) to where it settles in the last quarter of
the run; the peak is shown beside it.
"""

from __future__ import annotations

import threading
import time

from bench.procs import Child, ready_all, tell_all
from bench.report import Figure, Result, percentiles
from bench.server import Server

S = "fanout"
VIEWERS, PROCS, SPEED = 100, 4, 10.0


def _ages(frames: list, t_end: float) -> float:
    """The oldest a client's latest frame got: before each receipt, and at the end."""
    worst = 0.0
    for (_, t_prev, _), (_, _, r) in zip(frames, frames[1:], strict=False):
        worst = max(worst, r - t_prev)
    if frames:
        worst = max(worst, t_end - frames[-1][1])
    return worst


def run(opts) -> Result:
    seconds = 15.0 if opts.quick else 60.0
    res = Result()
    with Server(name="fanout") as srv:
        rss0 = srv.rss()
        driver = Child(
            "viewers",
            {"url": srv.ws_url, "lab": "gpt", "params": {"steps": 20000}, "speed": SPEED},
            name="fan-driver",
        )
        kids = []
        try:
            session = driver.read(90)["session"]
            rss_open = srv.rss()
            kids = [
                Child(
                    "viewers",
                    {"url": srv.ws_url, "session": session, "n": VIEWERS // PROCS},
                    name=f"fan-viewers{i}",
                )
                for i in range(PROCS)
            ]
            ready_all(kids, 120)
            rss_joined = srv.rss()
            rss = [rss_joined]
            done = threading.Event()

            def sample() -> None:
                while not done.wait(0.5):
                    rss.append(srv.rss())

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            tell_all([driver, *kids], "go")
            time.sleep(seconds)
            tell_all([driver, *kids], "stop")
            done.set()
            sampler.join(5)
            rss.append(srv.rss())
            outs = [k.result(120) for k in kids]
            mine = driver.result(60)
        finally:
            for k in [driver, *kids]:
                k.close()

    t0, t_end = mine["t0"], mine["t_end"]
    viewers = [fr for o in outs for fr in o["frames"]]
    sent = {s for fr in [*viewers, *mine["frames"]] for (s, _, _) in fr}
    lags = [(r - t) * 1000 for fr in viewers for (_, t, r) in fr]
    fractions = [len({s for s, _, _ in fr}) / max(1, len(sent)) for fr in viewers]
    ages = [_ages(fr, t_end) * 1000 for fr in viewers]
    lag = percentiles(lags)
    # Growth: where memory settled (the last quarter's median) above the open session.
    # The peak is shown beside it: one evaluation's activations come and go (~±25 MB).
    settled = percentiles(rss[-max(1, len(rss) // 4) :], (50,))["p50"]
    growth = settled - rss_open
    res.figures += [
        Figure(
            S,
            "frames sent",
            len(sent) / (t_end - t0),
            "fps",
            note=f"{len(sent)} in {t_end - t0:.0f} s, play speed {SPEED:.0f} steps/s",
        ),
        Figure(S, "viewers connected", float(len(viewers)), "", ("≥", float(VIEWERS))),
        Figure(
            S,
            "fraction of frames, worst viewer",
            min(fractions) if fractions else None,
            "",
            note=f"median {percentiles(fractions, (50,))['p50']:.3f}",
        ),
        Figure(
            S,
            "oldest latest frame, worst viewer",
            max(ages) if ages else None,
            "ms",
            ("≤", 500.0),
            note=f"p50 of viewers {percentiles(ages, (50,))['p50']:.0f} ms",
        ),
        Figure(
            S,
            "lag server → viewer p95",
            lag["p95"],
            "ms",
            ("≤", 250.0),
            note=f"p50 {lag['p50']:.1f}, p99 {lag['p99']:.1f} ms; {len(lags):,} frames",
        ),
        Figure(
            S,
            "server RSS growth",
            growth,
            "MB",
            ("≤", 50.0),
            baseline=f"{rss_open:.0f} MB with the session open",
            note=f"idle {rss0:.0f}, +{rss_joined - rss_open:.0f} on join; peak +"
            f"{max(rss) - rss_open:.0f}",
        ),
    ]
    res.raw = {
        "rss_mb": rss,
        "rss_idle": rss0,
        "rss_open": rss_open,
        "fractions": fractions,
        "ages_ms": ages,
        "lag_ms_percentiles": lag,
        "sent": len(sent),
        "texts": [t for o in outs for t in o["texts"]],
        "driver_frames": mine["frames"][0],  # (step, server time, receipt) of every frame
    }
    return res
